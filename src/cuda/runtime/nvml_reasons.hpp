#pragma once
// NVML's clock-event ("throttle") reason bits, decoded without NVML: the header is not part of every
// toolkit (this project's build machines have none) and NVML itself is loaded at run time.
#include <string>
#include <vector>

namespace hdb::cuda {

struct ClockEventReasons {
  std::vector<std::string> throttling;  // reasons that lower clocks below what the work asks for
  std::vector<std::string> other;       // idle, application clocks, sync boost, display clocks
};

// The values of nvml.h's nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*) macros.
inline ClockEventReasons decode_clock_event_reasons(unsigned long long mask) {
  struct Bit {
    unsigned long long bit;
    const char* name;
    bool throttling;
  };
  static const Bit bits[] = {{0x1, "gpu_idle", false},
                             {0x2, "applications_clocks_setting", false},
                             {0x4, "sw_power_cap", true},
                             {0x8, "hw_slowdown", true},
                             {0x10, "sync_boost", false},
                             {0x20, "sw_thermal_slowdown", true},
                             {0x40, "hw_thermal_slowdown", true},
                             {0x80, "hw_power_brake_slowdown", true},
                             {0x100, "display_clock_setting", false}};
  ClockEventReasons r;
  unsigned long long known = 0;
  for (const Bit& b : bits) {
    known |= b.bit;
    if (mask & b.bit) (b.throttling ? r.throttling : r.other).push_back(b.name);
  }
  if (mask & ~known) r.other.push_back("unknown_bits");
  return r;
}

}  // namespace hdb::cuda
