#pragma once
// A directory of this test process's own (mkdtemp under ::testing::TempDir()), removed when the
// process ends: no two tests, users or clones ever write the same path.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace hdb::test {

inline const std::string& scratch_dir() {
  struct Dir {
    std::string path;
    Dir() {
      std::string pattern = ::testing::TempDir() + "hdb-harness-XXXXXX";
      if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed under " + ::testing::TempDir());
      path = pattern + "/";
    }
    ~Dir() {
      std::error_code ec;
      std::filesystem::remove_all(path, ec);
    }
  };
  static Dir dir;
  return dir.path;
}

// `name` inside scratch_dir().
inline std::string scratch(const std::string& name) { return scratch_dir() + name; }

}  // namespace hdb::test
