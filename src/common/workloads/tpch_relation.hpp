#pragma once
// Column-store relations of 32-bit attributes, as every tpch backend sees them. TPC-H values are
// mapped to integers at load (dates as days since 1970-01-01, money in cents, discounts in
// hundredths, strings as dictionary codes); the type tag only decides how a value is printed.
#include <cstdint>
#include <string>
#include <vector>

namespace hdb::tpch {

enum class ColType : std::uint8_t { Int, Date, Money, Hundredths, Segment };

struct ColumnInfo {
  std::string name;
  ColType type = ColType::Int;
};

struct Column {
  ColumnInfo info;
  std::vector<std::uint32_t> v;
};

struct Relation {
  std::string name;
  std::vector<Column> cols;
  std::uint64_t rows() const { return cols.empty() ? 0 : cols[0].v.size(); }
  std::uint64_t bytes() const { return rows() * cols.size() * sizeof(std::uint32_t); }
  std::vector<ColumnInfo> schema() const;
  // Index of the column called `name`; throws std::out_of_range naming it when absent.
  int index(const std::string& name) const;
};

// Days since 1970-01-01 of a proleptic Gregorian date, and back.
std::int64_t days_from_civil(int y, int m, int d);
void civil_from_days(std::int64_t days, int& y, int& m, int& d);
// "1995-03-15" for day number 9204.
std::string format_date(std::uint32_t days);

// The TPC-H market segments (specification 4.2.2.13), sorted: the code of a segment is its index.
const std::vector<std::string>& market_segments();
// Code of a segment name, or -1.
int segment_code(const std::string& name);

// One value as text for the pipe-separated output (12.34 for money, 0.05 for hundredths, ...).
std::string format_value(ColType t, std::uint32_t v);

// Order-independent checksum: the sum over rows of a hash of the row's values, so that any
// order of the same multiset of rows gives the same figure.
std::uint64_t row_hash(const std::uint32_t* values, std::size_t count);
std::uint64_t checksum(const Relation& r, int threads = 1);

// Writes the rows pipe-separated (one row per line, no trailing '|'); throws UsageError when the
// file cannot be written.
void write_rows(const Relation& r, const std::string& path);

}  // namespace hdb::tpch
