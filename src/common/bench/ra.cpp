#include "bench/ra.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <stdexcept>

#include "algorithms/tuple_sort.hpp"
#include "bench/ra_options.hpp"
#include "harness/errors.hpp"
#include "harness/repeats.hpp"
#include "harness/sizes.hpp"
#include "reference/ra.hpp"
#include "workloads/random.hpp"

namespace hdb::ra {

namespace {

struct RaOptions : WorkloadOptions {
  std::vector<int> key_bits{32};
  std::vector<double> selectivity{0.5};
  std::vector<std::string> reduce_ops{"sum"};
  std::vector<std::string> inputs{"sorted", "unsorted"};
  int product_rows = 8;
};

// The tests whose inputs the RA paper takes sorted (by key; the set operations by whole tuple): their
// cases come from sorted input (the sort not timed) and from unsorted input (the sort timed with them).
bool takes_sorted_input(Op op) {
  return op == Op::Unique || op == Op::ReduceByKey || op == Op::Join || op == Op::SetUnion ||
         op == Op::SetIntersection || op == Op::SetDifference;
}

ReduceOp parse_reduce(const std::string& s) {
  if (s == "sum") return ReduceOp::Sum;
  if (s == "min") return ReduceOp::Min;
  if (s == "max") return ReduceOp::Max;
  throw UsageError("--reduce-op: '" + s + "' is not sum, min or max");
}

// One prepared case: inputs resident on the device, the expected output, and the pass.
struct CaseData {
  RaBackend* backend = nullptr;
  Transfer transfer = Transfer::None;
  std::vector<Relation> host_in;  // inputs in host memory of the transfer kind
  std::vector<DeviceRel> dev_in;  // device copies (re-uploaded in every pass when there is a bus)
  DeviceRel dev_out;
  // Unsorted input for a variant that needs it sorted: the sorted copies the pass makes of dev_in, and
  // the sort's intermediates (two handles per input, written in turn).
  std::vector<std::array<DeviceRel, 2>> sort_buf;
  std::vector<const DeviceRelation*> sorted_in;
  Relation host_out;  // capacity = the expected rows
  Relation expected;
  bool multiset = false;  // join: order within a key is unspecified
  int threads = 1;        // for sorting the output read back as a multiset
  Aggregate expected_agg, got_agg;
  bool is_reduce = false;
  int key_words = 1;  // of the inputs (and of every output: project keeps the key first)
  Op kind = Op::Project;
  std::string variant;
  std::function<Breakdown(CaseData&)> op;  // the operator on dev_in -> dev_out (or got_agg)
  std::uint64_t out_rows = 0;              // the expected output's rows and values
  int out_values = 0;

  // Operand i of the operator: the sorted copy where the pass sorts the input first.
  const DeviceRelation& in(std::size_t i) const { return sorted_in[i] ? *sorted_in[i] : *dev_in[i]; }

  // The device inputs and the host output, once the case's memory plan fits.
  void allocate() {
    dev_in.resize(host_in.size());
    sort_buf.resize(host_in.size());
    sorted_in.assign(host_in.size(), nullptr);
    for (std::size_t i = 0; i < host_in.size(); ++i) backend->upload(host_in[i], dev_in[i]);
    if (!is_reduce) host_out = backend->host_relation(out_rows, out_values, transfer, key_words);
  }

  Breakdown pass() {
    HostTimer wall;
    Breakdown b;
    if (transfer != Transfer::None)
      for (std::size_t i = 0; i < host_in.size(); ++i) {
        Breakdown u = backend->upload(host_in[i], dev_in[i]);
        b.h2d += u.h2d;
      }
    Breakdown k = op(*this);
    b.kernel = k.kernel;
    b.phases = k.phases;
    b.d2h += k.d2h;
    b.h2d += k.h2d;
    if (transfer != Transfer::None && !is_reduce) b.d2h += backend->download(*dev_out, host_out).d2h;
    b.total = wall.seconds();
    return b;
  }

