#pragma once
// What the loader fuzz passes (tests/tpch/test_tpch_fuzz.cpp, tests/ngram/test_ngram_fuzz.cpp)
// share: scratch files in a directory of the test's own, and a seeded generator of byte damage.
// Each pass picks its own mix of damage kinds (and adds the kinds only its format has).
#include <stdlib.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>

#include "workloads/random.hpp"

namespace hdb::test {

// A new directory under TMPDIR that no other run shares (mkdtemp).
inline std::filesystem::path make_temp_dir(const std::string& prefix) {
  std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  return pattern;
}

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_file(const std::filesystem::path& p, const std::string& s) {
  std::ofstream(p, std::ios::binary) << s;
}

// The random stream (seed, 0, 1, ...) and the kinds of damage every text format can take.
class Mutator {
 public:
  explicit Mutator(std::uint64_t seed) : seed_(seed) {}
  std::uint64_t next() { return rand_at(seed_, n_++); }
  std::size_t below(std::size_t n) { return n ? static_cast<std::size_t>(bounded(next(), n)) : 0; }

  void truncate(std::string& s, std::size_t pos) { s.resize(pos); }
  void flip_bits(std::string& s) {
    for (std::size_t k = 0, m = 1 + below(8); k < m && !s.empty(); ++k)
      s[below(s.size())] ^= static_cast<char>(1 << below(8));
  }
  void insert_random(std::string& s, std::size_t pos) {
    for (std::size_t k = 0, m = 1 + below(16); k < m; ++k)
      s.insert(s.begin() + static_cast<std::ptrdiff_t>(pos), static_cast<char>(next()));
  }
  void erase_range(std::string& s, std::size_t pos) { s.erase(pos, below(200)); }
  // A huge line or field: a run of one byte of `kinds`, sometimes over 1 MiB (up to 1 MiB more).
  template <std::size_t N>
  void insert_run(std::string& s, std::size_t pos, const char (&kinds)[N], std::size_t huge_extra) {
    const std::size_t len = below(8) == 0 ? (std::size_t{1} << 20) + below(huge_extra) : below(5000);
    s.insert(pos, std::string(len, kinds[below(N - 1)]));
  }
  void duplicate_range(std::string& s, std::size_t pos) {
    if (s.empty()) return;
    const std::size_t from = below(s.size()), len = below(300);
    s.insert(pos, s.substr(from, len));
  }
  void random_bytes(std::string& s) {
    s.assign(below(4096), '\0');
    for (char& c : s) c = static_cast<char>(next());
  }
  static void to_crlf(std::string& s) {
    std::string crlf;
    crlf.reserve(s.size() + s.size() / 8);
    for (char ch : s) {
      if (ch == '\n') crlf.push_back('\r');
      crlf.push_back(ch);
    }
    s.swap(crlf);
  }

 private:
  std::uint64_t seed_, n_ = 0;
};

}  // namespace hdb::test
