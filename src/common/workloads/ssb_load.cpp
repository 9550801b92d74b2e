// Loader for ssb-dbgen's .tbl files (lineorder, date, customer, supplier, part), with the rules of
// the TPC-H loader (workloads/tbl_io.hpp): every error names file, line, column and column name.
// Only the columns the 13 queries read are kept; strings become the dictionary codes of
// workloads/ssb_tables.hpp (a string outside a dictionary is an error).
#include <filesystem>

#include "harness/errors.hpp"
#include "workloads/column_files.hpp"
#include "workloads/ssb_tables.hpp"
#include "workloads/tbl_io.hpp"

namespace hdb::ssb {
namespace {

enum class Parse { Key, Integer, Date, Region, Nation, City, Mfgr, Category, Brand, YearMonth };

struct Wanted {
  int field;  // 0-based position in the .tbl line
  Col col;
  Parse parse;
};

struct TableFormat {
  const char* file;
  int fields;
  std::vector<Wanted> wanted;
  bool keyed;  // wanted[0] is the table's key: unique (tbl::find_duplicate)
};

// ssb-dbgen's layouts (print.c: pr_line, pr_date, pr_cust, pr_supp, pr_part).
const std::vector<TableFormat>& formats() {
  static const std::vector<TableFormat> f{
      {"lineorder.tbl",
       17,
       {{2, Col::lo_custkey, Parse::Key},
        {3, Col::lo_partkey, Parse::Key},
        {4, Col::lo_suppkey, Parse::Key},
        {5, Col::lo_orderdate, Parse::Date},
        {8, Col::lo_quantity, Parse::Integer},
        {9, Col::lo_extendedprice, Parse::Integer},
        {11, Col::lo_discount, Parse::Integer},
        {12, Col::lo_revenue, Parse::Integer},
        {13, Col::lo_supplycost, Parse::Integer}},
       false},
      {"date.tbl",
       17,
       {{0, Col::d_datekey, Parse::Date},
        {4, Col::d_year, Parse::Integer},
        {5, Col::d_yearmonthnum, Parse::Integer},
        {6, Col::d_yearmonth, Parse::YearMonth},
        {11, Col::d_weeknuminyear, Parse::Integer}},
       true},
      {"customer.tbl",
       8,
       {{0, Col::c_custkey, Parse::Key},
        {3, Col::c_city, Parse::City},
        {4, Col::c_nation, Parse::Nation},
        {5, Col::c_region, Parse::Region}},
       true},
      {"supplier.tbl",
       7,
       {{0, Col::s_suppkey, Parse::Key},
        {3, Col::s_city, Parse::City},
        {4, Col::s_nation, Parse::Nation},
        {5, Col::s_region, Parse::Region}},
       true},
      {"part.tbl",
       9,
       {{0, Col::p_partkey, Parse::Key},
        {2, Col::p_mfgr, Parse::Mfgr},
        {3, Col::p_category, Parse::Category},
        {4, Col::p_brand1, Parse::Brand}},
       true},
  };
  return f;
}

std::uint32_t code(int c, const tbl::FieldError& err, const char* what) {
  if (c < 0) err.fail(std::string("is not ") + what);
  return static_cast<std::uint32_t>(c);
}

// A string column's dictionary code of v (-1 when v is none of its strings), and what it holds.
int dict_code(Parse p, std::string_view v) {
  switch (p) {
    case Parse::Region: return region_code(v);
    case Parse::Nation: return nation_code(v);
    case Parse::City: return city_code(v);
    case Parse::Mfgr: return mfgr_code(v);
    case Parse::Category: return category_code(v);
    case Parse::Brand: return brand_code(v);
    case Parse::YearMonth: return yearmonth_code(v);
    default: return -1;
  }
}
const char* dict_what(Parse p) {
  switch (p) {
    case Parse::Region: return "an SSB region (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)";
    case Parse::Nation: return "an SSB nation (ALGERIA ... UNITED STATES)";
    case Parse::City: return "an SSB city (a nation's first 9 characters, padded, then a digit)";
    case Parse::Mfgr: return "an SSB manufacturer (MFGR#1 .. MFGR#5)";
    case Parse::Category: return "an SSB category (MFGR#11 .. MFGR#55)";
    case Parse::Brand: return "an SSB brand (MFGR#111 .. MFGR#5540)";
    case Parse::YearMonth: return "an SSB year and month (Jan1992 .. Dec1998)";
    default: return "";
  }
}
bool is_string(Parse p) { return p != Parse::Key && p != Parse::Integer && p != Parse::Date; }
// valid_datekey's range (workloads/ssb_tables.hpp), stated: 21000101 is a date, but not one kept here.
constexpr const char* kNotADate = "is not a date yyyymmdd of the years 1900..2099";
constexpr const char* kKeyTooLarge = ": keys of 2^32 or more are refused (SSB keys are 32-bit here)";

std::uint32_t convert(Parse p, const char* s, const char* e, const tbl::FieldError& err) {
  switch (p) {
    case Parse::Key: return tbl::whole_u32(s, e, err, "keys are non-negative numbers", kKeyTooLarge);
    case Parse::Integer: return tbl::whole_u32(s, e, err);
    case Parse::Date: {
      const std::uint32_t k = tbl::whole_u32(s, e, err);
      if (e - s != 8 || !valid_datekey(k)) err.fail(kNotADate);
      return k;
    }
    default: return code(dict_code(p, std::string_view(s, static_cast<std::size_t>(e - s))), err, dict_what(p));
  }
}

// The table of a .tbl file's name: "lineorder.tbl" -> "lineorder".
std::string table_of_file(const char* file) {
  const std::string f(file);
  return f.substr(0, f.size() - 4);
}

// One table from raw binary columns (workloads/column_files.hpp), with the rules above on the values.
void load_column_table(const columns::ColumnDir& in, const TableFormat& fmt, Tables& t) {
  const std::string table = table_of_file(fmt.file);
  for (const Wanted& w : fmt.wanted) {
    const char* name = col_name(w.col);
    Column& out = t[w.col];
    out.clear();
    if (is_string(w.parse)) {
      const std::vector<std::string> v = in.strings(table, name);
      out.reserve(v.size());
      for (std::size_t i = 0; i < v.size(); ++i) {
        const int c = dict_code(w.parse, v[i]);
        if (c < 0) in.fail(table, name, i + 1, v[i], std::string("is not ") + dict_what(w.parse));
        out.push_back(static_cast<std::uint32_t>(c));
      }
      continue;
    }
    const std::vector<std::uint64_t> v = in.numbers(table, name);
    out.reserve(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (v[i] > 0xffffffffull)
        in.fail(table, name, i + 1, std::to_string(v[i]),
                std::string("does not fit 32 bits (at most 4294967295)") + (w.parse == Parse::Key ? kKeyTooLarge : ""));
      if (w.parse == Parse::Date && !valid_datekey(static_cast<std::uint32_t>(v[i])))
        in.fail(table, name, i + 1, std::to_string(v[i]), kNotADate);
      out.push_back(static_cast<std::uint32_t>(v[i]));
    }
  }
  if (fmt.keyed) {
    const char* key = col_name(fmt.wanted[0].col);
    if (const auto d = tbl::find_duplicate(t[fmt.wanted[0].col]))
      in.fail(table, key, d->second + 1, std::to_string(d->key), tbl::duplicate_what(table, key, *d));
  }
}

void load_table(const std::string& dir, const TableFormat& fmt, Tables& t) {
  tbl::TblRows in((std::filesystem::path(dir) / fmt.file).string(), fmt.fields,
                  "(--tbl-dir needs lineorder.tbl, date.tbl, customer.tbl, supplier.tbl, part.tbl)");
  constexpr std::uint64_t kSample = 4096;
  std::uint64_t rows = 0;
  while (in.next()) {
    for (const Wanted& w : fmt.wanted)
      tbl::append(t[w.col], convert(w.parse, in.begin(w.field), in.end(w.field), in.error(w.field, col_name(w.col))));
    if (++rows == kSample)
      if (const std::uint64_t n = tbl::expected_rows(in, kSample))
        for (const Wanted& w : fmt.wanted) t[w.col].reserve(n);
  }
  if (rows == 0)
    throw UsageError(in.path() +
                     ": no rows (the file is empty or holds only blank lines); every table needs at least one");
  if (fmt.keyed)
    if (const auto d = tbl::find_duplicate(t[fmt.wanted[0].col]))
      tbl::fail_duplicate(in.path(), fmt.fields, table_of_file(fmt.file), col_name(fmt.wanted[0].col), *d);
}

}  // namespace

const std::vector<std::string>& tbl_files() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> f;
    for (const TableFormat& t : formats()) f.emplace_back(t.file);
    return f;
  }();
  return files;
}

Tables load_tables(const std::string& dir) {
  Tables t;
  t.source = dir;
  for (const TableFormat& f : formats()) load_table(dir, f, t);
  return t;
}

Tables load_column_tables(const std::string& dir) {
  const columns::ColumnDir in(dir, "ssb");
  Tables t;
  t.source = dir;
  for (const TableFormat& f : formats()) load_column_table(in, f, t);
  return t;
}

}  // namespace hdb::ssb
