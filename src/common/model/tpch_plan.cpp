#include "model/tpch_plan.hpp"

#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "harness/parallel.hpp"
#include "workloads/random.hpp"

namespace hdb::tpch {

std::uint64_t Plan::input_bytes() const {
  std::uint64_t b = 0;
  for (const auto& r : inputs) b += r->bytes();
  return b;
}

std::uint64_t Plan::input_rows() const {
  std::uint64_t n = 0;
  for (const auto& r : inputs) n += r->rows();
  return n;
}

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::logic_error("ill-formed plan: " + what);
}

template <class T>
std::vector<T> join_row(const std::vector<T>& left, const std::vector<T>& right, int right_col) {
  std::vector<T> out = left;
  for (std::size_t i = 0; i < right.size(); ++i)
    if (static_cast<int>(i) != right_col) out.push_back(right[i]);
  return out;
}

// Applies the plan's column bookkeeping to any per-column attribute (schema, lineage).
template <class T>
std::vector<std::vector<T>> propagate(const Plan& plan, std::vector<std::vector<T>> rel) {
  for (const Step& s : plan.steps) {
    int id = static_cast<int>(rel.size());
    require(s.in >= 0 && s.in < id, "step " + s.name + " reads relation " + std::to_string(s.in));
    const auto& in = rel[static_cast<std::size_t>(s.in)];
    auto valid = [&](int c, std::size_t n) { return c >= 0 && static_cast<std::size_t>(c) < n; };
    switch (s.op) {
      case Op::Select:
        require(valid(s.col, in.size()), "step " + s.name + " selects on a missing column");
        require(s.lo <= s.hi, "step " + s.name + " selects an empty range");
        rel.push_back(in);
        break;
      case Op::Join: {
        require(s.right >= 0 && s.right < id, "step " + s.name + " joins a missing relation");
        const auto& right = rel[static_cast<std::size_t>(s.right)];
        require(valid(s.col, in.size()) && valid(s.right_col, right.size()),
                "step " + s.name + " joins on a missing column");
        rel.push_back(join_row(in, right, s.right_col));
        break;
      }
      case Op::Project: {
        std::vector<T> out;
        for (int c : s.cols) {
          require(valid(c, in.size()), "step " + s.name + " projects a missing column");
          out.push_back(in[static_cast<std::size_t>(c)]);
        }
        rel.push_back(std::move(out));
        break;
      }
    }
  }
  require(!plan.steps.empty(), "no steps");
  return rel;
}

// The columns `cols` of a table; at 64 bits its join keys wide (mapped through `map` when given).
std::shared_ptr<const Relation> sub_relation(const Relation& t, const std::vector<std::string>& cols, int key_bits,
                                             std::uint64_t (*map)(std::uint64_t)) {
  auto r = std::make_shared<Relation>();
  r->name = t.name;
  for (const std::string& c : cols) {
    const Column& src = t.cols[static_cast<std::size_t>(t.index(c))];
    if (key_bits == 64 && is_key_column(c))
      r->cols.push_back(widened(src, map));
    else if (src.info.wide)
      throw std::invalid_argument(c + " holds keys of 64 bits: the kernels need --key-bits 64");
    else
      r->cols.push_back(src);
  }
  return r;
}

// Whether the column has no value twice; its smallest and largest value in lo and hi (0 when empty).
bool unique_column(const Column& c, std::uint64_t& lo, std::uint64_t& hi) {
  std::vector<std::uint64_t> s(c.v.size());
  for (std::size_t i = 0; i < s.size(); ++i) s[i] = c.at(i);
  std::sort(s.begin(), s.end());
  lo = s.empty() ? 0 : s.front();
  hi = s.empty() ? 0 : s.back();
  return std::adjacent_find(s.begin(), s.end()) == s.end();
}

std::uint64_t widen_key_of(std::uint64_t k) { return widen_key(k); }

}  // namespace

std::vector<std::vector<ColumnInfo>> plan_schemas(const Plan& plan) {
  std::vector<std::vector<ColumnInfo>> rel;
  for (const auto& r : plan.inputs) rel.push_back(r->schema());
  return propagate(plan, std::move(rel));
}

