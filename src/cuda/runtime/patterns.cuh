#pragma once
// The access patterns of harness/patterns.hpp on a CUDA device: read (a sum), write (a fill), copy
// (the copy engine, as measure_copy_ceiling), add, triad, and random gathers of 4- and 32-byte
// items, each the best of a few passes timed with events, over buffers of `bytes` each.
#include <cstddef>

#include "harness/patterns.hpp"

namespace hdb::cuda {

// Each kernel's result is checked (a sum, two words of an output): a wrong one throws DeviceError,
// so that no rate of a kernel that did not do its work becomes a ceiling. bytes: at least 64 KB.
PatternRates measure_patterns(std::size_t bytes, int sm_count, int passes);

}  // namespace hdb::cuda
