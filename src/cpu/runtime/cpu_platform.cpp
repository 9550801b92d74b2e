#include "runtime/cpu_platform.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <vector>

#include "harness/context.hpp"
#include "harness/parallel.hpp"
#include "harness/timing.hpp"
#include "runtime/patterns.hpp"

namespace hdb::cpu {

void CpuPlatform::init(const Options& opts) { threads_ = effective_threads(opts); }

nlohmann::json CpuPlatform::context() const {
  nlohmann::json j = host_context(Options{});
  return {{"name", j["cpu"]},
          {"kind", "cpu"},
          {"threads", threads_},
          {"library_variants",
#ifdef HDB_HAVE_TBB
           true
#else
           false
#endif
          },
          {"tsc_hz", measure_tsc_hz()}};
}

std::uint64_t CpuPlatform::device_memory_bytes() const {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
}

double timed_parallel_memcpy(void* dst, const void* src, std::uint64_t bytes, int threads) {
  HostTimer t;
  parallel_for(bytes, threads, [&](std::uint64_t b, std::uint64_t e) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b);
  });
  return t.seconds();
}

// 256 MB per buffer (or 1/8 of RAM) is far beyond any CPU's last-level cache but the largest
// V-Cache parts'; where memory is short, smaller buffers down to 16 MB, and an unknown ceiling (0: no
// % of peak) rather than an abort before the first case.
std::uint64_t CpuPlatform::ceiling_bytes() const {
  return std::min<std::uint64_t>(256ull << 20, device_memory_bytes() / 8);
}

double CpuPlatform::measure_copy_ceiling() { return measure_copy(ceiling_bytes(), threads_); }

PatternRates CpuPlatform::measure_pattern_ceilings() { return measure_patterns(ceiling_bytes(), threads_); }

}  // namespace hdb::cpu
