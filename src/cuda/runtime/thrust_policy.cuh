#pragma once
// Thrust's execution policy for a backend's calls: its temporaries from `scratch`, on `stream`.
// On a GPU Thrust's CUDA system (par_nosync: no synchronisation after the call; par: with it);
// under host execution Thrust's CPP system, which runs the same algorithm on the calling thread
// (streams are in order there, so both are the same).
#include <cuda_runtime.h>

#include "runtime/scratch.hpp"

#ifdef HDB_CUDA_HOST
#include <thrust/system/cpp/execution_policy.h>

#include "runtime/host/traffic.hpp"
#else
#include <thrust/execution_policy.h>
#endif

namespace hdb::cuda {

#ifdef HDB_CUDA_HOST
// Each Thrust call takes a policy: the traffic profile counts them (runtime/host/traffic.hpp).
inline auto thrust_policy(Scratch& scratch, cudaStream_t) {
  if (host::traffic::active()) host::traffic::library_call();
  return thrust::cpp::par(scratch);
}
inline auto thrust_policy_sync(Scratch& scratch, cudaStream_t) {
  if (host::traffic::active()) host::traffic::library_call();
  return thrust::cpp::par(scratch);
}
#else
inline auto thrust_policy(Scratch& scratch, cudaStream_t stream) {
  return thrust::cuda::par_nosync(scratch).on(stream);
}
inline auto thrust_policy_sync(Scratch& scratch, cudaStream_t stream) { return thrust::cuda::par(scratch).on(stream); }
#endif

}  // namespace hdb::cuda
