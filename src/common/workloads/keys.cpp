#include "workloads/keys.hpp"

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"

namespace hdb {

KeyDist parse_key_dist(const std::string& t) {
  if (t == "uniform") return KeyDist::Uniform;
  if (t == "zipf") return KeyDist::Zipf;
  throw UsageError("key distribution '" + t + "' is not known (allowed: uniform, zipf)");
}

const char* to_string(KeyDist d) { return d == KeyDist::Zipf ? "zipf" : "uniform"; }

namespace {
std::uint64_t range_size(const KeySpec& s) { return s.max - s.min + 1; }  // 0 means 2^64
std::uint64_t distinct_of(const KeySpec& s) {
  std::uint64_t r = range_size(s);
  if (s.distinct == 0) return r;
  return (r != 0 && s.distinct > r) ? r : s.distinct;
}
}  // namespace

std::uint64_t key_of_index(const KeySpec& s, std::uint64_t index) {
  std::uint64_t d = distinct_of(s);
  std::uint64_t r = range_size(s);
  if (d == 0 || d == r) return s.min + index;  // the whole range
  // A bijection on [0, d): multiply by a prime coprime to d.
  std::uint64_t p = 2654435761ull;
  while (d % p == 0) p += 2;
  std::uint64_t scrambled = static_cast<std::uint64_t>((static_cast<unsigned __int128>(index) * p) % d);
  std::uint64_t stride = (r == 0 ? ~std::uint64_t{0} : r) / d;
  return s.min + scrambled * stride;
}

// out[i] is value first + i of the stream, so any slice of a key column can be generated alone.
template <class T>
static void fill(T* out, std::uint64_t n, std::uint64_t seed, const KeySpec& s, int threads, std::uint64_t first = 0) {
  std::uint64_t d = distinct_of(s);
  if (s.dist == KeyDist::Zipf) {
    ZipfSampler z(d == 0 ? ~std::uint64_t{0} : d, s.zipf_s);
    parallel_for(n, threads, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t i = b; i < e; ++i) out[i] = static_cast<T>(key_of_index(s, z.sample(seed, first + i) - 1));
    });
  } else {
    parallel_for(n, threads, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t i = b; i < e; ++i) {
        std::uint64_t bits = rand_at(seed, first + i);
        std::uint64_t idx = d == 0 ? bits : bounded(bits, d);
        out[i] = static_cast<T>(key_of_index(s, idx));
      }
    });
  }
}

void fill_u32(std::uint32_t* out, std::uint64_t n, std::uint64_t seed, const KeySpec& s, int threads) {
  fill(out, n, seed, s, threads);
}
void fill_u64(std::uint64_t* out, std::uint64_t n, std::uint64_t seed, const KeySpec& s, int threads) {
  fill(out, n, seed, s, threads);
}
void fill_u32_at(std::uint32_t* out, std::uint64_t first, std::uint64_t n, std::uint64_t seed, const KeySpec& s,
                 int threads) {
  fill(out, n, seed, s, threads, first);
}
std::vector<std::uint32_t> generate_u32(std::uint64_t n, std::uint64_t seed, const KeySpec& s, int threads) {
  std::vector<std::uint32_t> v(n);
  fill(v.data(), n, seed, s, threads);
  return v;
}
std::vector<std::uint64_t> generate_u64(std::uint64_t n, std::uint64_t seed, const KeySpec& s, int threads) {
  std::vector<std::uint64_t> v(n);
  fill(v.data(), n, seed, s, threads);
  return v;
}

}  // namespace hdb
