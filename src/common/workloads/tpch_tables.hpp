#pragma once
// The TPC-H tables the micro-kernels use, with only the columns they read:
//   customer(c_custkey, c_mktsegment)
//   orders(o_orderkey, o_custkey, o_orderdate, o_shippriority)
//   lineitem(l_orderkey, l_quantity, l_extendedprice, l_discount, l_shipdate)
// Either generated following the TPC-H specification (v3, clause 4.2.3) at a scale factor, or
// loaded from the pipe-separated .tbl files that dbgen writes.
#include <cstdint>
#include <string>

#include "workloads/dbgen_price.hpp"
#include "workloads/tpch_relation.hpp"

namespace hdb::tpch {

struct Tables {
  Relation customer, orders, lineitem;
  std::string source;      // "generated sf=..." or the .tbl directory
  bool generated = false;  // by generate_tables (its keys may be remapped at --key-bits 64)
  std::uint64_t bytes() const { return customer.bytes() + orders.bytes() + lineitem.bytes(); }
};

// The specification's dates: orders fall in [1992-01-01, 1998-12-31 - 151 days].
constexpr std::uint32_t kStartDate = 8035;  // 1992-01-01
constexpr std::uint32_t kEndDate = 10591;   // 1998-12-31

// Rows per scale factor unit (clause 4.2.5).
constexpr std::uint64_t kCustomersPerSf = 150000;
constexpr std::uint64_t kOrdersPerSf = 1500000;
constexpr std::uint64_t kPartsPerSf = 200000;

// dbgen's sparse order keys: of every 32 keys only the first 8 are used.
constexpr std::uint64_t sparse_order_key(std::uint64_t i) {  // i = 1, 2, ...
  return ((i >> 3) << 5) | (i & 7);
}
// Whether the order keys of `orders` orders reach 2^32 (the generator then makes them 64-bit).
constexpr bool wide_order_keys(std::uint64_t orders) { return sparse_order_key(orders) > 0xffffffffull; }

// Generates the tables at scale factor `sf` (> 0; fractions allowed). Deterministic in `seed`,
// identical for any thread count.
Tables generate_tables(double sf, std::uint64_t seed, int threads);
// About the bytes of the kept columns generate_tables(sf, ...) makes (4 line items per order on
// average), known before generating.
std::uint64_t generated_bytes(double sf);

// Loads customer.tbl, orders.tbl and lineitem.tbl from `dir`. Keys are whole numbers below 2^64: a
// key column whose values reach 2^32 is loaded wide (ColumnInfo::wide), the others stay 32-bit.
// Errors (missing file, wrong column count, bad number, bad date, unknown segment, value out of
// range: a key beyond 2^64 - 1, any other value beyond 32 bits) throw UsageError naming the file,
// line and column.
Tables load_tables(const std::string& dir);
// The same tables from raw binary columns (`--tables DIR`: columns.json of scripts/hdb/parquet_tables.py,
// which reads Parquet files through DuckDB; workloads/column_files.hpp), with the same rules on the
// values (a key of 2^32 or more makes its column wide); errors name table, column and row.
Tables load_column_tables(const std::string& dir);

// Writes `t` as dbgen's customer.tbl, orders.tbl and lineitem.tbl in `dir` (an existing folder):
// every column of the specification's layout, the kept ones with their values, the others filled
// with constants of about dbgen's width. load_tables(dir) reads back `t`. For tests and for
// checking --output with another engine on the same data; UsageError when a file cannot be written.
void write_tbl_files(const Tables& t, const std::string& dir);

// The join keys of the kernels: c_custkey, o_orderkey, o_custkey, l_orderkey.
bool is_key_column(const std::string& name);
// The largest join key of the tables (what decides whether they run at 32-bit keys).
std::uint64_t max_key(const Tables& t);

}  // namespace hdb::tpch
