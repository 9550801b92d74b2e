// Every CUDA variant on every edge case of the integer types, pageable and pinned (skipped
// without a device).
#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"

namespace hdb {
namespace {

template <class T>
class CudaMergeBackend : public ::testing::Test {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128>;
TYPED_TEST_SUITE(CudaMergeBackend, ValueTypes);

TYPED_TEST(CudaMergeBackend, EveryVariantVerifies) {
  cuda::CudaPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  cuda::CudaMerge backend(platform);
  test::check_every_variant<TypeParam>(backend, {Transfer::Pageable, Transfer::Pinned});
}

}  // namespace
}  // namespace hdb
