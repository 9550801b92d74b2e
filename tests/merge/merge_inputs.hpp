#pragma once
// Edge-case columns for the merge tests, for every value type: empty delta/main, delta values all
// already in U_M or all new, one distinct value, dictionaries just below/at/above a power of two
// (the width changes), ids straddling 64-bit words at many widths, maximum values, strings with
// shared prefixes and the empty string, and generated columns.
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "workloads/columns.hpp"
#include "workloads/random.hpp"

namespace hdb::test {

template <class T>
T value_at(std::uint64_t i) {
  if constexpr (std::is_same_v<T, std::uint32_t>)
    return universe_u32(i);
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return universe_u64(i);
  else if constexpr (std::is_same_v<T, U128>)
    return universe_u128(i);
  else {
    static std::deque<std::string> pool;  // views stay valid for the whole test program
    pool.push_back(universe_str(i));
    return pool.back();
  }
}

template <class T>
std::vector<T> values(const std::vector<std::uint64_t>& idx) {
  std::vector<T> v;
  for (auto i : idx) v.push_back(value_at<T>(i));
  return v;
}

// rows indices: row r holds index base + (r * 7919 + salt) % distinct, every index used when
// rows >= distinct (7919 is prime).
inline std::vector<std::uint64_t> spread(std::uint64_t rows, std::uint64_t distinct, std::uint64_t base = 0,
                                         std::uint64_t salt = 0) {
  std::vector<std::uint64_t> v(rows);
  for (std::uint64_t r = 0; r < rows; ++r) v[r] = base + (r < distinct ? r : (r * 7919 + salt) % distinct);
  return v;
}

template <class T>
struct NamedInput {
  std::string name;
  MergeInput<T> in;
};

template <class T>
std::vector<NamedInput<T>> edge_inputs() {
  std::vector<NamedInput<T>> out;
  auto add = [&](std::string name, std::vector<std::uint64_t> m, std::vector<std::uint64_t> d) {
    out.push_back({std::move(name), make_column<T>(values<T>(m), values<T>(d))});
  };
  add("both_empty", {}, {});
  add("empty_delta", spread(1000, 37), {});
  add("empty_main", {}, spread(500, 60, 0, 3));
  add("one_row_each", {5}, {9});
  add("delta_all_in_main", spread(2000, 100), spread(300, 100, 0, 11));
  add("delta_all_new", spread(1000, 50), spread(200, 150, 50, 5));
  add("one_distinct", std::vector<std::uint64_t>(100, 7), std::vector<std::uint64_t>(50, 7));
  add("one_distinct_plus_one", std::vector<std::uint64_t>(100, 7), {8});
  for (std::uint64_t k : {5, 12}) {
    std::uint64_t p = std::uint64_t{1} << k;
    for (std::uint64_t extra : {0, 1, 2})  // |U'_M| = 2^k - 1, 2^k, 2^k + 1
      add("pow2_" + std::to_string(k) + "_plus_" + std::to_string(extra), spread(p - 1 + 13, p - 1),
          spread(40, extra ? extra : 1, extra ? p - 1 : 0, 1));
  }
  for (std::uint64_t dict : {5, 20, 100, 2000, 70000})  // widths 3, 5, 7, 11, 17
    add("straddle_" + std::to_string(dict), spread(dict + 61, dict), spread(dict / 8 + 7, dict / 4 + 9, dict / 2, 2));
  if constexpr (!std::is_same_v<T, std::string_view>) {
    T mx{}, mx1{};
    if constexpr (std::is_same_v<T, U128>) {
      mx = {~0ull, ~0ull};
      mx1 = {~0ull, ~0ull - 1};
    } else {
      mx = std::numeric_limits<T>::max();
      mx1 = mx - 1;
    }
    out.push_back({"max_values", make_column<T>({T{}, mx, mx1, mx, T{}}, {mx, T{}, mx1, mx, value_at<T>(3)})});
  } else {
    static const std::vector<std::string> strs = {"",
                                                  "a",
                                                  "ab",
                                                  "abc",
                                                  "abd",
                                                  "b",
                                                  "customer-1",
                                                  "customer-10",
                                                  "customer-2",
                                                  "abcd",
                                                  "customer-",
                                                  "zz",
                                                  "customer-order-1"};
    auto sv = [&](std::vector<int> ids) {
      std::vector<std::string_view> v;
      for (int i : ids) v.push_back(strs[static_cast<std::size_t>(i)]);
      return v;
    };
    out.push_back(
        {"shared_prefixes", make_column<T>(sv({0, 1, 2, 3, 4, 5, 6, 7, 8, 3, 0}), sv({0, 3, 9, 10, 11, 1, 12, 12}))});
    out.push_back({"only_empty_strings", make_column<T>(sv({0, 0, 0}), sv({0}))});
  }
  for (double fresh : {0.0, 0.3, 1.0}) {
    ColumnSpec s{6000 + 17, 700, 900, fresh};
    out.push_back({"generated_new_" + std::to_string(static_cast<int>(fresh * 100)), generate_column<T>(s, 7, 2)});
  }
  return out;
}

}  // namespace hdb::test
