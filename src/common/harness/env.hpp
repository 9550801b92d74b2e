#pragma once
// Settings read from the environment (HDB_*): each goes through the parser and the checks of the
// options (a size through parse_size, as --memory-limit), so a value an option would refuse is
// refused here too, as a UsageError naming the variable (exit code 2), never ignored or taken in part.
// An unset variable is the default; one set to the empty string is an error (unset it instead).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hdb {

// The variable's text; nullopt when it is unset. Empty: UsageError.
std::optional<std::string> env_text(const char* name);
// A size: 4096, 32K, 1M, 1G or 2^20 (parse_size), larger than 0.
std::optional<std::uint64_t> env_size(const char* name);
// A decimal integer in lo..hi.
std::optional<std::uint64_t> env_integer(const char* name, std::uint64_t lo, std::uint64_t hi);
// One of `allowed`.
std::optional<std::string> env_choice(const char* name, const std::vector<std::string>& allowed);
// A switch: 1 (on) or 0 (off); unset is off.
bool env_flag(const char* name);

// For settings read where no caller maps a UsageError to the exit code (a runtime library, a static
// initialiser, before main parses the options): runs `read`, and on a UsageError prints
// "<program>: error: <message>" and exits with code 2.
template <class F>
auto env_or_exit(F read) -> decltype(read());
[[noreturn]] void exit_usage(const std::string& message);

}  // namespace hdb

#include "harness/errors.hpp"

template <class F>
auto hdb::env_or_exit(F read) -> decltype(read()) {
  try {
    return read();
  } catch (const UsageError& e) {
    exit_usage(e.what());
  }
}
