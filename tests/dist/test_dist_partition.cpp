// The host steps of the TP operators: ownership, shares, the stable partition and the stable sort,
// and per-rank generation that reproduces the global input for any rank count.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <vector>

#include "algorithms/dist_partition.hpp"
#include "workloads/random.hpp"
#include "algorithms/tuple_sort.hpp"

namespace hdb::dist {
namespace {

// Tuples of `width` words: key from `key_of(i)`, value words = i (so stability is visible).
std::vector<std::uint32_t> tuples(std::uint64_t n, int width, std::uint32_t (*key_of)(std::uint64_t)) {
  std::vector<std::uint32_t> t(n * static_cast<std::uint64_t>(width));
  for (std::uint64_t i = 0; i < n; ++i) {
    t[i * width] = key_of(i);
    for (int v = 1; v < width; ++v) t[i * width + v] = static_cast<std::uint32_t>(i);
  }
  return t;
}
std::uint32_t random_key(std::uint64_t i) { return static_cast<std::uint32_t>(rand_at(7, i)); }
std::uint32_t few_keys(std::uint64_t i) { return static_cast<std::uint32_t>(rand_at(9, i) % 5); }
std::uint32_t same_key(std::uint64_t) { return 12345u; }
std::uint32_t max_keys(std::uint64_t i) { return 0xffffffffu - static_cast<std::uint32_t>(i % 3); }

// The expected stable order by key, via std::stable_sort on row indices.
template <class Key>
std::vector<std::uint32_t> stable_by(const std::vector<std::uint32_t>& in, int width, Key key) {
  const std::uint64_t n = in.size() / width;
  std::vector<std::uint64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(), [&](auto a, auto b) { return key(in[a * width]) < key(in[b * width]); });
  std::vector<std::uint32_t> out(in.size());
  for (std::uint64_t i = 0; i < n; ++i) std::memcpy(&out[i * width], &in[idx[i] * width], width * 4);
  return out;
}

TEST(DistPartition, OwnerIsInRangeAndSpreads) {
  for (int ranks : {1, 2, 3, 4, 7}) {
    std::vector<int> hits(ranks, 0);
    for (std::uint32_t k = 0; k < 70000; ++k) {
      int o = owner_of(k * 4096u, ranks);  // strided keys still spread
      ASSERT_GE(o, 0);
      ASSERT_LT(o, ranks);
      ++hits[o];
    }
    for (int h : hits) EXPECT_GT(h, 70000 / ranks / 2);
  }
  EXPECT_EQ(owner_of(0xffffffffu, 1), 0);
}

TEST(DistPartition, SharesTileTheRows) {
  for (std::uint64_t n : {0ull, 1ull, 5ull, 1000003ull})
    for (int ranks : {1, 2, 3, 4, 16}) {
      std::uint64_t next = 0;
      for (int r = 0; r < ranks; ++r) {
        RowRange s = share_of(n, r, ranks);
        EXPECT_EQ(s.begin, next);
        EXPECT_LE(s.size(), n / ranks + 1);
        next = s.end;
      }
      EXPECT_EQ(next, n);
    }
}

TEST(DistPartition, PartitionIsStableAndComplete) {
  for (int width : {1, 2, 4})
    for (std::uint64_t n : {0ull, 1ull, 1000ull, 200001ull})
      for (int ranks : {1, 3, 4})
        for (int threads : {1, 4}) {
          auto in = tuples(n, width, random_key);
          std::vector<std::uint32_t> out(in.size());
          auto counts = partition_by_owner(in.data(), n, width, ranks, out.data(), threads);
          ASSERT_EQ(counts.size(), static_cast<std::size_t>(ranks));
          EXPECT_EQ(std::accumulate(counts.begin(), counts.end(), std::uint64_t{0}), n);
          EXPECT_EQ(out, stable_by(in, width, [ranks](std::uint32_t k) { return owner_of(k, ranks); }))
              << "width " << width << " n " << n << " ranks " << ranks << " threads " << threads;
        }
}

TEST(DistPartition, SortIsStableByKey) {
  for (auto key_of : {random_key, few_keys, same_key, max_keys})
    for (int width : {1, 2, 3, 4})
      for (std::uint64_t n : {0ull, 1ull, 2ull, 777ull, 100003ull})
        for (int threads : {1, 3}) {
          auto in = tuples(n, width, key_of);
          std::vector<std::uint32_t> out(in.size()), scratch(in.size());
          ra::stable_sort_by_key(in.data(), n, width, out.data(), scratch.data(), threads);
          EXPECT_EQ(out, stable_by(in, width, [](std::uint32_t k) { return k; }))
              << "width " << width << " n " << n << " threads " << threads;
        }
}

TEST(DistPartition, BadWidthIsRejected) {
  std::vector<std::uint32_t> a(9), b(9), c(9);
  EXPECT_THROW(partition_by_owner(a.data(), 1, 9, 2, b.data(), 1), std::invalid_argument);
  EXPECT_THROW(ra::stable_sort_by_key(a.data(), 1, 0, b.data(), c.data(), 1), std::invalid_argument);
  EXPECT_THROW(partition_by_owner(a.data(), 1, 1, 0, b.data(), 1), std::invalid_argument);
}

// Rank shares generated alone concatenate to the relation generated whole, for any rank count.
TEST(DistPartition, SlicesReproduceTheGlobalRelation) {
  for (KeyDist dist : {KeyDist::Uniform, KeyDist::Zipf})
    for (bool join : {false, true}) {
      GlobalSpec spec;
      spec.rows = 100001;
      spec.values = 2;
      spec.keys.dist = dist;
      spec.keys.distinct = 5000;
      if (join) spec.keys.max = 0x7fffffffu;
      spec.join_even = join;
      spec.join_match = 0.5;
      ra::Relation whole(spec.rows, spec.values);
      generate_rows(whole, spec, {0, spec.rows}, 99, 2);
      std::uint64_t odd = 0;
      for (std::uint64_t i = 0; i < whole.rows(); ++i) {
        odd += whole.key(i) & 1u;
        for (int v = 1; v < whole.width(); ++v) ASSERT_NE(whole.tuple(i)[v], 0u);
      }
      if (join) {
        EXPECT_NEAR(static_cast<double>(odd) / static_cast<double>(spec.rows), 0.5, 0.02);
      }
      for (int ranks : {1, 2, 3, 4}) {
        std::vector<std::uint32_t> cat;
        for (int r = 0; r < ranks; ++r) {
          RowRange s = share_of(spec.rows, r, ranks);
          ra::Relation part(s.size(), spec.values);
          generate_rows(part, spec, s, 99, 1 + r);
          cat.insert(cat.end(), part.data(), part.data() + part.words());
        }
        ASSERT_EQ(cat.size(), whole.words());
        EXPECT_TRUE(std::equal(cat.begin(), cat.end(), whole.data())) << ranks << " ranks";
      }
    }
}

}  // namespace
}  // namespace hdb::dist
