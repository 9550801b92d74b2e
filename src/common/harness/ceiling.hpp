#pragma once
// The copy ceiling that "% of peak" divides by, measured again while the run goes on. The memory
// bandwidth of a machine wanders (the 2-core VMs here moved 28 % within an hour, issue 51), so one
// figure taken at start-up would carry its moment's error into every case. The run keeps every
// sample with its time; a case is divided by the sample nearest to its timed passes, and the
// document records the samples and their spread.
//
// The first sample measures every access pattern (harness/patterns.hpp); the later ones the copy
// alone, which is what wanders. A case's pattern ceilings are the first ones scaled by the copy
// sample nearest to it over the copy measured with them.
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/patterns.hpp"

namespace hdb {

class Platform;

class CeilingTrack {
 public:
  // Re-measured before a case once this long has passed since the last sample: a sample costs
  // about a third of a second on a CPU (two 256 MB buffers, four copies), so a few % of a long run.
  static constexpr double kIntervalS = 10.0;

  struct Sample {
    double at_s = 0;  // seconds since the track began
    double gbps = 0;
  };

  CeilingTrack() : origin_(std::chrono::steady_clock::now()) {}
  double now_s() const;
  // A sample from the platform. A measurement that fails or reports 0 adds none (and is noted in
  // the document); the run goes on with the samples it has.
  void measure(Platform& platform);
  // measure() when kIntervalS has passed since the last try.
  void refresh(Platform& platform);
  // For callers that measure themselves (tests, tools without a platform).
  void add(double at_s, double gbps) { samples_.push_back({at_s, gbps}); }
  void set_patterns(double at_s, const PatternRates& rates) { patterns_ = rates, patterns_at_s_ = at_s; }
  const PatternRates& patterns() const { return patterns_; }
  // The ceiling of a case timed at at_s that moves `mix`: {0, ""} without samples.
  Ceiling for_case(double at_s, const AccessMix& mix) const;

  const std::vector<Sample>& samples() const { return samples_; }
  // The sample nearest in time to at_s; 0 (unknown) without samples.
  double nearest(double at_s) const;
  double latest() const { return samples_.empty() ? 0 : samples_.back().gbps; }
  double median() const;
  // (max - min) / median; 0 with fewer than two samples.
  double spread() const;
  // The document's `ceiling` object (docs/results-schema.md).
  nlohmann::json to_json() const;

 private:
  std::chrono::steady_clock::time_point origin_;
  std::vector<Sample> samples_;
  double last_try_s_ = -1;
  std::vector<std::string> failures_;
  PatternRates patterns_;
  double patterns_at_s_ = -1;  // < 0: not measured yet
};

}  // namespace hdb
