#include "bench/merge.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#include "harness/context.hpp"
#include "harness/errors.hpp"
#include "harness/repeats.hpp"
#include "harness/platform.hpp"
#include "harness/sizes.hpp"
#include "reference/merge_reference.hpp"

namespace hdb {

const char* to_string(MergeStep s) {
  switch (s) {
    case MergeStep::DeltaDict: return "delta_dict";
    case MergeStep::DictMerge: return "dict_merge";
    case MergeStep::Reencode: return "reencode";
    case MergeStep::Whole: return "merge";
  }
  return "?";
}

void advise_huge_pages(void* p, std::uint64_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  std::uintptr_t b = (reinterpret_cast<std::uintptr_t>(p) + kHuge - 1) & ~(kHuge - 1);
  std::uintptr_t e = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~(kHuge - 1);
  if (e > b) madvise(reinterpret_cast<void*>(b), e - b, MADV_HUGEPAGE);  // advice only: failure is harmless
#else
  (void)p;
  (void)bytes;
#endif
}

void reserve_huge(std::vector<std::uint32_t>& v, std::uint64_t n) {
  if (v.capacity() >= n) return;
  v.reserve(n);
  advise_huge_pages(v.data(), n * sizeof(std::uint32_t));
}

template <class T>
MergeWork<T> prepare_work(const MergeInput<T>& in) {
  MergeWork<T> w;
  w.in = &in;
  w.delta_dict = ref::delta_dict(in.delta);
  w.delta_ids = ref::ids_in(w.delta_dict, in.delta);
  ref::DictMerge<T> m = ref::dict_merge(in.main_dict, w.delta_dict);
  w.dict = std::move(m.dict);
  // X_M is |U_M| entries, gathered at random by 2b: in fresh memory advised to huge pages, so that
  // a large map's gathers do not also miss the TLB on every row.
  reserve_huge(w.x_m, m.x_m.size());
  w.x_m.assign(m.x_m.begin(), m.x_m.end());
  w.x_d = std::move(m.x_d);
  w.width = code_width(w.dict.size());
  return w;
}

template <class T>
std::string verify_merge_output(MergeStep step, const MergeWork<T>& w, const MergeOutput<T>& out) {
  const MergeInput<T>& in = *w.in;
  std::string e;
  auto first = [&e](std::string r) {
    if (e.empty()) e = std::move(r);
  };
  if (step == MergeStep::DeltaDict || step == MergeStep::Whole) {
    first(ref::check_sorted_distinct(out.delta_dict, "U_D"));
    first(ref::check_equal_dict(out.delta_dict, w.delta_dict, "U_D"));
    if (e.empty()) first(ref::check_ids(out.delta_dict, in.delta, out.delta_ids, "delta ids"));
  }
  if (step == MergeStep::DictMerge || step == MergeStep::Whole) {
    first(ref::check_sorted_distinct(out.dict, "U'_M"));
    first(ref::check_equal_dict(out.dict, w.dict, "U'_M"));
    if (e.empty()) first(ref::check_ids(out.dict, in.main_dict, out.x_m, "X_M"));
    if (e.empty()) first(ref::check_ids(out.dict, w.delta_dict, out.x_d, "X_D"));
  }
  if (step == MergeStep::Reencode || step == MergeStep::Whole)
    if (e.empty()) first(ref::check_new_main(in, step == MergeStep::Whole ? out.dict : w.dict, out.codes));
  return e;
}

void plan_columns(MemoryPlan& plan, ValueType type, std::uint64_t main_rows, std::uint64_t delta_rows,
                  double unique_fraction, std::uint64_t columns) {
  const ColumnSpec spec = column_spec(main_rows, delta_rows, unique_fraction);
  const std::uint64_t u = spec.main_distinct, nd = delta_rows, c = columns;
  const bool str = type == ValueType::Str;
  const std::uint64_t vb = type == ValueType::U32 ? 4 : type == ValueType::U64 ? 8 : 16;  // strings: views
  plan.add("main ids", c * BitPacked::words_for(main_rows, code_width(u)) * 8);
  plan.add("U_M and delta values", c * (u + nd) * vb);
  if (str) plan.add("string characters and offsets", c * (u + nd) * (35 + 8));
  plan.add("generation indices", c * nd * 8);
  plan.add("reference U_D and U'_M", c * (2 * nd + u) * vb);
  plan.add("reference delta ids, X_M and X_D", c * (2 * nd + u) * 4);
}

Breakdown whole_merge_breakdown(double h2d, double step_1a, double step_1b, double step_2b, double kernel, double d2h,
                                double total) {
  Breakdown b;
  b.h2d = h2d;
  b.add_phase("1a", step_1a);
  b.add_phase("1b", step_1b);
  b.add_phase("2a", 0.0);
  b.add_phase("2b", step_2b);
  b.kernel = kernel;
  b.d2h = d2h;
  b.total = total;
  return b;
}

template <class T>
void plan_step_buffers(MemoryPlan& plan, MergeStep step, bool binsearch, const MergeWork<T>& w) {
  constexpr bool str = std::is_same_v<T, std::string_view>;
  const MergeInput<T>& in = *w.in;
  const std::uint64_t nd = in.delta_rows(), n1 = in.main_dict.size(), n2 = w.delta_dict.size();
  const std::uint64_t rows = in.main_rows() + nd, old_codes = in.main_codes.words.size() * 8;
  // n values of `chars` characters in all (strings), else n values of T.
  auto column = [&](const char* name, std::uint64_t n, std::uint64_t chars) {
    plan.add(name, str ? (n + 1) * 4 + chars : n * sizeof(T));
  };
  const std::uint64_t delta_b = total_bytes(in.delta), um_b = total_bytes(in.main_dict),
                      ud_b = total_bytes(w.delta_dict);
  switch (step) {
    case MergeStep::DeltaDict:
      column("delta", nd, delta_b);
      column("U_D", nd, delta_b);  // room for every delta row
      plan.add("delta ids", nd * 4);
      break;
    case MergeStep::DictMerge:
      column("U_M", n1, um_b);
      column("U_D", n2, ud_b);
      column("U'_M", n1 + n2, um_b + ud_b);
      plan.add("X_M and X_D", (n1 + n2) * 4);
      break;
    case MergeStep::Reencode:
      plan.add("old main ids", old_codes);
      plan.add("new main ids", BitPacked::words_for(rows, w.width) * 8);
      if (binsearch) {
        column("U_M", n1, um_b);
        column("delta", nd, delta_b);
        column("U'_M", w.dict.size(), total_bytes(w.dict));
      } else {
        plan.add("X_M, X_D and delta ids", (w.x_m.size() + w.x_d.size() + w.delta_ids.size()) * 4);
      }
      break;
    case MergeStep::Whole:  // buffers sized before |U_D| and |U'_M| are known: every delta row new
      plan.add("old main ids", old_codes);
      column("U_M", n1, um_b);
      column("delta", nd, delta_b);
      column("U'_M", n1 + nd, um_b + delta_b);
      plan.add("new main ids", BitPacked::words_for(rows, code_width(n1 + nd)) * 8);
      column("U_D", nd, delta_b);
      plan.add("delta ids, X_M and X_D", (2 * nd + n1) * 4);
      break;
  }
}

std::vector<MergeVariant> merge_variants(const MergeBackend& backend, const std::vector<Transfer>& transfers) {
  std::vector<MergeVariant> out;
  for (MergeStep step : {MergeStep::DeltaDict, MergeStep::DictMerge, MergeStep::Reencode, MergeStep::Whole})
    for (const std::string& name : backend.variant_table().names(to_string(step)))
      for (Transfer t : transfers) out.push_back({step, name, t});
  return out;
}

std::uint64_t host_memory_bytes(const Platform& p) {
  if (p.name() == "cpu") return p.memory_bytes();
  std::uint64_t ram = std::numeric_limits<std::uint64_t>::max();
#if defined(__linux__)
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) ram = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
#endif
  // --memory-limit caps the device's memory only (docs: "Treat the device ... as holding"): a
  // device backend's host-side column is checked against the machine's RAM.
  return ram;
}

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string pct_label(double p) {
  std::ostringstream o;
  o << p << "%";
  return o.str();
}