  Verification verify() {
    if (is_reduce) {
      if (got_agg == expected_agg) return Verification::pass("aggregate equals the reference");
      std::string s = "aggregate differs: got";
      for (int v = 0; v < got_agg.values; ++v) s += " " + std::to_string(got_agg.value[static_cast<std::size_t>(v)]);
      s += ", expected";
      for (int v = 0; v < expected_agg.values; ++v)
        s += " " + std::to_string(expected_agg.value[static_cast<std::size_t>(v)]);
      return Verification::fail(s);
    }
    if (dev_out->rows() != expected.rows())
      return Verification::fail(std::to_string(dev_out->rows()) + " tuples, expected " +
                                std::to_string(expected.rows()));
    if (transfer == Transfer::None) backend->download(*dev_out, host_out);
    Relation got = host_out;
    std::string what = "all " + std::to_string(expected.rows()) + " tuples equal the reference";
    if (multiset) {
      got = tuple_sorted(host_out, threads);
      what += " as a multiset";
    }
    std::string diff = first_difference(got, expected);
    Verification v = diff.empty() ? Verification::pass(what) : Verification::fail(diff);
    v.extra["rows"] = expected.rows();
    return v;
  }
};

// How a pass sorts unsorted input for a variant that takes it sorted: the backend's stable key sort;
// by whole tuple (the set operations) as stable key sorts of the tuple's words in groups of at most
// two, least significant group first, each group brought to the key by project and put back after.
struct InputSort {
  std::string sort_variant, project_variant;
  bool whole_tuple = false;
  std::string text() const {
    return whole_tuple ? sort_variant + " sort by whole tuple (stable key sorts of word groups, " + project_variant +
                             " project)"
                       : sort_variant + " sort by key";
  }
};

// The word groups (first word, words) of a whole-tuple sort of `width`-word tuples, least significant first.
std::vector<std::pair<int, int>> sort_groups(int width) {
  std::vector<std::pair<int, int>> g;
  for (int end = width; end > 0; end -= 2) g.emplace_back(std::max(0, end - 2), end - std::max(0, end - 2));
  return g;
}

// Adds b's kernel and transfer times to `into` (its phases are the caller's to name).
void add_times(Breakdown& into, const Breakdown& b) {
  into.kernel += b.kernel;
  into.h2d += b.h2d;
  into.d2h += b.d2h;
}

// Sorts operand i of `d` into d.sort_buf[i] and points d.sorted_in[i] at the result.
Breakdown sort_operand(CaseData& d, std::size_t i, const InputSort& s) {
  d.sorted_in[i] = nullptr;
  const DeviceRelation* cur = d.dev_in[i].get();
  const int kw = cur->key_words(), w = cur->width();
  Breakdown total;
  int next = 0;  // the handle the next step writes: never the one it reads
  auto step = [&](auto&& call) {
    DeviceRel& out = d.sort_buf[i][static_cast<std::size_t>(next)];
    next ^= 1;
    add_times(total, call(*cur, out));
    cur = out.get();
  };
  auto sort = [&](const DeviceRelation& in, DeviceRel& out) { return d.backend->sort(in, s.sort_variant, out); };
  if (!s.whole_tuple) {
    step(sort);
  } else {
    for (const auto& [first, len] : sort_groups(w)) {
      if (first == 0 && len == kw) {
        step(sort);
        continue;
      }
      ProjectLayout to, back;
      to.key_words = len;
      back.key_words = kw;
      for (int k = first; k < first + len; ++k) to.words.push_back(k);
      for (int k = 0; k < w; ++k)
        if (k < first || k >= first + len) to.words.push_back(k);
      // A tuple that is all key would have no value: every backend takes keys with values, so the
      // last word is carried twice.
      if (static_cast<int>(to.words.size()) == len) to.words.push_back(w - 1);
      back.words.assign(static_cast<std::size_t>(w), 0);
      for (int p = 0; p < w; ++p) back.words[static_cast<std::size_t>(to.words[static_cast<std::size_t>(p)])] = p;
      step([&](const DeviceRelation& in, DeviceRel& out) {
        return d.backend->project_words(in, to, s.project_variant, out);
      });
      step(sort);
      step([&](const DeviceRelation& in, DeviceRel& out) {
        return d.backend->project_words(in, back, s.project_variant, out);
      });
    }
  }
  d.sorted_in[i] = cur;
  return total;
}

// What the variants of one case share: its inputs and its expected output, made once. At 32M and
// more, the reference answers from unsorted input (which sort it) and the sorts for the multiset
// comparison took longer than the timed passes when every variant made its own.
struct SharedCase {
  std::string id;                           // the case's id without its variant
  std::vector<Relation> in;                 // never written after they are made
  std::optional<std::uint64_t> join_rows;   // the join's output, counted before it is built
  std::optional<Relation> expected;         // as the reference gives it
  std::optional<Relation> expected_sorted;  // by whole tuple, for the variants compared as multisets
  bool every_variant_multiset = false;      // unsorted input: the reference's order is never needed
};

class RaRunner {
 public:
  RaRunner(Session& s, RaBackend& b, const RaOptions& o) : s_(s), b_(b), o_(o) {}

