#include "bench/ssb.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <filesystem>
#include <map>

#include <CLI/CLI.hpp>

#include "harness/errors.hpp"
#include "harness/made_once.hpp"
#include "reference/ssb.hpp"
#include "harness/options.hpp"
#include "workloads/column_files.hpp"
#include "workloads/tbl_io.hpp"
#include "workloads/ssb_tables.hpp"

namespace hdb::ssb {

std::string test_name(const Query& q) { return "q" + q.name; }

const std::vector<std::string>& tests() {
  static const std::vector<std::string> t = [] {
    std::vector<std::string> n;
    for (const Query& q : queries()) n.push_back(test_name(q));
    return n;
  }();
  return t;
}

void SsbBackend::plan_scratch(const Query&, const Tables&, const std::string&, MemoryPlan&) const {}

Verification compare_result(const Query& q, const Result& got, const Result& want) {
  auto row_text = [&q](const ResultRow& r) {
    Result one{{r}};
    std::string s = format_result(q, one);
    if (!s.empty() && s.back() == '\n') s.pop_back();
    return s;
  };
  if (got.rows.size() != want.rows.size())
    return Verification::fail(std::to_string(got.rows.size()) + " rows, expected " + std::to_string(want.rows.size()));
  for (std::size_t i = 0; i < want.rows.size(); ++i)
    if (!(got.rows[i] == want.rows[i]))
      return Verification::fail("row " + std::to_string(i) + " is '" + row_text(got.rows[i]) + "', expected '" +
                                row_text(want.rows[i]) + "'");
  std::int64_t total = 0;
  for (const ResultRow& r : want.rows) total += r.value;
  Verification v = Verification::pass(std::to_string(want.rows.size()) + " rows equal to the serial reference's");
  v.extra = {{"rows", want.rows.size()}, {"sum", total}};
  return v;
}

namespace {

struct SsbOptions {
  std::vector<std::string> queries = query_names();
  double sf = 1;
  std::string tbl_dir;
  std::string tables_dir;  // --tables: raw binary columns converted from Parquet (workloads/column_files.hpp)
  bool generated() const { return tbl_dir.empty() && tables_dir.empty(); }
  std::vector<Residency> residency = {Residency::Host, Residency::Device};  // --resident
};

class SsbRunner {
 public:
  SsbRunner(Session& s, SsbBackend& b, const SsbOptions& o) : s_(s), b_(b), o_(o) {}

  void run() {
    // Tables are no size sweep: the cases carry no size (an id without '@'), so --list names them
    // without generating or loading anything; bytes.input has the columns a query reads.
    const Params base = o_.generated()       ? Params{{"data", "generated"}, {"sf", o_.sf}}
                        : o_.tbl_dir.empty() ? Params{{"data", "parquet"}}
                                             : Params{{"data", "tbl"}};
    // `resident` only where there is a bus to cross: a cpu case's tables are in its memory anyway.
    const bool bus = s_.platform().has_transfers();
    const std::vector<Residency> where = bus ? o_.residency : std::vector<Residency>{Residency::Device};
    for (const std::string& name : o_.queries) {
      const Query& q = query(name);
      for (const std::string& variant : b_.variants())
        for (Residency r : where) {
          Params params = base;
          if (bus) params.emplace_back("resident", r == Residency::Device ? "yes" : "no");
          for (Transfer t : s_.transfers()) run_case(q, CaseKey{test_name(q), variant, params, 0, t}, r);
        }
    }
  }

 private:
  void run_case(const Query& q, const CaseKey& key, Residency residency) {
    CaseSetup setup;
    setup.plan = [this, &q, variant = key.variant](MemoryPlan& device) {
      b_.variant_table().require_available(variant);
      // The tables and the reference's answer (small) in host memory, before anything is made.
      MemoryPlan::for_platform(s_.platform())
          .add("tables (the columns the queries read)", tables_bytes())
          .require(s_.platform());
      const Tables& t = tables();
      device.add("columns the query reads", touched_bytes(q, t));
      b_.plan_scratch(q, t, variant, device);
    };
    setup.prepare = [this, &q, key, residency]() {
      const Tables& t = tables();
      std::shared_ptr<SsbRun> run = b_.prepare(q, t, key.variant, key.transfer, residency);
      const Result* want = s_.options().verify ? &reference(q) : nullptr;
      Prepared prep = prepared_from(run);
      prep.verify = [run, want, &q] {
        if (!want) return Verification::pass("not verified (--no-verify)");
        return compare_result(q, run->result(), *want);
      };
      const std::uint64_t in = touched_bytes(q, t);
      const std::uint64_t out = want ? want->rows.size() * (4 * q.group_by.size() + 8) : 0;
      prep.elements = t.rows(Table::Lineorder);
      prep.input_bytes = in;
      prep.moves(in, out);
      // Resident tables cross the bus once, in prepare: a pass moves only the answer.
      prep.transfer_bytes = key.transfer == Transfer::None ? 0 : (residency == Residency::Device ? 0 : in) + out;
      std::vector<std::string> cols;
      for (Col c : q.columns()) cols.emplace_back(col_name(c));
      prep.extra = {{"query", q.name}, {"columns", cols}, {"lineorder_rows", t.rows(Table::Lineorder)}};
      return prep;
    };
    s_.run(key, setup);
  }

  const Result& reference(const Query& q) {
    auto it = want_.find(q.name);
    if (it != want_.end()) return it->second;
    Result r = reference_query(q.name, tables(), effective_threads(s_.options()));
    if (!s_.options().quiet) {
      std::int64_t total = 0;
      for (const ResultRow& row : r.rows) total += row.value;
      std::printf("# Q%s on %s: %zu rows, sum of the aggregate %" PRId64 "\n", q.name.c_str(), tables().source.c_str(),
                  r.rows.size(), total);
    }
    return want_.emplace(q.name, std::move(r)).first->second;
  }

