// The CUDA algorithms (Figure 1, segment-wise and tuned per query and batched, hybrid) return exactly
// the brute-force hits. Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include "common/device_suite.hpp"
#include "harness/errors.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"

namespace hdb::ngram {
namespace {

class NgramCuda : public test::DeviceSuite<cuda::CudaPlatform> {};

TEST_F(NgramCuda, AllVariantsEqualBruteForce) {
  cuda::CudaNgram backend(*platform_);
  testing::expect_exact(backend, {1, 9}, {0, 1, 3, 6, 12, 40});
}

// Every variant on `queries`, compared with the brute force.
void expect_queries(cuda::CudaNgram& backend, const NgramIndex& ix, const std::vector<std::string>& queries, int k,
                    const std::string& where) {
  std::vector<QueryPlan> plans;
  std::vector<std::vector<std::uint32_t>> ref;
  for (const auto& q : queries) {
    plans.push_back(plan_query(ix, q, k));
    ref.push_back(reference_search(ix, plans.back()));
  }
  for (const NgramVariant& v : ngram_variants(backend)) {
    NgramSearchOut out;
    backend.search(v, plans, out);
    EXPECT_EQ(out.hits, ref) << where << " " << v.name << (v.batch ? " (batch)" : "");
  }
}

// The per-pass buffers (packed queries, batch hit bitmaps) are kept and grown between calls: a
// small query set, a larger one, the small one again, on one loaded index.
TEST_F(NgramCuda, QuerySetsOfChangingSizeReuseBuffers) {
  cuda::CudaNgram backend(*platform_);
  TextCorpus syn = synthetic_corpus(60000, 3, SyntheticTextSpec{500, 1.0, 40});
  NgramIndex ix = build_ngram_index(syn, 9, 2);
  backend.load_index(ix);
  std::vector<std::string> many = draw_queries(syn, 40, 11, 7, 110);
  std::vector<std::string> few(many.begin(), many.begin() + 2);
  expect_queries(backend, ix, few, 2, "few");
  expect_queries(backend, ix, many, 2, "many");
  expect_queries(backend, ix, few, 0, "few again");
  expect_queries(backend, ix, {}, 0, "no queries");
}

// The segmented and tuned searches (a block's threads share the query's postings in shared memory and
// vote with __ballot_sync and __syncthreads_or) and every other variant on a corpus of a few blocks:
// small enough for ThreadSanitizer under host execution's threads engine (scripts/test).
TEST_F(NgramCuda, SegmentedSearchOnSmallInputs) {
  cuda::CudaNgram backend(*platform_);
  TextCorpus syn = synthetic_corpus(3000, 5, SyntheticTextSpec{200, 1.0, 40});
  NgramIndex ix = build_ngram_index(syn, 9, 2);
  backend.load_index(ix);
  expect_queries(backend, ix, draw_queries(syn, 4, 11, 7, 60), 1, "small corpus");
}

// A corpus whose documents have no letter or digit has no article: no kernel may be launched
// with an empty grid, and every query has no hit.
TEST_F(NgramCuda, EmptyCorpus) {
  cuda::CudaNgram backend(*platform_);
  NgramIndex ix = build_ngram_index(testing::corpus_of({"!!! ...", "--"}), 9, 1);
  ASSERT_EQ(ix.articles, 0u);
  backend.load_index(ix);
  expect_queries(backend, ix, {"abc", "", "quick brown fox"}, 0, "empty corpus");
}

// release_index frees the device copy and every buffer kept with it (the common code calls it
// before the next corpus size's memory-fit checks, which compare with free device memory): a
// search needs a new load_index, and after one every variant is exact again.
TEST_F(NgramCuda, ReleasedIndexIsFreedAndCanBeLoadedAgain) {
  cuda::CudaNgram backend(*platform_);
  TextCorpus syn = synthetic_corpus(60000, 3, SyntheticTextSpec{500, 1.0, 40});
  NgramIndex ix = build_ngram_index(syn, 9, 2);
  std::vector<std::string> queries = draw_queries(syn, 10, 11, 7, 110);
  backend.load_index(ix);
  expect_queries(backend, ix, queries, 2, "loaded");
  const std::uint64_t free_loaded = platform_->memory_bytes();
  backend.release_index();
  EXPECT_GE(platform_->memory_bytes(), free_loaded);
  NgramSearchOut out;
  EXPECT_THROW(backend.search(ngram_variants(backend).front(), {plan_query(ix, queries.front(), 2)}, out), DeviceError);
  backend.release_index();  // twice is harmless
  backend.load_index(ix);
  expect_queries(backend, ix, queries, 2, "loaded again");
}

}  // namespace
}  // namespace hdb::ngram
