// The fibers engine of host execution (engine.hpp): the GPU threads of a block are fibers on the
// launching thread. A scheduler resumes each fiber in turn; a fiber runs until it
// waits at a barrier (__syncthreads, a warp exchange) or returns. A barrier opens when every fiber
// still counted has arrived; a fiber that returned no longer counts, as an exited GPU thread. When
// no fiber can run and some have not returned, the block is deadlocked (a barrier that not every
// thread reaches): that is a kernel fault, reported with the barrier, not a hang.
// A launch without barriers needs no fibers: each thread's body runs to its end in turn.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/sanitizers.hpp"
#include "runtime/host/device.hpp"
#include "runtime/host/engine.hpp"

#if defined(HDB_ASAN)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define HDB_ASAN_FIBERS 1
#endif

// The switch between fibers: x86-64 System V's callee-saved registers, the SSE and x87 control
// words, and the stack pointer; no system call (glibc's swapcontext saves the signal mask with one,
// which made a barrier cost as much as a thread switch).
//   hdb_fiber_switch(&save_sp, next_sp): saves the running context on its stack, its stack pointer
//   in *save_sp, and resumes the context saved at next_sp.
extern "C" void hdb_fiber_switch(void** save_sp, void* next_sp);
asm(R"(
  .text
  .globl hdb_fiber_switch
  .type hdb_fiber_switch, @function
hdb_fiber_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size hdb_fiber_switch, .-hdb_fiber_switch
  .section .note.GNU-stack,"",@progbits
  .text
)");

namespace hdb::cuda::host::engine {
namespace {

constexpr std::size_t kStackBytes = 256 * 1024;  // kernels are shallow; AddressSanitizer's frames are not

struct Barrier {
  unsigned parties = 0, arrived = 0;
  std::uint64_t phase = 0;
  void open() {
    arrived = 0;
    ++phase;
  }
  void drop() {
    --parties;
    if (arrived && arrived == parties) open();
  }
};

struct Fiber {
  void* sp = nullptr;  // the saved stack pointer while switched out
  std::unique_ptr<char[]> stack{new char[kStackBytes]};
  bool done = false;
  void* fake_stack = nullptr;        // AddressSanitizer's, while the fiber is switched out
  const Barrier* waiting = nullptr;  // with the phase it waits to pass
  std::uint64_t phase = 0;
};

class Block : public Sync {
 public:
  Block(const Launch& l, std::vector<Fiber>& fibers) : launch_(l), fibers_(fibers) {
    warps_.resize((l.threads + 31) / 32);
    values_.resize(l.threads);
  }

  void sync_block() override { pass_block_barrier(); }

  unsigned sync_block_count(bool predicate) override {
    const std::uint64_t phase = block_.phase;
    counts_[phase % 3] += predicate;
    pass_block_barrier();
    return counts_[phase % 3];
  }

  void warp_exchange(unsigned mask, std::uint64_t value, std::uint64_t (&out)[32]) override {
    if (!launch_.barriers) fail(unexpected_sync_fault());  // before live_, which such a launch leaves empty
    const unsigned w = me_ / 32;
    if (mask != live_[w]) fail(warp_mask_fault(mask, live_[w]));
    values_[me_] = value;
    wait(warps_[w]);
    for (unsigned l = 0; l < 32; ++l) out[l] = (mask >> l & 1u) ? values_[32 * w + l] : 0;
    wait(warps_[w]);  // every lane has read before any writes its next value
  }

  unsigned linear_thread() const override { return me_; }

  // Runs block b; returns the fault, empty when none.
  std::string run(std::uint64_t b) {
    set_block_index(b);
    current = this;
    if (!launch_.barriers) {
      for (me_ = 0; me_ < launch_.threads && fault_.empty(); ++me_) {
        set_thread_index(me_);
        try {
          (*launch_.body)();
        } catch (const std::exception& e) {
          if (fault_.empty()) fault_ = e.what();
        }
      }
      current = nullptr;
      return fault_;
    }
    block_ = Barrier{launch_.threads};
    counts_[0] = counts_[1] = counts_[2] = 0;
    live_.assign(warps_.size(), 0);
    for (unsigned w = 0; w < warps_.size(); ++w) {
      const unsigned lanes = std::min(32u, launch_.threads - 32 * w);
      warps_[w] = Barrier{lanes};
      live_[w] = lanes == 32 ? ~0u : (1u << lanes) - 1;
    }
    for (unsigned i = 0; i < launch_.threads; ++i) {
      Fiber& f = fibers_[i];
      f.sp = first_frame(f);
      f.done = false;
      f.waiting = nullptr;
      f.fake_stack = nullptr;
#ifdef HDB_ASAN_FIBERS
      ASAN_UNPOISON_MEMORY_REGION(f.stack.get(), kStackBytes);  // frames a deadlocked block left
#endif
    }
    unsigned running = launch_.threads;
    while (running) {
      bool progressed = false;
      for (unsigned i = 0; i < launch_.threads; ++i) {
        Fiber& f = fibers_[i];
        if (f.done || (f.waiting && f.waiting->phase == f.phase)) continue;
        f.waiting = nullptr;
        me_ = i;
        set_thread_index(i);
        switch_to(f);
        progressed = true;
        if (f.done) --running;
      }
      if (!progressed) {
        if (fault_.empty())
          fault_ = "block " + std::to_string(b) + ": " + std::to_string(running) +
                   " threads wait at a barrier that the others never reach (a __syncthreads or warp "
                   "intrinsic inside a branch not every thread takes)";
        break;  // the waiting fibers are abandoned: their contexts are rebuilt for the next block
      }
    }
    current = nullptr;
    return fault_;
  }

