// Loader for dbgen's .tbl files: one row per line, fields separated by '|', with a trailing '|'.
// Only the columns the micro-kernels use are converted; every error names file, line and column.
// Keys are whole numbers up to 2^64 - 1: a key column whose values reach 2^32 is loaded wide (64-bit).
// Each file is read in chunks of 1 MiB (never whole): memory is the kept columns plus one chunk
// (or the longest line, when a line is longer than a chunk).
#include <algorithm>
#include <limits>

#include "harness/errors.hpp"
#include "workloads/column_files.hpp"
#include "workloads/tbl_io.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {
namespace {

using tbl::Decimal;
using tbl::FieldError;
using tbl::parse_decimal;

enum class Parse { Key, Integer, Money, Hundredths, Date, Segment };

struct Wanted {
  int field;  // 0-based position in the .tbl line
  const char* name;
  Parse parse;
  ColType type;
};

struct TableFormat {
  const char* file;
  const char* relation;
  int fields;
  std::vector<Wanted> wanted;
  bool keyed;  // wanted[0] is the table's key: unique (tbl::find_duplicate)
};

// customer, orders, lineitem: field positions from the specification's table layouts (clause 1.4.1).
const std::vector<TableFormat>& formats() {
  static const std::vector<TableFormat> f{
      {"customer.tbl",
       "customer",
       8,
       {{0, "c_custkey", Parse::Key, ColType::Int}, {6, "c_mktsegment", Parse::Segment, ColType::Segment}},
       true},
      {"orders.tbl",
       "orders",
       9,
       {{0, "o_orderkey", Parse::Key, ColType::Int},
        {1, "o_custkey", Parse::Key, ColType::Int},
        {4, "o_orderdate", Parse::Date, ColType::Date},
        {7, "o_shippriority", Parse::Integer, ColType::Int}},
       true},
      {"lineitem.tbl",
       "lineitem",
       16,
       {{0, "l_orderkey", Parse::Key, ColType::Int},
        {4, "l_quantity", Parse::Integer, ColType::Int},
        {5, "l_extendedprice", Parse::Money, ColType::Money},
        {6, "l_discount", Parse::Hundredths, ColType::Hundredths},
        {10, "l_shipdate", Parse::Date, ColType::Date}},
       false},
  };
  return f;
}

// A field's value: 32 bits for every column but keys, which may take 64 (the column becomes wide).
std::uint64_t convert(const Wanted& w, const char* s, const char* e, const FieldError& err) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  switch (w.parse) {
    case Parse::Integer: return tbl::whole_u32(s, e, err);
    case Parse::Key: {
      Decimal d = parse_decimal(s, e);
      switch (d.error) {
        case Decimal::Ok:
        case Decimal::TooLarge: break;
        case Decimal::Empty: err.fail("is empty, expected a non-negative number");
        case Decimal::NotNumber: err.fail("is not a non-negative number");
        case Decimal::Negative: err.fail("is negative: keys are non-negative 64-bit numbers");
        case Decimal::FinerThanHundredths: err.fail("is not a whole number");
      }
      if (d.hundredths % 100) err.fail("is not a whole number");
      std::uint64_t x = 0;
      if (!tbl::whole_u64(s, e, x)) err.fail("does not fit 64 bits (at most 18446744073709551615)");
      return x;
    }
    case Parse::Money:
    case Parse::Hundredths: {
      Decimal d = parse_decimal(s, e);
      const char* unit = w.parse == Parse::Money ? "cents" : "hundredths";
      switch (d.error) {
        case Decimal::Ok: break;
        case Decimal::Empty: err.fail("is empty, expected a non-negative decimal number");
        case Decimal::NotNumber: err.fail("is not a non-negative decimal number");
        case Decimal::Negative: err.fail("is negative: the loader keeps non-negative values");
        case Decimal::FinerThanHundredths:
          err.fail("has " + std::to_string(d.decimals) + " decimal places: values are kept in " + unit +
                   ", so at most 2 non-zero decimals can be represented exactly");
        case Decimal::TooLarge: break;
      }
      if (d.error == Decimal::TooLarge || d.hundredths > kMax)
        err.fail(std::string("does not fit 32 bits in ") + unit + " (at most 42949672.95)");
      return static_cast<std::uint32_t>(d.hundredths);
    }
    case Parse::Date: {
      int y = 0, m = 0, d = 0;
      if (e - s != 10 || s[4] != '-' || s[7] != '-') err.fail("is not a date YYYY-MM-DD");
      for (int i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (s[i] < '0' || s[i] > '9') err.fail("is not a date YYYY-MM-DD");
      y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
      m = (s[5] - '0') * 10 + (s[6] - '0');
      d = (s[8] - '0') * 10 + (s[9] - '0');
      static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1] || y < 1970) err.fail("is not a valid date after 1970");
      std::int64_t days = days_from_civil(y, m, d);
      int yy, mm, dd;
      civil_from_days(days, yy, mm, dd);
      if (mm != m || dd != d) err.fail("is not a valid date");  // 29 February of a common year
      return static_cast<std::uint32_t>(days);
    }
    case Parse::Segment: {
      int code = e - s <= 16 ? segment_code(std::string(s, e)) : -1;
      if (code < 0) err.fail("is not a TPC-H market segment (AUTOMOBILE, BUILDING, FURNITURE, HOUSEHOLD, MACHINERY)");
      return static_cast<std::uint32_t>(code);
    }
  }
  err.fail("has an unknown column kind");
}

