#include "harness/main.hpp"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>

#include "harness/console.hpp"
#include "harness/context.hpp"
#include "harness/errors.hpp"
#include "harness/mpi.hpp"
#include "harness/result.hpp"

#ifndef HDB_VERSION
#define HDB_VERSION "0"
#endif

namespace hdb {

namespace {

std::string join_args(int argc, char** argv) {
  std::string s;
  for (int i = 0; i < argc; ++i) s += (i ? " " : "") + std::string(argv[i]);
  return s;
}

// An --only that selects nothing is a usage error that names what could be selected.
void require_selection(const Options& opts, const Session& session) {
  if (opts.only.empty() || session.selected_count() > 0) return;
  std::string only, offered;
  for (const auto& p : opts.only) only += (only.empty() ? "" : ",") + p;
  for (const auto& o : session.offered()) offered += (offered.empty() ? "" : " ") + o;
  throw UsageError("--only " + only + " selects no case; this executable offers: " +
                   (offered.empty() ? "(nothing)" : offered) + " (--list prints every case id)");
}

// What one process (one rank under mpirun) produced.
struct Outcome {
  int rc = kExitOk;
  nlohmann::json doc;  // results document; null when the run never started
  std::string skipped; // no-device reason
};

Outcome run_benchmark(const std::string& exe, const BenchmarkDef& def, Platform& platform, Options& opts,
                      const MpiEnv& mpi) {
  Outcome out;
  bool has_device = true;
  try {
    platform.init(opts);
  } catch (const NoDevice& e) {
    has_device = false;
    out.skipped = e.what();
  }
  if (def.collective && mpi.active() && !mpi.all(has_device) && has_device) {
    has_device = false;
    out.skipped = "another rank has no device, and the cases are collective";
  }
  if (!has_device) {
    out.rc = kExitNoDevice;
    return out;
  }
  ResultDb db(def.name, platform.name());
  nlohmann::json ctx = host_context(opts);
  ctx["device"] = platform.context();
  ctx["mpi"] = mpi.context();
  db.set_context(ctx);
  double ceiling = platform.measure_copy_ceiling();
  db.set_ceiling(ceiling);
  Console console(opts.quiet, ceiling);
  if (!opts.quiet) {
    std::string dev = ctx["device"].value("name", platform.name());
    std::printf("# %s on %s; copy ceiling %.1f GB/s (read+write)\n", exe.c_str(), dev.c_str(), ceiling);
  }
  Session session(opts, &platform, db, console);
  try {
    def.run(session);
    require_selection(opts, session);
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s (results so far are kept)\n", exe.c_str(), e.what());
    out.rc = kExitFailure;
  }
  if (!opts.json_path.empty()) db.write_json(opts.json_path);
  if (!opts.csv_path.empty()) db.write_csv(opts.csv_path);
  if (!mpi.active())
    std::printf("summary: %d ok, %d skipped, %d failed\n", db.count(Status::Ok), db.count(Status::Skipped),
                db.count(Status::Failed));
  if (db.count(Status::Failed) > 0) out.rc = kExitFailure;
  out.doc = db.to_json();
  return out;
}

// EP mode: every rank sends its document to rank 0, which writes one merged document.
int finish_mpi(const std::string& exe, const MpiEnv& mpi, const Options& opts, const std::string& final_json,
               const std::string& final_csv, Outcome out) {
  nlohmann::json mine = out.doc.is_null() ? nlohmann::json::object() : out.doc;
  mine["rank"] = mpi.rank();
  mine["exit_code"] = out.rc;
  if (!out.skipped.empty()) mine["skipped"] = out.skipped;
  std::vector<std::string> texts = mpi.gather(mine.dump());
  if (mpi.rank() != 0) return out.rc == kExitNoDevice ? kExitOk : out.rc;
  std::vector<nlohmann::json> docs;
  bool any_ran = false, any_failed = false, any_usage = false;
  for (const auto& t : texts) {
    docs.push_back(nlohmann::json::parse(t));
    any_ran |= docs.back().contains("results");
    any_failed |= docs.back().value("exit_code", 0) == kExitFailure;
    any_usage |= docs.back().value("exit_code", 0) == kExitUsage;
  }
  nlohmann::json merged = merge_rank_documents(docs);
  if (!final_json.empty()) write_file_atomically(final_json, merged.dump(1) + "\n");
  if (!final_csv.empty()) write_file_atomically(final_csv, csv_text(merged));
  for (const auto& d : docs)
    if (d.contains("skipped")) std::printf("rank %d skipped: %s\n", d.value("rank", 0), d["skipped"].get<std::string>().c_str());
  if (!opts.quiet && merged.contains("results")) {
    std::printf("# %s across %d ranks: median kernel time per case (min / mean / max ms, outlier ranks)\n",
                exe.c_str(), mpi.size());
    for (const auto& r : merged["results"]) {
      if (!r.contains("across_ranks") || r["across_ranks"]["n"] == 0) continue;
      const auto& a = r["across_ranks"];
      std::printf("%-50s %9.4f %9.4f %9.4f %s\n", r["id"].get<std::string>().c_str(), a["min"].get<double>() * 1e3,
                  a["mean"].get<double>() * 1e3, a["max"].get<double>() * 1e3, a["outlier_ranks"].dump().c_str());
    }
  }
  const auto& s = merged["summary"];
  std::printf("summary: %d ok, %d skipped, %d failed (%d ranks)\n", s.value("ok", 0), s.value("skipped", 0),
              s.value("failed", 0), mpi.size());
  if (any_usage) return kExitUsage;
  if (!any_ran) {
    std::printf("skipped: no rank had a device\n");
    return kExitNoDevice;
  }
  return any_failed || s.value("failed", 0) > 0 ? kExitFailure : kExitOk;
}

}  // namespace

int run_main(int argc, char** argv, const BenchmarkDef& def, Platform& platform) {
  std::string exe = "hdb-" + def.name + "-" + platform.name();
  Options opts;
  opts.command_line = join_args(argc, argv);
  CLI::App app(def.description, exe);
  app.set_version_flag("--version", std::string(exe) + " (hetdb-bench " HDB_VERSION ")");
  add_common_options(app, opts);
  if (def.add_options) def.add_options(app);

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
    std::fprintf(stderr, "Run with --help for the options and their allowed values.\n");
    return kExitUsage;
  }