std::vector<std::vector<Origin>> plan_lineage(const Plan& plan) {
  std::vector<std::vector<Origin>> rel;
  for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
    std::vector<Origin> o;
    for (std::size_t c = 0; c < plan.inputs[i]->cols.size(); ++c)
      o.push_back({static_cast<int>(i), static_cast<int>(c)});
    rel.push_back(std::move(o));
  }
  return propagate(plan, std::move(rel));
}

bool fuse_plan(const Plan& plan, FusedPlan& out, std::string& why) {
  const auto lineage = plan_lineage(plan);
  const int n_in = static_cast<int>(plan.inputs.size());
  // For every relation id: the set of base inputs it draws rows from.
  std::vector<std::vector<int>> bases(static_cast<std::size_t>(n_in));
  for (int i = 0; i < n_in; ++i) bases[static_cast<std::size_t>(i)] = {i};
  std::vector<std::vector<FusedPredicate>> preds(static_cast<std::size_t>(n_in));
  std::vector<int> join_of_input(static_cast<std::size_t>(n_in), -1);
  std::vector<bool> used(static_cast<std::size_t>(n_in), false);
  out = FusedPlan{};
  for (const Step& s : plan.steps) {
    const auto& in_bases = bases[static_cast<std::size_t>(s.in)];
    const auto& in_lin = lineage[static_cast<std::size_t>(s.in)];
    switch (s.op) {
      case Op::Select: {
        // Selects commute with inner joins: each goes to the relation its column comes from.
        Origin o = in_lin[static_cast<std::size_t>(s.col)];
        preds[static_cast<std::size_t>(o.input)].push_back({o.col, s.lo, s.hi});
        bases.push_back(in_bases);
        break;
      }
      case Op::Join: {
        const auto& rb = bases[static_cast<std::size_t>(s.right)];
        if (rb.size() != 1 || rb[0] == 0) {
          why = "step " + s.name + " joins a relation that is not a base relation after selects";
          return false;
        }
        if (std::find(in_bases.begin(), in_bases.end(), 0) == in_bases.end()) {
          why = "step " + s.name + " does not extend the pipeline of input 0";
          return false;
        }
        int b = rb[0];
        if (used[static_cast<std::size_t>(b)]) {
          why = "input " + std::to_string(b) + " is joined twice";
          return false;
        }
        Origin key = lineage[static_cast<std::size_t>(s.right)][static_cast<std::size_t>(s.right_col)];
        std::uint64_t key_min = 0, key_max = 0;
        if (!unique_column(plan.inputs[static_cast<std::size_t>(b)]->cols[static_cast<std::size_t>(key.col)], key_min,
                           key_max)) {
          why = "the build key " +
                plan.inputs[static_cast<std::size_t>(b)]->cols[static_cast<std::size_t>(key.col)].info.name +
                " has duplicates (a fused lookup needs a unique key)";
          return false;
        }
        used[static_cast<std::size_t>(b)] = true;
        join_of_input[static_cast<std::size_t>(b)] = static_cast<int>(out.joins.size());
        out.joins.push_back({b, key.col, in_lin[static_cast<std::size_t>(s.col)], {}, key_min, key_max});
        std::vector<int> nb = in_bases;
        nb.push_back(b);
        bases.push_back(nb);
        break;
      }
      case Op::Project: bases.push_back(in_bases); break;
    }
  }
  const auto& rb = bases.back();
  if (std::find(rb.begin(), rb.end(), 0) == rb.end()) {
    why = "the result does not draw from input 0";
    return false;
  }
  for (int i = 1; i < n_in; ++i)
    if (!preds[static_cast<std::size_t>(i)].empty() && join_of_input[static_cast<std::size_t>(i)] < 0) {
      why = "input " + std::to_string(i) + " has selects but is never joined";
      return false;
    }
  out.probe_preds = preds[0];
  for (auto& j : out.joins) j.build_preds = preds[static_cast<std::size_t>(j.build_input)];
  out.outputs = lineage.back();
  return true;
}

Step select_step(const std::string& name, int in, int col, std::uint64_t lo, std::uint64_t hi) {
  Step s;
  s.op = Op::Select;
  s.name = name;
  s.in = in;
  s.col = col;
  s.lo = lo;
  s.hi = hi;
  return s;
}

