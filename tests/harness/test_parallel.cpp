// The parallel loops of the common code (harness/parallel.hpp): every item once, chunks known by index.
#include <gtest/gtest.h>

#include <atomic>
#include <vector>

#include "harness/parallel.hpp"

using namespace hdb;

TEST(Parallel, ChunksCoverEveryItemOnceAndKnowTheirIndex) {
  for (std::uint64_t n : {0ull, 1ull, 65535ull, 65536ull, 100003ull}) {
    for (int threads : {1, 2, 3, 7}) {
      const int chunks = chunk_count(n, threads);
      std::vector<std::atomic<int>> seen(n);
      std::vector<std::atomic<int>> chunk_calls(static_cast<std::size_t>(chunks));
      parallel_chunks(n, threads, [&](int c, std::uint64_t b, std::uint64_t e) {
        ASSERT_GE(c, 0);
        ASSERT_LT(c, chunks);
        ++chunk_calls[static_cast<std::size_t>(c)];
        for (std::uint64_t i = b; i < e; ++i) ++seen[i];
      });
      for (const auto& s : seen) ASSERT_EQ(s.load(), 1) << n << " items, " << threads << " threads";
      for (const auto& c : chunk_calls) EXPECT_EQ(c.load(), 1);
      EXPECT_EQ(chunks, n == 0 ? 0 : n < 65536 || threads == 1 ? 1 : threads);
    }
  }
}

TEST(Parallel, EachItemOnceWhateverTheThreadsAndTheCosts) {
  for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{1000}}) {
    for (int threads : {0, 1, 2, 7, 2000}) {
      std::vector<std::atomic<int>> seen(n);
      parallel_each(n, threads, [&](std::size_t i) {
        volatile std::size_t spin = (i % 7) * 1000;  // uneven items
        while (spin) spin = spin - 1;
        ++seen[i];
      });
      for (const auto& s : seen) ASSERT_EQ(s.load(), 1) << n << " items, " << threads << " threads";
    }
  }
}
