#include "model/ssb_query.hpp"

#include <algorithm>
#include <stdexcept>

namespace hdb::ssb {
namespace {

std::uint32_t code(int c) {
  if (c < 0) throw std::logic_error("an SSB query names a string outside the dictionaries");
  return static_cast<std::uint32_t>(c);
}
Pred eq(Col c, std::uint32_t v) { return {c, {{v, v}}}; }
Pred between(Col c, std::uint32_t lo, std::uint32_t hi) { return {c, {{lo, hi}}}; }
Pred in(Col c, std::uint32_t a, std::uint32_t b) { return {c, {{a, a}, {b, b}}}; }

std::vector<Query> make_queries() {
  using C = Col;
  const std::uint32_t america = code(region_code("AMERICA")), asia = code(region_code("ASIA")),
                      europe = code(region_code("EUROPE")), us = code(nation_code("UNITED STATES")),
                      ki1 = code(city_code("UNITED KI1")), ki5 = code(city_code("UNITED KI5")),
                      mfgr1 = code(mfgr_code("MFGR#1")), mfgr2 = code(mfgr_code("MFGR#2"));
  const Pred years_92_97 = between(C::d_year, 1992, 1997);
  return {
      // Q1: sum(lo_extendedprice * lo_discount); lo_quantity < 25 is BETWEEN 0 AND 24.
      {"1.1",
       {eq(C::d_year, 1993), between(C::lo_discount, 1, 3), between(C::lo_quantity, 0, 24)},
       {},
       Agg::DiscountedPrice},
      {"1.2",
       {eq(C::d_yearmonthnum, 199401), between(C::lo_discount, 4, 6), between(C::lo_quantity, 26, 35)},
       {},
       Agg::DiscountedPrice},
      {"1.3",
       {eq(C::d_weeknuminyear, 6), eq(C::d_year, 1994), between(C::lo_discount, 5, 7), between(C::lo_quantity, 26, 35)},
       {},
       Agg::DiscountedPrice},
      // Q2: sum(lo_revenue) group by d_year, p_brand1.
      {"2.1",
       {eq(C::p_category, code(category_code("MFGR#12"))), eq(C::s_region, america)},
       {C::d_year, C::p_brand1},
       Agg::Revenue},
      {"2.2",
       {between(C::p_brand1, code(brand_code("MFGR#2221")), code(brand_code("MFGR#2228"))), eq(C::s_region, asia)},
       {C::d_year, C::p_brand1},
       Agg::Revenue},
      {"2.3",
       {eq(C::p_brand1, code(brand_code("MFGR#2239"))), eq(C::s_region, europe)},
       {C::d_year, C::p_brand1},
       Agg::Revenue},
      // Q3: sum(lo_revenue) group by customer and supplier place, d_year.
      {"3.1",
       {eq(C::c_region, asia), eq(C::s_region, asia), years_92_97},
       {C::c_nation, C::s_nation, C::d_year},
       Agg::Revenue},
      {"3.2", {eq(C::c_nation, us), eq(C::s_nation, us), years_92_97}, {C::c_city, C::s_city, C::d_year}, Agg::Revenue},
      {"3.3",
       {in(C::c_city, ki1, ki5), in(C::s_city, ki1, ki5), years_92_97},
       {C::c_city, C::s_city, C::d_year},
       Agg::Revenue},
      {"3.4",
       {in(C::c_city, ki1, ki5), in(C::s_city, ki1, ki5), eq(C::d_yearmonth, code(yearmonth_code("Dec1997")))},
       {C::c_city, C::s_city, C::d_year},
       Agg::Revenue},
      // Q4: sum(lo_revenue - lo_supplycost).
      {"4.1",
       {eq(C::c_region, america), eq(C::s_region, america), in(C::p_mfgr, mfgr1, mfgr2)},
       {C::d_year, C::c_nation},
       Agg::Profit},
      {"4.2",
       {eq(C::c_region, america), eq(C::s_region, america), in(C::d_year, 1997, 1998), in(C::p_mfgr, mfgr1, mfgr2)},
       {C::d_year, C::s_nation, C::p_category},
       Agg::Profit},
      {"4.3",
       {eq(C::c_region, america), eq(C::s_nation, us), in(C::d_year, 1997, 1998),
        eq(C::p_category, code(category_code("MFGR#14")))},
       {C::d_year, C::s_city, C::p_brand1},
       Agg::Profit},
  };
}

}  // namespace

Col foreign_key(Table dim) {
  switch (dim) {
    case Table::Date: return Col::lo_orderdate;
    case Table::Customer: return Col::lo_custkey;
    case Table::Supplier: return Col::lo_suppkey;
    case Table::Part: return Col::lo_partkey;
    case Table::Lineorder: break;
  }
  throw std::logic_error("lineorder is no dimension");
}

std::vector<Table> Query::dims() const {
  std::vector<Table> out;
  for (Table t : {Table::Date, Table::Customer, Table::Supplier, Table::Part}) {
    bool used = std::any_of(preds.begin(), preds.end(), [t](const Pred& p) { return table_of(p.col) == t; }) ||
                std::any_of(group_by.begin(), group_by.end(), [t](Col c) { return table_of(c) == t; });
    if (used) out.push_back(t);
  }
  return out;
}

std::vector<Col> Query::columns() const {
  std::vector<Col> cols;
  auto add = [&cols](Col c) {
    if (std::find(cols.begin(), cols.end(), c) == cols.end()) cols.push_back(c);
  };
  for (const Pred& p : preds)
    if (table_of(p.col) == Table::Lineorder) add(p.col);
  for (Table d : dims()) add(foreign_key(d));
  switch (agg) {
    case Agg::DiscountedPrice:
      add(Col::lo_extendedprice);
      add(Col::lo_discount);
      break;
    case Agg::Revenue: add(Col::lo_revenue); break;
    case Agg::Profit:
      add(Col::lo_revenue);
      add(Col::lo_supplycost);
      break;
  }
  for (Table d : dims()) {
    add(key_of(d));
    for (const Pred& p : preds)
      if (table_of(p.col) == d) add(p.col);
    for (Col g : group_by)
      if (table_of(g) == d) add(g);
  }
  return cols;
}

const std::vector<Query>& queries() {
  static const std::vector<Query> q = make_queries();
  return q;
}

std::vector<std::string> query_names() {
  std::vector<std::string> n;
  for (const Query& q : queries()) n.push_back(q.name);
  return n;
}

const Query& query(const std::string& name) {
  for (const Query& q : queries())
    if (q.name == name) return q;
  throw std::invalid_argument("no SSB query '" + name +
                              "' (1.1, 1.2, 1.3, 2.1, 2.2, 2.3, 3.1, 3.2, 3.3, 3.4, 4.1, 4.2, 4.3)");
}

std::uint64_t touched_bytes(const Query& q, const Tables& t) {
  std::uint64_t b = 0;
  for (Col c : q.columns()) b += t[c].size() * sizeof(std::uint32_t);
  return b;
}

std::string format_result(const Query& q, const Result& r) {
  std::string out;
  for (const ResultRow& row : r.rows) {
    for (std::size_t i = 0; i < q.group_by.size(); ++i) {
      const std::uint32_t v = row.key[i];
      switch (q.group_by[i]) {
        case Col::c_city:
        case Col::s_city: out += city_name(v); break;
        case Col::c_nation:
        case Col::s_nation: out += nation_name(v); break;
        case Col::p_category: out += category_name(v); break;
        case Col::p_brand1: out += brand_name(v); break;
        default: out += std::to_string(v); break;
      }
      out += '|';
    }
    out += std::to_string(row.value) + "\n";
  }
  return out;
}

}  // namespace hdb::ssb
