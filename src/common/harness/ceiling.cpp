#include "harness/ceiling.hpp"

#include <algorithm>
#include <exception>
#include <string>

#include "harness/platform.hpp"

namespace hdb {

double CeilingTrack::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

void CeilingTrack::measure(Platform& platform) {
  last_try_s_ = now_s();
  try {
    const bool all = patterns_at_s_ < 0;
    PatternRates rates;
    if (all) rates = platform.measure_pattern_ceilings();
    const double gbps = all ? rates[MemoryPattern::Copy] : platform.measure_copy_ceiling();
    // The time of a sample is the middle of its measurement.
    const double at = (last_try_s_ + now_s()) / 2;
    if (all && gbps > 0) set_patterns(at, rates);
    if (gbps > 0)
      samples_.push_back({at, gbps});
    else
      failures_.push_back("at " + std::to_string(at) + " s: the platform measured no ceiling");
  } catch (const std::exception& e) {
    // A device too full to hold the copy's buffers between two cases: the earlier samples stand.
    failures_.push_back("at " + std::to_string(last_try_s_) + " s: " + e.what());
  }
}

void CeilingTrack::refresh(Platform& platform) {
  if (last_try_s_ < 0 || now_s() - last_try_s_ >= kIntervalS) measure(platform);
}

double CeilingTrack::nearest(double at_s) const {
  double best = 0, gap = 0;
  for (const Sample& s : samples_) {
    const double g = s.at_s > at_s ? s.at_s - at_s : at_s - s.at_s;
    if (best == 0 || g < gap) best = s.gbps, gap = g;
  }
  return best;
}

Ceiling CeilingTrack::for_case(double at_s, const AccessMix& mix) const {
  const double copy = nearest(at_s);
  if (copy <= 0) return {};
  PatternRates rates;
  if (patterns_[MemoryPattern::Copy] > 0)
    rates = patterns_.scaled(copy / patterns_[MemoryPattern::Copy]);
  else
    rates[MemoryPattern::Copy] = copy;
  return match_ceiling(mix, rates);
}

double CeilingTrack::median() const {
  if (samples_.empty()) return 0;
  std::vector<double> v;
  for (const Sample& s : samples_) v.push_back(s.gbps);
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double CeilingTrack::spread() const {
  if (samples_.size() < 2) return 0;
  auto [lo, hi] = std::minmax_element(samples_.begin(), samples_.end(),
                                      [](const Sample& a, const Sample& b) { return a.gbps < b.gbps; });
  return (hi->gbps - lo->gbps) / median();
}

nlohmann::json CeilingTrack::to_json() const {
  nlohmann::json samples = nlohmann::json::array();
  for (const Sample& s : samples_) samples.push_back({{"at_s", s.at_s}, {"gbps", s.gbps}});
  nlohmann::json j = {{"memory_copy_gbps", median()},
                      {"definition", "measured copy bandwidth, bytes read + bytes written; the median of the samples"},
                      {"samples", samples},
                      {"interval_s", kIntervalS},
                      {"spread", spread()}};
  if (patterns_at_s_ >= 0) {
    j["patterns"] = patterns_.to_json();
    j["patterns_at_s"] = patterns_at_s_;
    j["patterns_definition"] =
        "the rate of each access pattern, measured with the first sample beyond the cache (read: a sum; write: a "
        "fill; copy; add: c = a + b; triad: a = b + 3c; gather4/gather32: 4-/32-byte items at random from a table "
        "beyond the cache, counting the items' bytes); a case is divided by the ceiling of the mix it declares "
        "(throughput.ceiling_pattern), these scaled by the copy sample nearest to it over patterns.copy";
  }
  if (!failures_.empty()) j["failures"] = failures_;
  return j;
}

}  // namespace hdb
