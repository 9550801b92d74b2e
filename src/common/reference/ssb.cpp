#include "reference/ssb.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "harness/parallel.hpp"

namespace hdb::ssb {
namespace {

// One lineorder row joined with its dimension rows (those of the query's FROM clause).
struct Joined {
  const Tables& t;
  std::uint64_t lo;
  std::array<std::int64_t, kTables> row;  // per table; -1 where not joined
  std::uint32_t operator()(Col c) const {
    const Table tb = table_of(c);
    return t[c][tb == Table::Lineorder ? lo : static_cast<std::uint64_t>(row[static_cast<std::size_t>(tb)])];
  }
};

struct SqlQuery {
  std::vector<Table> from;  // the dimension tables joined to lineorder
  std::function<bool(const Joined&)> where;
  std::vector<Col> group_by;
  std::function<std::int64_t(const Joined&)> select;  // the aggregated expression
};

std::int64_t discounted_price(const Joined& r) {
  return static_cast<std::int64_t>(r(Col::lo_extendedprice)) * r(Col::lo_discount);
}
std::int64_t revenue(const Joined& r) { return r(Col::lo_revenue); }
std::int64_t profit(const Joined& r) {
  return static_cast<std::int64_t>(r(Col::lo_revenue)) - static_cast<std::int64_t>(r(Col::lo_supplycost));
}

std::uint32_t c(int code) { return static_cast<std::uint32_t>(code); }

// The specification's queries (SSB rev. 3, section 3), strings through the dictionaries.
const std::map<std::string, SqlQuery>& sql() {
  using C = Col;
  using T = Table;
  // The strings of the WHERE clauses as dictionary codes.
  static const std::uint32_t america = c(region_code("AMERICA")), asia = c(region_code("ASIA")),
                             europe = c(region_code("EUROPE")), united_states = c(nation_code("UNITED STATES")),
                             ki1 = c(city_code("UNITED KI1")), ki5 = c(city_code("UNITED KI5")),
                             dec1997 = c(yearmonth_code("Dec1997")), mfgr1 = c(mfgr_code("MFGR#1")),
                             mfgr2 = c(mfgr_code("MFGR#2")), mfgr12 = c(category_code("MFGR#12")),
                             mfgr14 = c(category_code("MFGR#14")), brand2221 = c(brand_code("MFGR#2221")),
                             brand2228 = c(brand_code("MFGR#2228")), brand2239 = c(brand_code("MFGR#2239"));
  static const std::map<std::string, SqlQuery> q = {
      {"1.1",
       {{T::Date},
        [](const Joined& r) {
          return r(C::d_year) == 1993 && r(C::lo_discount) >= 1 && r(C::lo_discount) <= 3 && r(C::lo_quantity) < 25;
        },
        {},
        discounted_price}},
      {"1.2",
       {{T::Date},
        [](const Joined& r) {
          return r(C::d_yearmonthnum) == 199401 && r(C::lo_discount) >= 4 && r(C::lo_discount) <= 6 &&
                 r(C::lo_quantity) >= 26 && r(C::lo_quantity) <= 35;
        },
        {},
        discounted_price}},
      {"1.3",
       {{T::Date},
        [](const Joined& r) {
          return r(C::d_weeknuminyear) == 6 && r(C::d_year) == 1994 && r(C::lo_discount) >= 5 &&
                 r(C::lo_discount) <= 7 && r(C::lo_quantity) >= 26 && r(C::lo_quantity) <= 35;
        },
        {},
        discounted_price}},
      {"2.1",
       {{T::Date, T::Part, T::Supplier},
        [](const Joined& r) { return r(C::p_category) == mfgr12 && r(C::s_region) == america; },
        {C::d_year, C::p_brand1},
        revenue}},
      {"2.2",
       {{T::Date, T::Part, T::Supplier},
        [](const Joined& r) {
          return r(C::p_brand1) >= brand2221 && r(C::p_brand1) <= brand2228 && r(C::s_region) == asia;
        },
        {C::d_year, C::p_brand1},
        revenue}},
      {"2.3",
       {{T::Date, T::Part, T::Supplier},
        [](const Joined& r) { return r(C::p_brand1) == brand2239 && r(C::s_region) == europe; },
        {C::d_year, C::p_brand1},
        revenue}},
      {"3.1",
       {{T::Customer, T::Supplier, T::Date},
        [](const Joined& r) {
          return r(C::c_region) == asia && r(C::s_region) == asia && r(C::d_year) >= 1992 && r(C::d_year) <= 1997;
        },
        {C::c_nation, C::s_nation, C::d_year},
        revenue}},
      {"3.2",
       {{T::Customer, T::Supplier, T::Date},
        [](const Joined& r) {
          return r(C::c_nation) == united_states && r(C::s_nation) == united_states && r(C::d_year) >= 1992 &&
                 r(C::d_year) <= 1997;
        },
        {C::c_city, C::s_city, C::d_year},
        revenue}},
      {"3.3",
       {{T::Customer, T::Supplier, T::Date},
        [](const Joined& r) {
          return (r(C::c_city) == ki1 || r(C::c_city) == ki5) && (r(C::s_city) == ki1 || r(C::s_city) == ki5) &&
                 r(C::d_year) >= 1992 && r(C::d_year) <= 1997;
        },
        {C::c_city, C::s_city, C::d_year},
        revenue}},
      {"3.4",
       {{T::Customer, T::Supplier, T::Date},
        [](const Joined& r) {
          return (r(C::c_city) == ki1 || r(C::c_city) == ki5) && (r(C::s_city) == ki1 || r(C::s_city) == ki5) &&
                 r(C::d_yearmonth) == dec1997;
        },
        {C::c_city, C::s_city, C::d_year},
        revenue}},
      {"4.1",
       {{T::Date, T::Customer, T::Supplier, T::Part},
        [](const Joined& r) {
          return r(C::c_region) == america && r(C::s_region) == america &&
                 (r(C::p_mfgr) == mfgr1 || r(C::p_mfgr) == mfgr2);
        },
        {C::d_year, C::c_nation},
        profit}},
      {"4.2",
       {{T::Date, T::Customer, T::Supplier, T::Part},
        [](const Joined& r) {
          return r(C::c_region) == america && r(C::s_region) == america &&
                 (r(C::d_year) == 1997 || r(C::d_year) == 1998) && (r(C::p_mfgr) == mfgr1 || r(C::p_mfgr) == mfgr2);
        },
        {C::d_year, C::s_nation, C::p_category},
        profit}},
      {"4.3",
       {{T::Date, T::Customer, T::Supplier, T::Part},
        [](const Joined& r) {
          return r(C::c_region) == america && r(C::s_nation) == united_states &&
                 (r(C::d_year) == 1997 || r(C::d_year) == 1998) && r(C::p_category) == mfgr14;
        },
        {C::d_year, C::s_city, C::p_brand1},
        profit}},
  };
  return q;
}

}  // namespace

Result reference_query(const std::string& name, const Tables& t, int threads) {
  auto it = sql().find(name);
  if (it == sql().end()) throw std::invalid_argument("no SSB query '" + name + "'");
  const SqlQuery& q = it->second;
  // Each joined dimension: key -> row (keys are unique in a dimension; a repeated key keeps its
  // first row).
  std::array<std::unordered_map<std::uint32_t, std::uint32_t>, kTables> index;
  for (Table d : q.from) {
    const Column& keys = t[key_of(d)];
    auto& m = index[static_cast<std::size_t>(d)];
    m.reserve(keys.size());
    for (std::uint32_t i = 0; i < keys.size(); ++i) m.emplace(keys[i], i);
  }
  using Groups = std::map<std::array<std::uint32_t, kMaxGroupCols>, std::int64_t>;
  struct Part {
    Groups groups;
    std::int64_t total = 0;
  };
  const std::uint64_t n = t.rows(Table::Lineorder);
  std::vector<Part> parts(static_cast<std::size_t>(chunk_count(n, threads)));
  parallel_chunks(n, threads, [&](int chunk, std::uint64_t begin, std::uint64_t end) {
    Part& part = parts[static_cast<std::size_t>(chunk)];
    Joined r{t, 0, {}};
    for (std::uint64_t i = begin; i < end; ++i) {
      r.lo = i;
      r.row.fill(-1);
      bool joined = true;
      for (Table d : q.from) {
        const auto& m = index[static_cast<std::size_t>(d)];
        auto f = m.find(t[foreign_key(d)][i]);
        if (f == m.end()) {
          joined = false;
          break;
        }
        r.row[static_cast<std::size_t>(d)] = f->second;
      }
      if (!joined || !q.where(r)) continue;
      if (q.group_by.empty()) {
        part.total += q.select(r);
        continue;
      }
      std::array<std::uint32_t, kMaxGroupCols> key{};
      for (std::size_t g = 0; g < q.group_by.size(); ++g) key[g] = r(q.group_by[g]);
      part.groups[key] += q.select(r);
    }
  });
  Groups groups;
  std::int64_t total = 0;
  for (const Part& part : parts) {
    total += part.total;
    for (const auto& [key, sum] : part.groups) groups[key] += sum;
  }
  Result out;
  if (q.group_by.empty()) out.rows.push_back({{}, total});
  for (const auto& [key, sum] : groups) out.rows.push_back({key, sum});
  return out;
}

}  // namespace hdb::ssb