// The figures the paper reports, from the trials of one case: cycles per tuple (TSC measured, not
// assumed) per phase, tuples/s, PCIe share, and for the whole merge the table figures. CPU cases
// (threads > 0) also get cycles per tuple per core: the same cycles times the threads that ran.
nlohmann::json paper_figures(const std::vector<Breakdown>& trials, std::uint64_t tuples, std::uint64_t delta_rows,
                             bool whole, int columns, int threads) {
  nlohmann::json j;
  if (trials.empty()) return j;
  auto med = [&](auto get) {
    std::vector<double> v;
    for (const Breakdown& b : trials) v.push_back(get(b));
    return median(v);
  };
  double kernel = med([](const Breakdown& b) { return b.kernel; });
  double total = med([](const Breakdown& b) { return b.total > 0 ? b.total : b.kernel; });
  double bus = med([](const Breakdown& b) { return b.h2d + b.d2h; });
  double hz = measure_tsc_hz();
  double t = static_cast<double>(std::max<std::uint64_t>(tuples, 1));
  j["tuples"] = tuples;
  j["tsc_hz"] = hz;
  nlohmann::json cpt;
  if (hz > 0) {
    cpt["kernel"] = kernel * hz / t;
    cpt["total"] = total * hz / t;
    for (const Phase& ph : trials.front().phases) {
      const std::string& name = ph.name;
      cpt[name] = med([&](const Breakdown& b) {
                    for (const Phase& p : b.phases)
                      if (p.name == name) return p.seconds;
                    return 0.0;
                  }) *
                  hz / t;
    }
  }
  j["cycles_per_tuple"] = cpt;
  if (hz > 0 && threads > 0) {
    nlohmann::json per_core;
    for (auto it = cpt.begin(); it != cpt.end(); ++it) per_core[it.key()] = it.value().get<double>() * threads;
    j["threads"] = threads;
    j["cycles_per_tuple_per_core"] = per_core;
  }
  j["tuples_per_s_kernel"] = kernel > 0 ? t / kernel : 0;
  j["tuples_per_s_total"] = total > 0 ? t / total : 0;
  if (bus > 0 && total > 0) j["pcie_share"] = bus / total;
  if (whole && total > 0) {
    // The paper: NC columns merged one after another, each like this one; update rate = delta rows
    // per second of table merge (its example: (4M*3.3e9)/(25*104M*300) = 16.9K updates/s).
    double table_s = total * columns;
    j["table"] = {
        {"columns", columns}, {"merge_s", table_s}, {"update_rate_per_s", static_cast<double>(delta_rows) / table_s}};
  }
  return j;
}

