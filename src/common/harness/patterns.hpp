#pragma once
// A ceiling per access pattern (issue 46). One copy rate cannot judge every kernel: a kernel that
// only reads goes past it (read bandwidth is higher than a copy's, which pays for its writes), and
// a kernel of random lookups never comes near it. So each platform measures, as STREAM and
// nvbench's bandwidth kernels do, the rate of the patterns kernels are made of, and a case is
// divided by the ceiling of the mix it declares (its bytes read, written, and read at random).
#include <array>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace hdb {

enum class MemoryPattern {
  Read,      // a sum: every byte read once
  Write,     // a fill: every byte written once
  Copy,      // b = a: one read, one write
  Add,       // c = a + b: two reads, one write
  Triad,     // a = b + s * c: as add, with a multiply
  Gather4,   // 4-byte items read at random from a table beyond the cache
  Gather32,  // 32-byte items read at random, each one aligned run of 32 bytes
};
inline constexpr int kMemoryPatterns = 7;
inline constexpr std::array<MemoryPattern, kMemoryPatterns> kAllPatterns = {
    MemoryPattern::Read,  MemoryPattern::Write,   MemoryPattern::Copy,    MemoryPattern::Add,
    MemoryPattern::Triad, MemoryPattern::Gather4, MemoryPattern::Gather32};
const char* to_string(MemoryPattern p);  // "read", "write", "copy", "add", "triad", "gather4", "gather32"

// Measured rates in GB/s (bytes read + bytes written per second; a gather counts the bytes of the
// items it asked for). 0: not measured on this platform.
struct PatternRates {
  std::array<double, kMemoryPatterns> gbps{};
  double& operator[](MemoryPattern p) { return gbps[static_cast<std::size_t>(p)]; }
  double operator[](MemoryPattern p) const { return gbps[static_cast<std::size_t>(p)]; }
  // Every rate times f (the patterns scaled to a later copy sample).
  PatternRates scaled(double f) const;
  nlohmann::json to_json() const;  // {"read": GB/s, ...}: the measured ones only
};

// What a case declares it moves at the least (docs/results-schema.md, `bytes`).
struct AccessMix {
  std::uint64_t read = 0;         // bytes read, every input once
  std::uint64_t written = 0;      // bytes written, every output once
  std::uint64_t random_read = 0;  // of `read`, the bytes read by random accesses
  std::uint32_t random_item = 4;  // bytes per random access
  bool declared() const { return read + written > 0; }
};

// The ceiling a case is divided by, and its name ("read", "copy..read (75% read)", "copy + gather4",
// or a fallback "copy (...)"); gbps 0 where nothing is known.
struct Ceiling {
  double gbps = 0;
  std::string pattern;
};

// The ceiling of `mix` from `rates`. Sequential bytes: the time per byte interpolated linearly, by
// the share of reads, between the two measured patterns either side (write 0, copy 1/2, add 2/3,
// read 1; add's point is the better of add and triad); exact at a measured pattern. Random reads:
// their accesses at the gather rate (the time per access interpolated between gather4 and gather32
// by the item's width), added in time. A mix without a split, or rates without the patterns it
// needs, is judged against the copy rate and says so.
Ceiling match_ceiling(const AccessMix& mix, const PatternRates& rates);

}  // namespace hdb
