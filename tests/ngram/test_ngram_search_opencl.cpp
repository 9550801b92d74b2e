// The OpenCL segment-wise search (per query and batched) returns exactly the brute-force hits.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/errors.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"
#include "reference/ngram_reference.hpp"

namespace hdb::ngram {
namespace {

TEST(NgramOpenCl, SegmentedEqualsBruteForce) {
#ifdef HDB_POCL_CACHE_DIR
  setenv("POCL_CACHE_DIR", HDB_POCL_CACHE_DIR, 0);  // PoCL needs a writable kernel cache
#endif
  opencl::OpenClPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  for (const auto& c : testing::query_cases()) {
    NgramIndex ix = build_ngram_index(c.corpus, 9, 2);
    opencl::OpenClNgram backend(platform);
    backend.load_index(ix);
    for (int k : {0, 3, 12}) {
      std::vector<QueryPlan> plans;
      for (const auto& q : c.queries) plans.push_back(plan_query(ix, q, k));
      std::vector<std::vector<std::uint32_t>> ref;
      for (const auto& p : plans) ref.push_back(reference_search(ix, p));
      for (const NgramVariant& v : backend.variants()) {
        NgramSearchOut out;
        Breakdown b = backend.search(v, plans, out);
        EXPECT_EQ(out.hits, ref) << c.name << " " << v.name << (v.batch ? " (batch)" : "") << " k=" << k;
        EXPECT_GE(b.total, 0.0);
      }
    }
  }
}

}  // namespace
}  // namespace hdb::ngram
