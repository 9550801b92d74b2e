#pragma once
// Parallel loops on std::thread for the common code (data generation, verification, the shared
// host algorithms). The thread counts come from the caller (effective_threads decides them); the
// CPU backends' parallel variants run on a pool of blocking workers (cpu/runtime/chunks.hpp).
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace hdb {

// Runs fn(i) for every i in [0, tasks), each on a thread of its own (task 0 on the caller's).
template <class F>
void run_tasks(int tasks, F&& fn) {
  if (tasks <= 1) {
    if (tasks == 1) fn(0);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(static_cast<std::size_t>(tasks - 1));
  for (int i = 1; i < tasks; ++i) pool.emplace_back([&fn, i] { fn(i); });
  fn(0);
  for (auto& th : pool) th.join();
}

// Calls fn(begin, end) on `threads` contiguous chunks of [0, n). Deterministic chunking.
template <class F>
void parallel_for(std::uint64_t n, int threads, F&& fn) {
  if (threads <= 1 || n < 65536) {
    if (n) fn(std::uint64_t{0}, n);
    return;
  }
  const auto t = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), n));
  run_tasks(t, [&fn, n, t](int i) {
    const auto k = static_cast<std::uint64_t>(i), m = static_cast<std::uint64_t>(t);
    fn(n * k / m, n * (k + 1) / m);
  });
}

}  // namespace hdb
