#include "harness/patterns.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace hdb {

const char* to_string(MemoryPattern p) {
  switch (p) {
    case MemoryPattern::Read: return "read";
    case MemoryPattern::Write: return "write";
    case MemoryPattern::Copy: return "copy";
    case MemoryPattern::Add: return "add";
    case MemoryPattern::Triad: return "triad";
    case MemoryPattern::Gather4: return "gather4";
    case MemoryPattern::Gather32: return "gather32";
  }
  return "?";
}

PatternRates PatternRates::scaled(double f) const {
  PatternRates out = *this;
  for (double& g : out.gbps) g *= f;
  return out;
}

nlohmann::json PatternRates::to_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (MemoryPattern p : kAllPatterns)
    if ((*this)[p] > 0) j[to_string(p)] = (*this)[p];
  return j;
}

namespace {

struct Point {
  double read_share;
  double gbps;
  std::string name;
};

// Nanoseconds per byte, and the name, of a sequential mix with `share` of its bytes read.
std::pair<double, std::string> sequential(const std::vector<Point>& pts, double share) {
  const Point* lo = nullptr;
  const Point* hi = nullptr;
  for (const Point& p : pts) {
    if (p.read_share <= share + 1e-9) lo = &p;
    if (!hi && p.read_share >= share - 1e-9) hi = &p;
  }
  const long rounded = std::lround(100 * share);
  const std::string pct = " (" + std::to_string(rounded) + "% read)";
  if (!lo || !hi) {  // beyond the measured points: the nearest one, named with the share
    const Point& p = lo ? *lo : *hi;
    return {1 / p.gbps, p.name + pct};
  }
  if (lo == hi) return {1 / lo->gbps, lo->name};
  const double t =
      1 / lo->gbps + (share - lo->read_share) / (hi->read_share - lo->read_share) * (1 / hi->gbps - 1 / lo->gbps);
  // A share that rounds to a point's is named after it (a reduce's few bytes of answer: "read").
  for (const Point* p : {lo, hi})
    if (std::lround(100 * p->read_share) == rounded) return {t, p->name};
  return {t, lo->name + ".." + hi->name + pct};
}

// Nanoseconds per random access of `item` bytes, and the name; 0 when no gather was measured.
std::pair<double, std::string> random_access(const PatternRates& r, std::uint32_t item) {
  const double g4 = r[MemoryPattern::Gather4], g32 = r[MemoryPattern::Gather32];
  const double t4 = g4 > 0 ? 4 / g4 : 0, t32 = g32 > 0 ? 32 / g32 : 0;
  if (t4 == 0 && t32 == 0) return {0, ""};
  if (t32 == 0 || (item <= 4 && t4 > 0)) return {t4, "gather4"};
  if (t4 == 0 || item >= 32) return {t32, "gather32"};
  return {t4 + (static_cast<double>(item) - 4) / 28 * (t32 - t4), "gather4..gather32"};
}

}  // namespace

Ceiling match_ceiling(const AccessMix& mix, const PatternRates& r) {
  const double copy = r[MemoryPattern::Copy];
  if (!mix.declared()) return {copy, copy > 0 ? "copy (reads and writes undeclared)" : ""};
  std::vector<Point> pts;
  if (r[MemoryPattern::Write] > 0) pts.push_back({0.0, r[MemoryPattern::Write], "write"});
  if (copy > 0) pts.push_back({0.5, copy, "copy"});
  const double add = std::max(r[MemoryPattern::Add], r[MemoryPattern::Triad]);
  if (add > 0) pts.push_back({2.0 / 3, add, r[MemoryPattern::Add] >= r[MemoryPattern::Triad] ? "add" : "triad"});
  if (r[MemoryPattern::Read] > 0) pts.push_back({1.0, r[MemoryPattern::Read], "read"});
  if (pts.empty()) return {0, ""};
  if (pts.size() == 1 && copy > 0) return {copy, "copy (only copy measured)"};

  const double total = static_cast<double>(mix.read + mix.written);
  std::uint64_t random = std::min(mix.random_read, mix.read);
  const std::uint32_t item = std::max<std::uint32_t>(mix.random_item, 1);
  auto [per_access, gather] = random_access(r, item);
  std::string note;
  if (random > 0 && per_access == 0) {  // no gather measured: the random reads at the sequential rate
    random = 0;
    note = " (random reads as sequential: no gather measured)";
  }
  const std::uint64_t seq_read = mix.read - random, seq = seq_read + mix.written;
  double ns = 0;
  std::string name;
  if (seq > 0) {
    auto [per_byte, seq_name] = sequential(pts, static_cast<double>(seq_read) / static_cast<double>(seq));
    ns += per_byte * static_cast<double>(seq);
    name = seq_name;
  }
  if (random > 0) {
    ns += per_access * std::ceil(static_cast<double>(random) / item);
    name = name.empty() ? gather : name + " + " + gather;
  }
  return {total / ns, name + note};
}

}  // namespace hdb
