#pragma once
// The result database: one record per case (harness/case.hpp), every trial kept, written as JSON
// ("hetdb-bench/2": docs/results-schema.md, its contract docs/results-schema.json) and CSV.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case.hpp"
#include "harness/stats.hpp"
#include "harness/timing.hpp"

namespace hdb {

inline constexpr const char* kSchema = "hetdb-bench/2";

enum class Status { Ok, Skipped, Failed };
const char* to_string(Status s);

struct Record {
  CaseKey key;
  Status status = Status::Ok;
  std::string reason;          // skip reason or failure message
  bool checked = false;        // the output was compared with the reference (false under --no-verify)
  bool verified = false;       // compared with the reference and equal
  std::string verify_detail;   // what was compared / what differed
  std::uint64_t elements = 0;         // input elements (tuples, keys, rows, queries)
  std::uint64_t input_bytes = 0;      // bytes of input the operation consumes
  std::uint64_t min_bytes_moved = 0;  // declared minimum memory traffic: inputs read + outputs written once
  std::uint64_t transfer_bytes = 0;   // bytes crossing the bus (h2d + d2h)
  std::vector<Breakdown> trials;
  nlohmann::json extra = nlohmann::json::object();  // benchmark-specific figures

  // Derived on demand from trials.
  Stats stat(const char* which) const;  // "kernel", "total", "h2d", "d2h"
  const char* transfer() const { return to_string(key.transfer); }
};

// Derived figures; ceiling_gbps <= 0 means unknown.
struct Throughput {
  double kernel_gbps = 0;   // input_bytes / median kernel time
  double total_gbps = 0;    // input_bytes / median total time (with transfers)
  double transfer_gbps = 0; // transfer_bytes / (median h2d + median d2h): the bus alone
  double elements_per_s = 0;
  double moved_gbps = 0;    // min_bytes_moved / median kernel time
  double pct_of_peak = 0;   // moved_gbps / ceiling
  double parity = 0;        // (h2d + d2h) / kernel, medians
};
Throughput throughput(const Record& r, double ceiling_gbps);

// The one CSV writer: a row per result (per rank of an MPI document), the columns of
// docs/results-schema.json's "x-csv-columns". The driver's summary.csv concatenates these files.
std::string csv_text(const nlohmann::json& doc);
extern const std::vector<std::string> kCsvColumns;

class ResultDb {
 public:
  ResultDb(std::string benchmark, std::string backend) : benchmark_(std::move(benchmark)), backend_(std::move(backend)) {}
  void set_context(nlohmann::json ctx) { context_ = std::move(ctx); }
  void set_ceiling(double gbps) { ceiling_gbps_ = gbps; }
  double ceiling() const { return ceiling_gbps_; }
  void set_mpi(nlohmann::json mpi) { mpi_ = std::move(mpi); }
  const Record& add(Record r);
  const std::vector<Record>& records() const { return records_; }
  int count(Status s) const;

  nlohmann::json to_json() const;
  static nlohmann::json record_json(const Record& r, double ceiling_gbps);
  std::string to_csv() const { return csv_text(to_json()); }
  // Written to path.tmp then renamed, so a crash never leaves a half-written file.
  void write_json(const std::string& path) const;
  void write_csv(const std::string& path) const;

 private:
  std::string benchmark_, backend_;
  nlohmann::json context_ = nlohmann::json::object();
  nlohmann::json mpi_;
  double ceiling_gbps_ = 0;
  std::vector<Record> records_;
};

void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace hdb
