// The CPU backends' pool (runtime/worker_pool.hpp) and chunking (runtime/chunks.hpp): every item
// runs exactly once per call, calls follow each other without losing or repeating items, a call
// from inside an item runs serially, two callers take turns, and more threads than items is fine.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "runtime/chunks.hpp"
#include "runtime/worker_pool.hpp"

namespace hdb::cpu {
namespace {

TEST(WorkerPool, EveryItemOnceAcrossManyCalls) {
  WorkerPool pool(3);
  for (std::size_t n : {0u, 1u, 2u, 3u, 7u, 64u, 1000u}) {
    for (int call = 0; call < 200; ++call) {
      std::vector<std::atomic<int>> hits(n);
      for (auto& h : hits) h.store(0);
      pool.run(n, [&](std::size_t i) { hits[i].fetch_add(1); });
      for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " call=" << call << " i=" << i;
    }
  }
}

TEST(WorkerPool, NestedCallsRunSerially) {
  WorkerPool pool(2);
  std::atomic<int> inner{0};
  pool.run(8, [&](std::size_t) { pool.run(5, [&](std::size_t) { inner.fetch_add(1); }); });
  EXPECT_EQ(inner.load(), 40);
}

TEST(WorkerPool, TwoCallersTakeTurns) {
  WorkerPool pool(2);
  std::atomic<long> sum{0};
  auto caller = [&] {
    for (int k = 0; k < 300; ++k) pool.run(16, [&](std::size_t i) { sum.fetch_add(static_cast<long>(i)); });
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(sum.load(), 2L * 300 * (15 * 16 / 2));
}

TEST(Chunks, PiecesCoverEveryRowOnce) {
  for (std::uint64_t n :
       {std::uint64_t{0}, std::uint64_t{1}, kMinChunkRows - 1, 5 * kMinChunkRows + 3, std::uint64_t{1} << 22}) {
    for (int threads : {1, 2, 3, 8}) {
      const int chunks = chunk_count(n, threads);
      ASSERT_GE(chunks, 1);
      ASSERT_LE(chunks, threads <= 1 ? 1 : threads * kChunksPerThread);
      std::vector<std::atomic<int>> rows(static_cast<std::size_t>(n));
      for (auto& r : rows) r.store(0);
      for_chunks(chunks, threads, [&](int c) {
        for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i) rows[i].fetch_add(1);
      });
      for (std::uint64_t i = 0; i < n; ++i) ASSERT_EQ(rows[i].load(), 1) << "n=" << n << " threads=" << threads;
    }
  }
}

}  // namespace
}  // namespace hdb::cpu
