#pragma once
// Host execution of the CUDA backend: what a .cu file sees of the device when g++ compiles it as
// C++. The build force-includes this header (as nvcc implicitly includes cuda_runtime.h), so the
// sources are the ones nvcc compiles, unchanged:
//  - CUDA's own headers for every type, enum and runtime declaration (cudaError_t, dim3, uint4,
//    cudaDeviceProp, ...); the runtime functions themselves are defined in runtime.cpp;
//  - threadIdx, blockIdx, blockDim, gridDim: per host thread, set by the launch engine, which runs
//    one host thread per GPU thread of a block (launch.cpp);
//  - __shared__ is a function-local static: one copy per kernel, and blocks run one after another,
//    so it is the running block's shared memory (never zeroed between blocks, as on a GPU);
//  - __syncthreads and the warp intrinsics are real barriers among those threads, so
//    ThreadSanitizer sees the synchronisation a kernel has and the races where it has none;
//  - atomics are GCC's __atomic builtins (relaxed, like CUDA's atomics without a fence).
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#undef __shared__
#define __shared__ static
#ifndef __launch_bounds__
#define __launch_bounds__(...)
#endif

inline thread_local uint3 threadIdx{0, 0, 0};
inline thread_local uint3 blockIdx{0, 0, 0};
inline thread_local dim3 blockDim{1, 1, 1};
inline thread_local dim3 gridDim{1, 1, 1};
inline constexpr int warpSize = 32;

namespace hdb::cuda::host {

// The running thread's block barrier (__syncthreads), and the one that counts a predicate.
void sync_block();
unsigned sync_block_count(bool predicate);
// Each lane of the calling warp in `mask` gives `value`; returns every lane's value (lanes outside
// the mask or already exited: 0). A mask naming an exited lane, or a live lane left out of it, is a
// fault of the kernel (a GPU would hang or give undefined results); the launch reports it.
void warp_exchange(unsigned mask, std::uint64_t value, std::uint64_t (&out)[32]);
// The calling thread's lane (0..31) within its warp.
unsigned lane_id();
// __syncwarp: the lanes in `mask` wait for each other (a warp_exchange that is no shuffle).
void warp_sync(unsigned mask);

}  // namespace hdb::cuda::host

inline void __syncthreads() { hdb::cuda::host::sync_block(); }
inline int __syncthreads_count(int predicate) {
  return static_cast<int>(hdb::cuda::host::sync_block_count(predicate != 0));
}
inline int __syncthreads_or(int predicate) { return hdb::cuda::host::sync_block_count(predicate != 0) != 0; }

inline void __syncwarp(unsigned mask = 0xffffffffu) { hdb::cuda::host::warp_sync(mask); }

inline unsigned __ballot_sync(unsigned mask, int predicate) {
  std::uint64_t all[32];
  hdb::cuda::host::warp_exchange(mask, predicate ? 1u : 0u, all);
  unsigned bits = 0;
  for (unsigned l = 0; l < 32; ++l)
    if (all[l] && (mask >> l & 1u)) bits |= 1u << l;
  return bits;
}

namespace hdb::cuda::host {
// A shuffle: the warp's values of `var`, then the one of lane pick(own lane); `var` itself where
// pick gives 32 or more (a lane beyond its segment keeps its own value).
template <class T, class Pick>
T shuffle(unsigned mask, T var, Pick pick) {
  static_assert(sizeof(T) <= 8 && std::is_trivially_copyable_v<T>, "shuffles of up to 8 bytes");
  std::uint64_t mine = 0, all[32];
  std::memcpy(&mine, &var, sizeof(T));
  warp_exchange(mask, mine, all);
  const unsigned src = pick(lane_id());
  if (src >= 32) return var;
  T out;
  std::memcpy(&out, &all[src], sizeof(T));
  return out;
}
}  // namespace hdb::cuda::host

template <class T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize) {
  const auto w = static_cast<unsigned>(width);
  return hdb::cuda::host::shuffle(
      mask, var, [&](unsigned lane) { return lane + delta >= (lane / w + 1) * w ? 32u : lane + delta; });
}

// Lane srcLane (taken modulo width) of the caller's segment of `width` lanes.
template <class T>
inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize) {
  const auto w = static_cast<unsigned>(width);
  return hdb::cuda::host::shuffle(mask, var,
                                  [&](unsigned lane) { return lane / w * w + static_cast<unsigned>(src_lane) % w; });
}

// CUDA's integer min and max, which device code calls unqualified.
#define HDB_HOST_MINMAX(T)                         \
  inline T min(T a, T b) { return b < a ? b : a; } \
  inline T max(T a, T b) { return a < b ? b : a; }
HDB_HOST_MINMAX(int)
HDB_HOST_MINMAX(unsigned)
HDB_HOST_MINMAX(long long)
HDB_HOST_MINMAX(unsigned long long)
#undef HDB_HOST_MINMAX

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }

// CUDA's atomics return the old value and order nothing beyond themselves.
template <class T>
inline T atomicAdd(T* address, T value) {
  return __atomic_fetch_add(address, value, __ATOMIC_RELAXED);
}
template <class T>
inline T atomicMax(T* address, T value) {
  T old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (old < value && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T>
inline T atomicMin(T* address, T value) {
  T old = __atomic_load_n(address, __ATOMIC_RELAXED);
  while (value < old && !__atomic_compare_exchange_n(address, &old, value, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return old;
}
template <class T>
inline T atomicOr(T* address, T value) {
  return __atomic_fetch_or(address, value, __ATOMIC_RELAXED);
}
template <class T>
inline T atomicExch(T* address, T value) {
  return __atomic_exchange_n(address, value, __ATOMIC_RELAXED);
}
template <class T>
inline T atomicCAS(T* address, T compare, T value) {
  __atomic_compare_exchange_n(address, &compare, value, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  return compare;  // the old value: `compare` when it matched, else what was there
}
