// The built-in TPC-H generator for the columns the micro-kernels use (specification clause 4.2.3).
// Every value is a function of (seed, table, row), so rows are generated in parallel.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"
#include "workloads/tbl_io.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {
namespace {

// Uniform integer in [lo, hi] from stream (seed, i).
std::uint32_t uniform(std::uint64_t seed, std::uint64_t i, std::uint64_t lo, std::uint64_t hi) {
  return static_cast<std::uint32_t>(lo + bounded(rand_at(seed, i), hi - lo + 1));
}

Relation make(const std::string& name, const std::vector<ColumnInfo>& schema, std::uint64_t rows) {
  Relation r;
  r.name = name;
  for (const ColumnInfo& c : schema)
    r.cols.push_back({c, std::vector<std::uint32_t>(rows), std::vector<std::uint32_t>(c.wide ? rows : 0)});
  return r;
}

}  // namespace

std::uint64_t generated_bytes(double sf) {
  if (!(sf > 0)) return 0;
  // Order keys past 2^32 (about sf 716) take a second word in orders and lineitem.
  const double key_words = wide_order_keys(static_cast<std::uint64_t>(std::llround(sf * kOrdersPerSf))) ? 1.0 : 0.0;
  const double rows =
      sf * (2.0 * kCustomersPerSf + (4.0 + key_words) * kOrdersPerSf + (5.0 + key_words) * 4 * kOrdersPerSf);
  return static_cast<std::uint64_t>(rows * sizeof(std::uint32_t));
}

bool is_key_column(const std::string& name) {
  return name == "c_custkey" || name == "o_orderkey" || name == "o_custkey" || name == "l_orderkey";
}

std::uint64_t max_key(const Tables& t) {
  std::uint64_t m = 0;
  for (const Relation* r : {&t.customer, &t.orders, &t.lineitem})
    for (const Column& c : r->cols)
      if (is_key_column(c.info.name)) m = std::max(m, max_value(c));
  return m;
}

Tables generate_tables(double sf, std::uint64_t seed, int threads) {
  if (!(sf > 0) || sf > 1000) throw UsageError("scale factor must be in (0, 1000], not " + std::to_string(sf));
  const std::uint64_t customers = std::max<std::uint64_t>(1, std::llround(sf * kCustomersPerSf));
  const std::uint64_t orders = std::max<std::uint64_t>(1, std::llround(sf * kOrdersPerSf));
  const std::uint64_t parts = std::max<std::uint64_t>(1, std::llround(sf * kPartsPerSf));
  // Separate streams per column so that adding a column never changes the others.
  const std::uint64_t s_seg = splitmix64(seed ^ 0x101), s_cust = splitmix64(seed ^ 0x201),
                      s_odate = splitmix64(seed ^ 0x202), s_lines = splitmix64(seed ^ 0x301),
                      s_qty = splitmix64(seed ^ 0x302), s_part = splitmix64(seed ^ 0x303),
                      s_disc = splitmix64(seed ^ 0x304), s_ship = splitmix64(seed ^ 0x305);

  (void)market_segments();  // its one allocation on this thread, not in a worker
  Tables t;
  t.source = "generated sf=" + std::to_string(sf);
  t.generated = true;
  t.customer = make("customer", {{"c_custkey", ColType::Int}, {"c_mktsegment", ColType::Segment}}, customers);
  parallel_for(customers, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      t.customer.cols[0].v[i] = static_cast<std::uint32_t>(i + 1);
      t.customer.cols[1].v[i] = uniform(s_seg, i, 0, market_segments().size() - 1);
    }
  });

  const bool wide = wide_order_keys(orders);  // dbgen's keys pass 2^32 near sf 716: 64-bit columns
  t.orders = make("orders",
                  {{"o_orderkey", ColType::Int, wide},
                   {"o_custkey", ColType::Int},
                   {"o_orderdate", ColType::Date},
                   {"o_shippriority", ColType::Int}},
                  orders);
  // 1..7 line items per order: counts first, then a prefix sum places each order's items.
  std::vector<std::uint64_t> first(orders + 1, 0);
  parallel_for(orders, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      t.orders.cols[0].set(i, sparse_order_key(i + 1));
      // O_CUSTKEY: uniform over the customers whose key is not a multiple of 3 (a third of the
      // customers have no orders); drawn as the k-th such key.
      std::uint64_t eligible = customers - customers / 3;
      std::uint64_t k = bounded(rand_at(s_cust, i), std::max<std::uint64_t>(1, eligible));
      std::uint64_t key = customers < 3 ? 1 + k % customers : (k / 2) * 3 + (k % 2) + 1;
      t.orders.cols[1].v[i] = static_cast<std::uint32_t>(key);
      t.orders.cols[2].v[i] = uniform(s_odate, i, kStartDate, kEndDate - 151);
      t.orders.cols[3].v[i] = 0;
      first[i + 1] = uniform(s_lines, i, 1, 7);
    }
  });
  for (std::uint64_t i = 0; i < orders; ++i) first[i + 1] += first[i];
  const std::uint64_t lines = first[orders];

  t.lineitem = make("lineitem",
                    {{"l_orderkey", ColType::Int, wide},
                     {"l_quantity", ColType::Int},
                     {"l_extendedprice", ColType::Money},
                     {"l_discount", ColType::Hundredths},
                     {"l_shipdate", ColType::Date}},
                    lines);
  parallel_for(orders, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t o = b; o < e; ++o) {
      for (std::uint64_t i = first[o]; i < first[o + 1]; ++i) {
        std::uint32_t qty = uniform(s_qty, i, 1, 50);
        std::uint64_t partkey = uniform(s_part, i, 1, parts);
        t.lineitem.cols[0].set(i, t.orders.cols[0].at(o));
        t.lineitem.cols[1].v[i] = qty;
        t.lineitem.cols[2].v[i] = qty * retail_price_cents(partkey);
        t.lineitem.cols[3].v[i] = uniform(s_disc, i, 0, 10);
        t.lineitem.cols[4].v[i] = t.orders.cols[2].v[o] + uniform(s_ship, i, 1, 121);
      }
    }
  });
  return t;
}

