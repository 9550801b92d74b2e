// The OpenCL merge backend on PoCL here: the radix sort it is built on, against std::stable_sort;
// every variant on every edge case of every value type (strings included), pageable and pinned; string
// columns of mixed, long and shared-prefix strings; and generated columns large enough for many
// work-groups and multi-level scans.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "common/device_suite.hpp"
#include "merge_backend.hpp"
#include "merge_device_test.hpp"
#include "sort.hpp"
#include "workloads/random.hpp"

namespace hdb {
namespace {

class OpenClDevice : public test::DeviceSuite<opencl::OpenClPlatform> {};

template <class K>
K key_from(std::uint64_t bits, std::uint64_t salt) {
  if constexpr (std::is_same_v<K, U128>)
    return U128{bits % 3, salt ? bits * 0x9e3779b97f4a7c15ull : bits};
  else
    return static_cast<K>(bits);
}

template <class K>
opencl::SortKey sort_key() {
  if constexpr (std::is_same_v<K, std::uint32_t>)
    return opencl::SortKey::U32;
  else if constexpr (std::is_same_v<K, std::uint64_t>)
    return opencl::SortKey::U64;
  else
    return opencl::SortKey::U128;
}

// n keys drawn from `distinct` values spread over the whole key range (so every digit of every
// pass varies), plus the extremes 0 and max; sorted on the device with the row index as payload (or
// a given payload) and compared with std::stable_sort of (key, payload) by key.
template <class K>
void check_sort(opencl::OpenClPlatform& p, std::uint32_t n, std::uint64_t distinct, bool given_payload, bool in_place) {
  SCOPED_TRACE("n=" + std::to_string(n) + " distinct=" + std::to_string(distinct) +
               (given_payload ? " payload" : " index") + (in_place ? " in place" : ""));
  std::vector<K> keys(n);
  std::vector<std::uint32_t> vals(n);
  for (std::uint32_t i = 0; i < n; ++i) {
    std::uint64_t pick = rand_at(42, i) % distinct;
    std::uint64_t bits = pick == 0 ? 0 : pick == 1 ? ~0ull : splitmix64(pick);
    keys[i] = key_from<K>(bits, pick);
    vals[i] = given_payload ? static_cast<std::uint32_t>(rand_at(7, i)) : i;
  }
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });

  opencl::RadixSort sort(p, sort_key<K>());
  sort.reserve(n);
  const std::uint64_t kb = std::max<std::uint64_t>(n * sizeof(K), 1), vb = std::max<std::uint64_t>(n * 4ull, 1);
  cl::Buffer kin = opencl::device_buffer(p.context_ref(), kb), vin = opencl::device_buffer(p.context_ref(), vb);
  cl::Buffer kout = in_place ? kin : opencl::device_buffer(p.context_ref(), kb);
  cl::Buffer vout = in_place ? vin : opencl::device_buffer(p.context_ref(), vb);
  if (n) {
    p.queue().enqueueWriteBuffer(kin, CL_TRUE, 0, n * sizeof(K), keys.data());
    p.queue().enqueueWriteBuffer(vin, CL_TRUE, 0, n * 4ull, vals.data());
  }
  std::vector<cl::Event> evs;
  sort.sort(kin, given_payload ? &vin : nullptr, kout, vout, n, evs);
  EXPECT_EQ(evs.empty(), n == 0);
  std::vector<K> got_keys(n);
  std::vector<std::uint32_t> got_vals(n);
  if (n) {
    p.queue().enqueueReadBuffer(kout, CL_TRUE, 0, n * sizeof(K), got_keys.data());
    p.queue().enqueueReadBuffer(vout, CL_TRUE, 0, n * 4ull, got_vals.data());
  }
  for (std::uint32_t j = 0; j < n; ++j) {
    ASSERT_TRUE(got_keys[j] == keys[order[j]]) << "key " << j;
    ASSERT_EQ(got_vals[j], vals[order[j]]) << "payload " << j;
  }
  if (!in_place && n) {  // the input is left as it was
    std::vector<K> again(n);
    p.queue().enqueueReadBuffer(kin, CL_TRUE, 0, n * sizeof(K), again.data());
    EXPECT_TRUE(std::equal(again.begin(), again.end(), keys.begin()));
  }
}

template <class K>
class OpenClSort : public OpenClDevice {};
using SortKeys = ::testing::Types<std::uint32_t, std::uint64_t, U128>;
TYPED_TEST_SUITE(OpenClSort, SortKeys);

TYPED_TEST(OpenClSort, MatchesStableSortAtEdgeSizes) {
  auto& p = *this->platform_;
  for (std::uint32_t n : {0u, 1u, 2u, 255u, 256u, 257u, 2047u, 2049u})
    for (std::uint64_t distinct : {1ull, 7ull, 1ull << 40}) check_sort<TypeParam>(p, n, distinct, false, false);
}

TYPED_TEST(OpenClSort, MatchesStableSortLarge) {
  auto& p = *this->platform_;
  // 16 digits x (300001 / tile) groups: the histogram scan runs on more than one level.
  check_sort<TypeParam>(p, 300001, 1000, true, false);
  check_sort<TypeParam>(p, 300001, 1ull << 40, false, true);
}

TYPED_TEST(OpenClSort, ReusesScratchAcrossSizes) {
  auto& p = *this->platform_;
  check_sort<TypeParam>(p, 5000, 50, true, true);
  check_sort<TypeParam>(p, 3, 50, true, true);
}

