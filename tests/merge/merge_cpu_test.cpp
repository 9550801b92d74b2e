// Every variant of the CPU backend, through the backend interface, on every edge case and value
// type; two passes each, so reused buffers are covered.
#include <gtest/gtest.h>

#include "harness/options.hpp"
#include "merge_backend.hpp"
#include "merge_inputs.hpp"

namespace hdb {
namespace {

template <class T>
class CpuMergeBackend : public ::testing::Test {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128, std::string_view>;
TYPED_TEST_SUITE(CpuMergeBackend, ValueTypes);

TYPED_TEST(CpuMergeBackend, EveryVariantVerifies) {
  using T = TypeParam;
  cpu::CpuPlatform platform;
  Options opts;
  opts.threads = 3;
  platform.init(opts);
  cpu::CpuMerge backend(platform);
  for (const auto& [name, in] : test::edge_inputs<T>()) {
    MergeWork<T> w = prepare_work(in);
    for (const MergeVariant& v : backend.variants({Transfer::None})) {
      SCOPED_TRACE(name + " " + to_string(v.step) + "/" + v.name);
      auto c = backend.prepare(v, w);
      for (int pass = 0; pass < 2; ++pass) {
        Breakdown b = c->pass();
        EXPECT_GE(b.kernel, 0.0);
        ASSERT_EQ(verify_merge_output(v.step, w, c->output()), "");
      }
    }
  }
}

}  // namespace
}  // namespace hdb
