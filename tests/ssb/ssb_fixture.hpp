#pragma once
// A hand-checked SSB data set: 9 lineorder rows over 5 days, 3 customers, 3 suppliers, 4 parts,
// and each query's answer worked out by hand from the rows (comments give the rows behind each).
#include <map>
#include <string>

#include "model/ssb_query.hpp"
#include "workloads/ssb_tables.hpp"

namespace hdb::ssb::test {

inline std::uint32_t code(int c) { return static_cast<std::uint32_t>(c); }

inline Tables hand_tables() {
  Tables t;
  t.source = "hand-checked";
  for (std::uint32_t k : {19930101u, 19940101u, 19940205u, 19971201u, 19980301u}) {
    t[Col::d_datekey].push_back(k);
    t[Col::d_year].push_back(k / 10000);
    t[Col::d_yearmonthnum].push_back(k / 100);
    t[Col::d_yearmonth].push_back((k / 10000 - 1992) * 12 + k / 100 % 100 - 1);
    t[Col::d_weeknuminyear].push_back(week_num_in_year(k));
  }
  auto place = [&t](Col key, Col city, Col nation, Col region, std::uint32_t k, const char* name) {
    const std::uint32_t c = code(city_code(name));
    t[key].push_back(k);
    t[city].push_back(c);
    t[nation].push_back(c / 10);
    t[region].push_back(region_of_nation(c / 10));
  };
  place(Col::c_custkey, Col::c_city, Col::c_nation, Col::c_region, 1, "UNITED KI1");  // EUROPE
  place(Col::c_custkey, Col::c_city, Col::c_nation, Col::c_region, 2, "UNITED ST3");  // AMERICA
  place(Col::c_custkey, Col::c_city, Col::c_nation, Col::c_region, 3, "CHINA    4");  // ASIA
  place(Col::s_suppkey, Col::s_city, Col::s_nation, Col::s_region, 1, "UNITED KI5");  // EUROPE
  place(Col::s_suppkey, Col::s_city, Col::s_nation, Col::s_region, 2, "UNITED ST7");  // AMERICA
  place(Col::s_suppkey, Col::s_city, Col::s_nation, Col::s_region, 3, "JAPAN    0");  // ASIA
  for (auto [k, brand] : {std::pair{1u, "MFGR#1221"}, {2u, "MFGR#2239"}, {3u, "MFGR#145"}, {4u, "MFGR#2224"}}) {
    const std::uint32_t b = code(brand_code(brand));
    t[Col::p_partkey].push_back(k);
    t[Col::p_brand1].push_back(b);
    t[Col::p_category].push_back(b / 40);
    t[Col::p_mfgr].push_back(b / 200);
  }
  // date, cust, part, supp, quantity, extendedprice, discount, revenue, supplycost
  const std::uint32_t rows[][9] = {
      {19930101, 1, 1, 1, 10, 1000, 2, 980, 600},    // r0
      {19940101, 2, 2, 2, 30, 2000, 5, 1900, 1200},  // r1
      {19940205, 3, 3, 3, 30, 3000, 6, 2820, 1800},  // r2
      {19971201, 1, 4, 1, 5, 4000, 0, 4000, 2400},   // r3
      {19980301, 2, 3, 2, 1, 500, 1, 495, 300},      // r4
      {19940101, 2, 1, 2, 40, 6000, 3, 5820, 3600},  // r5
      {19930101, 3, 2, 1, 2, 700, 0, 700, 420},      // r6
      {19940205, 1, 4, 3, 50, 900, 10, 810, 540},    // r7
      {19930101, 99, 1, 1, 1, 100, 2, 98, 60},       // r8: customer 99 does not exist
  };
  for (const auto& r : rows)
    for (int c = 0; c < 9; ++c) t.cols[static_cast<std::size_t>(c)].push_back(r[c]);
  return t;
}

// The answers, rows sorted by group key.
inline std::map<std::string, Result> hand_answers() {
  const std::uint32_t ki1 = 231, ki5 = 235, us = 24, ust3 = 243, ust7 = 247;
  return {
      {"1.1", {{{{}, 1000 * 2 + 100 * 2}}}},                           // r0, r8 (Q1 joins only date)
      {"1.2", {{{{}, 2000 * 5}}}},                                     // r1 (r5: discount 3)
      {"1.3", {{{{}, 3000 * 6}}}},                                     // r2 (week 6 of 1994; r7: discount 10)
      {"2.1", {{{{1994, 60}, 5820}}}},                                 // r5 (r0, r8: supplier in EUROPE)
      {"2.2", {{{{1994, 263}, 810}}}},                                 // r7 (r3: supplier in EUROPE)
      {"2.3", {{{{1993, 278}, 700}}}},                                 // r6 (r1: supplier in AMERICA)
      {"3.1", {{{{18, 12, 1994}, 2820}}}},                             // r2
      {"3.2", {{{{ust3, ust7, 1994}, 1900 + 5820}}}},                  // r1, r5 (r4: 1998)
      {"3.3", {{{{ki1, ki5, 1993}, 980}, {{ki1, ki5, 1997}, 4000}}}},  // r0, r3 (r8: no customer)
      {"3.4", {{{{ki1, ki5, 1997}, 4000}}}},                           // r3
      {"4.1", {{{{1994, us}, (1900 - 1200) + (5820 - 3600)}, {{1998, us}, 495 - 300}}}},  // r1, r5; r4
      {"4.2", {{{{1998, us, 3}, 195}}}},                                                  // r4
      {"4.3", {{{{1998, ust7, 124}, 195}}}},                                              // r4
  };
}

}  // namespace hdb::ssb::test
