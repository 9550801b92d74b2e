#pragma once
// Runs every variant a backend offers on every edge case of every value type it supports; two
// passes each, so buffers reused across passes are covered.
#include <gtest/gtest.h>

#include <set>

#include "bench/merge.hpp"
#include "harness/errors.hpp"
#include "harness/platform.hpp"
#include "merge_inputs.hpp"
#include "merge_string_inputs.hpp"

namespace hdb::test {

// Every variant the backend offers for T on one column, two passes each; returns the cases run
// and adds the steps that ran to `steps` (when given).
template <class T>
int check_column(MergeBackend& backend, const std::vector<Transfer>& transfers, const std::string& name,
                 const MergeInput<T>& in, std::set<MergeStep>* steps = nullptr) {
  MergeWork<T> w = prepare_work(in);
  int ran = 0;
  for (const MergeVariant& v : merge_variants(backend, transfers)) {
    if (!backend.supports(v, ValueTypeOf<T>::value)) continue;
    SCOPED_TRACE(name + " " + to_string(v.step) + "/" + v.name + " " + to_string(v.transfer));
    auto c = backend.prepare(v, w);
    for (int pass = 0; pass < 2; ++pass) {
      Breakdown b = c->pass();
      EXPECT_GE(b.kernel, 0.0);
      EXPECT_EQ(verify_merge_output(v.step, w, c->output()), "");
      if (::testing::Test::HasFailure()) return ran;
    }
    ++ran;
    if (steps) steps->insert(v.step);
  }
  return ran;
}

template <class T>
void check_every_variant(MergeBackend& backend, const std::vector<Transfer>& transfers) {
  for (const auto& [name, in] : edge_inputs<T>()) {
    check_column(backend, transfers, name, in);
    if (::testing::Test::HasFailure()) return;
  }
}

// The string columns of merge_string_inputs.hpp on every variant offered for strings, each of
// which must run (a backend that offered none would pass vacuously): every step, each column.
inline void check_string_columns(MergeBackend& backend, const std::vector<Transfer>& transfers) {
  for (const NamedStrings& s : string_inputs()) {
    std::set<MergeStep> steps;
    check_column(backend, transfers, s.name, s.in, &steps);
    EXPECT_EQ(steps,
              (std::set<MergeStep>{MergeStep::DeltaDict, MergeStep::DictMerge, MergeStep::Reencode, MergeStep::Whole}))
        << s.name << ": a step ran no string variant";
    if (::testing::Test::HasFailure()) return;
  }
}

// The device memory plan of every variant on one column: under a 1 KiB --memory-limit, its fit check
// (the session's, before prepare()) skips the case with MemoryPlan's reason naming the step's inputs and outputs and
// `scratch` (the backend's word for its sort/scan scratch or library temporary storage) for 1a and 1b; without the
// limit the same case runs and verifies.
template <class T>
void check_memory_plan(MergeBackend& backend, Platform& platform, const MergeInput<T>& in, const std::string& scratch) {
  MergeWork<T> w = prepare_work(in);
  for (const MergeVariant& v : merge_variants(backend, {Transfer::Pageable})) {
    if (!backend.supports(v, ValueTypeOf<T>::value)) continue;
    SCOPED_TRACE(std::string(to_string(v.step)) + "/" + v.name);
    std::vector<std::string> names;
    switch (v.step) {
      case MergeStep::DeltaDict: names = {"delta ", "U_D ", "delta ids ", scratch}; break;
      case MergeStep::DictMerge: names = {"U_M ", "U_D ", "U'_M ", "X_M and X_D ", scratch}; break;
      case MergeStep::Reencode: names = {"old main ids ", "new main ids "}; break;
      case MergeStep::Whole: names = {"old main ids ", "U_M ", "delta ", "U'_M ", "new main ids ", scratch}; break;
    }
    MemoryPlan plan = MemoryPlan::for_platform(platform);
    backend.plan_memory(v, w, plan);
    platform.set_memory_limit(1024);
    std::string reason;
    try {
      plan.require(platform);
    } catch (const SkipCase& e) {
      reason = e.what();
    }
    platform.set_memory_limit(0);
    EXPECT_EQ(reason.rfind("needs ", 0), 0u) << reason;
    EXPECT_NE(reason.find("of device memory ("), std::string::npos) << reason;
    EXPECT_NE(reason.find("more than the 1 KiB it has"), std::string::npos) << reason;
    for (const std::string& n : names) EXPECT_NE(reason.find(n), std::string::npos) << "'" << n << "' in " << reason;
    auto c = backend.prepare(v, w);
    c->pass();
    EXPECT_EQ(verify_merge_output(v.step, w, c->output()), "");
  }
}

}  // namespace hdb::test
