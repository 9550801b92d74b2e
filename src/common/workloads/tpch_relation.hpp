#pragma once
// Column-store relations of 32-bit attributes, as every tpch backend sees them. TPC-H values are
// mapped to integers at load (dates as days since 1970-01-01, money in cents, discounts in
// hundredths, strings as dictionary codes); the type tag only decides how a value is printed.
// Key columns may be 64-bit ("wide"): two word vectors, the low words in `v` (where a 32-bit
// column keeps its values, so code on 32-bit columns is unchanged) and the high words in `hi`.
#include <cstdint>
#include <string>
#include <vector>

#include "workloads/calendar.hpp"

namespace hdb::tpch {

enum class ColType : std::uint8_t { Int, Date, Money, Hundredths, Segment };

struct ColumnInfo {
  std::string name;
  ColType type = ColType::Int;
  bool wide = false;  // 64-bit values (keys at --key-bits 64, or loaded keys that reach 2^32)
  int words() const { return wide ? 2 : 1; }
};

struct Column {
  ColumnInfo info;
  std::vector<std::uint32_t> v;        // the values; of a wide column the low words
  std::vector<std::uint32_t> hi = {};  // a wide column's high words (as many as v); empty otherwise
  std::uint64_t at(std::uint64_t i) const { return info.wide ? (std::uint64_t{hi[i]} << 32) | v[i] : v[i]; }
  void set(std::uint64_t i, std::uint64_t x) {
    v[i] = static_cast<std::uint32_t>(x);
    if (info.wide) hi[i] = static_cast<std::uint32_t>(x >> 32);
  }
  void push_back(std::uint64_t x) {
    v.push_back(static_cast<std::uint32_t>(x));
    if (info.wide) hi.push_back(static_cast<std::uint32_t>(x >> 32));
  }
};
// A relation held as word columns (the columnar engines): a 32-bit column is one word column, a
// wide one two, its low words then its high words.
struct WordLayout {
  std::vector<int> first;  // column -> its first word column
  std::vector<bool> wide;
  int total = 0;  // word columns in all
  int lo_word(int col) const { return first[static_cast<std::size_t>(col)]; }
  // -1 for a 32-bit column.
  int hi_word(int col) const {
    return wide[static_cast<std::size_t>(col)] ? first[static_cast<std::size_t>(col)] + 1 : -1;
  }
};
WordLayout word_layout(const std::vector<ColumnInfo>& schema);

// The column as 64-bit values: wide, every value mapped through `map` (identity: the same values).
Column widened(const Column& c, std::uint64_t (*map)(std::uint64_t) = nullptr);
// The largest value of the column (0 when empty).
std::uint64_t max_value(const Column& c);

struct Relation {
  std::string name;
  std::vector<Column> cols;
  std::uint64_t rows() const { return cols.empty() ? 0 : cols[0].v.size(); }
  std::uint64_t bytes() const;  // 4 bytes per value of a 32-bit column, 8 of a wide one
  std::vector<ColumnInfo> schema() const;
  // Index of the column called `name`; throws std::out_of_range naming it when absent.
  int index(const std::string& name) const;
};

// Days since 1970-01-01 of a proleptic Gregorian date, and back (workloads/calendar.hpp).
using hdb::civil_from_days;
using hdb::days_from_civil;
// "1995-03-15" for day number 9204.
std::string format_date(std::uint32_t days);

// The TPC-H market segments (specification 4.2.2.13), sorted: the code of a segment is its index.
const std::vector<std::string>& market_segments();
// Code of a segment name, or -1.
int segment_code(const std::string& name);

// One value as text for the pipe-separated output (12.34 for money, 0.05 for hundredths, ...).
std::string format_value(ColType t, std::uint64_t v);

// Order-independent checksum: the sum over rows of a hash of the row's values, so that any
// order of the same multiset of rows gives the same figure. A wide column's value is hashed as one
// 64-bit number (a 32-bit value hashes as before), so losing a high word changes the checksum.
std::uint64_t row_hash(const std::uint32_t* values, std::size_t count);
std::uint64_t checksum(const Relation& r, int threads = 1);

// Writes the rows pipe-separated (one row per line, no trailing '|'); throws UsageError when the
// file cannot be written.
void write_rows(const Relation& r, const std::string& path);

}  // namespace hdb::tpch