namespace {

// Filler text for the columns the kernels do not read, so that lines are about as long as dbgen's.
const char* filler(std::uint64_t i) {
  static const char* words[] = {"carefully final deposits",  "quickly regular packages haggle",
                                "furiously ironic accounts", "slyly express requests sleep",
                                "blithely even foxes nag",   "pending theodolites"};
  return words[i % 6];
}

}  // namespace

void write_tbl_files(const Tables& t, const std::string& dir) {
  auto num = [](std::uint64_t v) { return std::to_string(v); };
  {
    tbl::TblWriter w(dir + "/customer.tbl");
    const Relation& c = t.customer;
    for (std::uint64_t i = 0; i < c.rows(); ++i) {
      const std::uint64_t k = c.cols[0].at(i);
      char name[40];
      std::snprintf(name, sizeof name, "Customer#%09llu", static_cast<unsigned long long>(k));
      w.line(num(k) + "|" + name + "|IVhzIApeRb ot,c,E|" + num(k % 25) + "|25-989-741-2988|" +
             format_value(ColType::Money, k * 7919 % 1000000) + "|" + format_value(ColType::Segment, c.cols[1].v[i]) +
             "|" + filler(k) + "|\n");
    }
    w.close();
  }
  {
    tbl::TblWriter w(dir + "/orders.tbl");
    const Relation& o = t.orders;
    for (std::uint64_t i = 0; i < o.rows(); ++i) {
      const std::uint64_t k = o.cols[0].at(i);
      w.line(num(k) + "|" + num(o.cols[1].at(i)) + "|O|" + format_value(ColType::Money, k * 104729u % 50000000u) + "|" +
             format_date(o.cols[2].v[i]) + "|5-LOW|Clerk#000000951|" + num(o.cols[3].v[i]) + "|" + filler(i) + "|\n");
    }
    w.close();
  }
  {
    tbl::TblWriter w(dir + "/lineitem.tbl");
    const Relation& l = t.lineitem;
    std::uint64_t prev = 0;
    std::uint32_t line_no = 0;
    for (std::uint64_t i = 0; i < l.rows(); ++i) {
      const std::uint64_t k = l.cols[0].at(i);
      line_no = k == prev ? line_no + 1 : 1;
      prev = k;
      std::uint32_t ship = l.cols[4].v[i];
      w.line(num(k) + "|" + num(i % 200000 + 1) + "|" + num(i % 10000 + 1) + "|" + num(line_no) + "|" +
             num(l.cols[1].v[i]) + "|" + format_value(ColType::Money, l.cols[2].v[i]) + "|" +
             format_value(ColType::Hundredths, l.cols[3].v[i]) + "|0.02|N|O|" + format_date(ship) + "|" +
             format_date(ship + 30) + "|" + format_date(ship + 35) + "|DELIVER IN PERSON|TRUCK|" + filler(i) + "|\n");
    }
    w.close();
  }
}

}  // namespace hdb::tpch
