#pragma once
// A minimal static parallel loop on std::thread for harness-side work (data generation,
// verification). Backends use their own parallelism (OpenMP, devices).
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace hdb {

// Calls fn(begin, end) on `threads` contiguous chunks of [0, n). Deterministic chunking.
template <class F>
void parallel_for(std::uint64_t n, int threads, F&& fn) {
  if (threads <= 1 || n < 65536) {
    if (n) fn(std::uint64_t{0}, n);
    return;
  }
  std::uint64_t t = std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), n);
  std::vector<std::thread> pool;
  pool.reserve(t);
  for (std::uint64_t i = 0; i < t; ++i) {
    std::uint64_t b = n * i / t, e = n * (i + 1) / t;
    pool.emplace_back([&fn, b, e] { fn(b, e); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace hdb
