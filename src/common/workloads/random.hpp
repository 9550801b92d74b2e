#pragma once
// Counter-based random numbers: value i of a stream depends only on (seed, i), so data generated
// in parallel is identical for any thread count, on every backend.
#include <cmath>
#include <cstdint>

namespace hdb {

constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The i-th 64-bit value of stream `seed`.
constexpr std::uint64_t rand_at(std::uint64_t seed, std::uint64_t i) { return splitmix64(seed ^ splitmix64(i)); }

// Uniform double in [0, 1) from the top 53 bits.
inline double uniform01(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// Uniform integer in [0, n) without modulo bias worth measuring (Lemire's multiply-shift).
inline std::uint64_t bounded(std::uint64_t bits, std::uint64_t n) {
  return static_cast<std::uint64_t>((static_cast<unsigned __int128>(bits) * n) >> 64);
}

// Zipf(s) over ranks 1..n by rejection-inversion (Hörmann & Derflinger 1996): O(1) per sample, no
// table, so billions of keys can be drawn in parallel. Needs a stream of uniforms per sample.
class ZipfSampler {
 public:
  ZipfSampler(std::uint64_t n, double s);
  // Draws using consecutive values of stream (seed, base..): returns a rank in [1, n].
  std::uint64_t sample(std::uint64_t seed, std::uint64_t counter) const;
  std::uint64_t n() const { return n_; }

 private:
  double h(double x) const;
  double h_inv(double x) const;
  double helper1(double x) const;
  double helper2(double x) const;
  std::uint64_t n_;
  double s_, h_x1_, h_n_, shift_;
};

}  // namespace hdb
