#pragma once
// Chunking of [0, n) for the CPU backends' parallel variants: contiguous pieces, several per thread,
// none smaller than kMinChunkRows (below that, handing a piece out costs more than the work).
// Several per thread because the pieces are handed out one at a time by a pool of blocking workers
// (runtime/worker_pool.hpp): when another process takes a core, the thread that loses it leaves
// its remaining pieces to the others instead of holding the whole step up for a time slice.
#include <algorithm>
#include <cstdint>

#include "runtime/worker_pool.hpp"

namespace hdb::cpu {

constexpr std::uint64_t kMinChunkRows = 16384;
// Pieces per thread: 4 bounds the imbalance a lost core causes to a quarter of a thread's share,
// while each piece stays large enough to stream (a 256 MB input on 2 threads: 32 MB pieces).
constexpr int kChunksPerThread = 4;

inline int chunk_count(std::uint64_t n, int threads) {
  const std::uint64_t want = threads <= 1 ? 1 : static_cast<std::uint64_t>(threads) * kChunksPerThread;
  return static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(want, n / kMinChunkRows)));
}

// First row of chunk c of `chunks` (chunk_begin(n, chunks, chunks) == n).
inline std::uint64_t chunk_begin(std::uint64_t n, int chunks, int c) {
  return n * static_cast<std::uint64_t>(c) / static_cast<std::uint64_t>(chunks);
}

// The process's pool of `threads` threads (the caller's included); made on first use.
WorkerPool& shared_pool(int threads);

// Runs f(c) for c in [0, chunks) on up to `threads` threads, in no fixed order.
template <class F>
void for_chunks(int chunks, int threads, F&& f) {
  if (chunks <= 1 || threads <= 1) {
    for (int c = 0; c < chunks; ++c) f(c);
    return;
  }
  shared_pool(std::min(chunks, threads)).run(static_cast<std::size_t>(chunks), [&f](std::size_t c) {
    f(static_cast<int>(c));
  });
}

}  // namespace hdb::cpu