Step join_step(const std::string& name, int in, int col, int right, int right_col) {
  Step s;
  s.op = Op::Join;
  s.name = name;
  s.in = in;
  s.col = col;
  s.right = right;
  s.right_col = right_col;
  return s;
}

Step project_step(const std::string& name, int in, std::vector<int> cols) {
  Step s;
  s.op = Op::Project;
  s.name = name;
  s.in = in;
  s.cols = std::move(cols);
  return s;
}

std::shared_ptr<const Relation> key_value_relation(const std::string& name, std::vector<std::uint32_t> k,
                                                   std::vector<std::uint32_t> v) {
  auto r = std::make_shared<Relation>();
  r->name = name;
  r->cols.push_back({{name + "_key", ColType::Int}, std::move(k)});
  r->cols.push_back({{name + "_value", ColType::Int}, std::move(v)});
  return r;
}

Plan tpch_kernel(const std::string& kernel, const Tables& tables, int key_bits) {
  if (key_bits != 32 && key_bits != 64)
    throw std::invalid_argument("key width " + std::to_string(key_bits) + " is not 32 or 64");
  // Generated keys are mapped into the 64-bit range; loaded keys are the data and stay as they are.
  std::uint64_t (*map)(std::uint64_t) = tables.generated ? widen_key_of : nullptr;
  auto sub_relation = [&](const Relation& t, const std::vector<std::string>& cols) {
    return tpch::sub_relation(t, cols, key_bits, map);
  };
  const Tables& t = tables;
  Plan p;
  p.kernel = kernel;
  if (kernel == "A") {
    // Q6: l_shipdate in 1994, l_discount between 0.06 - 0.01 and 0.06 + 0.01, l_quantity < 24.
    p.inputs = {sub_relation(t.lineitem, {"l_orderkey", "l_quantity", "l_extendedprice", "l_discount", "l_shipdate"})};
    p.steps = {select_step("1_select_shipdate", 0, 4, kQ6DateLo, kQ6DateHi),
               select_step("2_select_discount", 1, 3, 5, 7), select_step("3_select_quantity", 2, 1, 0, 23)};
  } else if (kernel == "B") {
    // lineitem ⋈ orders on the order key, then ⋈ customer on the customer key.
    p.inputs = {sub_relation(t.lineitem, {"l_orderkey", "l_extendedprice"}),
                sub_relation(t.orders, {"o_orderkey", "o_custkey", "o_orderdate"}),
                sub_relation(t.customer, {"c_custkey", "c_mktsegment"})};
    // 3: (l_orderkey, l_extendedprice, o_custkey, o_orderdate); 4: + c_mktsegment
    p.steps = {join_step("1_join_orders", 0, 0, 1, 0), join_step("2_join_customer", 3, 2, 2, 0)};
  } else if (kernel == "C") {
    // Q3 without its aggregate: the selects, the two joins, the projection of the output columns.
    p.inputs = {sub_relation(t.lineitem, {"l_orderkey", "l_extendedprice", "l_discount", "l_shipdate"}),
                sub_relation(t.orders, {"o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"}),
                sub_relation(t.customer, {"c_custkey", "c_mktsegment"})};
    const auto building = static_cast<std::uint32_t>(segment_code("BUILDING"));
    // 3: customer BUILDING, 4: orders before the date, 5: lineitem after the date
    // 6: (l_orderkey, l_extendedprice, l_discount, l_shipdate, o_custkey, o_orderdate, o_shippriority)
    // 7: 6 + c_mktsegment, 8: the projection
    p.steps = {select_step("1_select_customer", 2, 1, building, building),
               select_step("2_select_orders", 1, 2, 0, kQ3Date - 1),
               select_step("3_select_lineitem", 0, 3, kQ3Date + 1, 0xffffffffu),
               join_step("4_join_orders", 5, 0, 4, 0),
               join_step("5_join_customer", 6, 4, 3, 0),
               project_step("6_project", 7, {0, 1, 2, 5, 6})};
  } else {
    throw std::logic_error("unknown kernel " + kernel);
  }
  plan_schemas(p);
  return p;
}

