#pragma once
// Runs every variant a backend offers on every edge case of every value type it supports; two
// passes each, so buffers reused across passes are covered.
#include <gtest/gtest.h>

#include "bench/merge.hpp"
#include "merge_inputs.hpp"

namespace hdb::test {

template <class T>
void check_every_variant(MergeBackend& backend, const std::vector<Transfer>& transfers) {
  for (const auto& [name, in] : edge_inputs<T>()) {
    MergeWork<T> w = prepare_work(in);
    for (const MergeVariant& v : backend.variants(transfers)) {
      if (!backend.supports(v, ValueTypeOf<T>::value)) continue;
      SCOPED_TRACE(name + " " + to_string(v.step) + "/" + v.name + " " + to_string(v.transfer));
      auto c = backend.prepare(v, w);
      for (int pass = 0; pass < 2; ++pass) {
        Breakdown b = c->pass();
        EXPECT_GE(b.kernel, 0.0);
        ASSERT_EQ(verify_merge_output(v.step, w, c->output()), "");
      }
    }
  }
}

}  // namespace hdb::test