  // Cases: operator x transfer x size x the product of the operator's axes x declared variant. The
  // variants are innermost, so that they share one case's inputs and expected output (shared_).
  void run() {
    for (Op op : all_ops()) {
      const std::vector<Params> states = axis_product(axes(op));
      for (Transfer t : s_.transfers())
        for (std::uint64_t size : s_.sizes())
          for (const Params& p : states)
            for (const std::string& variant : b_.variants(op)) {
              // The plan makes the inputs and the expected output, and stages the case; prepare
              // uploads the inputs once the plan fits.
              Prepared staged;
              CaseSetup setup{[&](MemoryPlan& plan) { staged = prepare(op, variant, t, size, p, plan); },
                              [&] {
                                staged_->allocate();
                                staged_.reset();
                                return staged;
                              }};
              s_.run({test_name(op), variant, p, size, t}, setup);
            }
    }
    shared_ = SharedCase{};
  }

 private:
  int threads() const { return effective_threads(s_.options()); }

  KeySpec keys(const std::string& dist, std::uint64_t distinct) const { return key_spec(o_, dist, distinct); }

  // Input relation in host memory of the transfer kind.
  Relation input(const RelationSpec& spec, const std::string& salt, std::uint64_t size, Transfer t) {
    Relation r = b_.host_relation(spec.rows, spec.values, t, spec.key_words);
    fill_relation(r, spec, s_.seed(salt, size), threads());
    return r;
  }

  // Before a large output is built even once (join, product): its size against the bound the user
  // set and, with the inputs, against the memory (the full plan follows in finish()).
  void check_output(std::uint64_t in_bytes, std::uint64_t out_bytes, std::uint64_t size) {
    if (static_cast<double>(out_bytes) > o_.max_output_ratio * static_cast<double>(size))
      throw SkipCase("output of " + std::to_string(out_bytes >> 20) + " MiB exceeds --max-output-ratio x input");
    MemoryPlan::for_platform(s_.platform()).add("inputs", in_bytes).add("output", out_bytes).require(s_.platform());
  }

  // Every allocation of the case: on the device, its inputs, the output and the backend's scratch
  // (plan_scratch); on the cpu backend the device is host memory, so the host copies (inputs, the
  // expected output, the output read back) count too.
  void plan_memory(MemoryPlan& plan, const CaseData& c, std::uint64_t in_bytes, std::uint64_t out_rows, int out_width) {
    const std::uint64_t out_bytes = c.is_reduce ? 0 : out_rows * static_cast<std::uint64_t>(out_width) * 4;
    plan.add("inputs", in_bytes).add("output", out_bytes);
    b_.plan_scratch(op_shape(c.kind, c.variant, c.host_in.at(0), c.host_in.size() > 1 ? &c.host_in[1] : nullptr,
                             c.is_reduce ? 0 : out_rows, out_width),
                    plan);
    if (!s_.platform().has_transfers())
      plan.add("host inputs", in_bytes).add("expected output", out_bytes).add("output read back", out_bytes);
  }

