// The CUDA algorithms (Figure 1, segment-wise per query and batched, hybrid) return exactly the
// brute-force hits. Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include "harness/errors.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"
#include "reference/ngram_reference.hpp"

namespace hdb::ngram {
namespace {

TEST(NgramCuda, AllVariantsEqualBruteForce) {
  cuda::CudaPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  for (const auto& c : testing::query_cases()) {
    for (int w : {1, 9}) {
      NgramIndex ix = build_ngram_index(c.corpus, w, 2);
      cuda::CudaNgram backend(platform);
      backend.load_index(ix);
      for (int k : {0, 1, 3, 6, 12, 40}) {
        std::vector<QueryPlan> plans;
        for (const auto& q : c.queries) plans.push_back(plan_query(ix, q, k));
        std::vector<std::vector<std::uint32_t>> ref;
        for (const auto& p : plans) ref.push_back(reference_search(ix, p));
        for (const NgramVariant& v : backend.variants()) {
          NgramSearchOut out;
          backend.search(v, plans, out);
          EXPECT_EQ(out.hits, ref) << c.name << " W=" << w << " " << v.name << (v.batch ? " (batch)" : "") << " k=" << k;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hdb::ngram
