// The OpenCL algorithms (Figure 1, segment-wise per query and batched) return exactly the brute-force hits.
#include <gtest/gtest.h>

#include <cstdlib>

#include "common/device_suite.hpp"
#include "harness/errors.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"

namespace hdb::ngram {
namespace {

TEST(NgramOpenCl, AllVariantsEqualBruteForce) {
  opencl::OpenClPlatform platform;
  if (std::string skip = hdb::test::init_device(platform); !skip.empty()) GTEST_SKIP() << skip;
  opencl::OpenClNgram backend(platform);
  testing::expect_exact(backend, {9}, {0, 12});
}

}  // namespace
}  // namespace hdb::ngram