  // Stages a case from host inputs and the expected output (staged_: allocated when its plan fits);
  // `fn` runs the operator.
  Prepared finish(MemoryPlan& plan, std::shared_ptr<CaseData> c, Transfer t, std::uint64_t out_rows, int out_values,
                  std::function<Breakdown(CaseData&)> fn) {
    std::uint64_t in_bytes = 0;
    for (const Relation& r : c->host_in) in_bytes += r.bytes();
    std::uint64_t out_bytes = out_rows * static_cast<std::uint64_t>(c->key_words + out_values) * 4;
    if (c->is_reduce) out_bytes = static_cast<std::uint64_t>(c->expected_agg.values) * 8;
    plan_memory(plan, *c, in_bytes, out_rows, c->key_words + out_values);
    if (c->multiset) {  // verify() sorts the output alike
      if (!shared_.expected_sorted) shared_.expected_sorted = tuple_sorted(c->expected, threads());
      c->expected = *shared_.expected_sorted;
      if (shared_.every_variant_multiset) shared_.expected.reset();
    }
    if (shared_.expected_sorted && shared_.expected && !s_.platform().has_transfers())
      plan.add("expected output, sorted for the multiset comparison", shared_.expected_sorted->bytes());
    c->backend = &b_;
    c->threads = threads();
    c->transfer = t;
    c->op = std::move(fn);
    c->out_rows = out_rows;
    c->out_values = out_values;
    staged_ = c;
    Prepared p;
    p.pass = [c] { return c->pass(); };
    p.verify = [c] { return c->verify(); };
    p.elements = c->host_in.empty() ? 0 : c->host_in[0].rows();
    p.input_bytes = in_bytes;
    p.moves(in_bytes, out_bytes);
    p.transfer_bytes = t == Transfer::None ? 0 : in_bytes + (c->is_reduce ? 0 : out_bytes);
    p.extra["input_rows"] = p.elements;
    p.extra["output_rows"] = c->is_reduce ? 1 : out_rows;
    p.extra["values"] = o_.values;
    p.ran = [c] { return c->backend->last_ran(); };
    return p;
  }

  // A case from unsorted input whose variant takes its input sorted (`needed`): its pass sorts every
  // input (by key; by whole tuple for the set operations) before the operator, and the sort's time
  // is the phase input_sort of the operator's kernel time. Plans the sorted copies and the sort's
  // own scratch; names the sort in the result (extra.input_sort).
  Prepared sorted_first(CaseData& c, bool needed, bool whole_tuple, const std::string& variant, MemoryPlan& plan,
                        Prepared p) {
    if (!needed) return p;
    InputSort s;
    s.whole_tuple = whole_tuple;
    s.sort_variant = pick(Op::Sort, variant);
    if (whole_tuple) s.project_variant = pick(Op::Project, variant);
    std::uint64_t largest = 0;
    for (const Relation& r : c.host_in) {
      largest = std::max(largest, r.bytes());
      // Its two intermediates; a whole-tuple sort's projection may carry one word more.
      const int w = r.width() + (whole_tuple && r.width() == 2 ? 1 : 0);
      plan.add("sorted input and the sort's intermediate", 2 * r.rows() * static_cast<std::uint64_t>(w) * 4);
    }
    const Relation& big = c.host_in[0].bytes() >= largest ? c.host_in[0] : c.host_in[1];
    b_.plan_scratch(op_shape(Op::Sort, s.sort_variant, big, nullptr, big.rows(), big.width()), plan);
    auto op = std::move(c.op);
    const Op kind = c.kind;
    c.op = [op, s, kind](CaseData& d) {
      Breakdown sorted;
      for (std::size_t i = 0; i < d.dev_in.size(); ++i) add_times(sorted, sort_operand(d, i, s));
      const Breakdown k = op(d);
      Breakdown out = sorted;
      add_times(out, k);
      out.add_phase("input_sort", sorted.kernel);
      if (k.phases.empty()) out.add_phase(test_name(kind), k.kernel);
      for (const Phase& ph : k.phases) out.add_phase(ph.name, ph.seconds, ph.kind);
      return out;
    };
    p.extra["input_sort"] = s.text();
    return p;
  }

  // The variant that runs `op` for a case of `variant`: itself where it implements op, else the
  // backend's first variant of op that can run here.
  std::string pick(Op op, const std::string& variant) const {
    if (offers(b_, op, variant)) return variant;
    for (const std::string& v : b_.variants(op))
      if (b_.variant_table().info(v).unavailable.empty()) return v;
    throw SkipCase(std::string("unsorted input: the backend has no ") + test_name(op) +
                   " variant to sort it with before the operator");
  }

