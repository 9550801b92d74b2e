#pragma once
// Pearson's chi-square statistic of `counts` against a uniform distribution, and the value it
// exceeds with probability 0.001 (Wilson-Hilferty), so a fixed seed fails only on a real bias.
// Shared by the generators' distribution tests (tests/tpch, tests/ssb).
#include <cmath>
#include <cstdint>
#include <vector>

namespace hdb::test {

struct ChiSquare {
  double statistic, critical;
};

inline ChiSquare uniform_chi_square(const std::vector<std::uint64_t>& counts) {
  double total = 0;
  for (std::uint64_t c : counts) total += static_cast<double>(c);
  const double expected = total / static_cast<double>(counts.size());
  double x2 = 0;
  for (std::uint64_t c : counts)
    x2 += (static_cast<double>(c) - expected) * (static_cast<double>(c) - expected) / expected;
  const double df = static_cast<double>(counts.size() - 1), a = 2.0 / (9.0 * df);
  return {x2, df * std::pow(1.0 - a + 3.09 * std::sqrt(a), 3.0)};
}

}  // namespace hdb::test
