// The built-in TPC-H generator for the columns the micro-kernels use (specification clause 4.2.3).
// Every value is a function of (seed, table, row), so rows are generated in parallel.
#include <algorithm>
#include <cmath>

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"
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
  for (const ColumnInfo& c : schema) r.cols.push_back({c, std::vector<std::uint32_t>(rows)});
  return r;
}

}  // namespace

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

  Tables t;
  t.source = "generated sf=" + std::to_string(sf);
  t.customer = make("customer", {{"c_custkey", ColType::Int}, {"c_mktsegment", ColType::Segment}}, customers);
  parallel_for(customers, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      t.customer.cols[0].v[i] = static_cast<std::uint32_t>(i + 1);
      t.customer.cols[1].v[i] = uniform(s_seg, i, 0, market_segments().size() - 1);
    }
  });

  t.orders = make("orders",
                  {{"o_orderkey", ColType::Int},
                   {"o_custkey", ColType::Int},
                   {"o_orderdate", ColType::Date},
                   {"o_shippriority", ColType::Int}},
                  orders);
  // 1..7 line items per order: counts first, then a prefix sum places each order's items.
  std::vector<std::uint64_t> first(orders + 1, 0);
  parallel_for(orders, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) {
      t.orders.cols[0].v[i] = static_cast<std::uint32_t>(sparse_order_key(i + 1));
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
                    {{"l_orderkey", ColType::Int},
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
        t.lineitem.cols[0].v[i] = t.orders.cols[0].v[o];
        t.lineitem.cols[1].v[i] = qty;
        t.lineitem.cols[2].v[i] = qty * retail_price_cents(partkey);
        t.lineitem.cols[3].v[i] = uniform(s_disc, i, 0, 10);
        t.lineitem.cols[4].v[i] = t.orders.cols[2].v[o] + uniform(s_ship, i, 1, 121);
      }
    }
  });
  return t;
}

}  // namespace hdb::tpch
