// The built-in SSB generator (ssb-dbgen's distributions, build.c: mk_order, mk_cust, mk_supp,
// mk_part, mk_date) for the columns the 13 queries read. Every value is a function of (seed, column,
// row), so rows are generated in parallel and the tables are the same for any thread count.
#include <algorithm>
#include <cstdio>

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"
#include "workloads/ssb_tables.hpp"
#include "workloads/tbl_io.hpp"

namespace hdb::ssb {
namespace {

// Uniform integer in [lo, hi] from stream (seed, i).
std::uint32_t uniform(std::uint64_t seed, std::uint64_t i, std::uint64_t lo, std::uint64_t hi) {
  return static_cast<std::uint32_t>(lo + bounded(rand_at(seed, i), hi - lo + 1));
}

// One stream per column (so adding a column never changes the others).
std::uint64_t stream(std::uint64_t seed, Col c) {
  return splitmix64(seed ^ (0x55b0000ull + static_cast<std::uint64_t>(c)));
}

// Lines per order: dbgen draws 1..7 (4 on average); here every order has 4, so lineorder has
// exactly SF x 6,000,000 rows and the lines of an order share its date and customer, as in dbgen.
constexpr std::uint64_t kLinesPerOrder = 4;

// Customer and supplier: a uniform nation, a city of it (uniform digit), its region.
void make_places(Tables& t, Col key, Col city, Col nation, Col region, std::uint64_t rows, std::uint64_t seed,
                 int threads) {
  for (Col c : {key, city, nation, region}) t[c].resize(rows);
  const std::uint64_t s_nation = stream(seed, nation), s_city = stream(seed, city);
  parallel_for(rows, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      const std::uint32_t n = uniform(s_nation, i, 0, kNations - 1);
      t[key][i] = static_cast<std::uint32_t>(i + 1);
      t[nation][i] = n;
      t[city][i] = n * 10 + uniform(s_city, i, 0, 9);
      t[region][i] = region_of_nation(n);
    }
  });
}

}  // namespace

std::uint64_t generated_bytes(double sf) {
  const Sizes n = sizes_for(sf);
  return 4 * (9 * n.lineorder + 5 * kDates + 4 * (n.customers + n.suppliers + n.parts));
}

Tables generate_tables(double sf, std::uint64_t seed, int threads) {
  const Sizes n = sizes_for(sf);
  Tables t;
  t.source = "generated sf=" + std::to_string(sf);

  // date: every day from 1992-01-01, kDates of them (ssb-dbgen: 2,556, so the last is 1998-12-30).
  for (Col c : {Col::d_datekey, Col::d_year, Col::d_yearmonthnum, Col::d_yearmonth, Col::d_weeknuminyear})
    t[c].resize(kDates);
  for (std::uint32_t i = 0; i < kDates; ++i) {
    const std::uint32_t k = datekey_after_start(i), y = k / 10000, m = k / 100 % 100;
    t[Col::d_datekey][i] = k;
    t[Col::d_year][i] = y;
    t[Col::d_yearmonthnum][i] = y * 100 + m;
    t[Col::d_yearmonth][i] = (y - 1992) * 12 + m - 1;
    t[Col::d_weeknuminyear][i] = week_num_in_year(k);
  }

  make_places(t, Col::c_custkey, Col::c_city, Col::c_nation, Col::c_region, n.customers, seed, threads);
  make_places(t, Col::s_suppkey, Col::s_city, Col::s_nation, Col::s_region, n.suppliers, seed, threads);

  // part: manufacturer 1..5, category 1..5 of it, brand 1..40 of that (mk_part).
  for (Col c : {Col::p_partkey, Col::p_mfgr, Col::p_category, Col::p_brand1}) t[c].resize(n.parts);
  const std::uint64_t s_mfgr = stream(seed, Col::p_mfgr), s_cat = stream(seed, Col::p_category),
                      s_brand = stream(seed, Col::p_brand1);
  parallel_for(n.parts, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      const std::uint32_t m = uniform(s_mfgr, i, 0, kMfgrs - 1), cat = m * 5 + uniform(s_cat, i, 0, 4);
      t[Col::p_partkey][i] = static_cast<std::uint32_t>(i + 1);
      t[Col::p_mfgr][i] = m;
      t[Col::p_category][i] = cat;
      t[Col::p_brand1][i] = cat * 40 + uniform(s_brand, i, 0, 39);
    }
  });

  // lineorder (mk_order): per order a date uniform over [1992-01-01, 1998-08-02] and a customer
  // uniform over the keys that are no multiple of 3 (dbgen's CUST_MORTALITY: a third of the
  // customers order nothing); per line a part, a supplier, quantity 1..50 and discount 0..10
  // uniform; extendedprice = quantity x P_RETAILPRICE, revenue = extendedprice x (100 - discount)
  // / 100, supplycost = 6 x P_RETAILPRICE / 10 (integer cents, as dbgen computes them).
  std::vector<std::uint32_t> order_dates(kOrderDays);
  for (std::uint32_t i = 0; i < kOrderDays; ++i) order_dates[i] = datekey_after_start(i);
  for (int c = 0; c <= static_cast<int>(Col::lo_supplycost); ++c)
    t.cols[static_cast<std::size_t>(c)].resize(n.lineorder);
  const std::uint64_t s_date = stream(seed, Col::lo_orderdate), s_cust = stream(seed, Col::lo_custkey),
                      s_part = stream(seed, Col::lo_partkey), s_supp = stream(seed, Col::lo_suppkey),
                      s_qty = stream(seed, Col::lo_quantity), s_disc = stream(seed, Col::lo_discount);
  const std::uint64_t eligible = n.customers < 3 ? n.customers : n.customers - n.customers / 3;
  parallel_for(n.lineorder, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      const std::uint64_t order = i / kLinesPerOrder;
      const std::uint64_t k = bounded(rand_at(s_cust, order), eligible);
      const std::uint64_t cust =
          n.customers < 3 ? k + 1 : (k / 2) * 3 + (k % 2) + 1;  // the k-th key not divisible by 3
      const std::uint32_t part = uniform(s_part, i, 1, n.parts), qty = uniform(s_qty, i, 1, 50),
                          disc = uniform(s_disc, i, 0, 10), price = retail_price_cents(part);
      t[Col::lo_orderdate][i] = order_dates[uniform(s_date, order, 0, kOrderDays - 1)];
      t[Col::lo_custkey][i] = static_cast<std::uint32_t>(cust);
      t[Col::lo_partkey][i] = part;
      t[Col::lo_suppkey][i] = uniform(s_supp, i, 1, n.suppliers);
      t[Col::lo_quantity][i] = qty;
      t[Col::lo_extendedprice][i] = qty * price;
      t[Col::lo_discount][i] = disc;
      t[Col::lo_revenue][i] = static_cast<std::uint32_t>(std::uint64_t{qty} * price * (100 - disc) / 100);
      t[Col::lo_supplycost][i] = 6 * price / 10;
    }
  });
  return t;
}

