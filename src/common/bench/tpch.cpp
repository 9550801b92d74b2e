#include "bench/tpch.hpp"

#include <algorithm>
#include <cerrno>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <new>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "harness/errors.hpp"
#include "reference/tpch.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {

Verification compare_result(const Relation& got, const Relation& want, std::uint64_t want_checksum, int threads) {
  if (got.cols.size() != want.cols.size())
    return Verification::fail(std::to_string(got.cols.size()) + " columns, expected " + std::to_string(want.cols.size()));
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
  std::vector<std::string> kernels = {"A", "B", "C"};
  std::vector<std::string> data = {"random", "tpch"};
  double sf = 1;
  std::string tbl_dir;
  std::string output;
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
        if (d == "random") {
          for (std::uint64_t bytes : s_.sizes()) {
            std::shared_ptr<CaseData> data;
            cases(k, {{"data", "random"}}, bytes, data, [this, k, bytes] {
              return random_kernel(k, bytes / 8, s_.seed("tpch-" + k, bytes), threads());
            });
          }
        } else {
          // Real tables are no size sweep: their cases carry no size (an id without '@'), so --list
          // names them without generating or loading the tables; bytes.input has their size.
          Params p = o_.tbl_dir.empty() ? Params{{"data", "tpch"}, {"sf", o_.sf}} : Params{{"data", "tbl"}};
          std::shared_ptr<CaseData> data;
          cases(k, p, 0, data, [this, k] { return tpch_kernel(k, tables()); });
        }
      }
    }
  }

 private:
  int threads() const { return effective_threads(s_.options()); }

  // The tables, generated or loaded once for every case. Out of memory while making them skips
  // every TPC-H case with that reason (once: later cases do not try again).
  const Tables& tables() {
    if (!tables_) {
      if (!tables_failed_.empty()) throw SkipCase(tables_failed_);
      try {
        tables_ = std::make_unique<Tables>(o_.tbl_dir.empty() ? generate_tables(o_.sf, s_.options().seed, threads())
                                                              : load_tables(o_.tbl_dir));
      } catch (const std::bad_alloc&) {
        tables_failed_ = o_.tbl_dir.empty()
                             ? "out of host memory generating TPC-H sf=" + param_text(o_.sf) + " (its columns need about " +
                                   std::to_string(generated_bytes(o_.sf) >> 20) + " MiB)"
                             : "out of host memory loading the .tbl files of " + o_.tbl_dir;
        throw SkipCase(tables_failed_);
      }
    }
    return *tables_;
  }
  // The tables' bytes, for the generator known before generating (so a scale factor that cannot
  // fit is skipped without trying).
  std::uint64_t tables_bytes() {
    if (!tables_ && o_.tbl_dir.empty()) return generated_bytes(o_.sf);
    return tables().bytes();
  }

  template <class MakePlan>
  void cases(const std::string& kernel, const Params& params, std::uint64_t bytes, std::shared_ptr<CaseData>& data,
             MakePlan make_plan) {
    const bool real = params[0].second != "random";
    for (const std::string& variant : b_.variants()) {
      for (Transfer t : s_.transfers()) {
        CaseKey key{kernel, variant, params, bytes, t};
        s_.run(key, [&, variant, t, real]() {
          // Inputs, intermediates of the operator-at-a-time plan, the answer and the reference.
          std::uint64_t inputs = real ? tables_bytes() : bytes * (kernel == "A" ? 1 : 3);
          if (inputs * 6 > s_.platform().memory_bytes() / 2)
            throw SkipCase("needs about " + std::to_string(inputs * 6 >> 20) + " MiB, more than half the memory");
          if (!data) data = make_data(kernel, make_plan(), real);
          std::shared_ptr<TpchRun> run = b_.prepare(data->plan, variant, t);
          auto want = data->want;
          std::uint64_t want_sum = data->want_checksum;
          int th = threads();
          Prepared prep;
          prep.pass = [run] { return run->pass(); };
          prep.verify = [run, want, want_sum, th] { return compare_result(run->result(), *want, want_sum, th); };
          prep.elements = data->plan.input_rows();
          prep.input_bytes = data->plan.input_bytes();
          std::uint64_t out_bytes = want ? want->bytes() : 0;
          prep.min_bytes_moved = prep.input_bytes + out_bytes;
          prep.transfer_bytes = t == Transfer::None ? 0 : prep.input_bytes + out_bytes;
          prep.extra = {{"kernel", kernel}, {"steps", data->plan.steps.size()}};
          return prep;
        });
      }
    }
  }

  std::shared_ptr<CaseData> make_data(const std::string& kernel, Plan plan, bool real) {
    auto d = std::make_shared<CaseData>();
    d->plan = std::move(plan);
    if (s_.options().verify || !o_.output.empty()) {
      d->want = std::make_shared<Relation>(reference_execute(d->plan));
      d->want_checksum = checksum(*d->want, threads());
      if (!s_.options().quiet)
        std::printf("# kernel %s on %s: %" PRIu64 " input rows -> %" PRIu64 " result rows, checksum %016" PRIx64 "\n",
                    kernel.c_str(), real ? (o_.tbl_dir.empty() ? ("TPC-H sf=" + param_text(o_.sf)).c_str() : o_.tbl_dir.c_str()) : "random relations",
                    d->plan.input_rows(), d->want->rows(), d->want_checksum);
      if (real && !o_.output.empty()) {
        std::string path = o_.kernels.size() == 1 ? o_.output : output_path(o_.output, kernel);
        write_rows(*d->want, path);
      }
    }
    return d;
  }

  Session& s_;
  TpchBackend& b_;
  const TpchOptions& o_;
  std::unique_ptr<Tables> tables_;
  std::string tables_failed_;  // why the tables could not be made
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
  if (!fs::is_directory(dir, ec)) throw UsageError("--output: folder '" + dir.string() + "' of '" + path + "' does not exist");
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError("--output: cannot create '" + path + "' in '" + dir.string() + "': " + std::strerror(errno));
}

}  // namespace