template <class T>
void run_typed(Session& s, MergeBackend& backend, const MergeParams& prm, ValueType type, std::uint64_t size,
               const Params& params) {
  const double unique_pct = param(params, "unique").get<double>(), delta_pct = param(params, "delta").get<double>();
  std::uint64_t main_rows = size / 8;
  auto delta_rows = static_cast<std::uint64_t>(std::llround(static_cast<double>(main_rows) * delta_pct / 100.0));
  // Generated once for all variants of this (size, type, unique, delta), only when a case runs.
  std::shared_ptr<MergeInput<T>> input;
  std::shared_ptr<MergeWork<T>> work;
  auto get_work = [&]() {
    if (!work) {
      MemoryPlan plan("host memory");
      plan_columns(plan, type, main_rows, delta_rows, unique_pct / 100.0);
      plan.require(host_memory_bytes(s.platform()));
      std::string salt =
          std::string("merge/") + to_string(type) + "/" + pct_label(unique_pct) + "/" + pct_label(delta_pct);
      input = std::make_shared<MergeInput<T>>(generate_column<T>(column_spec(main_rows, delta_rows, unique_pct / 100.0),
                                                                 s.seed(salt, size), effective_threads(s.options())));
      work = std::make_shared<MergeWork<T>>(prepare_work(*input));
    }
    return work;
  };
  for (const MergeVariant& v : merge_variants(backend, s.transfers())) {
    if (!backend.supports(v, type)) continue;
    CaseKey key{to_string(v.step), v.name, params, size, v.transfer};
    CaseSetup setup;
    setup.plan = [&, v](MemoryPlan& plan) {
      backend.variant_table().require_available(v.name);
      backend.plan_memory(v, *get_work(), plan);
    };
    setup.prepare = [&, v]() {
      std::shared_ptr<MergeWork<T>> w = get_work();
      std::shared_ptr<MergeInput<T>> keep_input = input;
      std::shared_ptr<MergeCase<T>> c = backend.prepare(v, *w);
      const MergeInput<T>& in = *w->in;
      std::uint64_t nm = in.main_rows(), nd = in.delta_rows(), tuples = nm + nd;
      std::uint64_t um = total_bytes(in.main_dict), ud = total_bytes(w->delta_dict), un = total_bytes(w->dict);
      std::uint64_t old_codes = in.main_codes.words.size() * 8, new_codes = BitPacked::words_for(tuples, w->width) * 8;
      std::uint64_t maps = (w->x_m.size() + w->x_d.size()) * 4;
      Prepared p = prepared_from(c);
      switch (v.step) {
        case MergeStep::DeltaDict:
          p.elements = nd;
          p.input_bytes = total_bytes(in.delta);
          p.moves(*p.input_bytes, ud + nd * 4);
          break;
        case MergeStep::DictMerge:
          p.elements = in.main_dict.size() + w->delta_dict.size();
          p.input_bytes = um + ud;
          p.moves(*p.input_bytes, un + maps);
          break;
        case MergeStep::Reencode:
          p.elements = tuples;
          p.input_bytes = old_codes + nd * 4 + maps;
          // Every row looks its code up in a position map: beyond the cache, random 4-byte reads.
          p.moves(*p.input_bytes, new_codes, maps, 4);
          break;
        case MergeStep::Whole:
          p.elements = tuples;
          p.input_bytes = old_codes + um + total_bytes(in.delta);
          p.moves(*p.input_bytes, un + new_codes);
          break;
      }
      p.extra = {{"main_rows", nm},
                 {"delta_rows", nd},
                 {"u_m", in.main_dict.size()},
                 {"u_d", w->delta_dict.size()},
                 {"u_merged", w->dict.size()},
                 {"width_old", in.main_codes.width},
                 {"width_new", w->width},
                 {"value_bytes", type == ValueType::Str ? 0 : sizeof(T)}};
      // Strings: their characters (what input_bytes and min_bytes_moved count; the device layouts
      // move 4-byte offsets as well, counted in transfer_bytes).
      if (type == ValueType::Str)
        p.extra["string_bytes"] = {{"u_m", um}, {"delta", total_bytes(in.delta)}, {"u_d", ud}, {"u_merged", un}};
      int columns = prm.columns;
      int threads = c->threads();
      p.verify = [c, w, keep_input, step = v.step] {
        std::string err = verify_merge_output(step, *w, c->output());
        return err.empty() ? Verification::pass("decoded row by row and compared with the reference")
                           : Verification::fail(err);
      };
      p.figures = [tuples, nd, columns, threads, step = v.step](const std::vector<Breakdown>& trials) {
        return paper_figures(trials, tuples, nd, step == MergeStep::Whole, columns, threads);
      };
      return p;
    };
    s.run(key, setup);
  }
}

