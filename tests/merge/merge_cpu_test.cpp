// Every variant of the CPU backend, through the backend interface, on every edge case and type.
#include "harness/options.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"

namespace hdb {
namespace {

template <class T>
class CpuMergeBackend : public ::testing::Test {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128, std::string_view>;
TYPED_TEST_SUITE(CpuMergeBackend, ValueTypes);

TYPED_TEST(CpuMergeBackend, EveryVariantVerifies) {
  cpu::CpuPlatform platform;
  Options opts;
  opts.threads = 3;
  platform.init(opts);
  cpu::CpuMerge backend(platform);
  test::check_every_variant<TypeParam>(backend, {Transfer::None});
}

}  // namespace
}  // namespace hdb
