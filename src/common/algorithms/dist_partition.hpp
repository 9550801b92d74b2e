#pragma once
// The host-side steps of the distributed (TP) relational operators: which rank owns a key, each
// rank's share of a global input, the stable hash partition before the exchange (the stable local
// sort by key after it is algorithms/tuple_sort.hpp's). Tuples are `width` consecutive 32-bit words, key first
// (workloads/relations.hpp). Both steps are stable so that the distributed result equals the
// serial reference exactly (unique keeps the first tuple of each key in global input order).
#include <cstdint>
#include <vector>

#include "workloads/relations.hpp"

namespace hdb::dist {

// A 32-bit mix (Murmur3's finaliser): keys built with strides or small ranges still spread evenly.
constexpr std::uint32_t key_hash(std::uint32_t k) {
  k ^= k >> 16;
  k *= 0x85ebca6bu;
  k ^= k >> 13;
  k *= 0xc2b2ae35u;
  k ^= k >> 16;
  return k;
}

// The rank that owns `key` among `ranks` (multiply-shift, no modulo).
constexpr int owner_of(std::uint32_t key, int ranks) {
  return static_cast<int>((static_cast<std::uint64_t>(key_hash(key)) * static_cast<std::uint64_t>(ranks)) >> 32);
}

struct RowRange {
  std::uint64_t begin = 0, end = 0;
  std::uint64_t size() const { return end - begin; }
};
// Rank `rank`'s contiguous share of n global rows: the shares of ranks 0..ranks-1 tile [0, n) in order.
RowRange share_of(std::uint64_t n, int rank, int ranks);

// Stable partition by owner: out holds the tuples for rank 0, then rank 1, ..., each group in input
// order. Returns the number of tuples per rank. in and out must not overlap.
std::vector<std::uint64_t> partition_by_owner(const std::uint32_t* in, std::uint64_t rows, int width, int ranks,
                                              std::uint32_t* out, int threads);

// How a global relation is generated: row i depends only on (seed, i), so every rank can generate
// its own rows and the global relation is the same for any number of ranks. Keys follow `keys`
// (uniform or Zipf over a number of distinct values); values are odd 32-bit numbers (never zero).
// join_even: keys k become 2k, then 2k + 1 (matching no even key) with probability 1 - join_match;
// a left side made with join_match = 1 and a right side with join_match = m make about m of the
// right tuples find partners.
struct GlobalSpec {
  std::uint64_t rows = 0;
  int values = 1;
  KeySpec keys;
  bool join_even = false;
  double join_match = 1.0;
};
// Rows [range.begin, range.end) of the global relation into `out` (capacity range.size() tuples).
void generate_rows(ra::Relation& out, const GlobalSpec& spec, RowRange range, std::uint64_t seed, int threads);

}  // namespace hdb::dist
