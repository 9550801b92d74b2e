#pragma once
// The CPU backend's sort: a stable LSD radix sort of (key, row) pairs, 8 bits a pass, a pass skipped
// where every key has the same digit, then one gather of the whole tuples. With threads > 1 every
// pass counts digits per chunk and scatters each chunk to its own offsets (digit-major, chunk-minor),
// which keeps the order of equal keys: the same output as the serial sort, whatever the threads.
#include <array>
#include <cstdint>
#include <vector>

#include "harness/timing.hpp"

namespace hdb::ra::cpu {

// Kept by the backend between passes, so only a case's first pass allocates.
struct SortScratch {
  std::vector<std::uint64_t> a, b;                   // key << 32 | row
  std::vector<std::array<std::uint64_t, 256>> hist;  // per chunk
};

// out (n tuples of w words) = in's tuples in stable key order; n < 2^32. Phases "sort", "gather".
Breakdown stable_sort_by_key(const std::uint32_t* in, std::uint64_t n, int w, std::uint32_t* out, int threads,
                             SortScratch& s);

}  // namespace hdb::ra::cpu
