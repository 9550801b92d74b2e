// Every variant of the CPU backend, through the backend interface, on every edge case and type.
#include <memory>

#include "harness/options.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"

namespace hdb {
namespace {

// A CPU platform of `threads` threads.
std::unique_ptr<cpu::CpuPlatform> cpu_platform(int threads) {
  auto platform = std::make_unique<cpu::CpuPlatform>();
  Options opts;
  opts.threads = threads;
  platform->init(opts);
  return platform;
}

template <class T>
class CpuMergeBackend : public ::testing::Test {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128, std::string_view>;
TYPED_TEST_SUITE(CpuMergeBackend, ValueTypes);

TYPED_TEST(CpuMergeBackend, EveryVariantVerifies) {
  auto platform = cpu_platform(3);
  cpu::CpuMerge backend(*platform);
  test::check_every_variant<TypeParam>(backend, {Transfer::None});
}

// The cases come from the backend's table, per step in registration order; a name it never
// registered is refused.
TEST(CpuMergeVariants, CasesComeFromTheTable) {
  auto platform = cpu_platform(2);
  cpu::CpuMerge backend(*platform);
  std::vector<std::string> ids;
  for (const MergeVariant& v : merge_variants(backend, {Transfer::None}))
    ids.push_back(std::string(to_string(v.step)) + "/" + v.name);
  EXPECT_EQ(ids, (std::vector<std::string>{"delta_dict/serial", "delta_dict/parallel", "dict_merge/serial",
                                           "dict_merge/parallel", "reencode/serial", "reencode/parallel",
                                           "reencode/serial_binsearch", "reencode/parallel_binsearch", "merge/serial",
                                           "merge/parallel"}));
  MergeInput<std::uint32_t> in = generate_column<std::uint32_t>(ColumnSpec{1000, 100, 200, 0.3}, 5, 2);
  MergeWork<std::uint32_t> w = prepare_work(in);
  EXPECT_THROW(backend.prepare(MergeVariant{MergeStep::Whole, "serial_merge", Transfer::None}, w),
               std::invalid_argument);
  MemoryPlan plan;
  backend.plan_memory(MergeVariant{MergeStep::Reencode, "parallel_binsearch", Transfer::None}, w, plan);
  EXPECT_GT(plan.total(), 0u);
}

}  // namespace
}  // namespace hdb
