#pragma once
// bus: the ceilings every other result is compared with. Host<->device bandwidth (pageable and
// pinned), device memory copy, and on the CPU memcpy (one thread, all threads) and a STREAM triad.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/main.hpp"
#include "harness/session.hpp"

namespace hdb {

// One prepared bus measurement; buffers live as long as the object.
class BusCase {
 public:
  virtual ~BusCase() = default;
  virtual Breakdown pass() = 0;
  // Copies the destination back (untimed) and compares it with what the source held.
  virtual Verification verify() = 0;
};

struct BusTest {
  std::string test;     // "h2d", "d2h", "device_copy", "memcpy", "triad"
  std::string variant;  // "copy" (h2d/d2h), "serial", "parallel", "memcpy", "kernel", ...
  Transfer transfer = Transfer::None;  // h2d/d2h: host memory of the copy
  int streams_read = 1;   // arrays read per element (for bytes moved)
  int streams_written = 1;
};

class BusBackend {
 public:
  virtual ~BusBackend() = default;
  // The tests this backend measures, given the --transfer modes.
  virtual std::vector<BusTest> tests(const std::vector<Transfer>& transfers) const = 0;
  // Allocates and fills buffers of `bytes` per array with the pattern of `seed`, generated on
  // `host_threads` threads (effective_threads: the run's share of the cores).
  // Throws SkipCase when the size does not fit.
  virtual std::unique_ptr<BusCase> prepare(const BusTest& t, std::uint64_t bytes, std::uint64_t seed,
                                           int host_threads) = 0;
};

// The host<->device copies every backend with a bus measures: h2d and d2h, variant "copy", one
// case per transfer mode. Backends add their own device tests after these.
std::vector<BusTest> transfer_tests(const std::vector<Transfer>& transfers);

// The bytes of the pattern words: never all zero, different for every seed (on `threads` threads).
void fill_pattern(std::uint32_t* words, std::uint64_t count, std::uint64_t seed, int threads);
// Verifies words[i] == pattern(seed)[i] * scale + offset pattern (triad checks use expected()).
Verification check_pattern(const std::uint32_t* words, std::uint64_t count, std::uint64_t seed);

int bus_main(int argc, char** argv, Platform& platform, BusBackend& backend);

}  // namespace hdb
