#pragma once
// The column model of the delta merge: a main partition (sorted dictionary of distinct values plus
// bit-packed value ids, ids straddling 64-bit words) and a delta partition (values in insert order,
// uncompressed). Value types: 4, 8 and 16-byte integers and variable-length strings (views into an
// arena owned by the column). Generation is seeded and identical on every backend.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace hdb {

// A 16-byte integer compared as (hi, lo); on devices it is the pair of 64-bit words (ulong2 in OpenCL).
struct U128 {
  std::uint64_t hi = 0, lo = 0;
  friend constexpr bool operator<(const U128& a, const U128& b) { return a.hi < b.hi || (a.hi == b.hi && a.lo < b.lo); }
  friend constexpr bool operator==(const U128& a, const U128& b) { return a.hi == b.hi && a.lo == b.lo; }
  friend constexpr bool operator!=(const U128& a, const U128& b) { return !(a == b); }
};

enum class ValueType { U32, U64, U128, Str };
const char* to_string(ValueType t);                   // "u32", "u64", "u128", "str"
ValueType parse_value_type(const std::string& text);  // also "4", "8", "16"; UsageError otherwise

template <class T>
struct ValueTypeOf;
template <>
struct ValueTypeOf<std::uint32_t> {
  static constexpr ValueType value = ValueType::U32;
};
template <>
struct ValueTypeOf<std::uint64_t> {
  static constexpr ValueType value = ValueType::U64;
};
template <>
struct ValueTypeOf<U128> {
  static constexpr ValueType value = ValueType::U128;
};
template <>
struct ValueTypeOf<std::string_view> {
  static constexpr ValueType value = ValueType::Str;
};

// Bytes a value occupies uncompressed (strings: their characters).
inline std::uint64_t value_bytes(std::uint32_t) { return 4; }
inline std::uint64_t value_bytes(std::uint64_t) { return 8; }
inline std::uint64_t value_bytes(const U128&) { return 16; }
inline std::uint64_t value_bytes(std::string_view s) { return s.size(); }
template <class T>
std::uint64_t total_bytes(const std::vector<T>& v) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    std::uint64_t b = 0;
    for (auto s : v) b += s.size();
    return b;
  } else {
    return v.size() * sizeof(T);
  }
}

// Bits needed for ids of a dictionary of n entries: ceil(log2(n)), 0 for n <= 1.
unsigned code_width(std::uint64_t n);

#if defined(__CUDACC__)
#define HDB_HOST_DEVICE __host__ __device__
#else
#define HDB_HOST_DEVICE
#endif

// Id i of `width` bits from packed words; shared by host code and CUDA kernels.
HDB_HOST_DEVICE inline std::uint32_t unpack_bits(const std::uint64_t* w, unsigned width, std::uint64_t i) {
  if (width == 0) return 0;
  std::uint64_t bit = i * width, word = bit >> 6;
  unsigned off = static_cast<unsigned>(bit & 63);
  std::uint64_t v = w[word] >> off;
  if (off + width > 64) v |= w[word + 1] << (64 - off);
  return static_cast<std::uint32_t>(v & ((std::uint64_t{1} << width) - 1));
}

// Ids of `width` bits (0..32), id i at bits [i*width, i*width+width) of little-endian 64-bit words,
// so an id may straddle two words.
struct BitPacked {
  unsigned width = 0;
  std::uint64_t size = 0;
  std::vector<std::uint64_t> words;

  static std::uint64_t words_for(std::uint64_t n, unsigned width) { return (n * width + 63) / 64; }
  void resize(std::uint64_t n, unsigned w) {
    width = w;
    size = n;
    words.assign(words_for(n, w), 0);
  }
  std::uint32_t get(std::uint64_t i) const { return unpack_bits(words.data(), width, i); }
  // ORs id v into a zeroed slot (set-up and tests; writers on the hot path stream whole words).
  void set(std::uint64_t i, std::uint32_t v) {
    if (width == 0) return;
    std::uint64_t bit = i * width, word = bit >> 6;
    unsigned off = static_cast<unsigned>(bit & 63);
    words[word] |= std::uint64_t{v} << off;
    if (off + width > 64) words[word + 1] |= std::uint64_t{v} >> (64 - off);
  }
};

template <class T>
struct MergeInput {
  std::vector<T> main_dict;                  // U_M: sorted, distinct
  BitPacked main_codes;                      // |M| ids into U_M at width code_width(|U_M|)
  std::vector<T> delta;                      // D: values in insert order
  std::shared_ptr<const std::string> arena;  // characters the string views point into (strings only)
  std::uint64_t main_rows() const { return main_codes.size; }
  std::uint64_t delta_rows() const { return delta.size(); }
};

// What a generated column looks like.
struct ColumnSpec {
  std::uint64_t main_rows = 0;
  std::uint64_t delta_rows = 0;
  std::uint64_t main_distinct = 1;  // |U_M| (clamped to main_rows; 0 when main is empty)
  double delta_new = 0.01;          // fraction of delta rows holding a value not yet in the column
};
// The paper's "fraction of unique values" f: |U_M| = f*|M| and a fraction f of delta rows new.
ColumnSpec column_spec(std::uint64_t main_rows, std::uint64_t delta_rows, double unique_fraction);

// The value with index i of the scrambled universe of each type (distinct for distinct i; order
// unrelated to i). Strings share prefixes, index 0 is the empty string.
std::uint32_t universe_u32(std::uint64_t i);
std::uint64_t universe_u64(std::uint64_t i);
U128 universe_u128(std::uint64_t i);
std::string universe_str(std::uint64_t i);

template <class T>
MergeInput<T> generate_column(const ColumnSpec& spec, std::uint64_t seed, int threads);

// Builds a main partition from explicit values (tests): sorted distinct dictionary + packed ids.
template <class T>
MergeInput<T> make_column(const std::vector<T>& main_values, std::vector<T> delta);

}  // namespace hdb
