#pragma once
// The result database: one record per case (harness/case.hpp), every trial kept, written as JSON
// ("hetdb-bench/2": docs/results-schema.md, its contract docs/results-schema.json) and CSV.
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case.hpp"
#include "harness/ceiling.hpp"
#include "harness/stats.hpp"
#include "harness/timing.hpp"

namespace hdb {

inline constexpr const char* kSchema = "hetdb-bench/2";

enum class Status { Ok, Skipped, Failed };
const char* to_string(Status s);

struct Record {
  CaseKey key;
  Status status = Status::Ok;
  std::string reason;                 // skip reason or failure message
  bool checked = false;               // the output was compared with the reference (false under --no-verify)
  bool verified = false;              // compared with the reference and equal
  std::string verify_detail;          // what was compared / what differed
  std::uint64_t elements = 0;         // input elements (tuples, keys, rows, queries)
  std::uint64_t input_bytes = 0;      // bytes of input the operation consumes
  std::uint64_t min_bytes_moved = 0;  // declared minimum memory traffic: inputs read + outputs written once
  AccessMix access;                   // the same split into read and written (undeclared: all zero)
  std::uint64_t transfer_bytes = 0;   // bytes crossing the bus (h2d + d2h)
  std::vector<Breakdown> trials;
  nlohmann::json extra = nlohmann::json::object();  // benchmark-specific figures
  nlohmann::json ran = nlohmann::json::object();    // what ran: code path, tuned parameters (Ran)
  nlohmann::json memory_plan;                       // what the case planned to hold (MemoryPlan::to_json)
  // How the passes were taken (docs/methodology.md, "Cold, warm and hot"); `cold` is the first pass,
  // never one of the trials. Unset `protocol_note`: the case did not get as far as its passes.
  std::optional<Breakdown> cold;
  std::string cold_note;
  int warmup_passes = 0;
  std::string flush;     // what --flush-caches evicted before each timed pass; empty: hot passes
  double compile_s = 0;  // run-time kernel compilation this case paid (OpenCL program builds)
  bool passes_taken = false;
  int throttled_passes = 0;                   // timed passes after which the device said it throttled
  std::vector<std::string> throttle_reasons;  // every reason seen
  bool throttled_dropped = false;             // --discard-on-throttle: those passes are not in trials
  nlohmann::json energy;                      // over the timed passes (EnergySpan::to_json)
  nlohmann::json device_state;                // after the timed passes (Platform::device_state)
  // The middle of the timed passes on the run's ceiling clock (CeilingTrack::now_s); < 0: none taken.
  double timed_at_s = -1;
  // --traffic: what the case's kernels asked of memory in one extra pass (Platform::traffic_end,
  // with the session's derived figures); null when not taken.
  nlohmann::json traffic;

  // Derived on demand from trials.
  Stats stat(const char* which) const;  // "kernel", "total", "h2d", "d2h"
  const char* transfer() const { return to_string(key.transfer); }
};

// Derived figures; ceiling_gbps <= 0 means unknown.
struct Throughput {
  double kernel_gbps = 0;    // input_bytes / median kernel time
  double total_gbps = 0;     // input_bytes / median total time (with transfers)
  double transfer_gbps = 0;  // transfer_bytes / (median h2d + median d2h): the bus alone
  double elements_per_s = 0;
  double moved_gbps = 0;        // min_bytes_moved / median kernel time
  double pct_of_peak = 0;       // moved_gbps / ceiling
  double ceiling_gbps = 0;      // the ceiling pct_of_peak is against (0: unknown)
  std::string ceiling_pattern;  // its access pattern (Ceiling::pattern)
  double parity = 0;            // (h2d + d2h) / kernel, medians
};
Throughput throughput(const Record& r, const Ceiling& ceiling);

// The one CSV writer: a row per result (per rank of an MPI document), the columns of
// docs/results-schema.json's "x-csv-columns". The driver's summary.csv concatenates these files.
std::string csv_text(const nlohmann::json& doc);
extern const std::vector<std::string> kCsvColumns;

class ResultDb {
 public:
  ResultDb(std::string benchmark, std::string backend)
      : benchmark_(std::move(benchmark)), backend_(std::move(backend)) {}
  void set_context(nlohmann::json ctx) { context_ = std::move(ctx); }
  // The machine's load when the run ended, beside context.load.before (harness/load.hpp).
  void set_load_after(nlohmann::json load) { context_["load"]["after"] = std::move(load); }
  // The ceiling's samples (harness/ceiling.hpp); a case is divided by its pattern's ceiling, scaled
  // to the copy sample nearest to it.
  CeilingTrack& ceiling() { return ceiling_; }
  const CeilingTrack& ceiling() const { return ceiling_; }
  Ceiling ceiling_for(const Record& r) const { return ceiling_.for_case(r.timed_at_s, r.access); }
  // Whether the run completed: the document says `complete: true`, or `complete: false` with
  // `incomplete_reason` ("running" until the run ends, "interrupted by signal N", "stopped by an
  // error: ..."). A new database is incomplete, "running".
  void set_complete() { complete_ = true, incomplete_reason_.clear(); }
  void set_incomplete(std::string reason) { complete_ = false, incomplete_reason_ = std::move(reason); }
  bool complete() const { return complete_; }
  const Record& add(Record r);
  const std::vector<Record>& records() const { return records_; }
  int count(Status s) const;

