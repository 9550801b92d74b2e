#pragma once
// The files an executable reads and writes, checked before any work: two outputs on one file would
// leave only the last one written, and an output on an input would destroy the input. A usage
// error names both options (issue 31).
#include <string>
#include <vector>

namespace hdb {

struct PathUse {
  std::string option;  // "--json", "--corpus", ...
  std::string path;
  bool output = false;
};

// Throws UsageError when two outputs, or an output and an input, are the same file: the same path
// once made absolute and normalised, or (for files that exist) one file under two names (links).
// Empty paths are not in use and are left out.
void check_paths(const std::vector<PathUse>& uses);

}  // namespace hdb
