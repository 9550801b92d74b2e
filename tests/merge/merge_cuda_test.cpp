// Every CUDA variant on every edge case of every value type (strings included), pageable and
// pinned, and the string columns of merge_string_inputs.hpp (skipped without a device).
#include "common/device_suite.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"

namespace hdb {
namespace {

template <class T>
class CudaMergeBackend : public test::DeviceSuite<cuda::CudaPlatform> {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128, std::string_view>;
TYPED_TEST_SUITE(CudaMergeBackend, ValueTypes);

TYPED_TEST(CudaMergeBackend, EveryVariantVerifies) {
  cuda::CudaMerge backend(*this->platform_);
  test::check_every_variant<TypeParam>(backend, {Transfer::Pageable, Transfer::Pinned});
}

// Sizes the edge cases do not reach: a main dictionary of 2^20 + 1 values caps the slice merge at
// 65536 threads of 17 entries, so the last threads' slices are empty (start at |U_M|); the merged
// dictionary crosses 2^20 (width 21, ids straddling words), and the overlapped merge's chunks
// hold thousands of words each. Pinned only (the transfer mode does not change the kernels).
TYPED_TEST(CudaMergeBackend, LargeDictionaries) {
  cuda::CudaMerge backend(*this->platform_);
  const std::uint64_t distinct = (std::uint64_t{1} << 20) + 1;
  MergeInput<TypeParam> in = generate_column<TypeParam>(ColumnSpec{distinct + 4099, 40000, distinct, 0.3}, 11, 2);
  ASSERT_EQ(in.main_dict.size(), distinct);
  MergeWork<TypeParam> w = prepare_work(in);
  ASSERT_GT(w.dict.size(), std::uint64_t{1} << 20);
  for (const MergeVariant& v : merge_variants(backend, {Transfer::Pinned})) {
    if (!backend.supports(v, ValueTypeOf<TypeParam>::value)) continue;
    SCOPED_TRACE(std::string(to_string(v.step)) + "/" + v.name);
    auto c = backend.prepare(v, w);
    for (int pass = 0; pass < 2; ++pass) {
      c->pass();
      ASSERT_EQ(verify_merge_output(v.step, w, c->output()), "");
    }
  }
}

// Strings: random mixed lengths, shared and long prefixes, chunk borders, zero bytes, all-equal,
// one element, empty delta, empty main; 1a, 1b (merge path), 2b and the whole merge.
class CudaStrings : public test::DeviceSuite<cuda::CudaPlatform> {};
TEST_F(CudaStrings, StringColumnsVerify) {
  cuda::CudaMerge backend(*platform_);
  test::check_string_columns(backend, {Transfer::Pageable, Transfer::Pinned});
}

// Each variant's device memory plan names its buffers, CUB's temporary storage among them.
TEST_F(CudaStrings, DevicePlanNamesEveryBuffer) {
  cuda::CudaMerge backend(*platform_);
  const ColumnSpec spec{5000, 700, 900, 0.3};
  test::check_memory_plan(backend, *platform_, generate_column<std::uint32_t>(spec, 5, 2), "CUB temporary storage");
  test::check_memory_plan(backend, *platform_, generate_column<std::string_view>(spec, 5, 2), "CUB temporary storage");
}

}  // namespace
}  // namespace hdb
