#include "harness/platform.hpp"

namespace hdb {

PatternRates Platform::measure_pattern_ceilings() {
  PatternRates r;
  r[MemoryPattern::Copy] = measure_copy_ceiling();
  return r;
}

std::string Platform::flush_host_cache() {
  if (!host_flusher_) host_flusher_ = std::make_unique<HostCacheFlusher>(last_level_cache_bytes());
  host_flusher_->flush();
  return host_flusher_->describe();
}

std::string Platform::cold_pass_note() const {
  return "the first pass after set-up: it touches pages the pass writes for the first time (page faults), "
         "fills lazily built state (plans, pools, caches of the code it calls) and finds in the CPU caches "
         "only what set-up left there";
}

}  // namespace hdb