  nlohmann::json to_json() const;
  // to_json().dump(1) + "\n" and csv_text(to_json()), from each record's kept JSON and CSV row.
  std::string json_text() const;
  std::string to_csv() const;
  static nlohmann::json record_json(const Record& r, const Ceiling& ceiling);
  // write_output(path, ...): a regular file is replaced atomically, so a crash never leaves a
  // half-written file; with `progress`, special files (FIFOs, devices) are left alone: they get
  // one document, at the end.
  void write_json(const std::string& path, bool progress = false) const;
  void write_csv(const std::string& path, bool progress = false) const;

 private:
  std::string benchmark_, backend_;
  nlohmann::json context_ = nlohmann::json::object();
  CeilingTrack ceiling_;
  std::vector<Record> records_;
  // A run writes its files after every case. Each record's JSON, its text in the document and its
  // CSV row are made once, and again only when the ceiling sample nearest to it changes: rebuilding
  // every record for every write made the writing quadratic in the cases (64 % of a 632-case run).
  // Changed only under output_mutex(), as every write is.
  struct Kept {
    bool made = false;
    Ceiling ceiling;
    nlohmann::json json;
    std::string text;          // json.dump(1), indented as an element of the document's results
    std::string csv, csv_for;  // the CSV row, and the device and rank it was made for
  };
  mutable std::vector<Kept> kept_;
  Kept& kept(std::size_t i) const;  // made or made again as needed
  nlohmann::json document(nlohmann::json results) const;
  bool complete_ = false;
  std::string incomplete_reason_ = "running";
};

// Where --json/--csv FILE is written. Symbolic links are followed to their target; a regular
// target (or none yet) is replaced atomically; anything else is written in place, never replaced.
struct OutputTarget {
  std::string path;       // the file written: FILE, or the end of its chain of symbolic links
  bool in_place = false;  // a FIFO, device or socket, or a descriptor (/dev/stdout, /dev/fd/N)
  int fd = -1;            // /dev/stdout, /dev/fd/N, /proc/self/fd/N: that descriptor, written as it is
};
// Throws UsageError for a directory or a chain of links that does not end.
OutputTarget resolve_output(const std::string& path);
// Checks up front that `path` can be written (its directory exists and takes a new file; a special
// file is writable); throws UsageError naming `option` and the path. Writes nothing at the path.
void check_output(const std::string& path, const std::string& option);
// Writes `text` to `path` (see OutputTarget). A regular file goes to a temporary file beside its
// target, then is renamed over it, so on any error the previous contents stay and OutputError
// names the file. `nonblocking`: a FIFO without a reader is not waited for (an OutputError).
void write_output(const std::string& path, const std::string& text, bool nonblocking = false);
// Whether write_output(path, ...) would write in place (special files are written once, at the end).
bool writes_in_place(const std::string& path);

// Held while results are added and written, so a signal's last write (harness/main.cpp) never
// sees a database in the middle of a change.
std::timed_mutex& output_mutex();

}  // namespace hdb