  // r by key, equal keys in input order: ref::sort's answer, from the suite's parallel radix sort (the
  // serial reference sort of a 256M input took longer than the case's timed passes). The sort cases
  // verify that radix sort against ref::sort.
  Relation key_sorted(const Relation& r) const {
    if (r.rows() < 2) return r.clone();
    Relation out(r.rows(), r.values(), r.key_words());
    std::vector<std::uint32_t> scratch(r.words());
    stable_sort_by_key(r.data(), r.rows(), r.width(), out.data(), scratch.data(), threads(), r.key_words());
    return out;
  }

  // Tuples of kw + values words that make up `size` bytes per input.
  std::uint64_t rows_of(std::uint64_t size, int kw) const {
    return size / (4u * static_cast<std::uint64_t>(kw + o_.values));
  }

  // The axes of an operator's cases, declared once: the case ids, --list and --only follow. `key`
  // (bits) comes second, beside the distribution, in every case: results always say their width.
  std::vector<Axis> axes(Op op) const {
    std::vector<Axis> a{{"dist", axis_values(o_.dists)}, {"key", axis_values(o_.key_bits)}};
    if (o_.values != 1) a.push_back({"values", {o_.values}});
    switch (op) {
      case Op::Select: a.push_back({"selectivity", axis_values(o_.selectivity)}); break;
      case Op::Unique: a.push_back({"duplicates", axis_values(o_.duplicates)}); break;
      case Op::ReduceByKey:
        a.push_back({"duplicates", axis_values(o_.duplicates)});
        a.push_back({"op", axis_values(o_.reduce_ops)});
        break;
      case Op::Reduce: a.push_back({"op", axis_values(o_.reduce_ops)}); break;
      case Op::Join:
        a.push_back({"match", axis_values(o_.match_rate)});
        a.push_back({"fanout", axis_values(o_.fanout)});
        break;
      case Op::Product: a.push_back({"right_rows", {o_.product_rows}}); break;
      default: break;
    }
    if (takes_sorted_input(op)) a.push_back({"input", axis_values(o_.inputs)});
    return a;
  }

