#pragma once
// The result database: one record per (test, variant, params, size), every trial kept,
// written as JSON ("hetdb-bench/1", docs/results-schema.md) and CSV.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/stats.hpp"
#include "harness/timing.hpp"

namespace hdb {

inline constexpr const char* kSchema = "hetdb-bench/1";

using Params = std::vector<std::pair<std::string, std::string>>;  // ordered, printed as k=v

struct CaseKey {
  std::string test;
  std::string variant;
  Params params;
  std::uint64_t size_bytes = 0;  // nominal input size of the sweep (bytes per input)
  std::string id() const;        // "test/variant[k=v,...]@size"
};

enum class Status { Ok, Skipped, Failed };
const char* to_string(Status s);

struct Record {
  CaseKey key;
  Status status = Status::Ok;
  std::string reason;          // skip reason or failure message
  bool verified = false;       // compared with the reference and equal
  std::string verify_detail;   // what was compared / what differed
  std::uint64_t elements = 0;         // input elements (tuples, keys, rows, queries)
  std::uint64_t input_bytes = 0;      // bytes of input the operation consumes
  std::uint64_t min_bytes_moved = 0;  // declared minimum memory traffic: inputs read + outputs written once
  std::uint64_t transfer_bytes = 0;   // bytes crossing the bus (h2d + d2h)
  std::string transfer = "none";      // none / pageable / pinned
  std::vector<Breakdown> trials;
  nlohmann::json extra = nlohmann::json::object();  // benchmark-specific figures

  // Derived on demand from trials.
  Stats stat(const char* which) const;  // "kernel", "total", "h2d", "d2h"
};

// Derived figures; ceiling_gbps <= 0 means unknown.
struct Throughput {
  double kernel_gbps = 0;   // input_bytes / median kernel time
  double total_gbps = 0;    // input_bytes / median total time (with transfers)
  double elements_per_s = 0;
  double moved_gbps = 0;    // min_bytes_moved / median kernel time
  double pct_of_peak = 0;   // moved_gbps / ceiling
  double parity = 0;        // (h2d + d2h) / kernel, medians
};
Throughput throughput(const Record& r, double ceiling_gbps);

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
  std::string to_csv() const;
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
