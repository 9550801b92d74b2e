// Every OpenCL variant on every edge case of the integer types, pageable and pinned.
#include <cstdlib>

#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"

namespace hdb {
namespace {

template <class T>
class OpenClMergeBackend : public ::testing::Test {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128>;
TYPED_TEST_SUITE(OpenClMergeBackend, ValueTypes);

TYPED_TEST(OpenClMergeBackend, EveryVariantVerifies) {
  setenv("POCL_CACHE_DIR", HDB_POCL_CACHE, 0);  // PoCL needs a writable cache; keep one the user set
  opencl::OpenClPlatform platform;
  try {
    platform.init(Options{});
  } catch (const NoDevice& e) {
    GTEST_SKIP() << e.what();
  }
  opencl::OpenClMerge backend(platform);
  test::check_every_variant<TypeParam>(backend, {Transfer::Pageable, Transfer::Pinned});
}

}  // namespace
}  // namespace hdb
