#pragma once
// String columns for the device backends' string merge (sort on 7-byte chunks with a length count,
// tie-break rounds, comparisons falling back to the bytes): random strings of mixed lengths, long
// shared prefixes that differ only after one, two or many chunks, lengths around the chunk
// borders (6..9, 13..16), empty strings, long strings (hundreds of bytes), zero and 0xFF bytes
// (a string and the same string with a trailing zero byte are different values), all-equal
// columns, one element, empty delta, empty main.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/columns.hpp"
#include "workloads/random.hpp"

namespace hdb::test {

struct NamedStrings {
  std::string name;
  MergeInput<std::string_view> in;
  std::shared_ptr<std::vector<std::string>> store;  // the characters the views point into
};

inline std::vector<NamedStrings> string_inputs() {
  std::vector<NamedStrings> out;
  // main values and delta values; the views point into `store`, kept with the column.
  auto add = [&](std::string name, std::vector<std::string> main, std::vector<std::string> delta) {
    auto store = std::make_shared<std::vector<std::string>>();
    store->reserve(main.size() + delta.size());
    std::vector<std::string_view> m, d;
    for (auto& s : main) m.push_back(store->emplace_back(std::move(s)));
    for (auto& s : delta) d.push_back(store->emplace_back(std::move(s)));
    out.push_back({std::move(name), make_column<std::string_view>(m, d), store});
  };
  // A random string: a prefix from `prefixes`, then `len` random bytes from `alphabet`.
  auto random_string = [](std::uint64_t seed, std::uint64_t i, const std::vector<std::string>& prefixes,
                          std::uint64_t max_len, const std::string& alphabet) {
    std::uint64_t r = rand_at(seed, i);
    std::string s = prefixes[r % prefixes.size()];
    std::uint64_t len = (r >> 8) % (max_len + 1);
    for (std::uint64_t c = 0; c < len; ++c) s += alphabet[rand_at(seed + 1, i * 1000 + c) % alphabet.size()];
    return s;
  };
  auto many = [&](std::uint64_t seed, std::uint64_t n, const std::vector<std::string>& prefixes, std::uint64_t max_len,
                  const std::string& alphabet) {
    std::vector<std::string> v;
    for (std::uint64_t i = 0; i < n; ++i) v.push_back(random_string(seed, i, prefixes, max_len, alphabet));
    return v;
  };
  const std::string lower = "abcdefghijklmnopqrstuvwxyz", ab = "ab";
  std::string binary;
  for (int c = 0; c < 256; c += 51) binary += static_cast<char>(c);  // 0x00, 0x33, ... 0xFF
  binary += '\0';
  const std::string long_prefix(300, 'q');
  const std::vector<std::string> none{""}, shared{"", "a", "customer-", "customer-order-", "customer-order-0000000"};

  // Mixed lengths 0..40 over a 2-letter alphabet: many equal strings and long common prefixes.
  add("random_mixed_lengths", many(1, 3000, shared, 40, ab), many(2, 1500, shared, 40, ab));
  add("random_lowercase", many(3, 2000, none, 20, lower), many(4, 2500, none, 20, lower));
  add("random_binary_bytes", many(5, 800, {"", std::string(1, '\0'), "\xff"}, 17, binary),
      many(6, 900, {"", std::string(1, '\0'), "\xff"}, 17, binary));
  // Long strings: 300 equal bytes before anything differs (43 chunks of ties), some of them equal.
  add("long_shared_prefix", many(7, 300, {long_prefix}, 30, ab), many(8, 200, {long_prefix, ""}, 30, ab));
  add("long_strings", many(9, 200, none, 600, lower), many(10, 150, {"", long_prefix}, 600, ab));
  // Lengths around the chunk borders, differing in the last byte or only in length / trailing zeros.
  std::vector<std::string> border;
  for (std::size_t len : {0, 1, 6, 7, 8, 9, 13, 14, 15, 16, 21, 22})
    for (char last : {'\0', 'a', 'b', '\xff'}) {
      border.push_back(std::string(len, 'x') + last);
      border.push_back(std::string(len, 'x'));
      border.push_back(std::string(len, 'x') + std::string(2, '\0'));
    }
  add("chunk_borders", border, std::vector<std::string>(border.rbegin(), border.rend()));
  add("chunk_borders_delta_only", {}, border);
  add("all_equal_long", std::vector<std::string>(50, long_prefix + "z"),
      std::vector<std::string>(700, long_prefix + "z"));
  add("all_equal_empty", std::vector<std::string>(10, ""), std::vector<std::string>(333, ""));
  add("all_equal_short", {"k"}, std::vector<std::string>(64, "k"));
  add("one_element", {"customer-order-17"}, {"customer-order-17x"});
  add("one_delta_row_empty_main", {}, {long_prefix});
  add("empty_delta", many(11, 500, shared, 30, ab), {});
  add("empty_main", {}, many(12, 700, shared, 30, ab));
  add("both_empty", {}, {});
  return out;
}

}  // namespace hdb::test
