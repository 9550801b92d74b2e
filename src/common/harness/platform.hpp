#pragma once
// What every backend provides besides its benchmark interfaces: device set-up, a context block for
// the results, memory limits, and the memory-copy ceiling that "% of peak" is measured against.
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/caches.hpp"
#include "harness/energy.hpp"
#include "harness/options.hpp"
#include "harness/patterns.hpp"

namespace hdb {

class Platform {
 public:
  virtual ~Platform() = default;
  // "cpu", "cuda" or "opencl".
  virtual std::string name() const = 0;
  // Selects the device; throws NoDevice (exit 77) when there is none.
  virtual void init(const Options& opts) = 0;
  // Device/runtime description for the results' context block.
  virtual nlohmann::json context() const = 0;
  // True when inputs cross a bus (PCIe) before the kernel can run.
  virtual bool has_transfers() const = 0;
  // Memory the benchmarks may allocate on the device (host RAM for the CPU): what the device
  // reports, capped by --memory-limit. Memory-fit checks (harness/memory_plan.hpp) compare with it.
  std::uint64_t memory_bytes() const {
    std::uint64_t device = device_memory_bytes();
    return memory_limit_ != 0 && memory_limit_ < device ? memory_limit_ : device;
  }
  // --memory-limit: 0 = none.
  void set_memory_limit(std::uint64_t bytes) { memory_limit_ = bytes; }
  std::uint64_t memory_limit() const { return memory_limit_; }
  // Measured copy bandwidth of the memory the kernels work in, in GB/s, counting bytes read plus
  // bytes written. Measured once per run at a size beyond the last-level cache.
  virtual double measure_copy_ceiling() = 0;
  // The rate of every access pattern this platform can measure (harness/patterns.hpp), beyond its
  // cache as the copy is, the copy among them; this default measures the copy alone.
  virtual PatternRates measure_pattern_ceilings();
  // What a case that ended with `e` records as its reason. A runtime's own exception that escaped its
  // backend's wrappers (OpenCL's cl::Error says only the call) is named with its error code here;
  // "" where `e` is no such exception (its what() is the reason).
  virtual std::string describe_runtime_error(const std::exception& /*e*/) const { return ""; }

  // The cold/warm/hot protocol (docs/methodology.md). Evicts every cache a pass's data may sit in
  // before a timed pass (--flush-caches): the host's last-level cache, and a device's own (its L2);
  // returns what it evicted and how.
  virtual std::string flush_caches() { return flush_host_cache(); }
  // What a case's first pass pays on this platform that later passes do not.
  virtual std::string cold_pass_note() const;
  // Seconds spent compiling kernels at run time since the last call (OpenCL's program builds);
  // 0 where kernels are compiled ahead of time.
  virtual double take_compile_seconds() { return 0; }
  // The energy counter of the processor that runs the kernels: RAPL for the host CPU; a GPU
  // platform opens its own.
  virtual EnergyProbe open_energy_meter() { return open_rapl(); }
  // The reasons the device's clocks are held down right now (power cap, thermal): read after every
  // timed pass; a pass that saw one is flagged, and dropped under --discard-on-throttle. Empty where
  // the platform cannot tell.
  virtual std::vector<std::string> throttling() { return {}; }
  // The device's state after a case's timed passes (clocks, power, temperature), recorded per case;
  // null where the platform cannot tell.
  virtual nlohmann::json device_state() { return nullptr; }

  // --traffic: what the kernels ask of memory, counted in one extra pass of each case (host
  // execution's instrumented build only, docs/cuda.md). "" where this platform can take the profile,
  // else why not (a usage error).
  virtual std::string traffic_problem() const {
    return "the traffic profile needs host execution (hdb-<bench>-cuda-host): it counts the CUDA kernels' "
           "loads and stores on the CPU, which no GPU, OpenCL device or CPU backend reports";
  }
  // Before the options are parsed, in a run whose arguments name --traffic: where the instrumented
  // build is another executable, this replaces the process with it (same arguments); else nothing.
  virtual void hand_over_traffic(char** /*argv*/) {}
  // Counting on for one pass, then off: the profile (docs/results-schema.md, `traffic`).
  virtual void traffic_begin() {}
  virtual nlohmann::json traffic_end() { return nullptr; }

 protected:
  std::string flush_host_cache();

  // What the device reports (free device memory on CUDA, global memory on OpenCL, RAM on the CPU).
  virtual std::uint64_t device_memory_bytes() const = 0;

 private:
  std::uint64_t memory_limit_ = 0;
  std::unique_ptr<HostCacheFlusher> host_flusher_;
};

}  // namespace hdb