  // Inputs, expected output and the operator call of one case, from its parameters.
  Prepared prepare(Op op, const std::string& variant, Transfer t, std::uint64_t size, const Params& p,
                   MemoryPlan& plan) {
    b_.variant_table().require_available(variant);
    const std::string dist = param(p, "dist").get<std::string>();
    const int kw = key_words_of_bits(param(p, "key").get<int>());
    const std::uint64_t n = rows_of(size, kw);
    b_.release_scratch();  // what earlier cases grew: this case's plan counts what it needs
    auto c = std::make_shared<CaseData>();
    c->key_words = kw;
    c->kind = op;
    c->variant = variant;
    // Unsorted input: generated in random order, the expected output made from sorted copies, the
    // output compared as a multiset (its order is the algorithm's); a variant that takes its input
    // sorted sorts it inside the timed pass.
    const bool unsorted = takes_sorted_input(op) && param(p, "input").get<std::string>() == "unsorted";
    const bool any_order = b_.variant_table().info(variant).any_order;
    c->multiset = unsorted || any_order;
    auto by_key = [&](const Relation& r) { return unsorted ? key_sorted(r) : r; };
    auto by_tuple = [&](const Relation& r) { return unsorted ? tuple_sorted(r, threads()) : r; };
    // The inputs and the expected output: the case's own where an earlier variant made them.
    const std::string id = CaseKey{test_name(op), "", p, size, t}.id();  // the case's id but its variant
    if (shared_.id != id) {
      shared_ = SharedCase{};  // the last case's memory goes before this one's is made
      shared_.id = id;
      shared_.every_variant_multiset = unsorted;
    }
    auto inputs = [&](auto make) {
      if (shared_.in.empty()) shared_.in = make();
      c->host_in = shared_.in;
    };
    auto expect = [&](auto make) {
      if (!shared_.expected && !shared_.expected_sorted) shared_.expected = make();
      c->expected = shared_.expected ? *shared_.expected : *shared_.expected_sorted;
    };
    // A generated relation of this case's key width.
    auto spec = [&](std::uint64_t rows, KeySpec k, bool sorted, std::uint32_t mask = 0xffffffffu) {
      return RelationSpec{rows, o_.values, k, sorted, mask, kw};
    };
    switch (op) {
      case Op::Project:
        inputs([&] { return std::vector<Relation>{input(spec(n, keys(dist, 0), false), "ra.a", size, t)}; });
        expect([&] { return ref::project(c->host_in[0], {0}); });
        return finish(plan, c, t, c->expected.rows(), 0,
                      [variant](CaseData& d) { return d.backend->project(*d.dev_in[0], {0}, variant, d.dev_out); });
      case Op::Select: {
        const double sel = param(p, "selectivity").get<double>();
        inputs([&] { return std::vector<Relation>{input(spec(n, keys(dist, 0), false), "ra.a", size, t)}; });
        // Keys are generated uniform over the 32-bit range, so [0, sel * 2^32) selects that
        // fraction; a 64-bit key k stands for wide_key(k), order kept, so the bound moves with it.
        const auto bound = static_cast<std::uint32_t>(std::min(sel * 4294967296.0, 4294967295.0));
        Predicate pred{0, 0, kw == 2 ? (std::uint64_t{bound} << 20) | 0xfffffu : bound};
        if (sel <= 0) pred.lo = 1, pred.hi = 0;
        expect([&] { return ref::select(c->host_in[0], pred); });
        Prepared pr = finish(plan, c, t, c->expected.rows(), o_.values, [variant, pred](CaseData& d) {
          return d.backend->select(*d.dev_in[0], pred, variant, d.dev_out);
        });
        pr.extra["selected_fraction"] = n ? static_cast<double>(c->expected.rows()) / static_cast<double>(n) : 0.0;
        return pr;
      }
      case Op::Unique:
      case Op::ReduceByKey: {
        const double dup = param(p, "duplicates").get<double>();
        const auto distinct =
            std::max<std::uint64_t>(1, static_cast<std::uint64_t>(static_cast<double>(n) * (1 - dup)));
        inputs([&] {
          return std::vector<Relation>{input(spec(n, keys(dist, distinct), !unsorted), "ra.sorted", size, t)};
        });
        if (op == Op::Unique) {
          expect([&] { return ref::unique(by_key(c->host_in[0])); });
          return sorted_first(*c, unsorted && !any_order, false, variant, plan,
                              finish(plan, c, t, c->expected.rows(), o_.values, [variant](CaseData& d) {
                                return d.backend->unique(d.in(0), variant, d.dev_out);
                              }));
        }
        const ReduceOp ro = parse_reduce(param(p, "op").get<std::string>());
        expect([&] { return ref::reduce_by_key(by_key(c->host_in[0]), ro); });
        return sorted_first(*c, unsorted && !any_order, false, variant, plan,
                            finish(plan, c, t, c->expected.rows(), o_.values, [variant, ro](CaseData& d) {
                              return d.backend->reduce_by_key(d.in(0), ro, variant, d.dev_out);
                            }));
      }
      case Op::Reduce: {
        const ReduceOp ro = parse_reduce(param(p, "op").get<std::string>());
        inputs([&] { return std::vector<Relation>{input(spec(n, keys(dist, 0), false), "ra.a", size, t)}; });
        c->is_reduce = true;
        c->expected_agg = ref::reduce(c->host_in[0], ro);
        return finish(plan, c, t, 1, o_.values, [variant, ro](CaseData& d) {
          Timed<Aggregate> r = d.backend->reduce(*d.dev_in[0], ro, variant);
          d.got_agg = r.value;
          return r.time;
        });
      }
      case Op::Join: {
        inputs([&] {
          return join_inputs(kw, dist, param(p, "match").get<double>(), param(p, "fanout").get<int>(), size, t,
                             !unsorted);
        });
        // The inputs by key, sorted once for the count and the answer (where unsorted).
        std::optional<std::array<Relation, 2>> lr;
        auto sorted = [&]() -> const std::array<Relation, 2>& {
          if (!lr) lr = std::array<Relation, 2>{by_key(c->host_in[0]), by_key(c->host_in[1])};
          return *lr;
        };
        // Count first: a skewed (Zipf) join can be far too large to build even once.
        if (!shared_.join_rows) shared_.join_rows = ref::join_rows(sorted()[0], sorted()[1]);
        check_output(c->host_in[0].bytes() + c->host_in[1].bytes(),
                     *shared_.join_rows * static_cast<std::uint64_t>(kw + 2 * o_.values) * 4, size);
        expect([&] { return ref::join(sorted()[0], sorted()[1]); });
        c->multiset = true;
        return sorted_first(*c, unsorted && !any_order, false, variant, plan,
                            finish(plan, c, t, c->expected.rows(), 2 * o_.values, [variant](CaseData& d) {
                              return d.backend->join(d.in(0), d.in(1), variant, d.dev_out);
                            }));
      }
      case Op::SetUnion:
      case Op::SetIntersection:
      case Op::SetDifference: {
        const SetOp so = op == Op::SetUnion          ? SetOp::Union
                         : op == Op::SetIntersection ? SetOp::Intersection
                                                     : SetOp::Difference;
        // n distinct keys and 2-valued attributes: about half the tuples of a also occur in b.
        const RelationSpec s = spec(n, keys(dist, n), !unsorted, 2u);
        inputs([&] { return std::vector<Relation>{input(s, "ra.set.a", size, t), input(s, "ra.set.b", size, t)}; });
        expect([&] { return ref::set_op(by_tuple(c->host_in[0]), by_tuple(c->host_in[1]), so); });
        return sorted_first(*c, unsorted && !any_order, true, variant, plan,
                            finish(plan, c, t, c->expected.rows(), o_.values, [variant, so](CaseData& d) {
                              return d.backend->set_op(d.in(0), d.in(1), so, variant, d.dev_out);
                            }));
      }
      case Op::Product: {
        const auto right = static_cast<std::uint64_t>(param(p, "right_rows").get<int>());
        if (2 * (kw + o_.values) > kMaxWords)
          throw SkipCase("the product of two " + std::to_string(kw + o_.values) + "-word tuples exceeds the " +
                         std::to_string(kMaxWords) + "-word tuple");
        inputs([&] {
          return std::vector<Relation>{input(spec(n, keys(dist, 0), false), "ra.a", size, t),
                                       input(spec(right, keys(dist, 0), false), "ra.b", size, t)};
        });
        const std::uint64_t out_rows = n * right;
        check_output(c->host_in[0].bytes() + c->host_in[1].bytes(),
                     out_rows * static_cast<std::uint64_t>(2 * (kw + o_.values)) * 4, size);
        expect([&] { return ref::product(c->host_in[0], c->host_in[1]); });
        return finish(plan, c, t, out_rows, 2 * o_.values + kw, [variant](CaseData& d) {
          return d.backend->product(*d.dev_in[0], *d.dev_in[1], variant, d.dev_out);
        });
      }
      case Op::Sort:
        // Unsorted keys of the distribution: Zipf repeats keys often, so stability matters.
        inputs([&] { return std::vector<Relation>{input(spec(n, keys(dist, 0), false), "ra.a", size, t)}; });
        expect([&] { return ref::sort(c->host_in[0]); });  // stable: the one correct output
        return finish(plan, c, t, n, o_.values,
                      [variant](CaseData& d) { return d.backend->sort(*d.dev_in[0], variant, d.dev_out); });
      case Op::Add:
      case Op::Subtract:
      case Op::Multiply: {
        const ArithOp ao = op == Op::Add ? ArithOp::Add : op == Op::Subtract ? ArithOp::Subtract : ArithOp::Multiply;
        inputs([&] {
          return std::vector<Relation>{input(spec(n, keys(dist, 0), false), "ra.a", size, t),
                                       input(spec(n, keys(dist, 0), false), "ra.b", size, t)};
        });
        expect([&] { return ref::arith(c->host_in[0], c->host_in[1], ao); });
        return finish(plan, c, t, n, o_.values, [variant, ao](CaseData& d) {
          return d.backend->arith(*d.dev_in[0], *d.dev_in[1], ao, variant, d.dev_out);
        });
      }
    }
    throw std::logic_error("ra: no set-up for this operator");
  }

