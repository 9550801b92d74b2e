#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "workloads/keys.hpp"

using namespace hdb;

TEST(Keys, DeterministicForAnyThreadCount) {
  KeySpec spec;
  spec.distinct = 1000;
  auto a = generate_u32(200000, 7, spec, 1);
  auto b = generate_u32(200000, 7, spec, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, generate_u32(200000, 8, spec, 1));
}

TEST(Keys, DistinctCountAndRangeAreRespected) {
  KeySpec spec;
  spec.distinct = 100;
  spec.min = 1000;
  spec.max = 2000000;
  auto v = generate_u32(100000, 1, spec, 2);
  std::set<std::uint32_t> s(v.begin(), v.end());
  EXPECT_EQ(s.size(), 100u);  // 100k draws from 100 values hit all of them
  EXPECT_GE(*s.begin(), 1000u);
  EXPECT_LE(*s.rbegin(), 2000000u);
  EXPECT_FALSE(std::all_of(v.begin(), v.end(), [](std::uint32_t x) { return x == 0; }));
}

TEST(Keys, ZipfIsSkewed) {
  KeySpec spec;
  spec.dist = KeyDist::Zipf;
  spec.distinct = 10000;
  spec.zipf_s = 1.0;
  auto v = generate_u32(100000, 3, spec, 2);
  std::uint32_t top = key_of_index(spec, 0);
  auto top_count = std::count(v.begin(), v.end(), top);
  // Rank 1 of Zipf(1) over 10^4 values has probability 1/H(10^4) ~ 0.102.
  EXPECT_GT(top_count, 8000);
  EXPECT_LT(top_count, 12500);
}

TEST(Keys, FullRangeWithoutDistinctLimit) {
  KeySpec spec;  // every 32-bit value possible
  auto v = generate_u32(1000, 5, spec, 1);
  std::set<std::uint32_t> s(v.begin(), v.end());
  EXPECT_GT(s.size(), 990u);
  EXPECT_EQ(parse_key_dist("zipf"), KeyDist::Zipf);
  EXPECT_THROW(parse_key_dist("normal"), std::exception);
}
