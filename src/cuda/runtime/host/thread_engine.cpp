// The threads engine of host execution (engine.hpp): one host thread per GPU thread of a block,
// kept in a pool between launches (a launch of 256-thread blocks must not create 256 threads).
// Blocks run one after another: every thread of the block runs the kernel body, leaves the block
// barrier when it returns (as an exited GPU thread no longer counts at __syncthreads), and waits at
// an end-of-block barrier whose last arrival sets up the next block. Barriers are atomics
// (acquire/release, which ThreadSanitizer follows) with futex sleeps: on two cores, 256 threads
// must not spin. A launch without barriers runs each thread's index in every block on its own.
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <climits>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "runtime/host/device.hpp"
#include "runtime/host/engine.hpp"

namespace hdb::cuda::host::engine {
namespace {

// Sleeps while *word == expected (futex: 256 threads on two cores cannot spin).
void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t expected) {
  while (word.load(std::memory_order_acquire) == expected)
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr, nullptr, 0);
}

// A barrier whose parties may leave (an exited thread): arrive_and_wait returns when every party
// still counted has arrived. One 64-bit word holds (parties << 32 | arrived); the phase is a
// separate word the waiters sleep on. Acquire/release on both, so ThreadSanitizer sees the order.
class DropBarrier {
 public:
  void reset(unsigned parties) { state_.store(std::uint64_t{parties} << 32, std::memory_order_release); }
  // `last` runs in the thread that completes the phase, before any waiter is released.
  template <class F>
  void arrive_and_wait(F&& last) {
    const std::uint32_t phase = phase_.load(std::memory_order_acquire);
    const std::uint64_t now = state_.fetch_add(1, std::memory_order_acq_rel) + 1;
    if ((now & 0xffffffffu) == (now >> 32)) {
      last();
      complete(now);
      return;
    }
    futex_wait(phase_, phase);
  }
  void arrive_and_wait() {
    arrive_and_wait([] {});
  }
  std::uint32_t phase() const { return phase_.load(std::memory_order_acquire); }
  void drop() {
    std::uint64_t s = state_.load(std::memory_order_acquire);
    for (;;) {
      const std::uint64_t parties = (s >> 32) - 1, arrived = s & 0xffffffffu;
      const std::uint64_t next = parties << 32 | arrived;
      if (state_.compare_exchange_weak(s, next, std::memory_order_acq_rel)) {
        if (arrived && arrived == parties) complete(next);
        return;
      }
    }
  }

 private:
  void complete(std::uint64_t s) {
    // Every counted party has arrived: nobody else changes the word until the phase moves on.
    state_.store(s & ~std::uint64_t{0xffffffffu}, std::memory_order_release);
    phase_.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(phase_);
  }
  std::atomic<std::uint64_t> state_{0};
  std::atomic<std::uint32_t> phase_{0};
};

struct Warp {
  DropBarrier barrier;
  std::uint64_t value[32] = {};
  std::atomic<unsigned> live{0};  // bit l: lane l has not returned from the kernel
};

thread_local unsigned tl_linear = 0;

class Block : public Sync {
 public:
  explicit Block(const Launch& l) : launch(l) {
    for (unsigned w = 0; w < (l.threads + 31) / 32; ++w) warps.push_back(std::make_unique<Warp>());
    setup();
    end_of_block.reset(l.threads);
  }
  void setup() {
    barrier.reset(launch.threads);
    for (auto& c : counts) c.store(0, std::memory_order_release);
    for (unsigned w = 0; w < warps.size(); ++w) {
      const unsigned lanes = std::min(32u, launch.threads - 32 * w);
      warps[w]->barrier.reset(lanes);
      warps[w]->live.store(lanes == 32 ? ~0u : (1u << lanes) - 1, std::memory_order_release);
    }
  }
  void set_fault(const std::string& f) {
    std::lock_guard<std::mutex> lock(fault_m);
    if (fault.empty()) fault = f;
  }
  void check_barriers() {
    if (launch.barriers) {
      synchronised.store(true, std::memory_order_relaxed);
      return;
    }
    set_fault(unexpected_sync_fault());
    throw std::runtime_error(fault);
  }
  void sync_block() override {
    check_barriers();
    pass_block_barrier();
  }
  unsigned sync_block_count(bool predicate) override {
    check_barriers();
    const std::uint32_t phase = barrier.phase();
    counts[phase % 3].fetch_add(predicate, std::memory_order_acq_rel);
    pass_block_barrier();
    return counts[phase % 3].load(std::memory_order_acquire);
  }
  // Counts are kept per phase, three in turn, and every barrier, counting or not, clears the slot
  // the phase after next will use: the slot of the phase before, which every thread read before
  // arriving here. Cleared only at counting barriers, a slot kept a count from three phases back
  // whenever plain barriers came between (a loop of two __syncthreads and one __syncthreads_or
  // returned its first true forever).
  void pass_block_barrier() {
    const std::uint32_t phase = barrier.phase();
    barrier.arrive_and_wait();
    counts[(phase + 2) % 3].store(0, std::memory_order_release);
  }
  void warp_exchange(unsigned mask, std::uint64_t value, std::uint64_t (&out)[32]) override {
    check_barriers();
    Warp& w = *warps[tl_linear / 32];
    const unsigned live = w.live.load(std::memory_order_acquire);
    if (mask != live) {
      set_fault(warp_mask_fault(mask, live));
      throw std::runtime_error(fault);
    }
    w.value[tl_linear % 32] = value;
    w.barrier.arrive_and_wait();
    for (unsigned l = 0; l < 32; ++l) out[l] = (mask >> l & 1u) ? w.value[l] : 0;
    w.barrier.arrive_and_wait();  // every lane has read before any writes its next value
  }
  unsigned linear_thread() const override { return tl_linear; }

