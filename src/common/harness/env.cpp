#include "harness/env.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>

#include "harness/sizes.hpp"

namespace hdb {

std::optional<std::string> env_text(const char* name) {
  const char* v = std::getenv(name);
  if (!v) return std::nullopt;
  if (!*v)
    throw UsageError(std::string(name) + ": set to the empty string (give a value, or unset it for the default)");
  return std::string(v);
}

std::optional<std::uint64_t> env_size(const char* name) {
  auto v = env_text(name);
  if (!v) return std::nullopt;
  return parse_size(*v, name);
}

std::optional<std::uint64_t> env_integer(const char* name, std::uint64_t lo, std::uint64_t hi) {
  auto v = env_text(name);
  if (!v) return std::nullopt;
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  if (v->size() > 20 || v->find_first_not_of("0123456789") != std::string::npos)
    throw UsageError(std::string(name) + ": '" + *v + "' is not an integer in " + range);
  std::uint64_t x = 0;
  for (char c : *v) {
    const auto d = static_cast<std::uint64_t>(c - '0');
    if (d > hi || x > (hi - d) / 10) throw UsageError(std::string(name) + ": " + *v + " is outside " + range);
    x = x * 10 + d;
  }
  if (x < lo) throw UsageError(std::string(name) + ": " + *v + " is outside " + range);
  return x;
}

std::optional<std::string> env_choice(const char* name, const std::vector<std::string>& allowed) {
  auto v = env_text(name);
  if (!v) return std::nullopt;
  std::string list;
  for (const std::string& a : allowed) {
    if (*v == a) return v;
    list += (list.empty() ? "" : ", ") + a;
  }
  throw UsageError(std::string(name) + ": '" + *v + "' (allowed: " + list + ")");
}

bool env_flag(const char* name) {
  auto v = env_choice(name, {"0", "1"});
  return v && *v == "1";
}

void exit_usage(const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", program_invocation_short_name, message.c_str());
  std::fflush(stderr);
  std::exit(kExitUsage);
}

}  // namespace hdb