  // Left: n tuples over n / fanout distinct even keys (each key about `fanout` times). Right: the
  // same, then each tuple's key is made odd (matching nothing) with probability 1 - match. The
  // output is about match * n * fanout tuples; its exact size comes from the reference's count.
  // Both are sorted by whole tuple unless `sorted` is false (the cases from unsorted input).
  std::vector<Relation> join_inputs(int kw, const std::string& dist, double match, int fan, std::uint64_t size,
                                    Transfer t, bool sorted) {
    const std::uint64_t n = rows_of(size, kw);
    KeySpec k = keys(dist, std::max<std::uint64_t>(1, n / static_cast<std::uint64_t>(fan)));
    k.max = 0x7fffffffu;  // doubled below; 64-bit keys (wide_key, below 2^52) double safely too
    RelationSpec spec{n, o_.values, k, false, 0xffffffffu, kw};
    Relation l = input(spec, "ra.join.l", size, t);
    Relation r = input(spec, "ra.join.r", size, t);
    const std::uint64_t mseed = s_.seed("ra.join.match", size);
    for (std::uint64_t i = 0; i < n; ++i) {
      set_key(l.tuple(i), kw, l.key(i) * 2);
      set_key(r.tuple(i), kw, r.key(i) * 2 + (uniform01(rand_at(mseed, i)) < match ? 0u : 1u));
    }
    if (sorted) {
      sort_tuples(l, threads());
      sort_tuples(r, threads());
    }
    return {l, r};
  }