int tpch_main(int argc, char** argv, Platform& platform, TpchBackend& backend) {
  auto o = std::make_shared<TpchOptions>();
  std::string kernels = "A,B,C", data = "random,tpch";
  BenchmarkDef def;
  def.name = "tpch";
  def.description = "TPC-H micro-kernels A (select chain), B (two joins), C (selects, joins, project)";
  def.add_options = [o, &kernels, &data](CLI::App& app) {
    app.add_option("--kernels", kernels, "Kernels to run, comma separated: A, B, C")->capture_default_str();
    app.add_option("--data", data, "Data sets, comma separated: random (relations of --sizes bytes each), tpch")
        ->capture_default_str();
    app.add_option("--sf", o->sf, "TPC-H scale factor of the built-in generator (fractions allowed)")
        ->capture_default_str();
    app.add_option("--tbl-dir", o->tbl_dir, "Load customer.tbl, orders.tbl, lineitem.tbl (dbgen) from this directory");
    app.add_option("--output", o->output,
                   "Write each kernel's TPC-H result rows pipe-separated to FILE (FILE.A.ext, ... for several kernels)");
  };
  def.validate = [o, &kernels, &data] {
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
    if (o->kernels.empty()) throw UsageError("--kernels is empty");
    for (const auto& k : o->kernels)
      if (k != "A" && k != "B" && k != "C") throw UsageError("--kernels: unknown kernel '" + k + "' (A, B or C)");
    if (o->data.empty()) throw UsageError("--data is empty");
    for (const auto& d : o->data)
      if (d != "random" && d != "tpch") throw UsageError("--data: unknown data set '" + d + "' (random or tpch)");
    if (!(o->sf > 0) || o->sf > 1000) throw UsageError("--sf must be in (0, 1000]");
    bool tpch = std::find(o->data.begin(), o->data.end(), "tpch") != o->data.end();
    if (!o->tbl_dir.empty() && !tpch) throw UsageError("--tbl-dir needs --data with tpch");
    for (const char* f : {"customer.tbl", "orders.tbl", "lineitem.tbl"})
      if (!o->tbl_dir.empty() && !std::filesystem::is_regular_file(std::filesystem::path(o->tbl_dir) / f))
        throw UsageError("--tbl-dir " + o->tbl_dir + " has no " + f);
    if (!o->output.empty() && !tpch) throw UsageError("--output writes TPC-H results: it needs --data with tpch");
    if (!o->output.empty()) {
      if (o->kernels.size() == 1) check_output_path(o->output);
      else
        for (const auto& k : o->kernels) check_output_path(output_path(o->output, k));
    }
  };
  def.run = [o, &backend](Session& s) { TpchRunner(s, backend, *o).run(); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb::tpch
