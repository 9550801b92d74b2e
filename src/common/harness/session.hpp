#pragma once
// What a benchmark's logic (src/common/bench) talks to: it names each case and hands over how to set
// it up (CaseSetup); the session filters, lists, checks the case's memory plan, prepares, times
// (warm-up + stopping rule), verifies, records and writes results after every case, so a failure
// later in the run never loses earlier results.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case.hpp"
#include "harness/energy.hpp"
#include "harness/memory_plan.hpp"
#include "harness/options.hpp"
#include "harness/platform.hpp"
#include "harness/result.hpp"
#include "harness/timing.hpp"
#include "harness/variants.hpp"

namespace hdb {

struct Verification {
  bool ok = false;
  std::string detail;                               // what was compared, or the first difference
  nlohmann::json extra = nlohmann::json::object();  // figures of the output (rows, checksum, ...)
  static Verification pass(std::string detail = {}) { return {true, std::move(detail), nlohmann::json::object()}; }
  static Verification fail(std::string detail) { return {false, std::move(detail), nlohmann::json::object()}; }
};

// Everything one case needs, built by the set-up function outside the timed region.
struct Prepared {
  std::function<Breakdown()> pass;       // one timed pass (required)
  std::function<Verification()> verify;  // checks the output of the last pass (required)
  std::uint64_t elements = 0;            // input elements
  // Bytes of input the case processes; unset: the case's size_bytes. A case that sets 0 bytes and
  // 0 elements has nothing to process and is skipped with that reason (no throughput of nothing).
  std::optional<std::uint64_t> input_bytes;
  std::uint64_t min_bytes_moved = 0;  // each input read once + each output written once
  // The same bytes split into read and written (and read at random), for the ceiling of the case's
  // access pattern (harness/patterns.hpp); set through moves(). Undeclared: the copy ceiling.
  AccessMix access;
  void moves(std::uint64_t read, std::uint64_t written, std::uint64_t random_read = 0, std::uint32_t random_item = 4) {
    access = {read, written, random_read, random_item};
    min_bytes_moved = read + written;
  }
  std::uint64_t transfer_bytes = 0;                 // bytes over the bus per pass (the mode is the case key's)
  nlohmann::json extra = nlohmann::json::object();  // case figures known at set-up (output size, ...)
  // What ran (harness/variants.hpp's Ran), asked after the timed passes; may be empty.
  std::function<Ran()> ran;
  // Figures derived from the kept trials (the cold pass, warm-ups and passes dropped for throttling
  // are not among them), added to `extra` after a passed verification; may be empty.
  std::function<nlohmann::json(const std::vector<Breakdown>& trials)> figures;
};

// The one prepared-case type a backend's prepare returns (merge, tpch, bus: ra and ngram compose
// theirs from operator calls): it owns what it allocated, runs one timed pass, and says what ran.
// A benchmark adds how to read its output back (MergeCase::output, TpchRun::result, ...).
class CaseRun {
 public:
  virtual ~CaseRun() = default;
  virtual Breakdown pass() = 0;
  // Bytes crossing the bus in one pass (device backends).
  virtual std::uint64_t transfer_bytes() const { return 0; }
  virtual Ran ran() const { return {}; }
};
// A Prepared whose pass, transfer bytes and `ran` are the run's; the benchmark adds the rest.
Prepared prepared_from(const std::shared_ptr<CaseRun>& run);

// How a case is set up, in the order the session takes it for every benchmark:
//   plan:    add, by name, every buffer the case will allocate in the platform's memory (it may
//            make the case's host data first, and throw SkipCase);
//   fit:     the session checks the plan against Platform::memory_bytes() (capped by
//            --memory-limit) and skips the case with the list when it does not fit;
//   prepare: allocate and upload, only when the plan fits; then the passes and verification.
// The plan is recorded in the result (`memory_plan`).
struct CaseSetup {
  std::function<void(MemoryPlan&)> plan;
  std::function<Prepared()> prepare;
};

class Console;

// Session::seed's derivation, for tools that must make the same data outside a session
// (hdb-export-ngram): FNV-1a over the salt, mixed with the run seed and the size.
std::uint64_t derive_seed(std::uint64_t run_seed, const std::string& salt, std::uint64_t size = 0);

class Session {
 public:
  // In list mode the platform is not initialised: only its name and has_transfers() are asked.
  Session(const Options& opts, Platform* platform, ResultDb& db, Console& console);

  const Options& options() const { return opts_; }
  Platform& platform() { return *platform_; }
  const std::vector<std::uint64_t>& sizes() const { return opts_.sizes; }
  // {None} for platforms without a bus, else the --transfer modes.
  std::vector<Transfer> transfers() const;
  // Whether --only may select a case of test/variant: lets a benchmark skip building its data.
  // The final say is run()'s, on the whole id.
  bool selected(const std::string& test, const std::string& variant) const;
  // Cases that --only selected so far (run or skipped or listed), and the test/variants offered.
  int selected_count() const { return selected_count_; }
  const std::vector<std::string>& offered() const { return offered_; }
  // A seed that depends on the run seed, a salt naming the data (not the variant or backend) and
  // the size: every backend and variant of a case sees the same data.
  std::uint64_t seed(const std::string& salt, std::uint64_t size = 0) const;

  // Runs one case: plan, fit, prepare, passes, verification (CaseSetup). Its steps are called only
  // when the case is selected and not listing; they may throw SkipCase (recorded as skipped) or
  // anything else (recorded as failed). DeviceLost (the device's context is gone) is recorded as
  // failed too, then rethrown naming the case: the run stops.
  void run(const CaseKey& key, const CaseSetup& setup);
  void skip(const CaseKey& key, const std::string& reason);
  bool listing() const { return opts_.list; }
  // A list run that prints nothing: counts what --only selects before any device is set up.
  void silence_list() { print_list_ = false; }

 private:
  void record(Record r);
  void flush();
  bool take(const CaseKey& key);  // --only on the whole key; counts and remembers what was offered
  void take_passes(const Prepared& p, Record& r, std::string& stage);
  void take_traffic(const Prepared& p, Record& r);
  bool note_throttling(Record& r);

  const Options& opts_;
  Platform* platform_;
  ResultDb& db_;
  Console& console_;
  CaseFilter filter_;
  bool print_list_ = true;
  int selected_count_ = 0;
  std::vector<std::string> offered_;
  EnergyProbe energy_;  // opened at the first case that takes passes
  bool energy_opened_ = false;
};

}  // namespace hdb