  Session& s_;
  RaBackend& b_;
  const RaOptions& o_;
  std::shared_ptr<CaseData> staged_;  // the case whose plan is being checked
  SharedCase shared_;                 // the current case's, for all its variants
};

}  // namespace

int ra_main(int argc, char** argv, Platform& platform, RaBackend& backend) {
  auto o = std::make_shared<RaOptions>();
  BenchmarkDef def;
  def.name = "ra";
  def.description =
      "Relational-algebra primitives (project, select, unique, reduce, reduce-by-key, join, set operations, product, "
      "add/subtract/multiply, sort) on key/value tuple relations";
  def.add_options = [o](CLI::App& app) {
    add_workload_options(app, *o, {"unique/reduce_by_key", "join"});
    app.add_option("--key-bits", o->key_bits,
                   "Key widths to sweep: 32 and/or 64 (64-bit keys take two words, high word first)")
        ->delimiter(',');
    app.add_option("--selectivity", o->selectivity, "select: fractions of tuples selected, in [0, 1]")->delimiter(',');
    app.add_option("--reduce-op", o->reduce_ops, "reduce/reduce_by_key: sum, min, max")->delimiter(',');
    app.add_option("--product-rows", o->product_rows, "product: tuples of the right input (1..4096)");
    app.add_option("--input", o->inputs,
                   "unique/reduce_by_key/join/set operations: sorted (the paper's contract: sorted input, the sort "
                   "not timed) and/or unsorted (random order; a variant that needs it sorted sorts it in its time)")
        ->delimiter(',');
  };
  def.validate = [o] {
    validate_workload_options(*o);
    for (int k : o->key_bits)
      if (k != 32 && k != 64) throw UsageError("--key-bits: " + std::to_string(k) + " is not 32 or 64");
    for (double s : o->selectivity)
      if (!(s >= 0 && s <= 1)) throw UsageError("--selectivity must lie in [0, 1], got " + number_text(s));
    for (const std::string& r : o->reduce_ops) parse_reduce(r);
    if (o->product_rows < 1 || o->product_rows > 4096) throw UsageError("--product-rows must be 1..4096");
    if (o->inputs.empty()) throw UsageError("--input: name sorted and/or unsorted");
    for (const std::string& in : o->inputs)
      if (in != "sorted" && in != "unsorted") throw UsageError("--input: '" + in + "' is not sorted or unsorted");
    refuse_repeats(o->key_bits, "--key-bits");
    refuse_repeats(o->selectivity, "--selectivity");
    refuse_repeats(o->reduce_ops, "--reduce-op");
    refuse_repeats(o->inputs, "--input");
  };
  def.run = [o, &backend](Session& s) { RaRunner(s, backend, *o).run(); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb::ra
