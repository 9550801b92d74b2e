#pragma once
// The host's caches: their size, and evicting them (--flush-caches). A timed pass after an eviction
// is "warm" (its data in memory, none of it in a cache); one without is "hot" (docs/methodology.md).
#include <cstdint>
#include <string>
#include <vector>

namespace hdb {

// Largest CPU cache in bytes from sysfs (cpu0's cache/index*/size, "32768K" style); 0 when unknown.
// `root` replaces /sys/devices/system/cpu for tests.
std::uint64_t last_level_cache_bytes(const std::string& root = "/sys/devices/system/cpu");

// Evicts the host's last-level cache by writing, then reading, a buffer of twice its size (a
// shared LLC with an adaptive replacement policy keeps part of a buffer of only its size). The
// buffer is allocated on the first flush and kept: its page faults are paid once.
class HostCacheFlusher {
 public:
  explicit HostCacheFlusher(std::uint64_t llc_bytes);
  void flush();
  // "host LLC 32 MiB: wrote and read a 64 MiB buffer"
  std::string describe() const;
  std::uint64_t buffer_bytes() const { return bytes_; }
  std::uint64_t checksum() const { return checksum_; }

 private:
  std::uint64_t llc_;
  std::uint64_t bytes_;
  std::vector<std::uint64_t> buffer_;
  std::uint64_t round_ = 0;
  std::uint64_t checksum_ = 0;
};

}  // namespace hdb
