// The CUDA algorithms (Figure 1, segment-wise per query and batched, hybrid) return exactly the
// brute-force hits. Skipped where no CUDA device is present.
#include <gtest/gtest.h>

#include "harness/errors.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"

namespace hdb::ngram {
namespace {

TEST(NgramCuda, AllVariantsEqualBruteForce) {
  cuda::CudaPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  cuda::CudaNgram backend(platform);
  testing::expect_exact(backend, {1, 9}, {0, 1, 3, 6, 12, 40});
}

}  // namespace
}  // namespace hdb::ngram
