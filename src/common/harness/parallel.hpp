#pragma once
// Parallel loops on std::thread for the common code (data generation, verification, the shared
// host algorithms). The thread counts come from the caller (effective_threads decides them); the
// CPU backends' parallel variants run on a pool of blocking workers (cpu/runtime/chunks.hpp).
#include <algorithm>
#include <atomic>
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

// How many chunks parallel_chunks and parallel_for cut [0, n) into on `threads` threads: one below
// 64K items (a thread costs more than it saves there), else min(threads, n).
inline int chunk_count(std::uint64_t n, int threads) {
  if (threads <= 1 || n < 65536) return n ? 1 : 0;
  return static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), n));
}

// Calls fn(chunk, begin, end) on chunk_count(n, threads) contiguous chunks of [0, n), each on a
// thread of its own; `chunk` is the chunk's index, for results kept per chunk. Deterministic chunking.
template <class F>
void parallel_chunks(std::uint64_t n, int threads, F&& fn) {
  const int t = chunk_count(n, threads);
  run_tasks(t, [&fn, n, t](int i) {
    const auto k = static_cast<std::uint64_t>(i), m = static_cast<std::uint64_t>(t);
    fn(i, n * k / m, n * (k + 1) / m);
  });
}

// Calls fn(begin, end) on chunk_count(n, threads) contiguous chunks of [0, n). Deterministic chunking.
template <class F>
void parallel_for(std::uint64_t n, int threads, F&& fn) {
  parallel_chunks(n, threads, [&fn](int, std::uint64_t begin, std::uint64_t end) { fn(begin, end); });
}

// Calls fn(i) for every i in [0, n) on up to `threads` threads, the items handed out one at a time:
// for items of uneven cost (a query, a table), where a fixed share per thread would wait for the
// slowest.
template <class F>
void parallel_each(std::size_t n, int threads, F&& fn) {
  std::atomic<std::size_t> next{0};
  const int t = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), n));
  run_tasks(t, [&](int) {
    for (std::size_t i = next++; i < n; i = next++) fn(i);
  });
}

}  // namespace hdb
