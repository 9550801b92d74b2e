// The CUDA backend (operator and fused) against the serial reference; skipped without a device.
#include "harness/errors.hpp"
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
}

}  // namespace hdb::tpch::test
