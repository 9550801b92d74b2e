#pragma once
// The host half of the results' context block (the platform adds the device half).
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/options.hpp"

namespace hdb {

nlohmann::json host_context(const Options& opts);
// The host's state beside the numbers (context.machine): frequency governor and clocks where cpufreq
// is exposed, SMT, NUMA nodes. `sys_root` replaces /sys for tests.
nlohmann::json machine_state(const std::string& sys_root = "/sys");
// Measured time-stamp-counter rate in Hz (x86), 0 where there is none. Measured, never assumed.
double measure_tsc_hz();
// Reads the time-stamp counter (0 where there is none).
std::uint64_t read_tsc();

}  // namespace hdb
