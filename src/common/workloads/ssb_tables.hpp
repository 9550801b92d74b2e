#pragma once
// The Star Schema Benchmark's tables (O'Neil et al., SSB specification rev. 3; ssb-dbgen), held as
// Crystal holds them (Shanbhag, Madden, Yu, SIGMOD 2020): columns of 32-bit integers, only the
// columns the 13 queries read, strings as dictionary codes, dates as yyyymmdd integers.
//
//   lineorder  lo_orderdate lo_custkey lo_partkey lo_suppkey lo_quantity lo_extendedprice
//              lo_discount lo_revenue lo_supplycost
//   date       d_datekey d_year d_yearmonthnum d_yearmonth d_weeknuminyear
//   customer   c_custkey c_city c_nation c_region
//   supplier   s_suppkey s_city s_nation s_region
//   part       p_partkey p_mfgr p_category p_brand1
//
// The dictionary codes (docs/ssb.md has the full lists):
//   region     0..4 in ssb-dbgen's order: AFRICA, AMERICA, ASIA, EUROPE, MIDDLE EAST
//   nation     0..24 in ssb-dbgen's order (TPC-H's nation keys): ALGERIA=0 ... UNITED KINGDOM=23,
//              UNITED STATES=24
//   city       nation * 10 + digit: the nation's name cut or padded to 9 characters, then a digit
//              ("UNITED KI1" = 231, "UNITED KI5" = 235, "PERU     0" = 170)
//   p_mfgr     "MFGR#m" (m 1..5): m - 1
//   p_category "MFGR#mc" (c 1..5): (m - 1) * 5 + (c - 1)
//   p_brand1   "MFGR#mcb" (b 1..40; ssb-dbgen writes b without padding, "MFGR#121", the spec's
//              fixed 9 characters pad it, "MFGR#1201": both read): category * 40 + (b - 1)
//   d_yearmonth "Jan1992" .. "Dec1998": (year - 1992) * 12 + (month - 1)
// Every code keeps its strings' order where the queries compare ranges (p_brand1 BETWEEN).
#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/dbgen_price.hpp"