// The merge's axes, declared once: value type, percent of unique values, delta rows as percent of
// the main rows (--unique and --delta take them as percentages, and so do the ids).
std::vector<Axis> merge_axes(const MergeParams& prm) {
  std::vector<ParamValue> types;
  for (ValueType t : prm.types) types.emplace_back(to_string(t));
  return {{"type", types}, {"unique", axis_values(prm.unique_pct)}, {"delta", axis_values(prm.delta_pct)}};
}

void run_merge(Session& s, MergeBackend& backend, const MergeParams& prm) {
  const std::vector<Params> states = axis_product(merge_axes(prm));
  for (std::uint64_t size : s.sizes())
    for (const Params& p : states) {
      ValueType type = prm.types.front();
      for (ValueType t : prm.types)
        if (param(p, "type") == to_string(t)) type = t;
      switch (type) {
        case ValueType::U32: run_typed<std::uint32_t>(s, backend, prm, type, size, p); break;
        case ValueType::U64: run_typed<std::uint64_t>(s, backend, prm, type, size, p); break;
        case ValueType::U128: run_typed<U128>(s, backend, prm, type, size, p); break;
        case ValueType::Str: run_typed<std::string_view>(s, backend, prm, type, size, p); break;
      }
    }
}

}  // namespace

int merge_main(int argc, char** argv, Platform& platform, MergeBackend& backend) {
  auto prm = std::make_shared<MergeParams>();
  auto type_text = std::make_shared<std::vector<std::string>>();
  BenchmarkDef def;
  def.name = "merge";
  def.description =
      "Delta merge of a dictionary-compressed column: 1a delta dictionary, 1b dictionary merge with X_M/X_D, "
      "2b re-encode, whole merge (size axis = main rows x 8 bytes)";
  def.add_options = [prm, type_text](CLI::App& app) {
    app.add_option("--types", *type_text, "value types: u32,u64,u128,str (default all)")->delimiter(',');
    app.add_option("--unique", prm->unique_pct, "percent of unique values, list (default 1,10,100)")->delimiter(',');
    app.add_option("--delta", prm->delta_pct, "delta rows as percent of main rows, list (default 1)")->delimiter(',');
    app.add_option("--columns", prm->columns, "NC, columns of the whole-table figures (default 300)");
  };
  def.validate = [prm, type_text] {
    if (!type_text->empty()) {
      prm->types.clear();
      for (const std::string& t : *type_text) prm->types.push_back(parse_value_type(t));
    }
    for (double u : prm->unique_pct)
      if (!(u > 0 && u <= 100)) throw UsageError("--unique values must be in (0, 100], got " + std::to_string(u));
    for (double d : prm->delta_pct)
      if (!(d >= 0 && d <= 100)) throw UsageError("--delta values must be in [0, 100], got " + std::to_string(d));
    if (prm->columns < 1) throw UsageError("--columns must be at least 1");
    refuse_repeats(*type_text, "--types");
    refuse_repeats(prm->unique_pct, "--unique");
    refuse_repeats(prm->delta_pct, "--delta");
  };
  def.run = [&backend, prm](Session& s) { run_merge(s, backend, *prm); };
  return run_main(argc, argv, def, platform);
}

#define HDB_MERGE_TYPES(X) X(std::uint32_t) X(std::uint64_t) X(U128) X(std::string_view)
#define HDB_INSTANTIATE(T)                                                                            \
  template MergeWork<T> prepare_work<T>(const MergeInput<T>&);                                        \
  template std::string verify_merge_output<T>(MergeStep, const MergeWork<T>&, const MergeOutput<T>&); \
  template void plan_step_buffers<T>(MemoryPlan&, MergeStep, bool, const MergeWork<T>&);
HDB_MERGE_TYPES(HDB_INSTANTIATE)
#undef HDB_INSTANTIATE
#undef HDB_MERGE_TYPES

}  // namespace hdb
