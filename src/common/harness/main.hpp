#pragma once
// The shared main: every executable is `run_main(argc, argv, <benchmark definition>, <platform>)`.
// It parses the options, sets up the device, runs the benchmark through a Session, writes the
// table/JSON/CSV and maps errors to exit codes (0 ok, 1 failure, 2 usage, 77 no device).
#include <functional>
#include <string>
#include <vector>

#include "harness/paths.hpp"
#include "harness/platform.hpp"
#include "harness/session.hpp"

namespace CLI {
class App;
}

namespace hdb {

struct BenchmarkDef {
  std::string name;                            // "bus", "ra", ...
  std::string description;                     // one line for --help
  std::function<void(CLI::App&)> add_options;  // benchmark-specific options (may be empty)
  std::function<void()> validate;              // after parsing; throws UsageError (may be empty)
  // The files the benchmark's own options read and write (may be empty): checked with --json and
  // --csv so that no output lands on another output or on an input (harness/paths.hpp).
  std::function<std::vector<PathUse>()> paths;
  // Before a run only (never for --list, --help or --version): the slow work the options call for,
  // such as converting --tables' Parquet files (may be empty; throws UsageError).
  std::function<void()> prepare;
  std::function<void(Session&)> run;  // enumerates and runs the cases
  // True when the cases are collective across MPI ranks (TP mode): then a rank without a device
  // makes every rank skip, instead of leaving the others waiting in a collective.
  bool collective = false;
  // Set when the cases carry no input size: what chooses their data instead (ssb: its tables follow
  // --sf or come from files). --sizes, --min-size, --max-size and --size-class would then select
  // nothing and are usage errors that say so.
  std::string unsized;
};

int run_main(int argc, char** argv, const BenchmarkDef& def, Platform& platform);

}  // namespace hdb
