#pragma once
// The host half of the results' context block (the platform adds the device half).
#include <nlohmann/json.hpp>

#include "harness/options.hpp"

namespace hdb {

nlohmann::json host_context(const Options& opts);
// Measured time-stamp-counter rate in Hz (x86), 0 where there is none. Measured, never assumed.
double measure_tsc_hz();
// Reads the time-stamp counter (0 where there is none).
std::uint64_t read_tsc();

}  // namespace hdb