namespace {

std::vector<std::uint32_t> uniform_column(std::uint64_t n, std::uint64_t seed, std::uint64_t range, int threads) {
  std::vector<std::uint32_t> v(n);
  parallel_for(n, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) v[i] = static_cast<std::uint32_t>(bounded(rand_at(seed, i), range));
  });
  return v;
}

}  // namespace

Plan random_kernel(const std::string& kernel, std::uint64_t n, std::uint64_t seed, int threads, int key_bits) {
  if (key_bits != 32 && key_bits != 64)
    throw std::invalid_argument("key width " + std::to_string(key_bits) + " is not 32 or 64");
  const bool wide = key_bits == 64;
  Plan p;
  p.kernel = kernel;
  const std::uint64_t full = std::uint64_t{1} << 32;
  auto col = [&](std::uint64_t salt, std::uint64_t range) {
    return uniform_column(n, splitmix64(seed ^ salt), range, threads);
  };
  const std::uint32_t half = static_cast<std::uint32_t>(n / 2 == 0 ? 0 : n / 2 - 1);
  // A key (or a bound on one) at this width: 64-bit keys through widen_key, which keeps order.
  auto key = [wide](std::uint64_t k) { return wide ? widen_key(k) : k; };
  const std::uint64_t key_top = wide ? ~std::uint64_t{0} : 0xffffffffu;
  // Makes the key column (and the columns in `also`) of a relation wide.
  auto widen = [wide](std::shared_ptr<const Relation> r, std::vector<int> cols) {
    if (!wide) return r;
    auto w = std::make_shared<Relation>(*r);
    for (int c : cols)
      w->cols[static_cast<std::size_t>(c)] = widened(r->cols[static_cast<std::size_t>(c)], widen_key_of);
    return std::shared_ptr<const Relation>(std::move(w));
  };
  if (kernel == "A") {
    // Three chained selects of 1/2 each on uniform 32-bit keys and values: 1/8 of the rows remain.
    p.inputs = {widen(key_value_relation("r", col(1, full), col(2, full)), {0})};
    p.steps = {select_step("1_select_key_low", 0, 0, 0, key(0x7fffffffu)),
               select_step("2_select_value_low", 1, 1, 0, 0x7fffffffu),
               select_step("3_select_key_high", 2, 0, key(0x40000000u), key_top)};
    return p;
  }
  if (kernel != "B" && kernel != "C") throw std::logic_error("unknown kernel " + kernel);
  // r1.key is uniform over [0, n) and r2.key runs over [0, n) once, so every r1 row meets exactly
  // one r2 row; r2.value is uniform over [0, n) and r3.key again [0, n): the second join also
  // yields one row per input row. Inputs are never joined into empty sets (as the paper asks), and
  // each relation is in key order, as the paper's sorted join expects of its inputs.
  std::vector<std::uint32_t> k1 = col(3, n);
  std::sort(k1.begin(), k1.end());
  std::vector<std::uint32_t> iota(n);
  std::iota(iota.begin(), iota.end(), 0u);
  // At 64 bits r2_value, the foreign key of the second join, is as wide as r3_key.
  p.inputs = {widen(key_value_relation("r1", std::move(k1), col(4, n)), {0}),
              widen(key_value_relation("r2", iota, col(6, n)), {0, 1}),
              widen(key_value_relation("r3", iota, col(8, full)), {0})};
  if (kernel == "B") {
    // 3: (r1_key, r1_value, r2_value); 4: + r3_value
    p.steps = {join_step("1_join_r2", 0, 0, 1, 0), join_step("2_join_r3", 3, 2, 2, 0)};
  } else {
    // Selects of 1/2 on each relation, the joins, then (r1_key, r1_value, r3_value).
    p.steps = {select_step("1_select_r1", 0, 1, 0, half),
               select_step("2_select_r2", 1, 1, 0, key(half)),
               select_step("3_select_r3", 2, 1, 0, 0x7fffffffu),
               join_step("4_join_r2", 3, 0, 4, 0),
               join_step("5_join_r3", 6, 2, 5, 0),
               project_step("6_project", 7, {0, 1, 3})};
  }
  plan_schemas(p);
  return p;
}

}  // namespace hdb::tpch
