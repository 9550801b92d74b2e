// The fused rewrite (fuse_plan) executed on the host exactly as the CUDA fused kernel walks it:
// probe rows of input 0 through its selects, a unique-key lookup per join (build rows filtered by
// their selects), output columns by lineage. Its answer must equal the operator-at-a-time
// reference for every fusable test plan, so the device kernel only has to get the mechanics right.
#include <unordered_map>

#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {
namespace {

bool keep(const Relation& r, std::uint64_t row, const std::vector<FusedPredicate>& preds) {
  for (const auto& p : preds) {
    std::uint32_t x = r.cols[static_cast<std::size_t>(p.col)].v[row];
    if (x < p.lo || x > p.hi) return false;
  }
  return true;
}

Relation run_fused_on_host(const Plan& plan, const FusedPlan& f) {
  std::vector<std::unordered_map<std::uint32_t, std::uint64_t>> tables(f.joins.size());
  std::vector<int> join_of(plan.inputs.size(), -1);
  for (std::size_t j = 0; j < f.joins.size(); ++j) {
    const Relation& b = *plan.inputs[static_cast<std::size_t>(f.joins[j].build_input)];
    join_of[static_cast<std::size_t>(f.joins[j].build_input)] = static_cast<int>(j);
    for (std::uint64_t r = 0; r < b.rows(); ++r)
      if (keep(b, r, f.joins[j].build_preds)) tables[j][b.cols[static_cast<std::size_t>(f.joins[j].build_key)].v[r]] = r;
  }
  Relation out;
  out.cols.resize(f.outputs.size());
  const Relation& probe = *plan.inputs[0];
  std::vector<std::uint64_t> m(f.joins.size());
  auto value = [&](std::uint64_t r, Origin o) {
    std::uint64_t row = o.input == 0 ? r : m[static_cast<std::size_t>(join_of[static_cast<std::size_t>(o.input)])];
    return plan.inputs[static_cast<std::size_t>(o.input)]->cols[static_cast<std::size_t>(o.col)].v[row];
  };
  for (std::uint64_t r = 0; r < probe.rows(); ++r) {
    if (!keep(probe, r, f.probe_preds)) continue;
    bool hit = true;
    for (std::size_t j = 0; j < f.joins.size() && hit; ++j) {
      auto it = tables[j].find(value(r, f.joins[j].probe));
      hit = it != tables[j].end();
      if (hit) m[j] = it->second;
    }
    if (!hit) continue;
    for (std::size_t c = 0; c < f.outputs.size(); ++c) out.cols[c].v.push_back(value(r, f.outputs[c]));
  }
  return out;
}

TEST(TpchFusedPlan, HostWalkEqualsTheReference) {
  int fused = 0;
  for (auto& [name, plan] : test_plans()) {
    SCOPED_TRACE(name);
    FusedPlan f;
    std::string why;
    if (!fuse_plan(plan, f, why)) continue;
    ++fused;
    Relation want = reference_execute(plan);
    Verification v = compare_result(run_fused_on_host(plan, f), want, checksum(want), 1);
    EXPECT_TRUE(v.ok) << v.detail;
  }
  EXPECT_GE(fused, 18);  // all kernels on random and TPC-H data
}

}  // namespace
}  // namespace hdb::tpch::test
