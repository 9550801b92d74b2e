#pragma once
// Input sizes: parsing "32K,1M,1G", labels "2^20", and the one size-class table all backends share.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace hdb {

constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;

// "4096", "32K", "1M", "1G", "2^20" -> bytes. Throws UsageError naming `what` on bad text.
std::uint64_t parse_size(const std::string& text, const std::string& what = "size");
std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& what = "--sizes");

// 32768 -> "32K", 1073741824 -> "1G", 1000 -> "1000".
std::string format_size(std::uint64_t bytes);
// Power of two -> "2^15", otherwise the decimal number.
std::string size_label(std::uint64_t bytes);

// Size classes 1..4 (SHOC style): every class starts at 32K and ends at 1M, 16M, 256M, 1G.
constexpr int kMinSizeClass = 1, kMaxSizeClass = 4;
std::pair<std::uint64_t, std::uint64_t> size_class_range(int size_class);

// Powers of two from lo to hi inclusive (lo rounded up, hi rounded down).
std::vector<std::uint64_t> pow2_range(std::uint64_t lo, std::uint64_t hi);

}  // namespace hdb
