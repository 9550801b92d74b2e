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
    const std::uint64_t x = r.cols[static_cast<std::size_t>(p.col)].at(row);
    if (x < p.lo || x > p.hi) return false;
  }
  return true;
}

Relation run_fused_on_host(const Plan& plan, const FusedPlan& f) {
  std::vector<std::unordered_map<std::uint64_t, std::uint64_t>> tables(f.joins.size());
  std::vector<int> join_of(plan.inputs.size(), -1);
  for (std::size_t j = 0; j < f.joins.size(); ++j) {
    const Relation& b = *plan.inputs[static_cast<std::size_t>(f.joins[j].build_input)];
    join_of[static_cast<std::size_t>(f.joins[j].build_input)] = static_cast<int>(j);
    for (std::uint64_t r = 0; r < b.rows(); ++r)
      if (keep(b, r, f.joins[j].build_preds))
        tables[j][b.cols[static_cast<std::size_t>(f.joins[j].build_key)].at(r)] = r;
  }
  Relation out;
  out.cols.resize(f.outputs.size());
  for (std::size_t c = 0; c < f.outputs.size(); ++c)
    out.cols[c].info = plan.inputs[static_cast<std::size_t>(f.outputs[c].input)]
                           ->cols[static_cast<std::size_t>(f.outputs[c].col)]
                           .info;
  const Relation& probe = *plan.inputs[0];
  std::vector<std::uint64_t> m(f.joins.size());
  auto value = [&](std::uint64_t r, Origin o) {
    std::uint64_t row = o.input == 0 ? r : m[static_cast<std::size_t>(join_of[static_cast<std::size_t>(o.input)])];
    return plan.inputs[static_cast<std::size_t>(o.input)]->cols[static_cast<std::size_t>(o.col)].at(row);
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
    for (std::size_t c = 0; c < f.outputs.size(); ++c) out.cols[c].push_back(value(r, f.outputs[c]));
  }
  return out;
}

TEST(TpchFusedPlan, HostWalkEqualsTheReference) {
  int fused = 0;
  for (int bits : {32, 64})
    for (auto& [name, plan] : test_plans(true, bits)) {
      SCOPED_TRACE(name + " key=" + std::to_string(bits));
      FusedPlan f;
      std::string why;
      if (!fuse_plan(plan, f, why)) continue;
      ++fused;
      Relation want = reference_execute(plan);
      Verification v = compare_result(run_fused_on_host(plan, f), want, checksum(want), 1);
      EXPECT_TRUE(v.ok) << v.detail;
    }
  EXPECT_GE(fused, 36);  // all kernels on random and TPC-H data, at both key widths
}

}  // namespace
}  // namespace hdb::tpch::test
