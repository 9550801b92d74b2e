#include "harness/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace hdb {

Stats summarize(std::vector<double> v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  std::size_t m = v.size() / 2;
  s.median = v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
  s.mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  // Rounding can put the mean of equal values one ulp outside them.
  s.mean = std::min(std::max(s.mean, s.min), s.max);
  if (v.size() > 1) {
    double ss = 0;
    for (double x : v) ss += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(ss / static_cast<double>(v.size() - 1));
    s.cv = s.mean > 0 ? s.stddev / s.mean : 0.0;
  }
  return s;
}

bool StoppingRule::done(const std::vector<double>& times, double elapsed) const {
  int n = static_cast<int>(times.size());
  if (n >= max_passes) return true;
  if (n < min_passes) return false;
  if (elapsed >= max_time) return true;
  return summarize(times).cv <= target_noise;
}

}  // namespace hdb
