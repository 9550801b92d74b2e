#include "bench/tpch.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <cmath>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "harness/errors.hpp"
#include "harness/made_once.hpp"
#include "harness/memory_plan.hpp"
#include "reference/tpch.hpp"
#include "harness/options.hpp"
#include "harness/repeats.hpp"
#include "workloads/column_files.hpp"
#include "workloads/tbl_io.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {

void TpchBackend::plan_scratch(const Plan&, const std::string&, std::uint64_t, MemoryPlan&) const {}

std::uint64_t max_input_rows(const Plan& plan) {
  std::uint64_t most = 0;
  for (const auto& in : plan.inputs) most = std::max(most, in->rows());
  return most;
}

std::uint64_t join_steps(const Plan& plan) {
  return static_cast<std::uint64_t>(
      std::count_if(plan.steps.begin(), plan.steps.end(), [](const Step& s) { return s.op == Op::Join; }));
}

bool has_wide_columns(const Plan& plan) {
  for (const auto& schema : plan_schemas(plan))
    for (const ColumnInfo& c : schema)
      if (c.wide) return true;
  return false;
}

Verification compare_result(const Relation& got, const Relation& want, std::uint64_t want_checksum, int threads) {
  if (got.cols.size() != want.cols.size())
    return Verification::fail(std::to_string(got.cols.size()) + " columns, expected " +
                              std::to_string(want.cols.size()));
  for (const Column& c : got.cols)
    if (c.v.size() != want.rows())
      return Verification::fail("column " + c.info.name + " has " + std::to_string(c.v.size()) + " rows, expected " +
                                std::to_string(want.rows()));
  std::uint64_t sum = checksum(got, threads);
  char hex[32];
  std::snprintf(hex, sizeof hex, "%016" PRIx64, sum);
  if (sum != want_checksum) return Verification::fail(std::string("checksum ") + hex + " differs from the reference's");
  Verification v = Verification::pass(std::to_string(want.rows()) + " rows, order-independent checksum " + hex +
                                      " equal to the serial reference");
  v.extra = {{"rows", want.rows()}, {"columns", want.cols.size()}, {"checksum", hex}};
  return v;
}

