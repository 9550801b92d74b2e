#include "harness/paths.hpp"

#include <filesystem>
#include <system_error>

#include "harness/errors.hpp"

namespace hdb {

namespace {

namespace fs = std::filesystem;

// Devices and FIFOs (/dev/null, /dev/stdout) take any number of writers: only regular files, and
// paths not made yet, can be overwritten.
bool overwritable(const std::string& path) {
  std::error_code e;
  const fs::file_status st = fs::status(path, e);
  return !fs::exists(st) || fs::is_regular_file(st);
}

bool same_file(const std::string& a, const std::string& b) {
  if (!overwritable(a) || !overwritable(b)) return false;
  std::error_code ea, eb;
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ea), ea);
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, eb), eb);
  if (!ea && !eb && ca == cb) return true;
  std::error_code e;
  return fs::exists(a, e) && fs::exists(b, e) && fs::equivalent(a, b, e) && !e;
}

}  // namespace

void check_paths(const std::vector<PathUse>& uses) {
  for (std::size_t i = 0; i < uses.size(); ++i) {
    for (std::size_t j = i + 1; j < uses.size(); ++j) {
      const PathUse& a = uses[i];
      const PathUse& b = uses[j];
      if (a.path.empty() || b.path.empty() || (!a.output && !b.output)) continue;
      if (!same_file(a.path, b.path)) continue;
      const PathUse& out = a.output ? a : b;
      const PathUse& other = a.output ? b : a;
      throw UsageError(out.option + " '" + out.path + "' is the same file as " + other.option + " '" + other.path +
                       "'" +
                       (other.output ? ": one would overwrite the other; give each output its own path"
                                     : ": writing it would destroy the input"));
    }
  }
}

}  // namespace hdb
