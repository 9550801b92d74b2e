#pragma once
// Static chunking of [0, n) for the CPU backends' parallel variants: contiguous pieces, one per
// thread, and none smaller than kMinChunkRows (below that, starting a thread costs more than the work).
#include <algorithm>
#include <cstdint>

#ifdef HDB_HAVE_OPENMP
#include <omp.h>
#endif

#include "harness/parallel.hpp"

namespace hdb::cpu {

constexpr std::uint64_t kMinChunkRows = 16384;

inline int chunk_count(std::uint64_t n, int threads) {
  return static_cast<int>(
      std::max<std::uint64_t>(1, std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), n / kMinChunkRows)));
}

// First row of chunk c of `chunks` (chunk_begin(n, chunks, chunks) == n).
inline std::uint64_t chunk_begin(std::uint64_t n, int chunks, int c) {
  return n * static_cast<std::uint64_t>(c) / static_cast<std::uint64_t>(chunks);
}

// Runs f(c) for c in [0, chunks) on up to `threads` threads.
template <class F>
void for_chunks(int chunks, int threads, F&& f) {
  if (chunks <= 1 || threads <= 1) {
    for (int c = 0; c < chunks; ++c) f(c);
    return;
  }
#ifdef HDB_HAVE_OPENMP
#pragma omp parallel for num_threads(std::min(chunks, threads)) schedule(static, 1)
  for (int c = 0; c < chunks; ++c) f(c);
#else
  run_tasks(std::min(chunks, threads), [&f, chunks, threads](int t) {
    for (int c = t; c < chunks; c += threads) f(c);
  });
#endif
}

}  // namespace hdb::cpu
