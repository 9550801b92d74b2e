// The CUDA backends against the serial reference: the kernels of their own (operator, fused) and
// the composition over the CUDA RA primitives. Skipped without a device.
#include "bench/tpch_ra.hpp"
#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "runtime/cuda_platform.hpp"
#include "tpch_backend.hpp"
#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {

TEST(TpchCuda, OperatorAndFusedEqualTheReference) {
  cuda::CudaPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  cuda::CudaTpch backend;
  expect_all_equal(backend, backend.variants(), Transfer::Pinned);
  expect_all_equal(backend, backend.variants(), Transfer::Pageable, false);
  ra::cuda::CudaRa ra(platform);
  RaComposed composed(ra);
  ASSERT_FALSE(composed.variants().empty());
  expect_all_equal(composed, composed.variants(), Transfer::Pinned);
}

}  // namespace hdb::tpch::test