  // The tables, generated or loaded once for every case. Out of memory while making them skips
  // every case with that reason (once: later cases do not try again).
  const Tables& tables() {
    return tables_.get(
        [&] {
          return o_.generated()       ? generate_tables(o_.sf, s_.seed("ssb"), effective_threads(s_.options()))
                 : o_.tbl_dir.empty() ? load_column_tables(o_.tables_dir)
                                      : load_tables(o_.tbl_dir);
        },
        [&] {
          return o_.generated()
                     ? "out of host memory generating SSB sf=" + param_text(o_.sf) + " (its columns need about " +
                           std::to_string(generated_bytes(o_.sf) >> 20) + " MiB)"
                     : "out of host memory loading the tables of " + o_.tbl_dir + o_.tables_dir;
        });
  }
  // Known before generating, so a scale factor that cannot fit is skipped without trying.
  std::uint64_t tables_bytes() {
    if (!tables_.made() && o_.generated()) return generated_bytes(o_.sf);
    return tables().bytes();
  }

  Session& s_;
  SsbBackend& b_;
  const SsbOptions& o_;
  MadeOnce<Tables> tables_;
  std::map<std::string, Result> want_;
};

}  // namespace

int ssb_main(int argc, char** argv, Platform& platform, SsbBackend& backend) {
  auto o = std::make_shared<SsbOptions>();
  auto queries_text = std::make_shared<std::string>();
  auto resident_text = std::make_shared<std::string>("both");
  auto sf_option = std::make_shared<const CLI::Option*>(nullptr);
  BenchmarkDef def;
  def.name = "ssb";
  def.description = "Star Schema Benchmark: the 13 queries Q1.1 .. Q4.3 on generated or ssb-dbgen tables";
  def.unsized = "its cases are whole tables, made by the generator at --sf or read from --tbl-dir or --tables";
  def.add_options = [o, queries_text, resident_text, sf_option](CLI::App& app) {
    app.add_option("--queries", *queries_text, "queries to run, comma-separated (default all: 1.1,1.2,...,4.3)")
        ->check(not_empty);
    *sf_option = app.add_option("--sf", o->sf, "scale factor of the built-in generator (default 1; fractions allowed)");
    app.add_option("--tbl-dir", o->tbl_dir,
                   "load ssb-dbgen's lineorder.tbl, date.tbl, customer.tbl, supplier.tbl, part.tbl from this folder "
                   "instead of generating")
        ->check(not_empty);
    app.add_option("--tables", o->tables_dir,
                   "load the tables from a folder of Parquet files (<table>.parquet or <table>/*.parquet; converted "
                   "once by scripts/hdb/python -m hdb.parquet_tables ssb, through DuckDB, into a cache folder) or from "
                   "the raw binary columns that command wrote")
        ->check(not_empty);
    app.add_option("--resident", *resident_text,
                   "device backends: no (every pass copies the columns a query reads to the device), yes (they are "
                   "uploaded once, as Crystal measures) or both (default); no effect on the cpu");
  };
  def.validate = [o, queries_text, resident_text, sf_option] {
    if (*resident_text == "no")
      o->residency = {Residency::Host};
    else if (*resident_text == "yes")
      o->residency = {Residency::Device};
    else if (*resident_text == "both")
      o->residency = {Residency::Host, Residency::Device};
    else
      throw UsageError("--resident: '" + *resident_text + "' (allowed: no, yes, both)");
    if (!queries_text->empty()) {
      o->queries.clear();
      std::size_t b = 0;
      while (b <= queries_text->size()) {
        std::size_t e = queries_text->find(',', b);
        if (e == std::string::npos) e = queries_text->size();
        std::string name = queries_text->substr(b, e - b);
        if (!name.empty() && (name[0] == 'q' || name[0] == 'Q')) name.erase(0, 1);
        if (!name.empty()) {
          try {
            (void)query(name);
          } catch (const std::invalid_argument& err) {
            throw UsageError(std::string("--queries: ") + err.what());
          }
          if (std::find(o->queries.begin(), o->queries.end(), name) != o->queries.end())
            throw UsageError("--queries: " + name + " is given twice (each query is one case)");
          o->queries.push_back(name);
        }
        b = e + 1;
      }
      if (o->queries.empty()) throw UsageError("--queries is empty");
    }
    if (!(o->sf > 0) || o->sf > 1000) throw UsageError("--sf must be in (0, 1000]");
    tbl::check_table_source(o->tbl_dir, tbl_files(), o->tables_dir, (*sf_option)->count() > 0);
  };
  def.prepare = [o] {
    if (!o->tables_dir.empty())
      o->tables_dir = columns::column_dir_for("ssb", o->tables_dir);  // Parquet: converted once, then loaded
  };
  def.paths = [o] {
    std::vector<PathUse> uses;
    if (!o->tbl_dir.empty())
      for (const std::string& f : tbl_files())
        uses.push_back({"--tbl-dir", (std::filesystem::path(o->tbl_dir) / f).string(), false});
    if (!o->tables_dir.empty() && columns::has_manifest(o->tables_dir))  // Parquet files: converted by the run
      uses.push_back({"--tables", (std::filesystem::path(o->tables_dir) / columns::kManifest).string(), false});
    return uses;
  };
  def.run = [o, &backend](Session& s) { SsbRunner(s, backend, *o).run(); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb::ssb