std::string output_path(const std::string& path, const std::string& kernel) {
  auto slash = path.find_last_of('/');
  auto dot = path.find_last_of('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return path + "." + kernel;
  return path.substr(0, dot) + "." + kernel + path.substr(dot);
}

namespace {

struct TpchOptions {
  std::vector<std::string> kernels = kKernels;
  std::vector<std::string> data = {"random", "tpch"};
  double sf = 1;
  std::string tbl_dir;
  std::string tables_dir;  // --tables: raw binary columns converted from Parquet (workloads/column_files.hpp)
  std::string output;
  bool generated() const { return tbl_dir.empty() && tables_dir.empty(); }
  std::vector<int> key_bits{32};
};

// The data, plan and reference answer of one (kernel, data set, size), shared by its variants.
struct CaseData {
  Plan plan;
  std::shared_ptr<Relation> want;
  std::uint64_t want_checksum = 0;
};

class TpchRunner {
 public:
  TpchRunner(Session& s, TpchBackend& b, const TpchOptions& o) : s_(s), b_(b), o_(o) {}

  void run() {
    for (const std::string& d : o_.data) {
      for (const std::string& k : o_.kernels) {
        for (int bits : o_.key_bits) {
          if (d == "random") {
            for (std::uint64_t bytes : s_.sizes()) {
              std::shared_ptr<CaseData> data;
              cases(k, {{"data", "random"}, {"key", bits}}, bytes, bits, data, [this, k, bytes, bits] {
                return random_kernel(k, random_tuples(bytes, bits), s_.seed("tpch-" + k, bytes), threads(), bits);
              });
            }
          } else {
            // Real tables are no size sweep: their cases carry no size (an id without '@'), so --list
            // names them without generating or loading the tables; bytes.input has their size.
            Params p = o_.generated()       ? Params{{"data", "tpch"}, {"key", bits}, {"sf", o_.sf}}
                       : o_.tbl_dir.empty() ? Params{{"data", "parquet"}, {"key", bits}}
                                            : Params{{"data", "tbl"}, {"key", bits}};
            std::shared_ptr<CaseData> data;
            cases(k, p, 0, bits, data, [this, k, bits] { return tpch_kernel(k, tables(), bits); });
          }
        }
      }
    }
  }

 private:
  // Tuples of a random relation of `bytes` bytes: a key of `bits` bits and a 32-bit value.
  static std::uint64_t random_tuples(std::uint64_t bytes, int bits) { return bytes / (bits == 64 ? 12 : 8); }
  // The bytes of the random kernel's inputs (B and C: r2's value is a foreign key, as wide as the keys).
  static std::uint64_t random_input_bytes(const std::string& kernel, std::uint64_t bytes, int bits) {
    const std::uint64_t n = random_tuples(bytes, bits), kw = bits == 64 ? 2 : 1;
    return kernel == "A" ? n * (kw + 1) * 4 : n * ((kw + 1) * 2 + 2 * kw) * 4;
  }

  // Why tables whose join keys reach 2^32 do not run at 32-bit keys ("" when they can). The
  // generator's keys are known before generating (order keys pass 2^32 near sf 716).
  std::string key_width_skip(int bits) {
    if (bits == 64) return "";
    std::uint64_t top = 0;
    if (!tables_.made() && o_.generated()) {
      const auto orders =
          static_cast<std::uint64_t>(std::max(1.0, std::round(o_.sf * static_cast<double>(kOrdersPerSf))));
      if (!wide_order_keys(orders)) return "";
      top = sparse_order_key(orders);
    } else {
      top = max_key(tables());
    }
    if (top <= 0xffffffffull) return "";
    return "keys reach 2^32 (the largest join key is " + std::to_string(top) + "): these tables run at key=64 only";
  }

  int threads() const { return effective_threads(s_.options()); }

  // The tables, generated or loaded once for every case. Out of memory while making them skips
  // every TPC-H case with that reason (once: later cases do not try again).
  const Tables& tables() {
    return tables_.get(
        [&] {
          return o_.generated()       ? generate_tables(o_.sf, s_.options().seed, threads())
                 : o_.tbl_dir.empty() ? load_column_tables(o_.tables_dir)
                                      : load_tables(o_.tbl_dir);
        },
        [&] {
          return o_.generated()
                     ? "out of host memory generating TPC-H sf=" + param_text(o_.sf) + " (its columns need about " +
                           std::to_string(generated_bytes(o_.sf) >> 20) + " MiB)"
                     : "out of host memory loading the tables of " + o_.tbl_dir + o_.tables_dir;
        });
  }
  // The tables' bytes, for the generator known before generating (so a scale factor that cannot
  // fit is skipped without trying).
  std::uint64_t tables_bytes() {
    if (!tables_.made() && o_.generated()) return generated_bytes(o_.sf);
    return tables().bytes();
  }

  template <class MakePlan>
  void cases(const std::string& kernel, const Params& params, std::uint64_t bytes, int bits,
             std::shared_ptr<CaseData>& data, MakePlan make_plan) {
    const bool real = params[0].second != "random";
    for (const std::string& variant : b_.variants()) {
      for (Transfer t : s_.transfers()) {
        CaseKey key{kernel, variant, params, bytes, t};
        CaseSetup setup;
        setup.plan = [&, variant, real, bits](MemoryPlan& device) {
          b_.variant_table().require_available(variant);
          if (real) {
            const std::string why = key_width_skip(bits);
            if (!why.empty()) throw SkipCase(why);
          }
          // What one case holds at once, before anything is made: its inputs, the intermediates
          // of the operator-at-a-time plan, the answer, and the reference's answer beside it.
          // At 64-bit keys the inputs' key columns take two words (an estimate for the tables,
          // whose inputs are at most their kept columns with every key widened).
          const std::uint64_t inputs =
              real ? tables_bytes() * (bits == 64 ? 2 : 1) : random_input_bytes(kernel, bytes, bits);
          MemoryPlan::for_platform(s_.platform())
              .add("inputs", inputs)
              .add("intermediate relations (operator at a time, up to 3 x the inputs)", 3 * inputs)
              .add("answer (up to the inputs)", inputs)
              .add("reference answer", inputs)
              .require(s_.platform());
          if (!data) data = make_data(kernel, make_plan(), real, bits);
          // The device's share now that the plan is known: its inputs, the intermediates, the
          // answer, and what the variant allocates beside them (plan_scratch).
          {
            const std::uint64_t in = data->plan.input_bytes();
            device.add("inputs", in)
                .add("intermediate relations (operator at a time, up to 3 x the inputs)", 3 * in)
                .add("answer", data->want ? data->want->bytes() : in);
            // The kernels' joins are key / foreign-key joins (output at most the larger input)
            // but the last, whose output is the answer (the tests' many-to-many edge plans).
            const std::uint64_t join_rows =
                std::max(max_input_rows(data->plan), data->want ? data->want->rows() : max_input_rows(data->plan));
            b_.plan_scratch(data->plan, variant, join_rows, device);
            // On the cpu backend the device is host memory, where the reference answer lies too.
            if (!s_.platform().has_transfers() && data->want) device.add("reference answer", data->want->bytes());
          }
        };
        setup.prepare = [&, variant, t]() {
          std::shared_ptr<TpchRun> run = b_.prepare(data->plan, variant, t);
          auto want = data->want;
          std::uint64_t want_sum = data->want_checksum;
          int th = threads();
          Prepared prep = prepared_from(run);
          prep.verify = [run, want, want_sum, th] { return compare_result(run->result(), *want, want_sum, th); };
          prep.elements = data->plan.input_rows();
          prep.input_bytes = data->plan.input_bytes();
          std::uint64_t out_bytes = want ? want->bytes() : 0;
          prep.moves(*prep.input_bytes, out_bytes);
          prep.transfer_bytes = t == Transfer::None ? 0 : *prep.input_bytes + out_bytes;
          prep.extra = {{"kernel", kernel}, {"steps", data->plan.steps.size()}};
          return prep;
        };
        s_.run(key, setup);
      }
    }
  }

  std::shared_ptr<CaseData> make_data(const std::string& kernel, Plan plan, bool real, int bits) {
    auto d = std::make_shared<CaseData>();
    d->plan = std::move(plan);
    if (s_.options().verify || !o_.output.empty()) {
      d->want = std::make_shared<Relation>(reference_execute(d->plan));
      d->want_checksum = checksum(*d->want, threads());
      if (!s_.options().quiet)
        std::printf(
            "# kernel %s on %s, %d-bit keys: %" PRIu64 " input rows -> %" PRIu64 " result rows, checksum %016" PRIx64
            "\n",
            kernel.c_str(),
            real ? (o_.generated() ? ("TPC-H sf=" + param_text(o_.sf)).c_str() : (o_.tbl_dir + o_.tables_dir).c_str())
                 : "random relations",
            bits, d->plan.input_rows(), d->want->rows(), d->want_checksum);
      // Written once per kernel, by the first key width that runs (the answers of the widths
      // differ only in generated tables' keys, which key=64 maps into the 64-bit range).
      if (real && !o_.output.empty() && written_.insert(kernel).second) {
        std::string path = o_.kernels.size() == 1 ? o_.output : output_path(o_.output, kernel);
        write_rows(*d->want, path);
      }
    }
    return d;
  }

  Session& s_;
  TpchBackend& b_;
  const TpchOptions& o_;
  MadeOnce<Tables> tables_;
  std::set<std::string> written_;  // kernels whose --output is written
};

// --output is checked before any work: each file it will write must be creatable (its folder
// exists and is writable) or, when it exists, writable and not a folder.
void check_output_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec)) throw UsageError("--output: '" + path + "' is a directory");
  if (fs::exists(p, ec)) {
    if (::access(path.c_str(), W_OK) != 0)
      throw UsageError("--output: cannot write '" + path + "': " + std::strerror(errno));
    return;
  }
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir, ec))
    throw UsageError("--output: folder '" + dir.string() + "' of '" + path + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError("--output: cannot create '" + path + "' in '" + dir.string() + "': " + std::strerror(errno));
}

}  // namespace

