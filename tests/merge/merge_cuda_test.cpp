// Every CUDA variant on every edge case of every value type (strings included), pageable and
// pinned, and the string columns of merge_string_inputs.hpp (skipped without a device).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/device_suite.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"
#include "merge_steps.cuh"
#include "workloads/random.hpp"

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

// The tuned 2b kernel against the packing of BitPacked::set at every new width 1..32 and old widths
// 0, 1, 13 and 32, which no dictionary of the edge cases reaches (width 32 needs 2^31 entries): the
// maps are made up, ids up to 2^width - 1. 1,000 rows (15 groups of 64 and 40 rows more), the
// delta starting inside a group; the whole column, then in two chunks split on a 64-row mark as the
// overlapped merge splits it; and reencode_lookup on the same input gives the same words.
class CudaReencode : public test::DeviceSuite<cuda::CudaPlatform> {};
TEST_F(CudaReencode, TunedKernelAtEveryWidth) {
  const std::uint64_t nm = 617, nd = 383, rows = nm + nd, map = 300;
  std::uint64_t counter = 0;
  auto below = [&counter](std::uint64_t n) { return bounded(rand_at(7, counter++), n); };
  for (unsigned ow : {0u, 1u, 13u, 32u}) {
    BitPacked old;
    old.resize(nm, ow);
    const std::uint64_t codes = ow == 0 ? 1 : std::min<std::uint64_t>(map, std::uint64_t{1} << ow);
    std::vector<std::uint32_t> old_ids(nm);
    for (std::uint64_t r = 0; r < nm; ++r) old.set(r, old_ids[r] = static_cast<std::uint32_t>(below(codes)));
    std::vector<std::uint32_t> ids(nd);
    for (std::uint32_t& i : ids) i = static_cast<std::uint32_t>(below(map));
    for (unsigned width = 1; width <= 32; ++width) {
      SCOPED_TRACE("old width " + std::to_string(ow) + ", width " + std::to_string(width));
      const std::uint64_t top = std::uint64_t{1} << width;  // ids below; the largest among them
      std::vector<std::uint32_t> xm(map), xd(map);
      for (std::uint64_t i = 0; i < map; ++i) {
        xm[i] = static_cast<std::uint32_t>(i == 0 ? top - 1 : below(top));
        xd[i] = static_cast<std::uint32_t>(i == 1 ? top - 1 : below(top));
      }
      BitPacked want;
      want.resize(rows, width);
      for (std::uint64_t r = 0; r < rows; ++r) want.set(r, r < nm ? xm[old_ids[r]] : xd[ids[r - nm]]);
      const std::uint64_t nwords = want.words.size();
      cuda::DeviceBuffer<std::uint64_t> d_old(std::max<std::size_t>(old.words.size(), 1)), d_out(nwords);
      cuda::DeviceBuffer<std::uint32_t> d_xm(map), d_xd(map), d_ids(nd);
      auto put = [](void* dst, const void* src, std::size_t bytes) {
        if (bytes) {
          EXPECT_EQ(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), cudaSuccess);
        }
      };
      put(d_old.get(), old.words.data(), old.words.size() * 8);
      put(d_xm.get(), xm.data(), map * 4);
      put(d_xd.get(), xd.data(), map * 4);
      put(d_ids.get(), ids.data(), nd * 4);
      auto run = [&](bool tuned, std::uint64_t split) {
        std::vector<std::uint64_t> got(nwords, ~std::uint64_t{0});
        EXPECT_EQ(cudaMemset(d_out.get(), 0xff, nwords * 8), cudaSuccess);
        for (auto [b, e] : {std::pair{std::uint64_t{0}, split}, std::pair{split, nwords}})
          (tuned ? cuda::merge::reencode_warp : cuda::merge::reencode_lookup)(
              nullptr, d_old.get(), ow, nm, d_xm.get(), d_ids.get(), d_xd.get(), rows, width, b, e, d_out.get());
        EXPECT_EQ(cudaMemcpy(got.data(), d_out.get(), nwords * 8, cudaMemcpyDeviceToHost), cudaSuccess);
        return got;
      };
      const std::uint64_t mark = 7 * std::uint64_t{width};  // 7 groups of 64 rows: inside the main rows
      EXPECT_EQ(run(true, nwords), want.words) << "whole column";
      EXPECT_EQ(run(true, mark), want.words) << "two chunks split at word " << mark;
      EXPECT_EQ(run(false, nwords), want.words) << "reencode_lookup";
      if (::testing::Test::HasFailure()) return;
    }
  }
  EXPECT_THROW(cuda::merge::reencode_warp(nullptr, nullptr, 1, 0, nullptr, nullptr, nullptr, 64, 5, 3, 5, nullptr),
               std::invalid_argument);  // word 3 is not on a 64-row mark at width 5
}

// The tuned steps on small columns, tiles of 1b cut across U_M and U_D and the dictionary sizes
// around a tile (1,024 entries): what scripts/test runs under ThreadSanitizer, where 1b's tiles
// meet in shared memory and 2b's lanes in shuffles.
TEST_F(CudaReencode, TunedStepsOnSmallInputs) {
  cuda::CudaMerge backend(*platform_);
  for (const ColumnSpec& spec : {ColumnSpec{3000, 900, 700, 0.3}, ColumnSpec{1500, 1030, 1023, 0.5}}) {
    const MergeInput<std::uint32_t> in = generate_column<std::uint32_t>(spec, 9, 2);
    const MergeWork<std::uint32_t> w = prepare_work(in);
    for (MergeStep step : {MergeStep::DeltaDict, MergeStep::DictMerge, MergeStep::Reencode}) {
      SCOPED_TRACE(to_string(step));
      auto c = backend.prepare(MergeVariant{step, "tuned", Transfer::Pinned}, w);
      c->pass();
      EXPECT_EQ(verify_merge_output(step, w, c->output()), "");
    }
  }
}

}  // namespace
}  // namespace hdb
