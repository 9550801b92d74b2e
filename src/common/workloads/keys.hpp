#pragma once
// Key/value column generators shared by every benchmark: uniform or Zipf over a chosen number of
// distinct values spread across a key range. Seeded and parallel; the same seed gives the same
// data on every backend and for every thread count.
#include <cstdint>
#include <string>
#include <vector>

namespace hdb {

enum class KeyDist { Uniform, Zipf };
KeyDist parse_key_dist(const std::string& text);  // "uniform" | "zipf"; UsageError otherwise
const char* to_string(KeyDist d);

struct KeySpec {
  KeyDist dist = KeyDist::Uniform;
  std::uint64_t distinct = 0;  // number of distinct values; 0 = every value of [min, max]
  double zipf_s = 1.0;         // Zipf exponent
  std::uint64_t min = 0;
  std::uint64_t max = 0xffffffffu;  // inclusive
};

// The distinct values the spec can produce, as index -> key (evenly spread over [min, max],
// scrambled so that Zipf's frequent ranks are not all small keys).
std::uint64_t key_of_index(const KeySpec& spec, std::uint64_t index);

std::vector<std::uint32_t> generate_u32(std::uint64_t n, std::uint64_t seed, const KeySpec& spec, int threads);
std::vector<std::uint64_t> generate_u64(std::uint64_t n, std::uint64_t seed, const KeySpec& spec, int threads);
// Fill an existing buffer (e.g. pinned host memory).
void fill_u32(std::uint32_t* out, std::uint64_t n, std::uint64_t seed, const KeySpec& spec, int threads);
void fill_u64(std::uint64_t* out, std::uint64_t n, std::uint64_t seed, const KeySpec& spec, int threads);
// Values first .. first + n - 1 of the column fill_u32 would make: a slice generated on its own
// (each MPI rank generates its share of one global column).
void fill_u32_at(std::uint32_t* out, std::uint64_t first, std::uint64_t n, std::uint64_t seed, const KeySpec& spec,
                 int threads);

}  // namespace hdb
