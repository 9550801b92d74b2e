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
// Either runs the blocks one after another, in the order BlockOrder gives, and a kernel whose first
// launch never synchronised runs later launches without barriers (`barriers` false).
#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>

namespace hdb::cuda::host::engine {

// The order a launch's blocks run in (HDB_CUDA_HOST_BLOCKS). A GPU promises none: blocks run in any
// order and at once, so a kernel whose block reads what a later-numbered block of the same launch
// writes (a look-back whose tile is blockIdx rather than a ticket from an atomic counter, a result
// that depends on which block's atomic came first) is right in index order only. Reverse and
// shuffled orders make such a kernel fail its tests here.
struct BlockOrder {
  enum class Kind { in_order, reverse, shuffled };
  Kind kind = Kind::in_order;
  std::uint64_t blocks = 0;
  std::uint64_t start = 0, step = 1;  // shuffled: the i-th block run is (start + step * i) mod blocks

  // `seed` varies the shuffled order from launch to launch; step is coprime to blocks, so every
  // block runs once.
  static BlockOrder make(Kind kind, std::uint64_t blocks, std::uint64_t seed);
  std::uint64_t at(std::uint64_t i) const {
    switch (kind) {
      case Kind::reverse: return blocks - 1 - i;
      case Kind::shuffled:
        return static_cast<std::uint64_t>((static_cast<unsigned __int128>(step) * i + start) % blocks);
      default: return i;
    }
  }
};

struct Launch {
  const std::function<void()>* body = nullptr;
  dim3 grid, block;
  unsigned threads = 0;  // per block
  std::uint64_t blocks = 0;
  bool barriers = true;
  BlockOrder order;
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
