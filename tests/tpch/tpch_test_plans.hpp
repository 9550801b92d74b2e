#pragma once
// Plans every tpch backend test runs: the kernels on random relations of awkward sizes and on a
// small generated TPC-H data set, plus edge cases (empty, one row, nothing or everything selected,
// maximum key values, all keys equal, probe keys beside a dense build range). Each backend's answer
// must equal the serial reference.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "bench/tpch.hpp"
#include "harness/errors.hpp"
#include "reference/tpch.hpp"

namespace hdb::tpch::test {

// A two-step plan: select on r1, then join with r2 on the keys.
inline Plan select_join(std::shared_ptr<const Relation> r1, std::shared_ptr<const Relation> r2, std::uint64_t lo,
                        std::uint64_t hi) {
  Plan p;
  p.kernel = "edge";
  p.inputs = {std::move(r1), std::move(r2)};
  p.steps = {select_step("select", 0, 1, lo, hi), join_step("join", 2, 0, 1, 0)};
  return p;
}

// A relation (key, value) with 64-bit keys.
inline std::shared_ptr<const Relation> wide_key_relation(const std::string& name,
                                                         const std::vector<std::uint64_t>& keys,
                                                         std::vector<std::uint32_t> values) {
  auto r = std::make_shared<Relation>();
  r->name = name;
  Column k{{name + "_key", ColType::Int, true}, {}, {}};
  for (std::uint64_t x : keys) k.push_back(x);
  r->cols.push_back(std::move(k));
  r->cols.push_back({{name + "_value", ColType::Int}, std::move(values)});
  return r;
}

// 64-bit edge cases: keys at the top of the range, and keys that share their low word (or their
// high word) with other keys, so that comparing one word only joins or selects the wrong rows.
inline void add_wide_edge_plans(std::vector<std::pair<std::string, Plan>>& out) {
  const std::uint64_t top = ~std::uint64_t{0}, one = std::uint64_t{1} << 32;
  auto w1 =
      wide_key_relation("w1", {5, one + 5, 2 * one + 5, top, top - 1, top, one - 1, one}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto w2 = wide_key_relation("w2", {one + 5, 5, top, 7 * one + 5, one - 1, one}, {10, 20, 30, 40, 50, 60});
  // A select on the 64-bit key, then the join.
  Plan p;
  p.kernel = "edge64";
  p.inputs = {w1, w2};
  p.steps = {select_step("select", 0, 0, one - 1, top - 1), join_step("join", 2, 0, 1, 0)};
  out.emplace_back("64-bit keys sharing a word", p);
  out.emplace_back("64-bit maximum keys", select_join(w1, w2, 0, 0xffffffffu));
}

// The plans at one key width: at 64 the random and TPC-H kernels with wide keys, and the 64-bit
// edge cases instead of the 32-bit ones.
inline std::vector<std::pair<std::string, Plan>> test_plans(bool include_tpch = true, int key_bits = 32) {
  std::vector<std::pair<std::string, Plan>> out;
  // Sizes around work-group and chunk boundaries, none a multiple of a power of two above 8.
  for (std::uint64_t n : {0ull, 1ull, 7ull, 1000ull, 40009ull})
    for (const char* k : {"A", "B", "C"})
      out.emplace_back(std::string(k) + "/random n=" + std::to_string(n), random_kernel(k, n, 1234 + n, 2, key_bits));
  if (include_tpch) {
    Tables t = generate_tables(0.005, 99, 2);
    for (const char* k : {"A", "B", "C"})
      out.emplace_back(std::string(k) + "/tpch sf=0.005", tpch_kernel(k, t, key_bits));
  }
  if (key_bits == 64) {
    add_wide_edge_plans(out);
    return out;
  }
  std::vector<std::uint32_t> keys(3000), vals(3000);
  for (std::uint32_t i = 0; i < 3000; ++i) {
    keys[i] = i % 1500;
    vals[i] = i * 7 + 1;
  }
  auto r1 = key_value_relation("r1", keys, vals);
  std::vector<std::uint32_t> k2(1500), v2(1500);
  for (std::uint32_t i = 0; i < 1500; ++i) {
    k2[i] = 1499 - i;
    v2[i] = i;
  }
  auto r2 = key_value_relation("r2", k2, v2);
  out.emplace_back("all selected", select_join(r1, r2, 0, 0xffffffffu));
  out.emplace_back("none selected", select_join(r1, r2, 0xfffffff0u, 0xffffffffu));
  // Keys and values at the top of the 32-bit range, in the predicates and the join.
  auto top1 = key_value_relation("t1", {0xffffffffu, 0xfffffffeu, 0xffffffffu, 0u},
                                 {0xffffffffu, 1u, 0xfffffffeu, 0xffffffffu});
  auto top2 = key_value_relation("t2", {0xffffffffu, 0u, 0xfffffffdu}, {5u, 6u, 0xffffffffu});
  out.emplace_back("maximum keys", select_join(top1, top2, 0xfffffffeu, 0xffffffffu));
  // A build key dense enough for a direct-indexed table (keys 100..1099 with gaps, span at most
  // 4 x rows), probed by keys below, inside and above its range, and at 2^32 - 1.
  std::vector<std::uint32_t> probe_keys, probe_vals, dense_keys, dense_vals;
  for (std::uint32_t i = 0; i < 2000; ++i) {
    probe_keys.push_back(i);
    probe_vals.push_back(i);
  }
  probe_keys.back() = 0xffffffffu;
  for (std::uint32_t k = 100; k < 1100; k += (k % 3 == 0 ? 3 : 1)) {
    dense_keys.push_back(k);
    dense_vals.push_back(k * 3);
  }
  out.emplace_back("probe keys beside a dense build range",
                   select_join(key_value_relation("p", probe_keys, probe_vals),
                               key_value_relation("d", dense_keys, dense_vals), 0, 0xffffffffu));
  // Every key equal on both sides: the join is a cross product (400 x 300 rows).
  auto eq1 = key_value_relation("e1", std::vector<std::uint32_t>(400, 42), std::vector<std::uint32_t>(400, 9));
  auto eq2 = key_value_relation("e2", std::vector<std::uint32_t>(300, 42), std::vector<std::uint32_t>(300, 3));
  out.emplace_back("all keys equal", select_join(eq1, eq2, 9, 9));
  return out;
}

// Runs every plan on `backend` (every variant in `variants`) and compares with the reference;
// returns how many (plan, variant) pairs ran.
inline int expect_all_equal(TpchBackend& backend, const std::vector<std::string>& variants, Transfer t,
                            bool include_tpch = true, int key_bits = 32) {
  int ran = 0;
  for (auto& [name, plan] : test_plans(include_tpch, key_bits)) {
    Relation want = reference_execute(plan);
    std::uint64_t sum = checksum(want);
    for (const std::string& v : variants) {
      SCOPED_TRACE(name + " / " + v);
      std::unique_ptr<TpchRun> run;
      try {
        run = backend.prepare(plan, v, t);
      } catch (const SkipCase& e) {
        // Only the fused variant may decline, and only for plans with duplicate build keys; at 64
        // bits the RA composition declines a plan whose intermediate tuples pass RA's 8 words.
        const bool ra_wide = key_bits == 64 && v.rfind("ra-", 0) == 0 &&
                             std::string(e.what()).find("wider than the RA tuple limit") != std::string::npos;
        EXPECT_TRUE(v == "fused" || ra_wide) << e.what();
        continue;
      }
      for (int pass = 0; pass < 2; ++pass) {  // a second pass reuses the buffers of the first
        Breakdown b;
        try {
          b = run->pass();
        } catch (const SkipCase& e) {
          // An RA backend may decline an operator only once it sees the relation: CUDA's tuned
          // select/unique takes tuples of a key and up to 3 values (found by host execution; the
          // benchmark records such a case as skipped, with this reason).
          const bool tuned_wide = pass == 0 && v == "ra-tuned" &&
                                  std::string(e.what()).find("tuned select/unique handles tuples") != std::string::npos;
          EXPECT_TRUE(tuned_wide) << e.what();
          break;
        }
        if (pass == 0) ++ran;
        EXPECT_GE(b.kernel, 0.0);
        if (v != "fused") {  // operator at a time: every step is a phase (sub-steps may add more)
          for (const Step& s : plan.steps) {
            EXPECT_TRUE(
                std::any_of(b.phases.begin(), b.phases.end(), [&](const auto& ph) { return ph.name == s.name; }))
                << "no phase " << s.name;
          }
        }
        Verification ok = compare_result(run->result(), want, sum, 1);
        EXPECT_TRUE(ok.ok) << ok.detail;
      }
    }
  }
  return ran;
}

}  // namespace hdb::tpch::test