  const Launch& launch;
  DropBarrier barrier;  // __syncthreads
  DropBarrier end_of_block;
  std::vector<std::unique_ptr<Warp>> warps;
  std::atomic<bool> synchronised{false};
  std::atomic<unsigned> counts[3] = {};
  std::mutex fault_m;
  std::string fault;  // the first kernel fault of the launch
};

class Pool {
 public:
  ~Pool() {
    stop_.store(true, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(generation_);
    for (auto& t : pool_) t.join();
  }

  Outcome run(const Launch& l) {
    std::lock_guard<std::mutex> one_at_a_time(launch_m_);
    Block block(l);
    // A new thread starts at the current generation, so the launch published below is its first.
    while (pool_.size() < l.threads)
      pool_.emplace_back([this, i = static_cast<unsigned>(pool_.size()), g = generation_.load()] { worker(i, g); });
    job_ = &block;
    remaining_.store(static_cast<unsigned>(pool_.size()), std::memory_order_release);  // all answer
    done_.store(0, std::memory_order_release);
    generation_.fetch_add(1, std::memory_order_acq_rel);
    futex_wake_all(generation_);
    futex_wait(done_, 0);
    job_ = nullptr;
    return Outcome{block.fault, block.synchronised.load()};
  }

 private:
  // Every pool thread answers every launch, taking part or not, so none still reads job_ when the
  // next launch writes it.
  void worker(unsigned i, std::uint32_t seen) {
    for (;;) {
      futex_wait(generation_, seen);
      seen = generation_.load(std::memory_order_acquire);
      if (stop_.load(std::memory_order_acquire)) return;
      Block* block = job_;
      if (i < block->launch.threads) execute(*block, i);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        done_.store(1, std::memory_order_release);
        futex_wake_all(done_);
      }
    }
  }

  static void execute(Block& block, unsigned i) {
    const Launch& l = block.launch;
    blockDim = l.block;
    gridDim = l.grid;
    threadIdx = uint3{i % l.block.x, i / l.block.x % l.block.y, i / (l.block.x * l.block.y)};
    current = &block;
    tl_linear = i;
    for (std::uint64_t k = 0; k < l.blocks; ++k) {
      const std::uint64_t b = l.order.at(k);
      blockIdx = uint3{static_cast<unsigned>(b % l.grid.x), static_cast<unsigned>(b / l.grid.x % l.grid.y),
                       static_cast<unsigned>(b / (std::uint64_t{l.grid.x} * l.grid.y))};
      try {
        (*l.body)();
      } catch (const std::exception& e) {
        block.set_fault(e.what());
      }
      if (!l.barriers) continue;
      // Returned: no longer a party of the block's barrier or its warp's exchanges.
      Warp& w = *block.warps[i / 32];
      w.live.fetch_and(~(1u << (i % 32)), std::memory_order_acq_rel);
      w.barrier.drop();
      block.barrier.drop();
      block.end_of_block.arrive_and_wait([&] { block.setup(); });
    }
    current = nullptr;
  }

  std::mutex launch_m_;
  std::atomic<std::uint32_t> generation_{0}, done_{0};
  std::atomic<unsigned> remaining_{0};
  std::atomic<bool> stop_{false};
  Block* job_ = nullptr;
  std::vector<std::thread> pool_;
};

}  // namespace

Outcome run_threads(const Launch& l) {
  static Pool pool;
  return pool.run(l);
}

}  // namespace hdb::cuda::host::engine
