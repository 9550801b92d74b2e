#pragma once
// The CPU platform: host memory is the device memory, no bus, all (or --threads) cores.
#include <cstdint>

#include "harness/platform.hpp"

namespace hdb::cpu {

// The CPU backends run on as many threads as the platform says: init() takes the count that
// effective_threads() (harness/options.hpp) decides for the run; tests construct a platform with a
// fixed count instead. No backend derives a count of its own.
class CpuPlatform : public Platform {
 public:
  CpuPlatform() = default;
  explicit CpuPlatform(int threads) : threads_(threads < 1 ? 1 : threads) {}
  std::string name() const override { return "cpu"; }
  void init(const Options& opts) override;
  nlohmann::json context() const override;
  bool has_transfers() const override { return false; }
  double measure_copy_ceiling() override;
  PatternRates measure_pattern_ceilings() override;
  int threads() const { return threads_; }

 protected:
  std::uint64_t device_memory_bytes() const override;
  std::uint64_t ceiling_bytes() const;

 private:
  int threads_ = 1;
};

// memcpy of `bytes` split over `threads` threads; returns seconds. Shared with the bus benchmark.
double timed_parallel_memcpy(void* dst, const void* src, std::uint64_t bytes, int threads);

}  // namespace hdb::cpu
