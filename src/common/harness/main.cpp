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
  try {
    finalize_options(opts);
    if (def.validate) def.validate();
    if (opts.list) {
      ResultDb db(def.name, platform.name());
      Console console(true, 0);
      Session session(opts, nullptr, db, console);
      def.run(session);
      return kExitOk;
    }
    try {
      platform.init(opts);
    } catch (const NoDevice& e) {
      std::printf("skipped: %s\n", e.what());
      std::fflush(stdout);
      return kExitNoDevice;
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
    int rc = kExitOk;
    try {
      def.run(session);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: error: %s (results so far are kept)\n", exe.c_str(), e.what());
      rc = kExitFailure;
    }
    if (!opts.json_path.empty()) db.write_json(opts.json_path);
    if (!opts.csv_path.empty()) db.write_csv(opts.csv_path);
    std::printf("summary: %d ok, %d skipped, %d failed\n", db.count(Status::Ok), db.count(Status::Skipped),
                db.count(Status::Failed));
    if (db.count(Status::Failed) > 0) rc = kExitFailure;
    return rc;
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
    return kExitFailure;
  }
}

}  // namespace hdb
