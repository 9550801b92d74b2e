#pragma once
// bus: the ceilings every other result is compared with. Host<->device bandwidth (pageable and
// pinned), device memory copy, and on the CPU memcpy (one thread, all threads), a STREAM triad and
// the other access patterns every case's ceiling is matched from (harness/patterns.hpp): read,
// write, add and random gathers of 4- and 32-byte items; and the latency of a chase of dependent
// loads over a working set of each size, whose steps show where each cache level ends.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/main.hpp"
#include "harness/memory_plan.hpp"
#include "harness/session.hpp"

namespace hdb {

// The tests, in the order a run takes them. h2d and d2h cross the bus (one case per --transfer
// mode); the others copy within one memory.
enum class BusKind { H2d, D2h, DeviceCopy, Memcpy, Triad, Read, Write, Add, Gather4, Gather32, Latency };
// The test name: "h2d", "d2h", "device_copy", "memcpy", "triad", "read", "write", "add", "gather4", "gather32",
// "latency".
const char* to_string(BusKind k);

struct BusTest {
  BusKind kind = BusKind::Memcpy;
  std::string variant;                 // a name of the backend's table
  Transfer transfer = Transfer::None;  // h2d/d2h: host memory of the copy
  bool over_bus() const { return kind == BusKind::H2d || kind == BusKind::D2h; }
  bool gather() const { return kind == BusKind::Gather4 || kind == BusKind::Gather32; }
  // latency: one load per cache line of the working set, in a random cycle, each load's address the
  // value of the one before; a pass takes kChaseSteps of them (a few DRAM latencies' worth of
  // seconds at any size), so its time over the steps is the latency of the level that holds it.
  static constexpr std::uint64_t kChaseSteps = 1ull << 21;
  static constexpr std::uint64_t kLineBytes = 64;
  int item_bytes() const { return kind == BusKind::Gather32 ? 32 : 4; }
  // A gather's accesses over a table of `bytes`: items adding up to a sixteenth of it.
  std::uint64_t accesses(std::uint64_t bytes) const { return bytes / 16 / static_cast<std::uint64_t>(item_bytes()); }
  // Arrays read and written per element (a gather: its table is read in part, at random).
  int streams_read() const;
  int streams_written() const { return kind == BusKind::Read || kind == BusKind::Latency || gather() ? 0 : 1; }
};

// One prepared bus measurement (harness CaseRun); its buffers live as long as the object.
class BusCase : public CaseRun {
 public:
  // Copies the destination back (untimed) and compares it with what the source held.
  virtual Verification verify() = 0;
};

class BusBackend {
 public:
  virtual ~BusBackend() = default;
  // The backend's variants, each with the tests it measures.
  virtual const VariantList& variant_table() const = 0;
  // Adds, by name, every buffer prepare() allocates in the platform's memory for `bytes` per array.
  virtual void plan_memory(const BusTest& t, std::uint64_t bytes, MemoryPlan& plan) const = 0;
  // Allocates and fills buffers of `bytes` per array with the pattern of `seed`, generated on
  // `host_threads` threads (effective_threads: the run's share of the cores). Throws SkipCase for a
  // size the device cannot take (an allocation limit, less than one word).
  virtual std::unique_ptr<BusCase> prepare(const BusTest& t, std::uint64_t bytes, std::uint64_t seed,
                                           int host_threads) = 0;
};

// The cases of a backend, from its table: per test (BusKind order), the variants that measure it,
// per --transfer mode for the tests over the bus.
std::vector<BusTest> bus_tests(const BusBackend& backend, const std::vector<Transfer>& transfers);
// The h2d/d2h variant every backend with a bus registers.
VariantInfo bus_copy_variant();

// The bytes of the pattern words: never all zero, different for every seed (on `threads` threads).
void fill_pattern(std::uint32_t* words, std::uint64_t count, std::uint64_t seed, int threads);
// Verifies words[i] == pattern(seed)[i] * scale + offset pattern (triad checks use expected()).
Verification check_pattern(const std::uint32_t* words, std::uint64_t count, std::uint64_t seed);

int bus_main(int argc, char** argv, Platform& platform, BusBackend& backend);

}  // namespace hdb