  MpiEnv mpi(&argc, &argv);
  std::string final_json = opts.json_path, final_csv = opts.csv_path;
  try {
    finalize_options(opts);
    if (def.validate) def.validate();
    if (opts.list) {
      if (mpi.rank() != 0) return kExitOk;
      ResultDb db(def.name, platform.name());
      Console console(true, 0);
      Session session(opts, &platform, db, console);
      def.run(session);
      require_selection(opts, session);
      return kExitOk;
    }
    if (!opts.only.empty()) {
      // An --only that selects nothing is told before any device is set up or measured.
      Options dry = opts;
      dry.list = true;
      ResultDb db(def.name, platform.name());
      Console console(true, 0);
      Session session(dry, &platform, db, console);
      session.silence_list();
      def.run(session);
      require_selection(dry, session);
    }
    if (mpi.active()) {
      opts.local_rank = mpi.local_rank();
      opts.local_ranks = mpi.local_size();
      // Each rank keeps its own file while running, so a crash loses nothing already measured.
      if (!opts.json_path.empty()) opts.json_path += ".rank" + std::to_string(mpi.rank());
      if (!opts.csv_path.empty()) opts.csv_path += ".rank" + std::to_string(mpi.rank());
      if (mpi.rank() != 0) opts.quiet = true;
    }
    Outcome out;
    try {
      out = run_benchmark(exe, def, platform, opts, mpi);
    } catch (const UsageError& e) {
      if (!mpi.active()) throw;
      std::fprintf(stderr, "%s: rank %d: error: %s\n", exe.c_str(), mpi.rank(), e.what());
      out.rc = kExitUsage;
    } catch (const std::exception& e) {
      if (!mpi.active()) throw;
      std::fprintf(stderr, "%s: rank %d: error: %s\n", exe.c_str(), mpi.rank(), e.what());
      out.rc = kExitFailure;
    }
    // Every rank reaches the gather, whatever happened to it.
    if (mpi.active()) return finish_mpi(exe, mpi, opts, final_json, final_csv, std::move(out));
    if (out.rc == kExitNoDevice) {
      std::printf("skipped: %s\n", out.skipped.c_str());
      std::fflush(stdout);
    }
    return out.rc;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
    return kExitFailure;
  }
}

}  // namespace hdb
