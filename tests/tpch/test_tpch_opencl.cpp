// The RA composition over the OpenCL RA backend (PoCL here) against the serial reference, with
// pageable and pinned host memory.
#include "bench/tpch_ra.hpp"
#include "common/device_suite.hpp"
#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "runtime/cl_platform.hpp"
#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {

TEST(TpchOpenCl, RaCompositionEqualsTheReference) {
  opencl::OpenClPlatform platform;
  if (std::string skip = hdb::test::init_device(platform); !skip.empty()) GTEST_SKIP() << skip;
  ra::opencl::OpenClRa ra(platform);
  RaComposed backend(ra);
  ASSERT_FALSE(backend.variants().empty());
  expect_all_equal(backend, backend.variants(), Transfer::Pinned);
  expect_all_equal(backend, {backend.variants()[0]}, Transfer::Pageable, false);
  // At 64-bit keys: every plan but C on TPC-H tables (wider than RA's 8 words), 19 of 20.
  EXPECT_EQ(expect_all_equal(backend, backend.variants(), Transfer::Pinned, true, 64),
            19 * static_cast<int>(backend.variants().size()));
}

}  // namespace hdb::tpch::test
