// The copy ceiling measured again during a run (harness/ceiling.hpp, issue 51).
#include <gtest/gtest.h>

#include <stdexcept>

#include "fake_platform.hpp"
#include "harness/ceiling.hpp"
#include "harness/result.hpp"

using namespace hdb;

namespace {

// A platform whose ceiling is scripted: each measurement returns the next value; a negative value
// throws (a device too full for the copy's buffers).
class WanderingPlatform : public test::FakePlatform {
 public:
  explicit WanderingPlatform(std::vector<double> values) : values_(std::move(values)) {}
  double measure_copy_ceiling() override {
    const double v = values_.at(next_++);
    if (v < 0) throw std::runtime_error("out of device memory");
    return v;
  }
  int taken() const { return static_cast<int>(next_); }

 private:
  std::vector<double> values_;
  std::size_t next_ = 0;
};

}  // namespace

TEST(Ceiling, NearestSampleMedianAndSpread) {
  CeilingTrack c;
  EXPECT_EQ(c.nearest(5), 0);  // unknown before any sample
  EXPECT_EQ(c.spread(), 0);
  c.add(0, 30);
  EXPECT_EQ(c.spread(), 0);  // one sample: no spread
  c.add(10, 24);
  c.add(20, 27);
  EXPECT_EQ(c.nearest(-1), 30);
  EXPECT_EQ(c.nearest(4.9), 30);
  EXPECT_EQ(c.nearest(5.1), 24);
  EXPECT_EQ(c.nearest(100), 27);
  EXPECT_EQ(c.median(), 27);
  EXPECT_DOUBLE_EQ(c.spread(), (30.0 - 24.0) / 27.0);
  c.add(30, 28);
  EXPECT_EQ(c.median(), 27.5);  // even count: the mean of the middle two
  const nlohmann::json j = c.to_json();
  EXPECT_EQ(j["memory_copy_gbps"], 27.5);
  ASSERT_EQ(j["samples"].size(), 4u);
  EXPECT_EQ(j["samples"][1]["at_s"], 10.0);
  EXPECT_EQ(j["samples"][1]["gbps"], 24.0);
  EXPECT_EQ(j["interval_s"], CeilingTrack::kIntervalS);
  EXPECT_FALSE(j.contains("failures"));
}

TEST(Ceiling, RefreshWaitsForTheIntervalAndAFailureKeepsTheEarlierSamples) {
  WanderingPlatform p({30, -1, 0});
  CeilingTrack c;
  c.refresh(p);  // the first refresh always measures
  c.refresh(p);  // within the interval: nothing
  EXPECT_EQ(p.taken(), 1);
  c.measure(p);  // throws inside: noted, not a sample
  c.measure(p);  // 0: no ceiling measured, not a sample
  ASSERT_EQ(c.samples().size(), 1u);
  EXPECT_EQ(c.latest(), 30);
  const nlohmann::json j = c.to_json();
  ASSERT_EQ(j["failures"].size(), 2u);
  EXPECT_NE(j["failures"][0].get<std::string>().find("out of device memory"), std::string::npos);
}

TEST(Ceiling, EachResultIsDividedByTheSampleNearestToItsPasses) {
  ResultDb db("ra", "cpu");
  db.ceiling().add(0, 20);
  db.ceiling().add(100, 40);
  auto record_at = [](double at) {
    Record r;
    r.key = {"copy", "parallel", {}, 1 << 20};
    r.elements = 1 << 18;
    r.input_bytes = r.min_bytes_moved = 2000000;
    r.trials.push_back(Breakdown::compute_only(1e-3));  // 2 GB/s moved
    r.timed_at_s = at;
    return r;
  };
  db.add(record_at(10));
  db.add(record_at(90));
  const nlohmann::json j = db.to_json();
  EXPECT_DOUBLE_EQ(j["results"][0]["throughput"]["ceiling_gbps"].get<double>(), 20);
  EXPECT_DOUBLE_EQ(j["results"][0]["throughput"]["pct_of_peak"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(j["results"][1]["throughput"]["ceiling_gbps"].get<double>(), 40);
  EXPECT_DOUBLE_EQ(j["results"][1]["throughput"]["pct_of_peak"].get<double>(), 5);
  EXPECT_EQ(j["results"][1]["timed_at_s"], 90.0);
  EXPECT_DOUBLE_EQ(j["ceiling"]["spread"].get<double>(), 20.0 / 30.0);
}
