// The OpenCL algorithms (Figure 1, segment-wise per query and batched) return exactly the brute-force hits.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/errors.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"

namespace hdb::ngram {
namespace {

TEST(NgramOpenCl, AllVariantsEqualBruteForce) {
#ifdef HDB_POCL_CACHE_DIR
  setenv("POCL_CACHE_DIR", HDB_POCL_CACHE_DIR, 0);  // PoCL needs a writable kernel cache
#endif
  opencl::OpenClPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  opencl::OpenClNgram backend(platform);
  testing::expect_exact(backend, {9}, {0, 12});
}

}  // namespace
}  // namespace hdb::ngram
