#pragma once
// Pieces the CUDA merge's kernel files share (merge_thrust.cu, merge_kernels.cu, merge_delta.cu,
// merge_dict.cu): the launch size of a one-item-a-thread kernel, the run-head flags of a sorted
// array, and the read-back of a device count.
#include <cuda_runtime.h>

#include <cstdint>

#include "runtime/cuda_check.hpp"

namespace hdb::cuda::merge {

// Blocks of 256 threads for n items, one item a thread.
inline unsigned blocks_for(std::uint64_t n) { return static_cast<unsigned>((n + 255) / 256); }

// flag[j] = 1 where sorted[j] starts a run of equal values (j == 0 or sorted[j - 1] < sorted[j]).
template <class T>
__global__ void head_flags(const T* sorted, std::uint64_t n, std::uint32_t* flag) {
  const std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (j < n) flag[j] = (j == 0 || sorted[j - 1] < sorted[j]) ? 1u : 0u;
}

// Reads a 32-bit device value (a scan's total) after the stream's work so far.
inline std::uint32_t read_u32(cudaStream_t s, const std::uint32_t* p) {
  std::uint32_t v = 0;
  HDB_CUDA_CHECK(cudaMemcpyAsync(&v, p, 4, cudaMemcpyDeviceToHost, s));
  HDB_CUDA_CHECK(cudaStreamSynchronize(s));
  return v;
}

}  // namespace hdb::cuda::merge
