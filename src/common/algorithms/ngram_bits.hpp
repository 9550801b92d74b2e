#pragma once
// Bit-sliced window counters shared by every n-gram search algorithm (host and CUDA device code).
// An article's 32 segments give 32 windows: window s is segments {s, s+1} (window 31 is segment 31
// alone, a subset of window 30, so it never changes a maximum). Lane s of the 8 planes holds the
// number of query 3-grams seen in window s, as an 8-bit number whose bit i is in plane i.
// Adding one 3-gram's map is a ripple-carry add of one lane mask; "some window has at least v"
// is a bit-sliced comparison: 8 words of state per article, no per-window loops.
#include <cstdint>

#if defined(__CUDACC__)
#define HDB_NGRAM_HD __host__ __device__ __forceinline__
#else
#define HDB_NGRAM_HD inline
#endif

namespace hdb::ngram {

constexpr int kPlanes = 8;  // counts up to 255: queries have at most 255 distinct 3-grams
constexpr int kMaxQueryTrigrams = 255;
constexpr std::uint32_t kBinSize = 256;  // articles per bin (the paper's database segment)

// Lanes (windows) touched by a 3-gram whose segment map is `map`.
HDB_NGRAM_HD std::uint32_t window_lanes(std::uint32_t map) { return map | (map >> 1); }

HDB_NGRAM_HD void add_lanes(std::uint32_t* planes, std::uint32_t lanes) {
  std::uint32_t carry = lanes;
  for (int i = 0; i < kPlanes; ++i) {
    std::uint32_t t = planes[i] & carry;
    planes[i] ^= carry;
    carry = t;
  }
}

// Mask of the lanes whose count is >= v.
HDB_NGRAM_HD std::uint32_t lanes_at_least(const std::uint32_t* planes, int v) {
  if (v <= 0) return ~0u;
  if (v > 255) return 0u;
  std::uint32_t gt = 0, eq = ~0u;
  for (int i = kPlanes - 1; i >= 0; --i) {
    std::uint32_t vb = ((v >> i) & 1) ? ~0u : 0u;
    gt |= eq & planes[i] & ~vb;
    eq &= ~(planes[i] ^ vb);
  }
  return gt | eq;
}

// Score an article must have after `done` of the query's n 3-grams to still reach `m`: each of
// the n - done remaining 3-grams can add at most one to any window.
HDB_NGRAM_HD int needed_after(int m, int n, int done) { return m - (n - done); }

// 32-way lower-bound search, one round per warp ballot (CUDA segment-wise kernel): lane l probes
// lo + l * probe_step(lo, hi); c = how many probes lie below the key (a prefix, the data being
// sorted; probes at or past hi count as not below). narrow() keeps the first entry >= key inside
// [lo, hi]. Loop while hi - lo > 32, then count the remaining entries below the key directly.
HDB_NGRAM_HD std::uint32_t probe_step(std::uint32_t lo, std::uint32_t hi) { return (hi - lo + 31) / 32; }
HDB_NGRAM_HD void narrow(std::uint32_t& lo, std::uint32_t& hi, std::uint32_t step, int c) {
  if (c == 0) {
    hi = lo;
    return;
  }
  std::uint32_t next_hi = lo + static_cast<std::uint32_t>(c) * step;
  lo += static_cast<std::uint32_t>(c - 1) * step + 1;
  if (next_hi < hi) hi = next_hi;
}

}  // namespace hdb::ngram
