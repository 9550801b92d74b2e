#pragma once
// The workload options shared by the benchmarks that generate key/value relations (ra, and dist's
// dist_unique / dist_join): one definition, so both accept, check and describe them alike.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/keys.hpp"

namespace CLI {
class App;
}

namespace hdb::ra {

struct WorkloadOptions {
  int values = 1;  // value attributes per tuple
  std::vector<double> duplicates{0.5};
  std::vector<double> match_rate{0.5};
  std::vector<int> fanout{1};
  std::vector<std::string> dists{"uniform"};
  double zipf_s = 1.0;
  double max_output_ratio = 16;
};

// The tests the duplicate-rate and join options apply to, named in their --help lines.
struct WorkloadTests {
  const char* unique;  // e.g. "unique/reduce_by_key"
  const char* join;    // e.g. "join"
};

void add_workload_options(CLI::App& app, WorkloadOptions& o, const WorkloadTests& tests);
// UsageError naming the option and the value out of range.
void validate_workload_options(const WorkloadOptions& o);
KeySpec key_spec(const WorkloadOptions& o, const std::string& dist, std::uint64_t distinct);
// A parameter value as results and messages print it (shortest form: 0.5, 1e-06).
std::string number_text(double x);

}  // namespace hdb::ra