namespace hdb::ssb {

enum class Table : std::uint8_t { Lineorder, Date, Customer, Supplier, Part };
constexpr int kTables = 5;
const char* table_name(Table t);  // "lineorder", "date", ...

enum class Col : std::uint8_t {
  lo_orderdate,
  lo_custkey,
  lo_partkey,
  lo_suppkey,
  lo_quantity,
  lo_extendedprice,
  lo_discount,
  lo_revenue,
  lo_supplycost,
  d_datekey,
  d_year,
  d_yearmonthnum,
  d_yearmonth,
  d_weeknuminyear,
  c_custkey,
  c_city,
  c_nation,
  c_region,
  s_suppkey,
  s_city,
  s_nation,
  s_region,
  p_partkey,
  p_mfgr,
  p_category,
  p_brand1,
};
constexpr int kCols = static_cast<int>(Col::p_brand1) + 1;
const char* col_name(Col c);
Table table_of(Col c);
// The table's key column (lineorder has none of its own: lo_orderdate).
Col key_of(Table t);

using Column = std::vector<std::uint32_t>;

struct Tables {
  std::array<Column, kCols> cols;
  std::string source;  // "generated sf=..." or the .tbl directory
  const Column& operator[](Col c) const { return cols[static_cast<std::size_t>(c)]; }
  Column& operator[](Col c) { return cols[static_cast<std::size_t>(c)]; }
  std::uint64_t rows(Table t) const { return (*this)[key_of(t)].size(); }
  std::uint64_t bytes() const;
};

// Rows per scale factor (ssb-dbgen): lineorder SF x 6,000,000 (dbgen: SF x 1,500,000 orders of 1..7
// lines, 4 on average), customer SF x 30,000, supplier SF x 2,000, part 200,000 x floor(1 + log2 SF)
// (at least 200,000 below SF 1, where dbgen's formula gives none), date 2,556 days from 1992-01-01.
constexpr std::uint64_t kLineorderPerSf = 6000000;
constexpr std::uint64_t kCustomersPerSf = 30000;
constexpr std::uint64_t kSuppliersPerSf = 2000;
constexpr std::uint64_t kPartsBase = 200000;
constexpr std::uint64_t kDates = 2556;
struct Sizes {
  std::uint64_t lineorder, customers, suppliers, parts;
};
Sizes sizes_for(double sf);

// --- dictionaries -------------------------------------------------------------------------
constexpr int kRegions = 5, kNations = 25, kCities = 250, kMfgrs = 5, kCategories = 25, kBrands = 1000,
              kYearMonths = 84;
std::string region_name(std::uint32_t code);
std::string nation_name(std::uint32_t code);
std::uint32_t region_of_nation(std::uint32_t nation);
std::string city_name(std::uint32_t code);       // "UNITED KI1"
std::string mfgr_name(std::uint32_t code);       // "MFGR#1"
std::string category_name(std::uint32_t code);   // "MFGR#12"
std::string brand_name(std::uint32_t code);      // ssb-dbgen's spelling: "MFGR#121", "MFGR#1240"
std::string yearmonth_name(std::uint32_t code);  // "Dec1997"
// Code of a string, or -1 when it is none of the dictionary's.
int region_code(std::string_view s);
int nation_code(std::string_view s);
int city_code(std::string_view s);
int mfgr_code(std::string_view s);
int category_code(std::string_view s);
int brand_code(std::string_view s);  // both spellings ("MFGR#121" and "MFGR#1201")
int yearmonth_code(std::string_view s);

// --- dates ---------------------------------------------------------------------------------
// yyyymmdd of the day `days` after 1992-01-01, and the date table's columns of such a day.
std::uint32_t datekey_after_start(std::uint32_t days);
// Whether yyyymmdd is a real calendar date (1900..2099).
bool valid_datekey(std::uint32_t yyyymmdd);
// ssb-dbgen's D_WEEKNUMINYEAR: day of the year (1-based) / 7 + 1.
std::uint32_t week_num_in_year(std::uint32_t yyyymmdd);
// The orders' dates: uniform over [1992-01-01, 1998-12-31 - 151 days] (dbgen's O_ODATE range).
constexpr std::uint32_t kOrderDays = 2406;

// --- making and loading ---------------------------------------------------------------------
// The tables at scale factor `sf` (> 0, at most 1000; fractions allowed), following ssb-dbgen's
// distributions. Deterministic in `seed`, identical for any thread count.
Tables generate_tables(double sf, std::uint64_t seed, int threads);
// The bytes of the columns generate_tables(sf, ...) makes, known before generating.
std::uint64_t generated_bytes(double sf);

// Loads lineorder.tbl, date.tbl, customer.tbl, supplier.tbl and part.tbl (ssb-dbgen's layouts)
// from `dir`, with the TPC-H loader's rules (workloads/tbl_io.hpp). Numbers are non-negative
// whole numbers of 32 bits (a key of 2^32 or more is refused); lo_orderdate and d_datekey are
// yyyymmdd calendar dates; strings must be in the dictionaries above. Errors throw UsageError
// naming file, line and column.
Tables load_tables(const std::string& dir);
// Loads the same tables from raw binary columns (`--tables DIR`: columns.json of
// scripts/hdb/parquet_tables.py, which reads Parquet files through DuckDB; workloads/column_files.hpp)
// with the same rules on the values; errors name table, column and row.
Tables load_column_tables(const std::string& dir);
// The file names load_tables reads.
const std::vector<std::string>& tbl_files();

// Writes `t` as ssb-dbgen's five .tbl files in `dir` (an existing folder): every column of the
// layout, the kept ones with their values (strings from the dictionaries), the others with values
// of dbgen's form. load_tables(dir) reads back `t`. UsageError when a file cannot be written.
void write_tbl_files(const Tables& t, const std::string& dir);

}  // namespace hdb::ssb
