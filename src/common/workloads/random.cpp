#include "workloads/random.hpp"

#include <algorithm>

namespace hdb {

// log1p(x)/x and (exp(x)-1)/x, stable near 0.
double ZipfSampler::helper1(double x) const { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x / 3.0); }
double ZipfSampler::helper2(double x) const {
  return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3.0);
}

// H(x) = ((x)^(1-s) - 1) / (1 - s), the integral of x^-s, written stably for s near 1.
double ZipfSampler::h(double x) const {
  double lx = std::log(x);
  return helper2((1 - s_) * lx) * lx;
}
double ZipfSampler::h_inv(double x) const {
  double t = std::max(-1.0, x * (1 - s_));
  return std::exp(helper1(t) * x);
}

ZipfSampler::ZipfSampler(std::uint64_t n, double s) : n_(std::max<std::uint64_t>(n, 1)), s_(s) {
  h_x1_ = h(1.5) - 1.0;
  h_n_ = h(static_cast<double>(n_) + 0.5);
  shift_ = 2.0 - h_inv(h(2.5) - std::exp(-s_ * std::log(2.0)));
}

std::uint64_t ZipfSampler::sample(std::uint64_t seed, std::uint64_t counter) const {
  for (std::uint64_t attempt = 0;; ++attempt) {
    double u = h_n_ + uniform01(rand_at(seed, counter * 64 + attempt)) * (h_x1_ - h_n_);
    double x = h_inv(u);
    double k = std::floor(x + 0.5);
    if (k < 1) k = 1;
    if (k > static_cast<double>(n_)) k = static_cast<double>(n_);
    if (k - x <= shift_ || u >= h(k + 0.5) - std::exp(-s_ * std::log(k))) return static_cast<std::uint64_t>(k);
    if (attempt == 63) return static_cast<std::uint64_t>(k);
  }
}

}  // namespace hdb
