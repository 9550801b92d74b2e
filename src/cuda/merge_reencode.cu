// Step 2b, tuned (issue 45, item 4): a warp re-encodes 64 consecutive rows, two per lane, and packs
// their new ids into exactly `width` 64-bit words (64 rows x width bits), lane l writing word l.
// Against reencode_lookup (one thread per output word, each unpacking the rows it overlaps):
//  - the old ids are read once, as whole 8-byte words by the lanes below the old width, and handed
//    to the lanes by shuffles, instead of one or two loads of one word per row by every thread;
//  - each row's X_M or X_D lookup happens once, in the lane that owns the row;
//  - the new width is a template parameter, so the rows a word overlaps are found by division by a
//    constant; no 64-bit division by a runtime width is left.
// A chunk of the overlapped whole merge starts on a 64-row mark, which is a multiple of `width`
// words: the warps' groups of rows line up with chunks, so the kernel takes a word range too.
#include <stdexcept>
#include <string>
#include <utility>

#include "merge_steps.cuh"
#include "runtime/launch.cuh"

namespace hdb::cuda::merge {
namespace {

constexpr unsigned kFullWarp = 0xffffffffu;
constexpr unsigned kBlock = 256;  // 8 warps, 8 groups of 64 rows

// The id of row j (0..63) of the group: rows 0..31 sit in the lanes' `lo`, rows 32..63 in `hi`.
// Every lane takes part in both shuffles, whichever row it asks for.
__device__ std::uint32_t row_id(std::uint32_t lo, std::uint32_t hi, unsigned j) {
  const std::uint32_t a = __shfl_sync(kFullWarp, lo, static_cast<int>(j & 31u));
  const std::uint32_t b = __shfl_sync(kFullWarp, hi, static_cast<int>(j & 31u));
  return j < 32 ? a : b;
}

// Old id of row j (0..63) of the group from the group's `ow` old words, word k held by lane k.
__device__ std::uint32_t old_id(std::uint64_t word, unsigned ow, unsigned j) {
  const unsigned bit = j * ow, k = bit >> 6, off = bit & 63u;
  // A row's bits end within the group's last word (ow - 1 <= 31): the clamp only keeps the lane
  // index valid when no second word is needed.
  const std::uint64_t w0 = __shfl_sync(kFullWarp, word, static_cast<int>(k));
  const std::uint64_t w1 = __shfl_sync(kFullWarp, word, static_cast<int>(k + 1 < 32 ? k + 1 : 31));
  std::uint64_t v = w0 >> off;
  if (off + ow > 64) v |= w1 << (64 - off);
  return ow == 0 ? 0u : static_cast<std::uint32_t>(v & ((std::uint64_t{1} << ow) - 1));
}

template <unsigned W>
__global__ void __launch_bounds__(kBlock)
    reencode_warp_kernel(const std::uint64_t* old, unsigned ow, std::uint64_t old_words, std::uint64_t nm,
                         const std::uint32_t* xm, const std::uint32_t* ids, const std::uint32_t* xd, std::uint64_t rows,
                         std::uint64_t group_begin, std::uint64_t group_end, std::uint64_t word_end,
                         std::uint64_t* out) {
  const unsigned lane = threadIdx.x & 31u;
  const std::uint64_t g = group_begin + (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / 32;
  if (g >= group_end) return;  // whole warps: the block is a multiple of 32 threads

  // The group's old words: 64 rows x ow bits = ow words from word g * ow.
  const std::uint64_t ow_word = g * ow + lane;
  const std::uint64_t word = lane < ow && ow_word < old_words ? old[ow_word] : 0;
  const std::uint64_t r_lo = g * 64 + lane, r_hi = r_lo + 32;
  const std::uint32_t old_lo = old_id(word, ow, lane), old_hi = old_id(word, ow, lane + 32);
  auto new_id = [&](std::uint64_t r, std::uint32_t o) -> std::uint32_t {
    if (r < nm) return xm[o];
    return r < rows ? xd[ids[r - nm]] : 0u;
  };
  const std::uint32_t id_lo = new_id(r_lo, old_lo), id_hi = new_id(r_hi, old_hi);

  // Lane l < W packs word l of the group: bits [64 l, 64 l + 64), rows first .. last (<= 63) of the
  // group. The other lanes only hand their ids on.
  const bool packs = lane < W;
  const unsigned first = (64u * lane) / W, last = (64u * lane + 63u) / W;
  constexpr unsigned kSpan = (63u + W - 1u) / W + 1u;  // the most rows one word overlaps
  std::uint64_t acc = 0;
#pragma unroll
  for (unsigned k = 0; k < kSpan; ++k) {
    const unsigned j = first + k < 64u ? first + k : 63u;
    const std::uint64_t id = row_id(id_lo, id_hi, j);
    const int shift = static_cast<int>(j * W) - static_cast<int>(64u * lane);
    if (packs && first + k <= last) acc |= shift >= 0 ? id << shift : id >> -shift;
  }
  const std::uint64_t w = g * W + lane;
  if (packs && w < word_end) out[w] = acc;
}

using Kernel = void (*)(const std::uint64_t*, unsigned, std::uint64_t, std::uint64_t, const std::uint32_t*,
                        const std::uint32_t*, const std::uint32_t*, std::uint64_t, std::uint64_t, std::uint64_t,
                        std::uint64_t, std::uint64_t*);

// The kernel of width 1..32.
template <unsigned... W>
Kernel kernel_for(unsigned width, std::integer_sequence<unsigned, W...>) {
  static const Kernel kernels[] = {reencode_warp_kernel<W + 1>...};
  return kernels[width - 1];
}

}  // namespace

void reencode_warp(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                   const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd, std::uint64_t rows,
                   unsigned width, std::uint64_t word_begin, std::uint64_t word_end, std::uint64_t* out) {
  if (word_end <= word_begin || width == 0) return;
  if (width > 32 || old_width > 32)
    throw std::invalid_argument("reencode_warp: widths of at most 32 bits (got " + std::to_string(old_width) + " -> " +
                                std::to_string(width) + ")");
  if (word_begin % width != 0)
    throw std::invalid_argument("reencode_warp: word " + std::to_string(word_begin) +
                                " is not on a 64-row mark (a multiple of the width " + std::to_string(width) + ")");
  const std::uint64_t group_begin = word_begin / width, group_end = (word_end + width - 1) / width;
  const std::uint64_t warps = group_end - group_begin, per_block = kBlock / 32;
  const auto blocks = static_cast<unsigned>((warps + per_block - 1) / per_block);
  const std::uint64_t old_words = BitPacked::words_for(main_rows, old_width);
  Kernel reencode_warp_kernel_of_width = kernel_for(width, std::make_integer_sequence<unsigned, 32>{});
  HDB_LAUNCH(reencode_warp_kernel_of_width, blocks, kBlock, 0, s)
  (old, old_width, old_words, main_rows, xm, delta_ids, xd, rows, group_begin, group_end, word_end, out);
  HDB_CUDA_CHECK_LAUNCH("reencode_warp");
}

}  // namespace hdb::cuda::merge