void write_tbl_files(const Tables& t, const std::string& dir) {
  auto num = [](std::uint64_t v) { return std::to_string(v); };
  static const char* kMonthNames[] = {"January", "February", "March",     "April",   "May",      "June",
                                      "July",    "August",   "September", "October", "November", "December"};
  {
    tbl::TblWriter w(dir + "/lineorder.tbl");
    for (std::uint64_t i = 0; i < t.rows(Table::Lineorder); ++i) {
      auto v = [&](Col c) { return num(t[c][i]); };
      w.line(num(i / 4 + 1) + "|" + num(i % 4 + 1) + "|" + v(Col::lo_custkey) + "|" + v(Col::lo_partkey) + "|" +
             v(Col::lo_suppkey) + "|" + v(Col::lo_orderdate) + "|5-LOW|0|" + v(Col::lo_quantity) + "|" +
             v(Col::lo_extendedprice) + "|17366547|" + v(Col::lo_discount) + "|" + v(Col::lo_revenue) + "|" +
             v(Col::lo_supplycost) + "|2|" + v(Col::lo_orderdate) + "|TRUCK|\n");
    }
    w.close();
  }
  {
    tbl::TblWriter w(dir + "/date.tbl");
    for (std::uint64_t i = 0; i < t.rows(Table::Date); ++i) {
      const std::uint32_t k = t[Col::d_datekey][i], m = k / 100 % 100;
      const std::string month = m >= 1 && m <= 12 ? kMonthNames[m - 1] : "?";
      w.line(num(k) + "|" + month + " " + num(k % 100) + ", " + num(k / 10000) + "|Monday|" + month + "|" +
             num(t[Col::d_year][i]) + "|" + num(t[Col::d_yearmonthnum][i]) + "|" +
             yearmonth_name(t[Col::d_yearmonth][i]) + "|2|" + num(k % 100) + "|1|" + num(m) + "|" +
             num(t[Col::d_weeknuminyear][i]) + "|Winter|0|0|0|1|\n");
    }
    w.close();
  }
  auto places = [&](const char* file, Col key, Col city, Col nation, Col region, bool customer) {
    tbl::TblWriter w(dir + "/" + file);
    for (std::uint64_t i = 0; i < t[key].size(); ++i) {
      char name[40];
      std::snprintf(name, sizeof name, "%s#%09llu", customer ? "Customer" : "Supplier",
                    static_cast<unsigned long long>(t[key][i]));
      w.line(num(t[key][i]) + "|" + name + "|IVhzIApeRb ot,c,E|" + city_name(t[city][i]) + "|" +
             nation_name(t[nation][i]) + "|" + region_name(t[region][i]) + "|25-989-741-2988|" +
             (customer ? "BUILDING|" : "") + "\n");
    }
    w.close();
  };
  places("customer.tbl", Col::c_custkey, Col::c_city, Col::c_nation, Col::c_region, true);
  places("supplier.tbl", Col::s_suppkey, Col::s_city, Col::s_nation, Col::s_region, false);
  {
    tbl::TblWriter w(dir + "/part.tbl");
    for (std::uint64_t i = 0; i < t.rows(Table::Part); ++i)
      w.line(num(t[Col::p_partkey][i]) + "|lace spring|" + mfgr_name(t[Col::p_mfgr][i]) + "|" +
             category_name(t[Col::p_category][i]) + "|" + brand_name(t[Col::p_brand1][i]) +
             "|goldenrod|PROMO BURNISHED COPPER|7|JUMBO PKG|\n");
    w.close();
  }
}

}  // namespace hdb::ssb
