#pragma once
// Summary statistics of a sample of times, and the stopping rule that decides how many to take.
#include <cstddef>
#include <vector>

namespace hdb {

struct Stats {
  std::size_t n = 0;
  double min = 0, median = 0, mean = 0, max = 0;
  double stddev = 0;  // sample standard deviation (n-1)
  double cv = 0;      // stddev / mean, 0 when mean is 0 or n < 2
};

Stats summarize(std::vector<double> values);

struct StoppingRule {
  int min_passes = 3;
  int max_passes = 50;
  double max_time = 2.0;       // seconds of timed passes
  double target_noise = 0.02;  // coefficient of variation

  // True when no more passes are needed, given the times so far and the seconds spent on them.
  bool done(const std::vector<double>& times, double elapsed) const;
};

}  // namespace hdb
