#pragma once
// The access patterns of harness/patterns.hpp on an OpenCL device: read, write, copy (the copy
// engine, as measure_copy_ceiling), add, triad, and random gathers of 4- and 32-byte items, over
// three buffers of `bytes`; a kernel whose result is wrong throws DeviceError.
#include <cstdint>

#include "harness/patterns.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::opencl {

PatternRates measure_patterns(OpenClPlatform& p, std::uint64_t bytes, int passes);

}  // namespace hdb::opencl
