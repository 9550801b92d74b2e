#pragma once
// Output placement for the CPU backend's parallel compactions and merges, without a second read
// of the input. The count-then-write scheme read every input twice from memory (once to count,
// once to write); here a piece is produced once into a staging buffer and copied to its place:
//
// - staged_in_order: small pieces handed out in order; each learns its output offset by looking
//   back at the counts earlier pieces published (the single-pass scan CUB uses on GPUs), so its
//   staging buffer is copied out while still in the core's cache. Needs an output large enough
//   for any result (select, unique, reduce-by-key, set operations have such a bound).
// - staged_all: for outputs without a useful bound (join): every piece into a buffer of its own,
//   then one copy of all of them into an output sized exactly.
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "runtime/chunks.hpp"

namespace hdb::ra::cpu {

// Rows per piece of staged_in_order: a piece's input and staged output (at most 2 x 64K tuples of
// up to 16 bytes, 2 MB) stay in a core's L2 between producing and copying.
constexpr std::uint64_t kStagedPieceRows = 65536;

// Outputs at least this large are written with non-temporal stores (where the target has them):
// they would not stay in the last-level cache anyway.
constexpr std::uint64_t kStreamBytes = std::uint64_t{64} << 20;

// Copies `words` words to dst; Stream: non-temporal stores for the aligned middle (the output is
// not read again soon, and such stores skip reading each destination line first).
inline void copy_words(std::uint32_t* dst, const std::uint32_t* src, std::uint64_t words, bool stream) {
  if (words == 0) return;  // an empty piece's buffer may have no storage at all
#if defined(__SSE2__)
  if (stream) {
    std::uint64_t k = 0;
    for (; k < words && reinterpret_cast<std::uintptr_t>(dst + k) % 16 != 0; ++k) dst[k] = src[k];
    for (; k + 4 <= words; k += 4)
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + k), _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + k)));
    for (; k < words; ++k) dst[k] = src[k];
    _mm_sfence();
    return;
  }
#endif
  std::memcpy(dst, src, words * 4);
}

// Runs produce(p, stage) for pieces p in [0, pieces), in hand-out order, on up to `threads` threads:
// produce writes piece p's output rows (ow words each) into `stage` (its own thread's buffer, which
// it may resize) and returns how many. Each piece's rows are copied to out + (rows of all earlier
// pieces) * ow. Returns the row offset of every piece and, last, the total (pieces + 1 entries).
template <class Produce>
std::vector<std::uint64_t> staged_in_order(int pieces, int threads, std::uint64_t ow, bool stream, Produce produce,
                                           std::uint32_t* out) {
  std::vector<std::uint64_t> offset(static_cast<std::size_t>(pieces) + 1, 0);
  // Published state of a piece: 0 nothing yet; (count << 2) | 1 its own count; (prefix << 2) | 2
  // the rows of it and every piece before it.
  constexpr std::uint64_t kCount = 1, kPrefix = 2;
  std::unique_ptr<std::atomic<std::uint64_t>[]> state(new std::atomic<std::uint64_t>[static_cast<std::size_t>(pieces)]);
  for (int p = 0; p < pieces; ++p) state[static_cast<std::size_t>(p)].store(0, std::memory_order_relaxed);
  hdb::cpu::for_chunks(pieces, threads, [&](int p) {
    thread_local std::vector<std::uint32_t> stage;
    const std::uint64_t rows = produce(p, stage);
    const auto k = static_cast<std::size_t>(p);
    std::uint64_t before = 0;
    if (p > 0) {
      state[k].store(rows << 2 | kCount, std::memory_order_release);
      // Earlier pieces were handed out before this one, so each is being produced or is done;
      // one that lost its core is waited for by yielding, not spinning.
      for (std::size_t q = k; q-- > 0;) {
        std::uint64_t s;
        for (int spin = 0; (s = state[q].load(std::memory_order_acquire)) == 0; ++spin)
          if (spin > 64) std::this_thread::yield();
        before += s >> 2;
        if (s & kPrefix) break;
      }
    }
    state[k].store((before + rows) << 2 | kPrefix, std::memory_order_release);
    offset[k] = before;
    copy_words(out + before * ow, stage.data(), rows * ow, stream);
  });
  offset.back() = pieces > 0 ? state[static_cast<std::size_t>(pieces) - 1].load() >> 2 : 0;
  return offset;
}

// Buffers of staged_all, kept by the caller between passes so only a case's first pass allocates.
using StageBuffers = std::vector<std::vector<std::uint32_t>>;

// Runs produce(p, buf) for every piece into buf = stages[p] (produce resizes it as needed and
// returns its rows), then sizes the output by alloc(total rows) -> std::uint32_t* and copies every
// piece to its place, in parallel.
template <class Produce, class Alloc>
void staged_all(int pieces, int threads, std::uint64_t ow, StageBuffers& stages, Produce produce, Alloc alloc) {
  if (stages.size() < static_cast<std::size_t>(pieces)) stages.resize(static_cast<std::size_t>(pieces));
  std::vector<std::uint64_t> offset(static_cast<std::size_t>(pieces) + 1, 0);
  hdb::cpu::for_chunks(pieces, threads, [&](int p) {
    const auto k = static_cast<std::size_t>(p);
    offset[k + 1] = produce(p, stages[k]);
  });
  for (std::size_t k = 0; k < static_cast<std::size_t>(pieces); ++k) offset[k + 1] += offset[k];
  std::uint32_t* out = alloc(offset.back());
  const bool stream = offset.back() * ow * 4 >= kStreamBytes;
  hdb::cpu::for_chunks(pieces, threads, [&](int p) {
    const auto k = static_cast<std::size_t>(p);
    copy_words(out + offset[k] * ow, stages[k].data(), (offset[k + 1] - offset[k]) * ow, stream);
  });
}

}  // namespace hdb::ra::cpu
