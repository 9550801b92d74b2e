#pragma once
// Host execution: the state of the emulated device (runtime.cpp), shared with the launch engine
// and the CUB stand-ins.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <string>

#include "runtime/host/engine.hpp"

namespace hdb::cuda::host {

// What the device reports and enforces: Hopper's limits (an H100 SXM), the memory configurable.
struct Limits {
  int max_threads_per_block = 1024;
  int sm_count = 132;
  int warp_size = 32;
  std::size_t shared_per_block = 48 * 1024;  // without an opt-in
  std::size_t shared_per_block_optin = 227 * 1024;
  std::size_t shared_per_sm = 228 * 1024;
  int l2_bytes = 50 * 1024 * 1024;
  int max_threads_per_sm = 2048;
  std::uint64_t memory_bytes = 0;  // HDB_CUDA_HOST_MEMORY, else min(80 GiB, RAM / 2)
};
const Limits& limits();

// Host execution's settings from the environment, read once (at the first call that needs one: the
// platform's set-up reads the memory) through the options' parsers (harness/env.hpp): a bad value
// exits with code 2 naming the variable, never ignored.
struct Settings {
  std::uint64_t memory_bytes = 0;  // HDB_CUDA_HOST_MEMORY: a size (4096, 512M, 2G, 2^30); 0: unset
  std::uint64_t fault_at = 0;      // HDB_CUDA_HOST_FAULT: the launch (from 1) that faults; 0: none
  bool threads = false;            // HDB_CUDA_HOST_ENGINE: fibers (the default) or threads
  bool trace = false;              // HDB_CUDA_HOST_TRACE: 1 prints every launch, 0 (the default) not
  // HDB_CUDA_HOST_BLOCKS: in-order (the default), reverse or shuffled (engine::BlockOrder)
  engine::BlockOrder::Kind blocks = engine::BlockOrder::Kind::in_order;
};
const Settings& settings();

class State {
 public:
  // The sticky error of a kernel fault (cudaSuccess while there is none): every call returns it.
  cudaError_t sticky() const { return sticky_; }
  // Sets the error cudaGetLastError returns, and returns it.
  cudaError_t set_last(cudaError_t e) {
    if (e != cudaSuccess) last_ = e;
    return e;
  }
  cudaError_t take_last() {
    cudaError_t e = sticky_ != cudaSuccess ? sticky_ : last_;
    last_ = cudaSuccess;
    return e;
  }
  cudaError_t peek_last() const { return sticky_ != cudaSuccess ? sticky_ : last_; }
  // A kernel fault: the context is lost, as on a GPU (cudaErrorLaunchFailure, sticky); the message
  // names the kernel and goes to stderr, since no CUDA call can carry it.
  cudaError_t kernel_fault(const char* kernel, const std::string& what);

  // Device allocations: [base, base + bytes). `inside` is true when [p, p + n) lies in one.
  bool inside(const void* p, std::size_t n) const;
  std::mutex& memory_mutex() { return mem_m_; }
  std::map<std::uintptr_t, std::size_t>& allocations() { return allocs_; }
  std::map<std::uintptr_t, std::size_t>& pinned() { return pinned_; }
  std::uint64_t allocated = 0;

  bool valid_stream(cudaStream_t s) const;
  void add_stream(cudaStream_t s);
  void remove_stream(cudaStream_t s);

  void count_launch() { ++launches_; }
  std::uint64_t launches() const { return launches_; }
  // HDB_CUDA_HOST_FAULT=N: the N-th launch (from 1) faults, so the handling of a lost device can
  // be tested without a GPU.
  bool inject_fault_now();

 private:
  cudaError_t sticky_ = cudaSuccess, last_ = cudaSuccess;
  mutable std::mutex mem_m_;
  std::map<std::uintptr_t, std::size_t> allocs_, pinned_;
  std::set<cudaStream_t> streams_;
  std::uint64_t launches_ = 0;
};
State& state();

}  // namespace hdb::cuda::host
