#include <gtest/gtest.h>

#include <cmath>

#include "harness/stats.hpp"

using namespace hdb;

TEST(Stats, Summarize) {
  Stats s = summarize({4, 1, 3, 2});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);  // sample standard deviation
  EXPECT_NEAR(s.cv, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(summarize({7, 1, 5}).median, 5);
}

TEST(Stats, DegenerateSamples) {
  EXPECT_EQ(summarize({}).n, 0u);
  Stats one = summarize({3});
  EXPECT_DOUBLE_EQ(one.median, 3);
  EXPECT_DOUBLE_EQ(one.stddev, 0);
  EXPECT_DOUBLE_EQ(one.cv, 0);
}

TEST(StoppingRule, MinimumPassesFirst) {
  StoppingRule r{3, 10, 100.0, 0.05};
  EXPECT_FALSE(r.done({1.0}, 0));
  EXPECT_FALSE(r.done({1.0, 1.0}, 1e9));    // time limit never cuts below the minimum
  EXPECT_TRUE(r.done({1.0, 1.0, 1.0}, 0));  // quiet enough
}

TEST(StoppingRule, NoisyRunsContinueUntilALimit) {
  StoppingRule r{3, 6, 10.0, 0.01};
  std::vector<double> noisy{1.0, 2.0, 1.0};
  EXPECT_FALSE(r.done(noisy, 1.0));
  EXPECT_TRUE(r.done(noisy, 10.0));              // time limit
  EXPECT_TRUE(r.done({1, 2, 1, 2, 1, 2}, 0.0));  // pass limit
}

TEST(Stats, MeanOfEqualValuesStaysBetweenMinAndMax) {
  for (double x : {0.1, 1e-5, 3.3e-7, 2.0 / 3}) {
    Stats s = summarize(std::vector<double>(7, x));
    EXPECT_LE(s.min, s.mean);
    EXPECT_LE(s.mean, s.max);
  }
}
