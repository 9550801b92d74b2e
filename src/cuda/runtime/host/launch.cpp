// Host execution's launch: checks the configuration as a GPU does, chooses the engine
// (engine.hpp), and remembers which kernels never synchronise.
#include "runtime/host/launch.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>

#include "harness/sanitizers.hpp"
#include "runtime/host/device.hpp"
#include "runtime/host/engine.hpp"
#include "runtime/host/state.hpp"
#include "runtime/host/traffic.hpp"

namespace hdb::cuda::host {

namespace engine {

thread_local Sync* current = nullptr;

std::string unexpected_sync_fault() {
  return "the kernel synchronised in a launch run without barriers (its first launch never did); host "
         "execution cannot run a kernel that synchronises in some launches only";
}

std::string warp_mask_fault(unsigned mask, unsigned live) {
  char text[160];
  std::snprintf(text, sizeof text,
                "warp intrinsic with mask 0x%08x while the warp's running lanes are 0x%08x (a lane named in "
                "the mask has returned, or a running lane is left out)",
                mask, live);
  return text;
}

BlockOrder BlockOrder::make(Kind kind, std::uint64_t blocks, std::uint64_t seed) {
  BlockOrder o;
  o.kind = kind;
  o.blocks = blocks;
  if (kind != Kind::shuffled || blocks < 3) return o;
  // A step near blocks / golden ratio, coprime to blocks and in [2, blocks - 2] where one is (every
  // count but 3, 4 and 6), so that no block runs right after its neighbour; the seed moves the start
  // and the step from launch to launch.
  const std::uint64_t mix = seed * 0x9e3779b97f4a7c15ull;
  o.start = mix % blocks;
  o.step = blocks - 1;
  const std::uint64_t span = blocks - 3;
  const std::uint64_t first = static_cast<std::uint64_t>(static_cast<double>(blocks) * 0.6180339887) + (mix >> 32) % 7;
  for (std::uint64_t k = 0; k < span; ++k) {
    const std::uint64_t step = 2 + (first + k) % span;
    if (std::gcd(step, blocks) == 1) {
      o.step = step;
      break;
    }
  }
  return o;
}

}  // namespace engine

namespace {

engine::Sync& sync() {
  if (!engine::current) throw std::logic_error("a device function called outside a kernel launch");
  return *engine::current;
}

bool use_threads() {
#if defined(HDB_TSAN)
  return true;  // ThreadSanitizer sees races between threads, not between fibers
#else
  return settings().threads;
#endif
}

// The traffic profile counts a block's barrier once (thread 0 takes part in every one) and a warp's
// intrinsic once (its first lane in the mask).
void count_barrier() {
  if (traffic::active() && sync().linear_thread() == 0) traffic::barrier();
}

}  // namespace

void sync_block() {
  count_barrier();
  sync().sync_block();
}
unsigned sync_block_count(bool predicate) {
  count_barrier();
  return sync().sync_block_count(predicate);
}
void warp_exchange(unsigned mask, std::uint64_t value, std::uint64_t (&out)[32]) {
  if (traffic::active() && mask != 0 && lane_id() == static_cast<unsigned>(__builtin_ctz(mask))) traffic::shuffle();
  sync().warp_exchange(mask, value, out);
}
unsigned lane_id() { return sync().linear_thread() % 32; }
void warp_sync(unsigned mask) {
  std::uint64_t all[32];
  sync().warp_exchange(mask, 0, all);
}

cudaError_t launch(const void* kernel, const char* name, dim3 grid, dim3 block, std::size_t shared_bytes,
                   cudaStream_t stream, const std::function<void()>& body) {
  State& st = state();
  if (cudaError_t sticky = st.sticky()) return st.set_last(sticky);
  if (!st.valid_stream(stream)) return st.set_last(cudaErrorInvalidResourceHandle);
  const std::uint64_t threads = std::uint64_t{block.x} * block.y * block.z;
  const Limits& lim = limits();
  if (threads == 0 || threads > static_cast<unsigned>(lim.max_threads_per_block) || block.x > 1024 || block.y > 1024 ||
      block.z > 64 || grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.x > 0x7fffffffu || grid.y > 65535 ||
      grid.z > 65535)
    return st.set_last(cudaErrorInvalidConfiguration);
  if (shared_bytes > lim.shared_per_block) return st.set_last(cudaErrorInvalidValue);

  // One launch at a time (__shared__ is one static per kernel), and what each kernel did before.
  static std::mutex one_at_a_time;
  static std::map<const void*, bool> never_synchronises;
  std::lock_guard<std::mutex> lock(one_at_a_time);
  engine::Launch l;
  l.body = &body;
  l.grid = grid;
  l.block = block;
  l.threads = static_cast<unsigned>(threads);
  l.blocks = std::uint64_t{grid.x} * grid.y * grid.z;
  auto known = never_synchronises.find(kernel);
  l.barriers = known == never_synchronises.end() || !known->second;

  const bool trace = settings().trace;
  const auto t0 = std::chrono::steady_clock::now();
  // A traffic profile runs on the fibers: one host thread, the blocks and warps in order (its cache
  // model counts the reuse of a GPU that runs neighbouring blocks at once).
  const bool profiled = traffic::active();
  l.order = engine::BlockOrder::make(profiled ? engine::BlockOrder::Kind::in_order : settings().blocks, l.blocks,
                                     st.launches());
  if (profiled) {
    traffic::launch_begin(l.threads);
    l.after_block = traffic::block_end;
  }
  const engine::Outcome out = use_threads() && !profiled ? engine::run_threads(l) : engine::run_fibers(l);
  if (profiled) traffic::launch_end();
  if (trace)
    std::fprintf(stderr, "host execution: %s <<<%llu, %u>>>%s %.3f ms\n", name,
                 static_cast<unsigned long long>(l.blocks), l.threads, l.barriers ? "" : " (no barriers)",
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  st.count_launch();
  if (!out.fault.empty()) return st.kernel_fault(name, out.fault);
  if (l.barriers) never_synchronises[kernel] = !out.synchronised;
  if (st.inject_fault_now()) return st.kernel_fault(name, "fault injected by HDB_CUDA_HOST_FAULT");
  return cudaSuccess;
}

}  // namespace hdb::cuda::host
