#include "harness/sizes.hpp"

#include <cctype>
#include <sstream>

#include "harness/errors.hpp"

namespace hdb {

std::uint64_t parse_size(const std::string& text, const std::string& what) {
  auto fail = [&](const std::string& why) -> std::uint64_t {
    throw UsageError(what + ": '" + text + "' is not a valid size (" + why + "; use e.g. 4096, 32K, 1M, 1G or 2^20)");
  };
  if (text.empty()) return fail("empty");
  auto caret = text.find('^');
  if (caret != std::string::npos) {
    if (text.substr(0, caret) != "2") return fail("only powers of 2 may use ^");
    std::string e = text.substr(caret + 1);
    if (e.empty() || e.size() > 2) return fail("bad exponent");
    for (char c : e)
      if (!std::isdigit(static_cast<unsigned char>(c))) return fail("bad exponent");
    int exp = std::stoi(e);
    if (exp > 40) return fail("exponent above 40");
    return std::uint64_t{1} << exp;
  }
  std::size_t i = 0;
  std::uint64_t value = 0;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    if (value > (std::uint64_t{1} << 44)) return fail("too large");
    value = value * 10 + static_cast<std::uint64_t>(text[i] - '0');
    ++i;
  }
  if (i == 0) return fail("no number");
  std::string suffix = text.substr(i);
  std::uint64_t mult = 1;
  if (suffix.empty() || suffix == "B")
    mult = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KB" || suffix == "KiB")
    mult = KiB;
  else if (suffix == "M" || suffix == "m" || suffix == "MB" || suffix == "MiB")
    mult = MiB;
  else if (suffix == "G" || suffix == "g" || suffix == "GB" || suffix == "GiB")
    mult = GiB;
  else
    return fail("unknown suffix '" + suffix + "'");
  if (value == 0) return fail("must be positive");
  if (value > (std::uint64_t{1} << 40) / mult) return fail("above 1T");
  return value * mult;
}

std::vector<std::uint64_t> parse_size_list(const std::string& text, const std::string& what) {
  std::vector<std::uint64_t> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const std::uint64_t s = parse_size(item, what);
    for (std::uint64_t earlier : out)
      if (earlier == s)
        throw UsageError(what + ": " + item + " is given twice (" + format_size(s) +
                         "; each size is a case of its own)");
    out.push_back(s);
  }
  if (out.empty()) throw UsageError(what + ": empty size list");
  return out;
}

std::string format_size(std::uint64_t bytes) {
  if (bytes >= GiB && bytes % GiB == 0) return std::to_string(bytes / GiB) + "G";
  if (bytes >= MiB && bytes % MiB == 0) return std::to_string(bytes / MiB) + "M";
  if (bytes >= KiB && bytes % KiB == 0) return std::to_string(bytes / KiB) + "K";
  return std::to_string(bytes);
}

std::string size_label(std::uint64_t bytes) {
  if (bytes != 0 && (bytes & (bytes - 1)) == 0) {
    int e = 0;
    while ((std::uint64_t{1} << e) != bytes) ++e;
    return "2^" + std::to_string(e);
  }
  return std::to_string(bytes);
}

std::pair<std::uint64_t, std::uint64_t> size_class_range(int size_class) {
  switch (size_class) {
    case 1: return {32 * KiB, 1 * MiB};
    case 2: return {32 * KiB, 16 * MiB};
    case 3: return {32 * KiB, 256 * MiB};
    case 4: return {32 * KiB, 1 * GiB};
    default: throw UsageError("--size-class: " + std::to_string(size_class) + " is not a size class (allowed: 1..4)");
  }
}

std::vector<std::uint64_t> pow2_range(std::uint64_t lo, std::uint64_t hi) {
  std::vector<std::uint64_t> out;
  std::uint64_t s = 1;
  while (s < lo) s <<= 1;
  for (; s <= hi && s != 0; s <<= 1) out.push_back(s);
  return out;
}

}  // namespace hdb