int tpch_main(int argc, char** argv, Platform& platform, TpchBackend& backend) {
  auto o = std::make_shared<TpchOptions>();
  std::string kernels = "A,B,C", data = "random,tpch";
  const CLI::Option* sf_option = nullptr;
  BenchmarkDef def;
  def.name = "tpch";
  def.description = "TPC-H micro-kernels A (select chain), B (two joins), C (selects, joins, project)";
  def.add_options = [o, &kernels, &data, &sf_option](CLI::App& app) {
    app.add_option("--key-bits", o->key_bits,
                   "Join key widths to sweep: 32 and/or 64 (64-bit keys: two words; generated keys mapped above 2^32)")
        ->delimiter(',');
    app.add_option("--kernels", kernels, "Kernels to run, comma separated: A, B, C")->capture_default_str();
    app.add_option("--data", data, "Data sets, comma separated: random (relations of --sizes bytes each), tpch")
        ->capture_default_str();
    sf_option = app.add_option("--sf", o->sf, "TPC-H scale factor of the built-in generator (fractions allowed)")
                    ->capture_default_str();
    app.add_option("--tbl-dir", o->tbl_dir, "Load customer.tbl, orders.tbl, lineitem.tbl (dbgen) from this directory")
        ->check(not_empty);
    app.add_option(
           "--tables", o->tables_dir,
           "Load the tables from a folder of Parquet files (<table>.parquet or <table>/*.parquet; converted once "
           "by scripts/hdb/python -m hdb.parquet_tables tpch, through DuckDB, into a cache folder) or from the raw "
           "binary columns that command wrote")
        ->check(not_empty);
    app.add_option("--output", o->output,
                   "Write each kernel's TPC-H result rows pipe-separated to FILE (FILE.A.ext, ... for several kernels)")
        ->check(not_empty);
  };
  def.validate = [o, &kernels, &data, &sf_option] {
    auto split = [](const std::string& text) {
      std::vector<std::string> out;
      std::size_t b = 0;
      while (b <= text.size()) {
        std::size_t e = text.find(',', b);
        if (e == std::string::npos) e = text.size();
        if (e > b) out.push_back(text.substr(b, e - b));
        b = e + 1;
      }
      return out;
    };
    o->kernels = split(kernels);
    o->data = split(data);
    refuse_repeats(o->kernels, "--kernels");
    refuse_repeats(o->data, "--data");
    if (o->kernels.empty()) throw UsageError("--kernels is empty");
    for (const auto& k : o->kernels)
      if (k != "A" && k != "B" && k != "C") throw UsageError("--kernels: unknown kernel '" + k + "' (A, B or C)");
    if (o->data.empty()) throw UsageError("--data is empty");
    for (const auto& d : o->data)
      if (d != "random" && d != "tpch") throw UsageError("--data: unknown data set '" + d + "' (random or tpch)");
    if (!(o->sf > 0) || o->sf > 1000) throw UsageError("--sf must be in (0, 1000]");
    if (o->key_bits.empty()) throw UsageError("--key-bits is empty");
    refuse_repeats(o->key_bits, "--key-bits");
    for (int k : o->key_bits)
      if (k != 32 && k != 64) throw UsageError("--key-bits: " + std::to_string(k) + " is not 32 or 64");
    std::sort(o->key_bits.begin(), o->key_bits.end());
    o->key_bits.erase(std::unique(o->key_bits.begin(), o->key_bits.end()), o->key_bits.end());
    bool tpch = std::find(o->data.begin(), o->data.end(), "tpch") != o->data.end();
    if (!o->tbl_dir.empty() && !tpch) throw UsageError("--tbl-dir needs --data with tpch");
    if (!o->tables_dir.empty() && !tpch) throw UsageError("--tables needs --data with tpch");
    if (sf_option->count() > 0 && !tpch)
      throw UsageError("--sf: the scale factor of the generated TPC-H tables; --data " + data +
                       " makes none (add tpch to --data)");
    tbl::check_table_source(o->tbl_dir, {"customer.tbl", "orders.tbl", "lineitem.tbl"}, o->tables_dir,
                            sf_option->count() > 0);
    if (!o->output.empty() && !tpch) throw UsageError("--output writes TPC-H results: it needs --data with tpch");
    if (!o->output.empty()) {
      if (o->kernels.size() == 1)
        check_output_path(o->output);
      else
        for (const auto& k : o->kernels) check_output_path(output_path(o->output, k));
    }
  };
  def.prepare = [o] {
    if (!o->tables_dir.empty())
      o->tables_dir = columns::column_dir_for("tpch", o->tables_dir);  // Parquet: converted once, then loaded
  };
  def.paths = [o] {
    std::vector<PathUse> uses;
    if (!o->output.empty()) {
      if (o->kernels.size() == 1)
        uses.push_back({"--output", o->output, true});
      else
        for (const auto& k : o->kernels) uses.push_back({"--output", output_path(o->output, k), true});
    }
    if (!o->tbl_dir.empty())
      for (const char* f : {"customer.tbl", "orders.tbl", "lineitem.tbl"})
        uses.push_back({"--tbl-dir", (std::filesystem::path(o->tbl_dir) / f).string(), false});
    if (!o->tables_dir.empty() && columns::has_manifest(o->tables_dir))  // Parquet files: converted by the run
      uses.push_back({"--tables", (std::filesystem::path(o->tables_dir) / columns::kManifest).string(), false});
    return uses;
  };
  def.run = [o, &backend](Session& s) { TpchRunner(s, backend, *o).run(); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb::tpch