TEST_F(OpenClDevice, DeviceScanIsExclusiveWithTotal) {
  opencl::DeviceScan scan(*platform_);
  for (std::uint32_t n : {0u, 1u, 255u, 256u, 257u, 70001u}) {
    std::vector<std::uint32_t> in(n), got(n);
    for (std::uint32_t i = 0; i < n; ++i) in[i] = static_cast<std::uint32_t>(rand_at(3, i) % 5);
    cl::Buffer buf = opencl::device_buffer(platform_->context_ref(), std::max(n * 4ull, 4ull));
    if (n) platform_->queue().enqueueWriteBuffer(buf, CL_TRUE, 0, n * 4ull, in.data());
    std::vector<cl::Event> evs;
    scan.run(buf, buf, n, evs);
    if (n) platform_->queue().enqueueReadBuffer(buf, CL_TRUE, 0, n * 4ull, got.data());
    std::uint32_t run = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], run) << "n=" << n << " i=" << i;
      run += in[i];
    }
    EXPECT_EQ(scan.total(), run) << "n=" << n;
  }
}

TEST_F(OpenClDevice, OffersEveryStep) {
  opencl::OpenClMerge backend(*platform_);
  std::vector<std::string> names;
  for (const MergeVariant& v : merge_variants(backend, {Transfer::Pageable}))
    names.push_back(std::string(to_string(v.step)) + "/" + v.name);
  for (const char* want :
       {"delta_dict/radix", "dict_merge/slice", "dict_merge/merge_path", "reencode/lookup", "merge/inorder"})
    EXPECT_NE(std::find(names.begin(), names.end(), want), names.end()) << want;
}

// What ran: the dictionary merges name their work-group and entries per work-item; a name the
// backend never registered is refused, never run as another variant.
TEST_F(OpenClDevice, DictMergeRecordsItsParametersAndUnknownVariantsAreRefused) {
  opencl::OpenClMerge backend(*platform_);
  MergeInput<std::uint32_t> in = generate_column<std::uint32_t>(ColumnSpec{5000, 700, 900, 0.3}, 5, 2);
  MergeWork<std::uint32_t> w = prepare_work(in);
  ASSERT_EQ(in.main_dict.size(), 900u);
  const bool cpu = (platform_->device().getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0;
  Ran path = backend.prepare(MergeVariant{MergeStep::DictMerge, "merge_path", Transfer::Pageable}, w)->ran();
  EXPECT_GE(path.work_group, 1);
  EXPECT_EQ(path.items_per_thread, cpu ? 64 : 16);
  // 900 entries of U_M in ceil(900 / 16) = 57 slices of 16.
  Ran slice = backend.prepare(MergeVariant{MergeStep::DictMerge, "slice", Transfer::Pageable}, w)->ran();
  EXPECT_EQ(slice.items_per_thread, 16);
  EXPECT_THROW(backend.prepare(MergeVariant{MergeStep::DictMerge, "csum", Transfer::Pageable}, w),
               std::invalid_argument);
  EXPECT_THROW(backend.supports(MergeVariant{MergeStep::DictMerge, "slices", Transfer::Pageable}, ValueType::U32),
               std::invalid_argument);
}

template <class T>
class OpenClMergeBackend : public OpenClDevice {};
using ValueTypes = ::testing::Types<std::uint32_t, std::uint64_t, U128, std::string_view>;
TYPED_TEST_SUITE(OpenClMergeBackend, ValueTypes);

TYPED_TEST(OpenClMergeBackend, EveryVariantVerifies) {
  opencl::OpenClMerge backend(*this->platform_);
  test::check_every_variant<TypeParam>(backend, {Transfer::Pageable, Transfer::Pinned});
}

// Strings: random mixed lengths, shared and long prefixes, chunk borders, zero bytes, all-equal,
// one element, empty delta, empty main; every step (1b by merge path).
TEST_F(OpenClDevice, StringColumnsVerify) {
  opencl::OpenClMerge backend(*platform_);
  test::check_string_columns(backend, {Transfer::Pageable, Transfer::Pinned});
}

// Each variant's device memory plan names its buffers (integers and strings).
TEST_F(OpenClDevice, DevicePlanNamesEveryBuffer) {
  opencl::OpenClMerge backend(*platform_);
  const ColumnSpec spec{5000, 700, 900, 0.3};
  test::check_memory_plan(backend, *platform_, generate_column<std::uint32_t>(spec, 5, 2), "scratch");
  test::check_memory_plan(backend, *platform_, generate_column<std::string_view>(spec, 5, 2), "scratch");
}

// Columns with deltas of tens of thousands of rows: many radix tiles and merge-path work-groups,
// scans over more than one level, dictionaries of odd sizes.
TYPED_TEST(OpenClMergeBackend, GeneratedColumnsVerify) {
  opencl::OpenClMerge backend(*this->platform_);
  // main rows, delta rows, |U_M|, fraction of new delta values
  for (const ColumnSpec& spec : {ColumnSpec{200003, 70001, 100000, 0.5}, ColumnSpec{100000, 33333, 1000, 0.01}}) {
    MergeInput<TypeParam> in = generate_column<TypeParam>(spec, 11, 2);
    MergeWork<TypeParam> w = prepare_work(in);
    for (const MergeVariant& v : merge_variants(backend, {Transfer::Pageable})) {
      if (!backend.supports(v, ValueTypeOf<TypeParam>::value)) continue;
      SCOPED_TRACE(std::to_string(spec.main_rows) + " " + to_string(v.step) + "/" + v.name);
      auto c = backend.prepare(v, w);
      c->pass();
      ASSERT_EQ(verify_merge_output(v.step, w, c->output()), "");
    }
  }
}

}  // namespace
}  // namespace hdb
