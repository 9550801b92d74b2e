#pragma once
// Plain serial delta merge, the yardstick for every backend: STL sort/unique/set_union and binary
// search, plus the checks that decode a merged column row by row. Checks return "" when the output
// is right, else the first difference.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/columns.hpp"

namespace hdb::ref {

template <class T>
struct DictMerge {
  std::vector<T> dict;                  // U'_M = U_M ∪ U_D, sorted distinct
  std::vector<std::uint32_t> x_m, x_d;  // position in U'_M of each entry of U_M / U_D
};

// Step 1a: U_D = sorted distinct delta values.
template <class T>
std::vector<T> delta_dict(const std::vector<T>& delta) {
  std::vector<T> u(delta);
  std::sort(u.begin(), u.end());
  u.erase(std::unique(u.begin(), u.end()), u.end());
  return u;
}

// Position of each value in the sorted dictionary (every value must be in it).
template <class T>
std::vector<std::uint32_t> ids_in(const std::vector<T>& dict, const std::vector<T>& values) {
  std::vector<std::uint32_t> ids(values.size());
  for (std::size_t i = 0; i < values.size(); ++i)
    ids[i] = static_cast<std::uint32_t>(std::lower_bound(dict.begin(), dict.end(), values[i]) - dict.begin());
  return ids;
}

// Step 1b.
template <class T>
DictMerge<T> dict_merge(const std::vector<T>& um, const std::vector<T>& ud) {
  DictMerge<T> m;
  std::set_union(um.begin(), um.end(), ud.begin(), ud.end(), std::back_inserter(m.dict));
  m.x_m = ids_in(m.dict, um);
  m.x_d = ids_in(m.dict, ud);
  return m;
}

template <class T>
std::string check_sorted_distinct(const std::vector<T>& v, const char* what) {
  for (std::size_t i = 1; i < v.size(); ++i)
    if (!(v[i - 1] < v[i])) return std::string(what) + " is not strictly increasing at entry " + std::to_string(i);
  return {};
}

template <class T>
std::string check_equal_dict(const std::vector<T>& got, const std::vector<T>& want, const char* what) {
  if (got.size() != want.size())
    return std::string(what) + " has " + std::to_string(got.size()) + " entries, expected " +
           std::to_string(want.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) return std::string(what) + " differs at entry " + std::to_string(i);
  return {};
}

// dict[ids[i]] == values[i] for every i.
template <class T>
std::string check_ids(const std::vector<T>& dict, const std::vector<T>& values, const std::vector<std::uint32_t>& ids,
                      const char* what) {
  if (ids.size() != values.size())
    return std::string(what) + " has " + std::to_string(ids.size()) + " entries, expected " +
           std::to_string(values.size());
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= dict.size() || dict[ids[i]] != values[i])
      return std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(ids[i]) + " names the wrong value";
  return {};
}

// The new main decodes, row by row, to the old main's values followed by the delta's, at the
// minimal width for its dictionary.
template <class T>
std::string check_new_main(const MergeInput<T>& in, const std::vector<T>& dict, const BitPacked& codes) {
  std::uint64_t nm = in.main_rows(), n = nm + in.delta_rows();
  if (codes.size != n) return "new main has " + std::to_string(codes.size) + " rows, expected " + std::to_string(n);
  if (codes.width != code_width(dict.size()))
    return "new main is " + std::to_string(codes.width) + " bits wide, minimal is " +
           std::to_string(code_width(dict.size()));
  if (codes.words.size() < BitPacked::words_for(n, codes.width)) return "new main has too few words";
  for (std::uint64_t r = 0; r < n; ++r) {
    std::uint32_t id = codes.get(r);
    const T& want = r < nm ? in.main_dict[in.main_codes.get(r)] : in.delta[r - nm];
    if (id >= dict.size() || dict[id] != want)
      return "row " + std::to_string(r) + (r < nm ? " (main)" : " (delta)") + " decodes to a different value";
  }
  return {};
}

}  // namespace hdb::ref
