#pragma once
// Device building blocks of the CUDA merge: each step works on device pointers on one stream.
// Thrust compositions (merge_thrust.cu) and custom kernels (merge_kernels.cu) are compiled apart
// so the two heavy translation units build in parallel.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "runtime/cuda_check.hpp"
#include "runtime/scratch.hpp"
#include "workloads/columns.hpp"

namespace hdb::cuda::merge {

// Thrust's temporaries and the steps' scratch come from the case's Scratch (runtime/scratch.hpp):
// the warm-up pass allocates, timed passes reuse.
using hdb::cuda::Scratch;

enum class DictMergeKind { Slice, Csum, Mum, MergePath, Tiles };

// 1a: U_D into `ud` (room for n), the id in U_D of every delta row into `ids`; returns |U_D|.
// Thrust sort + unique as the paper, ids by vectorised lower_bound.
template <class T>
std::uint64_t delta_dict(Scratch& a, cudaStream_t s, const T* delta, std::uint64_t n, T* ud, std::uint32_t* ids);

// 1a tuned (merge_delta.cu): (value, row) pairs radix-sorted, run heads scanned into ids and
// scattered; no binary search. 32- and 64-bit values. Its scratch (named buffers of `sc`) in bytes.
template <class T>
std::uint64_t delta_dict_pairs(Scratch& sc, cudaStream_t s, const T* delta, std::uint64_t n, T* ud, std::uint32_t* ids);
template <class T>
std::uint64_t delta_dict_pairs_scratch(std::uint64_t n);

// 1b: U'_M into `dict` (room for n1 + n2), X_M and X_D; returns |U'_M|.
template <class T>
std::uint64_t dict_merge(DictMergeKind kind, Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                         std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd);

// 1b tuned (merge_dict.cu): one merge-path kernel over tiles, counting then writing; its scratch
// (named buffers of `sc`) in bytes.
template <class T>
std::uint64_t dict_merge_tiles(Scratch& sc, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                               std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd);
std::uint64_t dict_merge_tiles_scratch(std::uint64_t n);

// The paper's dictionary slice merge (custom kernels, gap closing on the device).
template <class T>
std::uint64_t dict_merge_slice(Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud, std::uint64_t n2,
                               T* dict, std::uint32_t* xm, std::uint32_t* xd);

// 2b with X_M / X_D for the output words [word_begin, word_end) (chunks start on 64-row marks).
void reencode_lookup(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                     const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd,
                     std::uint64_t rows, unsigned width, std::uint64_t word_begin, std::uint64_t word_end,
                     std::uint64_t* out);

// 2b tuned (merge_reencode.cu): the same output as reencode_lookup, a warp per 64 rows; word_begin
// on a 64-row mark (a multiple of `width`), widths up to 32.
void reencode_warp(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                   const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd, std::uint64_t rows,
                   unsigned width, std::uint64_t word_begin, std::uint64_t word_end, std::uint64_t* out);

// Unoptimised 2b: every row's value is searched in U'_M.
template <class T>
void reencode_binsearch(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                        const T* um, const T* delta, const T* dict, std::uint64_t dict_size, std::uint64_t rows,
                        unsigned width, std::uint64_t* out);

// ---- strings (merge_kernels.cu): a column of n strings is offs[0..n] (32-bit byte offsets) and
// one byte array, as on OpenCL (kernels/merge.cl); the same algorithm step by step, so what the
// OpenCL tests show carries over. ----
struct DevStrings {
  const std::uint32_t* offs = nullptr;
  const unsigned char* bytes = nullptr;
  std::uint64_t n = 0;
};
struct StrCount {
  std::uint64_t n = 0, bytes = 0;  // strings, and their bytes
};

// 1a: rounds of CUB radix sorts over 7-byte chunk keys of the still-tied strings (by chunk, then by
// group number), heads scanned into U_D; U_D's offsets and bytes into ud_offs (room for n + 1) and
// ud_bytes (room for the delta's bytes), every row's id into `ids`.
StrCount delta_dict_str(Scratch& a, cudaStream_t s, DevStrings delta, std::uint32_t* ud_offs, unsigned char* ud_bytes,
                        std::uint32_t* ids);
// 1b by merge path on strings: U'_M into dict_offs (room for n1 + n2 + 1) and dict_bytes, X_M, X_D.
StrCount dict_merge_str(Scratch& a, cudaStream_t s, DevStrings um, DevStrings ud, std::uint32_t* dict_offs,
                        unsigned char* dict_bytes, std::uint32_t* xm, std::uint32_t* xd);
// Device bytes the string steps take from `a` beyond their inputs and outputs, for `delta` delta
// strings (1a) and `merged` dictionary entries (1b), CUB's temporary storage as CUB reports it.
std::uint64_t delta_dict_str_scratch(std::uint64_t delta);
std::uint64_t dict_merge_str_scratch(std::uint64_t merged);

// CUB's temporary storage (as CUB reports it, d_temp_storage = nullptr) for the integer steps'
// library calls on n entries of T: the larger of the 1a sort + unique and 1b merge-path calls
// (Thrust runs them on CUB and takes at least this).
template <class T>
std::uint64_t library_temp_bytes(std::uint64_t n);

}  // namespace hdb::cuda::merge
