#include "harness/caches.hpp"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "harness/sizes.hpp"

namespace hdb {

std::uint64_t last_level_cache_bytes(const std::string& root) {
  std::uint64_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream f(root + "/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string s;
    if (!(f >> s) || s.empty()) continue;
    std::uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
    char unit = s.back();
    if (unit == 'K')
      v <<= 10;
    else if (unit == 'M')
      v <<= 20;
    else if (unit == 'G')
      v <<= 30;
    best = std::max(best, v);
  }
  return best;
}

namespace {
// Without a readable cache size: larger than any LLC of a 2026 server CPU we know of (AMD's 3D
// V-Cache parts reach 1.1 GB across sockets; one socket's share is below 1 GB).
constexpr std::uint64_t kUnknownLlcFlush = 1ull << 30;
}  // namespace

HostCacheFlusher::HostCacheFlusher(std::uint64_t llc_bytes)
    : llc_(llc_bytes), bytes_(llc_bytes ? 2 * llc_bytes : kUnknownLlcFlush) {}

void HostCacheFlusher::flush() {
  if (buffer_.empty()) buffer_.assign(bytes_ / sizeof(std::uint64_t), 0);
  // A new value each round, so no write can be skipped as unchanged; the read's sum is kept (checksum_)
  // so the compiler cannot drop it.
  ++round_;
  for (auto& w : buffer_) w += round_;
  std::uint64_t sum = 0;
  for (auto w : buffer_) sum += w;
  checksum_ = sum;
}

std::string HostCacheFlusher::describe() const {
  std::string what = llc_ ? "host LLC " + format_size(llc_) : "host LLC of unknown size (sysfs has none)";
  return what + ": wrote and read a " + format_size(bytes_) + " buffer";
}

}  // namespace hdb
