#pragma once
// The 13 SSB queries (Q1.1 .. Q4.3) as plans the backends execute: a conjunction of predicates on
// lineorder and dimension columns (each a column in a union of value ranges: = is one range,
// BETWEEN one, IN several), the group-by columns and the aggregate. String predicates of the SQL
// are code predicates here (workloads/ssb_tables.hpp's dictionaries; docs/ssb.md lists them).
// The serial reference (reference/ssb.cpp) does not read these plans: it writes each query out
// from the specification's SQL, so a wrong plan fails verification.
//
// The answer: one row per group, the group-by columns' values (codes) then the aggregate as a signed
// 64-bit sum, rows sorted by the group key (the group-by columns in the order listed). Q1.x have
// no group-by: one row, the sum (0 when no row qualifies).
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "workloads/ssb_tables.hpp"

namespace hdb::ssb {

enum class Agg : std::uint8_t {
  DiscountedPrice,  // sum(lo_extendedprice * lo_discount)      Q1.x
  Revenue,          // sum(lo_revenue)                          Q2.x, Q3.x
  Profit,           // sum(lo_revenue - lo_supplycost)          Q4.x
};

struct Pred {
  Col col;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges;  // value in some [lo, hi]
  bool test(std::uint32_t v) const {
    for (const auto& r : ranges)
      if (v >= r.first && v <= r.second) return true;
    return false;
  }
};

constexpr int kMaxGroupCols = 3;

struct Query {
  std::string name;  // "1.1"
  std::vector<Pred> preds;
  std::vector<Col> group_by;  // at most kMaxGroupCols
  Agg agg;
  // The dimension tables the query joins (those it has a predicate or a group-by column on), in
  // the order date, customer, supplier, part.
  std::vector<Table> dims() const;
  // Every column the query reads: the lineorder columns (its predicates' columns, the joined
  // dimensions' foreign keys, the aggregate's columns), then the dimension columns (keys,
  // predicate and group-by columns).
  std::vector<Col> columns() const;
};

// The lineorder column that refers to a dimension: lo_orderdate, lo_custkey, lo_suppkey, lo_partkey.
Col foreign_key(Table dim);

// The 13 queries, in the order 1.1, 1.2, 1.3, 2.1, ..., 4.3.
const std::vector<Query>& queries();
std::vector<std::string> query_names();
// The query called `name`; std::invalid_argument naming the queries when none is.
const Query& query(const std::string& name);

struct ResultRow {
  std::array<std::uint32_t, kMaxGroupCols> key{};  // the group-by values; unused slots 0
  std::int64_t value = 0;
  bool operator==(const ResultRow& o) const { return key == o.key && value == o.value; }
  bool operator<(const ResultRow& o) const { return key < o.key; }
};

struct Result {
  std::vector<ResultRow> rows;  // sorted by key
};

// The bytes a query reads at least: every column of columns() once.
std::uint64_t touched_bytes(const Query& q, const Tables& t);
// Rows as text, one per line: the group-by values decoded to strings ("UNITED KI1", "MFGR#2239",
// 1997), then the aggregate, separated by '|'.
std::string format_result(const Query& q, const Result& r);

}  // namespace hdb::ssb
