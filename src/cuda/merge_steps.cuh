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

enum class DictMergeKind { Slice, Csum, Mum, MergePath };

// 1a: U_D into `ud` (room for n), the id in U_D of every delta row into `ids`; returns |U_D|.
// Thrust sort + unique as the paper, ids by vectorised lower_bound.
template <class T>
std::uint64_t delta_dict(Scratch& a, cudaStream_t s, const T* delta, std::uint64_t n, T* ud, std::uint32_t* ids);

// 1b: U'_M into `dict` (room for n1 + n2), X_M and X_D; returns |U'_M|.
template <class T>
std::uint64_t dict_merge(DictMergeKind kind, Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                         std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd);

// The paper's dictionary slice merge (custom kernels, gap closing on the device).
template <class T>
std::uint64_t dict_merge_slice(Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                               std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd);

// 2b with X_M / X_D for the output words [word_begin, word_end) (chunks start on 64-row marks).
void reencode_lookup(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                     const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd, std::uint64_t rows,
                     unsigned width, std::uint64_t word_begin, std::uint64_t word_end, std::uint64_t* out);

// Unoptimised 2b: every row's value is searched in U'_M.
template <class T>
void reencode_binsearch(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows, const T* um,
                        const T* delta, const T* dict, std::uint64_t dict_size, std::uint64_t rows, unsigned width,
                        std::uint64_t* out);

}  // namespace hdb::cuda::merge
