#pragma once
// Host execution: the two ways a launch runs (launch.cpp chooses), and what the device functions of
// device.hpp call while a kernel runs.
//  - fibers (fiber_engine.cpp, the default): the GPU threads of a block are fibers on the calling
//    thread, switched at every barrier: a barrier costs microseconds, so the test suites run in
//    minutes on two cores; AddressSanitizer follows the switches (annotated).
//  - threads (thread_engine.cpp; HDB_CUDA_HOST_ENGINE=threads, and always under ThreadSanitizer):
//    one host thread per GPU thread of the block, real barriers between them, so ThreadSanitizer
//    reports two GPU threads that touch the same memory with no barrier between them. A barrier
//    costs about a millisecond on two cores (every thread must be scheduled).
// Either runs the blocks one after another, and a kernel whose first launch never synchronised
// runs later launches without barriers (`barriers` false).
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>

namespace hdb::cuda::host::engine {

struct Launch {
  const std::function<void()>* body = nullptr;
  dim3 grid, block;
  unsigned threads = 0;  // per block
  std::uint64_t blocks = 0;
  bool barriers = true;
  void (*after_block)() = nullptr;  // called after each block (the traffic profile's hook)
};

struct Outcome {
  std::string fault;          // empty: none
  bool synchronised = false;  // a thread called __syncthreads or a warp intrinsic
};

Outcome run_threads(const Launch& l);
Outcome run_fibers(const Launch& l);

// The synchronisation of the launch the calling thread (or fiber) runs in; null outside a kernel.
class Sync {
 public:
  virtual ~Sync() = default;
  virtual void sync_block() = 0;
  // __syncthreads_count: a barrier that also counts the threads whose predicate was true.
  virtual unsigned sync_block_count(bool predicate) = 0;
  virtual void warp_exchange(unsigned mask, std::uint64_t value, std::uint64_t (&out)[32]) = 0;
  virtual unsigned linear_thread() const = 0;
};
extern thread_local Sync* current;

// The fault of a kernel that synchronises in a launch run without barriers.
std::string unexpected_sync_fault();
// The fault of a warp intrinsic whose mask is not the warp's live lanes.
std::string warp_mask_fault(unsigned mask, unsigned live);

}  // namespace hdb::cuda::host::engine
