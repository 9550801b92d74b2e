// The ceiling of a case's access pattern (harness/patterns.hpp, issue 46).
#include <gtest/gtest.h>

#include "fake_platform.hpp"
#include "harness/ceiling.hpp"
#include "harness/patterns.hpp"

using namespace hdb;

namespace {

PatternRates rates() {
  PatternRates r;
  r[MemoryPattern::Read] = 40;
  r[MemoryPattern::Write] = 20;
  r[MemoryPattern::Copy] = 25;
  r[MemoryPattern::Add] = 30;
  r[MemoryPattern::Triad] = 28;
  r[MemoryPattern::Gather4] = 1;
  r[MemoryPattern::Gather32] = 4;
  return r;
}

// A platform that measures every pattern (rates() times the copy it is told).
class PatternPlatform : public test::FakePlatform {
 public:
  double copy = 25;
  int pattern_calls = 0, copy_calls = 0;
  PatternRates measure_pattern_ceilings() override {
    ++pattern_calls;
    return rates().scaled(copy / 25);
  }
  double measure_copy_ceiling() override {
    ++copy_calls;
    return copy;
  }
};

}  // namespace

TEST(Patterns, AMixThatIsOnePatternGetsItsRate) {
  const PatternRates r = rates();
  Ceiling c = match_ceiling({100, 0}, r);
  EXPECT_DOUBLE_EQ(c.gbps, 40);
  EXPECT_EQ(c.pattern, "read");
  c = match_ceiling({0, 100}, r);
  EXPECT_DOUBLE_EQ(c.gbps, 20);
  EXPECT_EQ(c.pattern, "write");
  c = match_ceiling({100, 100}, r);
  EXPECT_DOUBLE_EQ(c.gbps, 25);
  EXPECT_EQ(c.pattern, "copy");
  c = match_ceiling({200, 100}, r);
  EXPECT_DOUBLE_EQ(c.gbps, 30);
  EXPECT_EQ(c.pattern, "add");  // the better of add and triad
  PatternRates t = r;
  t[MemoryPattern::Triad] = 35;
  EXPECT_EQ(match_ceiling({200, 100}, t).pattern, "triad");
}

TEST(Patterns, AMixBetweenTwoPatternsInterpolatesTimePerByte) {
  // 5/6 read lies halfway between add (2/3) and read (1): the mean of their times per byte.
  const Ceiling c = match_ceiling({500, 100}, rates());
  EXPECT_NEAR(c.gbps, 1 / ((1.0 / 30 + 1.0 / 40) / 2), 1e-9);
  EXPECT_EQ(c.pattern, "add..read (83% read)");
  // Between two points the ceiling lies between their rates.
  const Ceiling d = match_ceiling({60, 40}, rates());
  EXPECT_GT(d.gbps, 25);
  EXPECT_LT(d.gbps, 30);
  EXPECT_EQ(d.pattern, "copy..add (60% read)");
}

TEST(Patterns, RandomReadsAreAddedInTimeAtTheGatherRate) {
  // 400 bytes read at random in 4-byte items: 100 accesses at 4 ns each (gather4 1 GB/s).
  Ceiling c = match_ceiling({400, 0, 400, 4}, rates());
  EXPECT_NEAR(c.gbps, 1.0, 1e-12);
  EXPECT_EQ(c.pattern, "gather4");
  // 32-byte items: gather32's 8 ns per access; 18-byte items halfway between 4 and 8 ns.
  EXPECT_NEAR(match_ceiling({320, 0, 320, 32}, rates()).gbps, 4.0, 1e-12);
  c = match_ceiling({180, 0, 180, 18}, rates());
  EXPECT_NEAR(c.gbps, 180.0 / (10 * 6.0), 1e-12);
  EXPECT_EQ(c.pattern, "gather4..gather32");
  // Sequential and random parts: 400 bytes read at 40 GB/s (10 ns) + 100 accesses (400 ns).
  c = match_ceiling({800, 0, 400, 4}, rates());
  EXPECT_NEAR(c.gbps, 800.0 / 410, 1e-9);
  EXPECT_EQ(c.pattern, "read + gather4");
}

TEST(Patterns, WhatCannotBeMatchedIsJudgedAgainstTheCopyAndSaysSo) {
  Ceiling c = match_ceiling({}, rates());
  EXPECT_DOUBLE_EQ(c.gbps, 25);
  EXPECT_EQ(c.pattern, "copy (reads and writes undeclared)");
  PatternRates copy_only;
  copy_only[MemoryPattern::Copy] = 25;
  c = match_ceiling({100, 0}, copy_only);
  EXPECT_DOUBLE_EQ(c.gbps, 25);
  EXPECT_EQ(c.pattern, "copy (only copy measured)");
  EXPECT_EQ(match_ceiling({100, 0}, PatternRates{}).gbps, 0);
  // No gather measured: the random reads count as sequential, and the name says so.
  PatternRates seq = rates();
  seq[MemoryPattern::Gather4] = seq[MemoryPattern::Gather32] = 0;
  c = match_ceiling({100, 0, 100, 4}, seq);
  EXPECT_DOUBLE_EQ(c.gbps, 40);
  EXPECT_EQ(c.pattern, "read (random reads as sequential: no gather measured)");
  // Beyond the measured points (no write rate): the nearest point, with the share.
  PatternRates no_write = rates();
  no_write[MemoryPattern::Write] = 0;
  c = match_ceiling({20, 80}, no_write);
  EXPECT_DOUBLE_EQ(c.gbps, 25);
  EXPECT_EQ(c.pattern, "copy (20% read)");
}

TEST(Patterns, TheFirstSampleMeasuresThePatternsAndLaterCopiesScaleThem) {
  PatternPlatform p;
  CeilingTrack track;
  track.measure(p);
  EXPECT_EQ(p.pattern_calls, 1);
  EXPECT_DOUBLE_EQ(track.patterns()[MemoryPattern::Read], 40);
  p.copy = 50;  // the machine twice as fast later on
  track.measure(p);
  EXPECT_EQ(p.pattern_calls, 1);
  EXPECT_EQ(p.copy_calls, 1);
  const double late = track.samples().back().at_s + 1;
  EXPECT_DOUBLE_EQ(track.for_case(late, {100, 0}).gbps, 80);  // read, scaled by 50 / 25
  EXPECT_DOUBLE_EQ(track.for_case(-1, {100, 0}).gbps, 40);    // nearest the first sample
  const nlohmann::json j = track.to_json();
  EXPECT_DOUBLE_EQ(j["patterns"]["gather32"].get<double>(), 4);
  EXPECT_TRUE(j.contains("patterns_at_s"));
}
