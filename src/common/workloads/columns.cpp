#include "workloads/columns.hpp"

#include <algorithm>
#include <cmath>

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"

namespace hdb {

const char* to_string(ValueType t) {
  switch (t) {
    case ValueType::U32: return "u32";
    case ValueType::U64: return "u64";
    case ValueType::U128: return "u128";
    case ValueType::Str: return "str";
  }
  return "?";
}

ValueType parse_value_type(const std::string& text) {
  if (text == "u32" || text == "4") return ValueType::U32;
  if (text == "u64" || text == "8") return ValueType::U64;
  if (text == "u128" || text == "16") return ValueType::U128;
  if (text == "str" || text == "string") return ValueType::Str;
  throw UsageError("unknown value type '" + text + "' (expected u32, u64, u128 or str)");
}

unsigned code_width(std::uint64_t n) {
  if (n <= 1) return 0;
  unsigned w = 0;
  while ((std::uint64_t{1} << w) < n) ++w;
  return w;
}

ColumnSpec column_spec(std::uint64_t main_rows, std::uint64_t delta_rows, double f) {
  ColumnSpec s;
  s.main_rows = main_rows;
  s.delta_rows = delta_rows;
  s.main_distinct =
      main_rows ? std::clamp<std::uint64_t>(std::llround(f * static_cast<double>(main_rows)), 1, main_rows) : 0;
  s.delta_new = f;
  return s;
}

// lowbias32: an invertible 32-bit mix, so distinct indices give distinct values.
std::uint32_t universe_u32(std::uint64_t i) {
  auto x = static_cast<std::uint32_t>(i);
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}
std::uint64_t universe_u64(std::uint64_t i) { return splitmix64(i); }
// Only 32 bits of `hi` vary, so many values tie on hi and the comparison must reach `lo`.
U128 universe_u128(std::uint64_t i) { return {splitmix64(i) >> 32, splitmix64(i ^ 0x5851f42d4c957f2dull)}; }
std::string universe_str(std::uint64_t i) {
  if (i == 0) return {};
  // The prefix class is i % 4 and the digits are a bijection of i: distinct for distinct i.
  static const char* const prefixes[] = {"", "a", "customer-", "customer-order-"};
  std::uint64_t h = splitmix64(i);
  return std::string(prefixes[i % 4]) + std::to_string(h);
}

namespace {

template <class T>
T universe_at(std::uint64_t i) {
  if constexpr (std::is_same_v<T, std::uint32_t>)
    return universe_u32(i);
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return universe_u64(i);
  else
    return universe_u128(i);
}

// Delta row j holds a new value (index main_distinct + j) with probability delta_new, else an
// existing one drawn uniformly from U_M.
std::vector<std::uint64_t> delta_indices(const ColumnSpec& s, std::uint64_t seed, int threads) {
  std::vector<std::uint64_t> idx(s.delta_rows);
  parallel_for(s.delta_rows, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t j = b; j < e; ++j) {
      bool fresh = s.main_distinct == 0 || uniform01(rand_at(seed + 1, j)) < s.delta_new;
      idx[j] = fresh ? s.main_distinct + j : bounded(rand_at(seed + 2, j), s.main_distinct);
    }
  });
  return idx;
}

void fill_codes(BitPacked& codes, const ColumnSpec& s, std::uint64_t seed, int threads) {
  codes.resize(s.main_rows, code_width(s.main_distinct));
  // Rows in blocks of 64 start on a word boundary, so threads never share a word.
  std::uint64_t blocks = (s.main_rows + 63) / 64;
  parallel_for(blocks, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t r = b * 64; r < std::min(e * 64, s.main_rows); ++r)
      codes.set(r, static_cast<std::uint32_t>(bounded(rand_at(seed, r), s.main_distinct)));
  });
}

}  // namespace

template <class T>
MergeInput<T> generate_column(const ColumnSpec& s0, std::uint64_t seed, int threads) {
  ColumnSpec s = s0;
  s.main_distinct = s.main_rows ? std::clamp<std::uint64_t>(s.main_distinct, 1, s.main_rows) : 0;
  if (s.main_distinct > 0xffffffffull || s.main_distinct + s.delta_rows > 0xffffffffull)
    throw SkipCase("more than 2^32 distinct values: ids are 32-bit");
  MergeInput<T> in;
  std::vector<std::uint64_t> didx = delta_indices(s, seed, threads);
  if constexpr (std::is_same_v<T, std::string_view>) {
    // All strings the column can hold go into one arena first; views are taken once it is final.
    auto arena = std::make_shared<std::string>();
    std::vector<std::uint64_t> off(s.main_distinct + s.delta_rows + 1, 0);
    for (std::uint64_t k = 0; k + 1 < off.size(); ++k) {
      bool used = k < s.main_distinct || didx[k - s.main_distinct] == k;
      if (used) *arena += universe_str(k);
      off[k + 1] = arena->size();
    }
    auto view = [&](std::uint64_t k) { return std::string_view(arena->data() + off[k], off[k + 1] - off[k]); };
    in.main_dict.resize(s.main_distinct);
    for (std::uint64_t k = 0; k < s.main_distinct; ++k) in.main_dict[k] = view(k);
    in.delta.resize(s.delta_rows);
    for (std::uint64_t j = 0; j < s.delta_rows; ++j) in.delta[j] = view(didx[j]);
    in.arena = arena;
  } else {
    in.main_dict.resize(s.main_distinct);
    parallel_for(s.main_distinct, threads, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t k = b; k < e; ++k) in.main_dict[k] = universe_at<T>(k);
    });
    in.delta.resize(s.delta_rows);
    parallel_for(s.delta_rows, threads, [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t j = b; j < e; ++j) in.delta[j] = universe_at<T>(didx[j]);
    });
  }
  std::sort(in.main_dict.begin(), in.main_dict.end());
  fill_codes(in.main_codes, s, seed, threads);
  return in;
}

template <class T>
MergeInput<T> make_column(const std::vector<T>& main_values, std::vector<T> delta) {
  MergeInput<T> in;
  in.main_dict = main_values;
  std::sort(in.main_dict.begin(), in.main_dict.end());
  in.main_dict.erase(std::unique(in.main_dict.begin(), in.main_dict.end()), in.main_dict.end());
  in.main_codes.resize(main_values.size(), code_width(in.main_dict.size()));
  for (std::uint64_t r = 0; r < main_values.size(); ++r)
    in.main_codes.set(
        r, static_cast<std::uint32_t>(std::lower_bound(in.main_dict.begin(), in.main_dict.end(), main_values[r]) -
                                      in.main_dict.begin()));
  in.delta = std::move(delta);
  return in;
}

#define HDB_COLUMN_TYPES(X) X(std::uint32_t) X(std::uint64_t) X(U128) X(std::string_view)
#define HDB_INSTANTIATE(T)                                                          \
  template MergeInput<T> generate_column<T>(const ColumnSpec&, std::uint64_t, int); \
  template MergeInput<T> make_column<T>(const std::vector<T>&, std::vector<T>);
HDB_COLUMN_TYPES(HDB_INSTANTIATE)
#undef HDB_INSTANTIATE

}  // namespace hdb
