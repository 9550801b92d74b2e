#include "harness/main.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <mutex>
#include <string>
#include <thread>

#include "harness/console.hpp"
#include "harness/context.hpp"
#include "harness/errors.hpp"
#include "harness/load.hpp"
#include "harness/mpi.hpp"
#include "harness/result.hpp"

#ifndef HDB_VERSION
#define HDB_VERSION "0"
#endif

namespace hdb {

namespace {

std::string host_name() {
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  return host;
}

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

// ---------------------------------------------------------------------------------------------
// Signals. SIGINT, SIGTERM and SIGHUP end the run with the results taken so far written, marked
// `complete: false, incomplete_reason: "interrupted by signal N"`, and exit code 128 + N. The
// handler only writes the signal's number to a pipe; a thread of its own does the writing, under
// output_mutex(), so it never sees a database in the middle of a change.

// The run a signal interrupts: its database and files. Guarded by output_mutex().
struct LiveRun {
  const std::string* exe = nullptr;
  ResultDb* db = nullptr;
  std::string json, csv;
};
LiveRun& live() {
  static LiveRun l;
  return l;
}

// Registers a run's database for the signal thread while it is in scope.
class LiveScope {
 public:
  LiveScope(const std::string& exe, ResultDb& db, const Options& opts) {
    std::lock_guard<std::timed_mutex> lock(output_mutex());
    live() = {&exe, &db, opts.json_path, opts.csv_path};
  }
  ~LiveScope() { clear(); }
  LiveScope(const LiveScope&) = delete;
  LiveScope& operator=(const LiveScope&) = delete;
  // With output_mutex() held by the caller or not at all (`locked`).
  static void clear(bool locked = false) {
    if (locked) {
      live() = LiveRun{};
      return;
    }
    std::lock_guard<std::timed_mutex> lock(output_mutex());
    live() = LiveRun{};
  }
};

int g_signal_pipe[2] = {-1, -1};

extern "C" void hdb_on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  ssize_t n = ::write(g_signal_pipe[1], &b, 1);
  (void)n;
  errno = saved;
}

[[noreturn]] void handle_signal(int sig) {
  std::string reason = "interrupted by signal " + std::to_string(sig);
  std::unique_lock<std::timed_mutex> lock(output_mutex(), std::defer_lock);
  // A write in progress finishes first; one stuck (a full pipe) does not hold the exit up for long.
  bool locked = lock.try_lock_for(std::chrono::seconds(5));
  LiveRun& l = live();
  const char* exe = l.exe ? l.exe->c_str() : "hdb";
  if (locked && l.db) {
    l.db->set_incomplete(reason);
    std::string where;
    for (const auto& [path, json] : {std::pair<std::string, bool>{l.json, true}, {l.csv, false}}) {
      if (path.empty()) continue;
      try {
        // A FIFO without a reader is not waited for.
        write_output(path, json ? l.db->json_text() : l.db->to_csv(), /*nonblocking=*/true);
        where += (where.empty() ? "" : " and ") + ("'" + path + "'");
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", exe, e.what());
      }
    }
    std::fprintf(stderr, "%s: %s; %zu result(s) taken so far%s%s\n", exe, reason.c_str(), l.db->records().size(),
                 where.empty() ? "" : " are in ", where.empty() ? "" : (where + " (complete: false)").c_str());
  } else {
    std::fprintf(stderr, "%s: %s\n", exe, reason.c_str());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(128 + sig);
}

void signal_thread() {
  for (;;) {
    unsigned char b = 0;
    ssize_t n = ::read(g_signal_pipe[0], &b, 1);
    if (n == 1) handle_signal(b);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
  }
}

void install_signal_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    // A file size limit (ulimit -f) makes a write fail with EFBIG, told like a full disk, instead
    // of killing the process with the file half written.
    std::signal(SIGXFSZ, SIG_IGN);
    if (::pipe2(g_signal_pipe, O_CLOEXEC) != 0) return;
    std::thread(signal_thread).detach();
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
      struct sigaction old {};
      if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;  // nohup, background job
      struct sigaction sa {};
      sa.sa_handler = hdb_on_signal;
      sigemptyset(&sa.sa_mask);
      sa.sa_flags = SA_RESTART;
      ::sigaction(sig, &sa, nullptr);
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Stopping. Before the first collective every rank finds its own errors (options, files, device
// set-up); then all ranks agree (Comm::first_error) and stop together, with the exit code of the
// lowest failing rank. After the run has started, ranks are no longer in step: a rank that must
// stop writes its results and ends the whole job (MPI_Abort), so none waits for it forever.

// Prints this rank's error (when it has one) and returns the agreed exit code.
int stop_agreed(const std::string& exe, const MpiEnv& mpi, const Comm::Agreement& a, int code, const std::string& error,
                const std::string& hint = "") {
  if (code != 0) {
    if (mpi.active())
      std::fprintf(stderr, "%s: rank %d: error: %s\n", exe.c_str(), mpi.rank(), error.c_str());
    else
      std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), error.c_str());
    if (!hint.empty()) std::fprintf(stderr, "%s\n", hint.c_str());
  } else if (mpi.active() && mpi.rank() == 0) {
    std::fprintf(stderr, "%s: rank 0: the run stops on every rank: rank %d failed (exit code %d)\n", exe.c_str(),
                 a.rank, a.code);
  }
  std::fflush(stderr);
  return a.code;
}

// What one process (one rank under mpirun) produced.
struct Outcome {
  int rc = kExitOk;
  nlohmann::json doc;   // results document; null when the run never started
  std::string skipped;  // no-device reason
  bool stop = false;    // the set-up failed on some rank: return rc at once (messages printed)
};

// The end of a run's files: the document marked complete, or incomplete with `reason`. A write
// error is told, naming the file, and fails the run; the file keeps its previous contents.
int write_final(const std::string& exe, ResultDb& db, Options& opts, const std::string& reason) {
  std::lock_guard<std::timed_mutex> lock(output_mutex());
  if (reason.empty())
    db.set_complete();
  else
    db.set_incomplete(reason);
  db.set_load_after(machine_load());
  int rc = kExitOk;
  for (bool json : {true, false}) {
    const std::string& path = json ? opts.json_path : opts.csv_path;
    if (path.empty()) continue;
    try {
      if (json)
        db.write_json(path);
      else
        db.write_csv(path);
    } catch (const OutputError& e) {
      if (opts.on_write_error && opts.on_write_error(e.what())) continue;  // a rank file: best effort
      std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
      rc = kExitFailure;
    }
  }
  LiveScope::clear(/*locked=*/true);
  return rc;
}

Outcome run_benchmark(const std::string& exe, const BenchmarkDef& def, Platform& platform, Options& opts,
                      const MpiEnv& mpi) {
  Outcome out;
  bool has_device = true;
  int code = kExitOk;
  std::string error;
  try {
    // Collective cases keep their ranks in step by giving every rank the same pass times; a pass
    // dropped for throttling is one rank's decision, and the ranks would then wait on each other.
    if (def.collective && opts.discard_on_throttle)
      throw UsageError("--discard-on-throttle: not for " + def.name +
                       "'s collective cases (a pass one rank dropped would leave the ranks taking different passes)");
    platform.init(opts);
    platform.set_memory_limit(opts.memory_limit);
  } catch (const NoDevice& e) {
    has_device = false;
    out.skipped = e.what();
  } catch (const UsageError& e) {
    code = kExitUsage;
    error = e.what();
  } catch (const std::exception& e) {
    code = kExitFailure;
    error = e.what();
  }
  // Set-up errors of any rank stop every rank, before any of them waits in a collective.
  Comm::Agreement a = mpi.first_error(code, error);
  if (a.any()) {
    out.rc = stop_agreed(exe, mpi, a, code, error);
    out.stop = true;
    return out;
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
  LiveScope scope(exe, db, opts);
  nlohmann::json ctx = host_context(opts);
  ctx["device"] = platform.context();
  if (platform.memory_limit() != 0) ctx["memory_limit_bytes"] = platform.memory_limit();
  ctx["mpi"] = mpi.context();
  db.set_context(ctx);
  db.ceiling().measure(platform);
  Console console(opts.quiet);
  if (!opts.quiet) {
    std::string dev = ctx["device"].value("name", platform.name());
    std::printf("# %s on %s; copy ceiling %.1f GB/s (read+write; measured again every %.0f s between cases)\n",
                exe.c_str(), dev.c_str(), db.ceiling().latest(), CeilingTrack::kIntervalS);
    // The other patterns' ceilings, which %peak is against where a case declares that pattern.
    std::string others;
    for (MemoryPattern p : kAllPatterns) {
      if (p == MemoryPattern::Copy || db.ceiling().patterns()[p] <= 0) continue;
      char one[64];
      std::snprintf(one, sizeof one, "%s%s %.1f", others.empty() ? "" : ", ", to_string(p), db.ceiling().patterns()[p]);
      others += one;
    }
    if (!others.empty()) std::printf("# ceilings of the other access patterns, GB/s: %s\n", others.c_str());
  }
  Session session(opts, &platform, db, console);
  std::string stopped;  // why the run stopped before its end
  try {
    def.run(session);
    require_selection(opts, session);
  } catch (const OutputError& e) {
    out.rc = kExitFailure;
    stopped = e.what();
    std::fprintf(stderr, "%s: %serror: %s\n", exe.c_str(),
                 mpi.active() ? ("rank " + std::to_string(mpi.rank()) + ": ").c_str() : "", e.what());
  } catch (const UsageError& e) {
    out.rc = kExitUsage;
    stopped = e.what();
    std::fprintf(stderr, "%s: %serror: %s\n", exe.c_str(),
                 mpi.active() ? ("rank " + std::to_string(mpi.rank()) + ": ").c_str() : "", e.what());
  } catch (const std::exception& e) {
    out.rc = kExitFailure;
    stopped = platform.describe_runtime_error(e);
    if (stopped.empty()) stopped = e.what();
    std::fprintf(stderr, "%s: %serror: %s (results so far are kept)\n", exe.c_str(),
                 mpi.active() ? ("rank " + std::to_string(mpi.rank()) + ": ").c_str() : "", stopped.c_str());
  }
  // One sample after the last case, so that it too has a ceiling on either side; not after an error,
  // which may have left the device unusable.
  if (stopped.empty() && db.count(Status::Ok) > 0) db.ceiling().measure(platform);
  if (write_final(exe, db, opts, stopped.empty() ? "" : "stopped by an error: " + stopped) != kExitOk)
    out.rc = kExitFailure;
  if (!stopped.empty() && mpi.active() && mpi.size() > 1) {
    // The other ranks are somewhere in their own runs (or in a collective of this one): end the job.
    std::fprintf(stderr, "%s: rank %d: stopping every rank (exit code %d)\n", exe.c_str(), mpi.rank(), out.rc);
    std::fflush(stdout);
    std::fflush(stderr);
    mpi.abort(out.rc);
  }
  if (!mpi.active())
    std::printf("summary: %d ok, %d skipped, %d failed\n", db.count(Status::Ok), db.count(Status::Skipped),
                db.count(Status::Failed));
  if (db.count(Status::Failed) > 0 && out.rc == kExitOk) out.rc = kExitFailure;
  out.doc = db.to_json();
  return out;
}

// EP mode: every rank sends its document to rank 0, which writes one merged document.
int finish_mpi(const std::string& exe, const BenchmarkDef& def, const MpiEnv& mpi, const Options& opts,
               const std::string& final_json, const std::string& final_csv, Outcome out) {
  nlohmann::json mine = out.doc.is_null() ? nlohmann::json::object() : out.doc;
  mine["rank"] = mpi.rank();
  mine["exit_code"] = out.rc;
  if (!out.skipped.empty()) mine["skipped"] = out.skipped;
  if (!mine.contains("context")) mine["host"] = host_name();  // a rank without a device is on a host too
  std::vector<std::string> texts = mpi.gather(mine.dump());
  if (mpi.rank() != 0) return out.rc == kExitNoDevice ? kExitOk : out.rc;
  std::vector<nlohmann::json> docs;
  bool any_ran = false, any_failed = false, any_usage = false;
  for (const auto& t : texts) {
    docs.push_back(nlohmann::json::parse(t));
    const int code = docs.back().value("exit_code", 0);
    any_ran |= docs.back().contains("results");
    any_usage |= code == kExitUsage;
    any_failed |= code != kExitOk && code != kExitNoDevice && code != kExitUsage;
  }
  // The mode that ran: collective cases (the dist benchmark) are TP, the rest EP.
  nlohmann::json merged = merge_rank_documents(docs, def.collective ? "tp" : "ep");
  int write_rc = kExitOk;
  for (bool json : {true, false}) {
    const std::string& path = json ? final_json : final_csv;
    if (path.empty()) continue;
    try {
      write_output(path, json ? merged.dump(1) + "\n" : csv_text(merged));
    } catch (const OutputError& e) {
      std::fprintf(stderr, "%s: error: %s\n", exe.c_str(), e.what());
      write_rc = kExitFailure;
    }
  }
  for (const auto& d : docs)
    if (d.contains("skipped"))
      std::printf("rank %d skipped: %s\n", d.value("rank", 0), d["skipped"].get<std::string>().c_str());
  if (!opts.quiet && merged.contains("results")) {
    std::printf("# %s across %d ranks: median kernel time per case (min / mean / max ms, outlier ranks)\n", exe.c_str(),
                mpi.size());
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
  if (write_rc != kExitOk) return write_rc;
  if (!any_ran) {
    std::printf("skipped: no rank had a device\n");
    return kExitNoDevice;
  }
  return any_failed || s.value("failed", 0) > 0 ? kExitFailure : kExitOk;
}

// The per-rank file of an MPI run: FILE.rank<R>; none when FILE is written in place (a FIFO,
// /dev/stdout): rank 0 writes the merged document there at the end. Rank files are best effort:
// every rank's results reach rank 0 over MPI, so a rank that cannot write its own file (its
// directory is missing on that node, its disk is full) says so once and goes on without it.
std::string rank_file(const std::string& exe, const MpiEnv& mpi, const std::string& path, const char* option) {
  if (path.empty() || writes_in_place(path)) return "";
  std::string file = path + ".rank" + std::to_string(mpi.rank());
  try {
    check_output(file, option);
  } catch (const UsageError& e) {
    std::fprintf(stderr,
                 "%s: rank %d (%s): warning: %s; this rank keeps no file of its own (rank 0 receives its "
                 "results over MPI)\n",
                 exe.c_str(), mpi.rank(), host_name().c_str(), e.what());
    return "";
  }
  return file;
}

// A write error of a rank file during the run: told once, then this rank writes no files of its own.
void rank_files_best_effort(const std::string& exe, const MpiEnv& mpi, Options& opts) {
  opts.on_write_error = [&exe, &mpi, &opts](const std::string& error) {
    std::fprintf(stderr,
                 "%s: rank %d (%s): warning: %s; this rank writes no more files of its own (rank 0 "
                 "receives its results over MPI)\n",
                 exe.c_str(), mpi.rank(), host_name().c_str(), error.c_str());
    opts.json_path.clear();
    opts.csv_path.clear();
    return true;
  };
}

}  // namespace

int run_main(int argc, char** argv, const BenchmarkDef& def, Platform& platform) {
  std::string exe = "hdb-" + def.name + "-" + platform.name();
  install_signal_handlers();
  // The instrumented build takes a --traffic run over before anything starts (not MPI either).
  for (int i = 1; i < argc; ++i)
    if (std::string arg = argv[i]; arg == "--traffic" || arg.rfind("--traffic=", 0) == 0)
      platform.hand_over_traffic(argv);
  // MPI starts before anything can fail, so every rank reaches the agreement below.
  MpiEnv mpi(&argc, &argv);
  Options opts;
  opts.command_line = join_args(argc, argv);
  CLI::App app(def.description, exe);
  app.set_version_flag("--version", std::string(exe) + " (hetdb-bench " HDB_VERSION ")");
  add_common_options(app, opts);
  if (def.add_options) def.add_options(app);

  // Everything this rank decides alone: -1 goes on, 0 stops (help, version, list), else an exit code.
  int code = -1;
  std::string error, hint;
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    code = app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    code = app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    code = app.exit(e);
  } catch (const CLI::ParseError& e) {
    code = kExitUsage;
    error = e.what();
    hint = "Run with --help for the options and their allowed values.";
  }
  std::string final_json = opts.json_path, final_csv = opts.csv_path;
  if (code < 0) {
    try {
      if (!def.unsized.empty())
        for (const char* flag : {"--sizes", "--min-size", "--max-size", "--size-class"})
          if (app.count(flag) > 0)
            throw UsageError(std::string(flag) + ": " + def.name + " has no input sizes: " + def.unsized);
      finalize_options(opts);
      if (!def.unsized.empty()) opts.sizes.clear();  // context.sizes: [], never a sweep that did not run
      if (def.validate) def.validate();
      if (opts.traffic) {
        if (std::string why = platform.traffic_problem(); !why.empty()) throw UsageError("--traffic: " + why);
        if (mpi.active()) throw UsageError("--traffic: the traffic profile runs in one process, not under mpirun");
      }
      std::vector<PathUse> paths{{"--json", opts.json_path, true}, {"--csv", opts.csv_path, true}};
      if (def.paths)
        for (PathUse& u : def.paths()) paths.push_back(std::move(u));
      check_paths(paths);
      if (opts.list) {
        code = kExitOk;
        if (mpi.rank() == 0) {
          ResultDb db(def.name, platform.name());
          Console console(true);
          Session session(opts, &platform, db, console);
          def.run(session);
          require_selection(opts, session);
        }
      } else {
        if (!opts.only.empty()) {
          // An --only that selects nothing is told before any device is set up or measured.
          Options dry = opts;
          dry.list = true;
          ResultDb db(def.name, platform.name());
          Console console(true);
          Session session(dry, &platform, db, console);
          session.silence_list();
          def.run(session);
          require_selection(dry, session);
        }
        if (def.prepare) def.prepare();
        if (mpi.active()) {
          opts.local_rank = mpi.local_rank();
          opts.local_ranks = mpi.local_size();
          // Each rank keeps its own file while running, so a crash loses nothing already measured.
          opts.json_path = rank_file(exe, mpi, final_json, "--json");
          opts.csv_path = rank_file(exe, mpi, final_csv, "--csv");
          rank_files_best_effort(exe, mpi, opts);
          if (mpi.rank() != 0) opts.quiet = true;
        } else {
          // A path that cannot be written is told now, not after all the work.
          if (!opts.json_path.empty()) check_output(opts.json_path, "--json");
          if (!opts.csv_path.empty()) check_output(opts.csv_path, "--csv");
        }
        if (mpi.rank() == 0 && mpi.active()) {
          if (!final_json.empty()) check_output(final_json, "--json");
          if (!final_csv.empty()) check_output(final_csv, "--csv");
        }
      }
    } catch (const UsageError& e) {
      code = kExitUsage;
      error = e.what();
    } catch (const std::exception& e) {
      code = kExitFailure;
      error = e.what();
    }
  }
  Comm::Agreement a = mpi.first_error(code > 0 ? code : 0, code > 0 ? error : "");
  if (a.any()) return stop_agreed(exe, mpi, a, code > 0 ? code : 0, error, hint);
  if (!mpi.all(code < 0)) return kExitOk;  // help, version or --list

  try {
    Outcome out = run_benchmark(exe, def, platform, opts, mpi);
    if (out.stop) return out.rc;
    // Every rank reaches the gather, whatever happened to its cases.
    if (mpi.active()) return finish_mpi(exe, def, mpi, opts, final_json, final_csv, std::move(out));
    if (out.rc == kExitNoDevice) {
      std::printf("skipped: %s\n", out.skipped.c_str());
      std::fflush(stdout);
    }
    return out.rc;
  } catch (const std::exception& e) {
    // Outside the cases (the context, the copy ceiling): this rank cannot go on.
    std::fprintf(stderr, "%s: %serror: %s\n", exe.c_str(),
                 mpi.active() ? ("rank " + std::to_string(mpi.rank()) + ": ").c_str() : "", e.what());
    if (mpi.active() && mpi.size() > 1) {
      std::fflush(stdout);
      std::fflush(stderr);
      mpi.abort(kExitFailure);
    }
    return dynamic_cast<const UsageError*>(&e) ? kExitUsage : kExitFailure;
  }
}

}  // namespace hdb
