// Loader for ssb-dbgen's .tbl files (lineorder, date, customer, supplier, part), with the rules of
// the TPC-H loader (workloads/tbl_io.hpp): every error names file, line, column and column name.
// Only the columns the 13 queries read are kept; strings become the dictionary codes of
// workloads/ssb_tables.hpp (a string outside a dictionary is an error).
#include <filesystem>

#include "harness/errors.hpp"
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
};

// ssb-dbgen's layouts (print.c: pr_line, pr_date, pr_cust, pr_supp, pr_part).
const std::vector<TableFormat>& formats() {
  static const std::vector<TableFormat> f{
      {"lineorder.tbl", 17,
       {{2, Col::lo_custkey, Parse::Key},
        {3, Col::lo_partkey, Parse::Key},
        {4, Col::lo_suppkey, Parse::Key},
        {5, Col::lo_orderdate, Parse::Date},
        {8, Col::lo_quantity, Parse::Integer},
        {9, Col::lo_extendedprice, Parse::Integer},
        {11, Col::lo_discount, Parse::Integer},
        {12, Col::lo_revenue, Parse::Integer},
        {13, Col::lo_supplycost, Parse::Integer}}},
      {"date.tbl", 17,
       {{0, Col::d_datekey, Parse::Date},
        {4, Col::d_year, Parse::Integer},
        {5, Col::d_yearmonthnum, Parse::Integer},
        {6, Col::d_yearmonth, Parse::YearMonth},
        {11, Col::d_weeknuminyear, Parse::Integer}}},
      {"customer.tbl", 8,
       {{0, Col::c_custkey, Parse::Key},
        {3, Col::c_city, Parse::City},
        {4, Col::c_nation, Parse::Nation},
        {5, Col::c_region, Parse::Region}}},
      {"supplier.tbl", 7,
       {{0, Col::s_suppkey, Parse::Key},
        {3, Col::s_city, Parse::City},
        {4, Col::s_nation, Parse::Nation},
        {5, Col::s_region, Parse::Region}}},
      {"part.tbl", 9,
       {{0, Col::p_partkey, Parse::Key},
        {2, Col::p_mfgr, Parse::Mfgr},
        {3, Col::p_category, Parse::Category},
        {4, Col::p_brand1, Parse::Brand}}},
  };
  return f;
}

std::uint32_t code(int c, const tbl::FieldError& err, const char* what) {
  if (c < 0) err.fail(std::string("is not ") + what);
  return static_cast<std::uint32_t>(c);
}

std::uint32_t convert(Parse p, const char* s, const char* e, const tbl::FieldError& err) {
  const std::string_view v(s, static_cast<std::size_t>(e - s));
  switch (p) {
    case Parse::Key:
      return tbl::whole_u32(s, e, err, "keys are non-negative numbers", ": keys of 2^32 or more are refused (SSB keys are 32-bit here)");
    case Parse::Integer: return tbl::whole_u32(s, e, err);
    case Parse::Date: {
      const std::uint32_t k = tbl::whole_u32(s, e, err);
      if (e - s != 8 || !valid_datekey(k)) err.fail("is not a date yyyymmdd");
      return k;
    }
    case Parse::Region: return code(region_code(v), err, "an SSB region (AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST)");
    case Parse::Nation: return code(nation_code(v), err, "an SSB nation (ALGERIA ... UNITED STATES)");
    case Parse::City: return code(city_code(v), err, "an SSB city (a nation's first 9 characters, padded, then a digit)");
    case Parse::Mfgr: return code(mfgr_code(v), err, "an SSB manufacturer (MFGR#1 .. MFGR#5)");
    case Parse::Category: return code(category_code(v), err, "an SSB category (MFGR#11 .. MFGR#55)");
    case Parse::Brand: return code(brand_code(v), err, "an SSB brand (MFGR#111 .. MFGR#5540)");
    case Parse::YearMonth: return code(yearmonth_code(v), err, "an SSB year and month (Jan1992 .. Dec1998)");
  }
  err.fail("has an unknown column kind");
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
    throw UsageError(in.path() + ": no rows (the file is empty or holds only blank lines); every table needs at least one");
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

}  // namespace hdb::ssb