 private:
  // Counts are kept per phase, three in turn, and every barrier, counting or not, clears the slot
  // the phase after next will use: the slot of the phase before, which every thread read before
  // arriving here. Cleared only at counting barriers, a slot kept a count from three phases back
  // whenever plain barriers came between (a loop of two __syncthreads and one __syncthreads_or
  // returned its first true forever).
  void pass_block_barrier() {
    const std::uint64_t phase = block_.phase;
    wait(block_);
    counts_[(phase + 2) % 3] = 0;
  }
  static void entry() {
    auto* self = static_cast<Block*>(current);
    self->started();
    try {
      (*self->launch_.body)();
    } catch (const std::exception& e) {
      if (self->fault_.empty()) self->fault_ = e.what();
    } catch (...) {
      if (self->fault_.empty()) self->fault_ = "an exception left the kernel";
    }
    // Returned: no longer a party of the block's barrier or its warp's exchanges.
    const unsigned me = self->me_, w = me / 32;
    self->live_[w] &= ~(1u << (me % 32));
    self->warps_[w].drop();
    self->block_.drop();
    self->fibers_[me].done = true;
    self->leaving(true);
    hdb_fiber_switch(&self->fibers_[me].sp, self->scheduler_sp_);  // never resumed
  }

  // A new fiber's stack as hdb_fiber_switch leaves one: control words, six registers, then the
  // return address, entry, above a null slot where a call would have put its return address (so
  // entry starts with the stack aligned as after a call).
  static void* first_frame(Fiber& f) {
    auto top = reinterpret_cast<std::uintptr_t>(f.stack.get() + kStackBytes) & ~std::uintptr_t{15};
    auto* slot = reinterpret_cast<std::uint64_t*>(top);
    slot[-1] = 0;                                        // the "caller" of entry
    slot[-2] = reinterpret_cast<std::uint64_t>(&entry);  // where ret goes
    for (int r = 3; r <= 8; ++r) slot[-r] = 0;           // rbp, rbx, r12..r15
    slot[-9] = 0x037full << 32 | 0x1f80u;                // x87 control word, MXCSR: the defaults
    return &slot[-9];
  }

  void fail(const std::string& what) {
    if (fault_.empty()) fault_ = what;
    throw std::runtime_error(what);
  }

  void wait(Barrier& b) {
    if (!launch_.barriers) fail(unexpected_sync_fault());
    synchronised = true;
    if (++b.arrived == b.parties) {  // the last to arrive opens it and goes on
      b.open();
      return;
    }
    Fiber& f = fibers_[me_];
    f.waiting = &b;
    f.phase = b.phase;
    leaving(false);
    hdb_fiber_switch(&f.sp, scheduler_sp_);
    started();
  }

  void switch_to(Fiber& f) {
#ifdef HDB_ASAN_FIBERS
    void* fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f.stack.get(), kStackBytes);
    hdb_fiber_switch(&scheduler_sp_, f.sp);
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#else
    hdb_fiber_switch(&scheduler_sp_, f.sp);
#endif
  }

  // AddressSanitizer's side of a switch into a fiber (entry or after its swapcontext) and out of it.
  void started() {
#ifdef HDB_ASAN_FIBERS
    __sanitizer_finish_switch_fiber(fibers_[me_].fake_stack, &sched_bottom_, &sched_size_);
#endif
  }
  void leaving(bool for_good) {
#ifdef HDB_ASAN_FIBERS
    __sanitizer_start_switch_fiber(for_good ? nullptr : &fibers_[me_].fake_stack, sched_bottom_, sched_size_);
#else
    (void)for_good;
#endif
  }

  void set_block_index(std::uint64_t b) {
    blockDim = launch_.block;
    gridDim = launch_.grid;
    blockIdx =
        uint3{static_cast<unsigned>(b % launch_.grid.x), static_cast<unsigned>(b / launch_.grid.x % launch_.grid.y),
              static_cast<unsigned>(b / (std::uint64_t{launch_.grid.x} * launch_.grid.y))};
  }
  void set_thread_index(unsigned i) {
    threadIdx =
        uint3{i % launch_.block.x, i / launch_.block.x % launch_.block.y, i / (launch_.block.x * launch_.block.y)};
  }

 public:
  bool synchronised = false;

 private:
  const Launch& launch_;
  std::vector<Fiber>& fibers_;
  void* scheduler_sp_ = nullptr;
  Barrier block_;
  std::vector<Barrier> warps_;
  std::vector<unsigned> live_;
  std::vector<std::uint64_t> values_;
  unsigned counts_[3] = {};
  unsigned me_ = 0;
  std::string fault_;
  const void* sched_bottom_ = nullptr;
  std::size_t sched_size_ = 0;
};

}  // namespace

Outcome run_fibers(const Launch& l) {
  thread_local std::vector<Fiber> fibers;  // stacks kept between launches
  if (l.barriers && fibers.size() < l.threads) fibers.resize(l.threads);
  Block block(l, fibers);
  Outcome out;
  for (std::uint64_t b = 0; b < l.blocks && out.fault.empty(); ++b) {
    out.fault = block.run(l.order.at(b));
    if (l.after_block) l.after_block();
  }
  out.synchronised = block.synchronised;
  return out;
}

}  // namespace hdb::cuda::host::engine