// Appends a value; a key that reaches 2^32 turns its column wide (the high words of the rows
// before it are zero), the first time it happens.
void append(Column& c, std::uint64_t x) {
  if (x > 0xffffffffull && !c.info.wide) {
    c.info.wide = true;
    c.hi.reserve(c.v.capacity());
    c.hi.assign(c.v.size(), 0u);
  }
  tbl::append(c.v, static_cast<std::uint32_t>(x));
  if (c.info.wide) tbl::append(c.hi, static_cast<std::uint32_t>(x >> 32));
}

Relation load_table(const std::string& dir, const TableFormat& fmt) {
  tbl::TblRows in(dir + "/" + fmt.file, fmt.fields, "(--tbl-dir needs customer.tbl, orders.tbl, lineitem.tbl)");
  Relation r;
  r.name = fmt.relation;
  for (const Wanted& w : fmt.wanted) r.cols.push_back({{w.name, w.type}, {}});
  // After the first kSample rows, room for the rows the whole file holds at their mean length
  // (+2 %), so the columns are not grown (and copied) many times.
  constexpr std::uint64_t kSample = 4096;
  while (in.next()) {
    for (std::size_t c = 0; c < fmt.wanted.size(); ++c) {
      const Wanted& w = fmt.wanted[c];
      append(r.cols[c], convert(w, in.begin(w.field), in.end(w.field), in.error(w.field, w.name)));
    }
    if (r.rows() == kSample) {
      if (const std::uint64_t rows = tbl::expected_rows(in, kSample)) {
        for (Column& c : r.cols) {
          c.v.reserve(rows);
          if (c.info.wide) c.hi.reserve(rows);
        }
      }
    }
  }
  if (r.rows() == 0)
    throw UsageError(in.path() +
                     ": no rows (the file is empty or holds only blank lines); every table needs at least one");
  if (fmt.keyed)
    if (const auto d = tbl::find_duplicate(r.cols[0].v, r.cols[0].hi))
      tbl::fail_duplicate(in.path(), fmt.fields, fmt.relation, fmt.wanted[0].name, *d);
  return r;
}

// One table from raw binary columns (workloads/column_files.hpp: the converter hands over keys and
// whole numbers as they are, money and fractions in hundredths, dates as days since 1970, strings as
// bytes), with the rules above on the values.
Relation load_column_table(const columns::ColumnDir& in, const TableFormat& fmt) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  Relation r;
  r.name = fmt.relation;
  for (const Wanted& w : fmt.wanted) {
    Column c{{w.name, w.type}, {}};
    if (w.parse == Parse::Segment) {
      const std::vector<std::string> v = in.strings(fmt.relation, w.name);
      c.v.reserve(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        const int code = v[i].size() <= 16 ? segment_code(v[i]) : -1;
        if (code < 0)
          in.fail(fmt.relation, w.name, i + 1, v[i],
                  "is not a TPC-H market segment (AUTOMOBILE, BUILDING, FURNITURE, HOUSEHOLD, MACHINERY)");
        c.v.push_back(static_cast<std::uint32_t>(code));
      }
    } else {
      const std::vector<std::uint64_t> v = in.numbers(fmt.relation, w.name);
      c.v.reserve(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (w.parse != Parse::Key && v[i] > kMax) {
          const char* what = w.parse == Parse::Money        ? "does not fit 32 bits in cents (at most 42949672.95)"
                             : w.parse == Parse::Hundredths ? "does not fit 32 bits in hundredths (at most 42949672.95)"
                             : w.parse == Parse::Date ? "is not a date the loader keeps (days since 1970 of 32 bits)"
                                                      : "does not fit 32 bits (at most 4294967295)";
          in.fail(fmt.relation, w.name, i + 1, std::to_string(v[i]), what);
        }
        append(c, v[i]);  // a key of 2^32 or more turns its column wide, as in the .tbl loader
      }
    }
    r.cols.push_back(std::move(c));
  }
  if (fmt.keyed)
    if (const auto d = tbl::find_duplicate(r.cols[0].v, r.cols[0].hi))
      in.fail(fmt.relation, fmt.wanted[0].name, d->second + 1, std::to_string(d->key),
              tbl::duplicate_what(fmt.relation, fmt.wanted[0].name, *d));
  return r;
}

// customer, orders and lineitem, each made by load_one(its format).
template <class LoadOne>
Tables load_each(const std::string& dir, LoadOne load_one) {
  const std::vector<TableFormat>& f = formats();
  Tables t;
  t.source = dir;
  t.customer = load_one(f[0]);
  t.orders = load_one(f[1]);
  t.lineitem = load_one(f[2]);
  return t;
}

}  // namespace

Tables load_column_tables(const std::string& dir) {
  const columns::ColumnDir in(dir, "tpch");
  return load_each(dir, [&in](const TableFormat& f) { return load_column_table(in, f); });
}

Tables load_tables(const std::string& dir) {
  return load_each(dir, [&dir](const TableFormat& f) { return load_table(dir, f); });
}

}  // namespace hdb::tpch
