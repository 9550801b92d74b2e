#pragma once
// Runs every variant a backend offers on every edge case of every value type it supports; two
// passes each, so buffers reused across passes are covered.
#include <gtest/gtest.h>

#include "bench/merge.hpp"
#include "merge_inputs.hpp"
#include "merge_string_inputs.hpp"

namespace hdb::test {

// Every variant the backend offers for T on one column, two passes each; returns the cases run.
template <class T>
int check_column(MergeBackend& backend, const std::vector<Transfer>& transfers, const std::string& name,
                 const MergeInput<T>& in) {
  MergeWork<T> w = prepare_work(in);
  int ran = 0;
  for (const MergeVariant& v : backend.variants(transfers)) {
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
// which must run (a backend that offered none would pass vacuously): one per step at least.
inline void check_string_columns(MergeBackend& backend, const std::vector<Transfer>& transfers) {
  for (const NamedStrings& s : string_inputs()) {
    EXPECT_GE(check_column(backend, transfers, s.name, s.in), 4) << s.name;
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace hdb::test
