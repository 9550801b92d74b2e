// The CUDA variants (paper, cub, tuned; sort as cub) against the reference on the edge cases;
// skipped where there is no CUDA device (this runs on a GPU machine, e.g. under scripts/gpu-check).
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "ra_device.cuh"
#include "reference/ra.hpp"
#include "common/device_suite.hpp"
#include "ra_conformance.hpp"
#include "runtime/cuda_platform.hpp"
#include "workloads/random.hpp"

namespace hdb::ra {
namespace {

class RaCuda : public ::hdb::test::DeviceSuite<hdb::cuda::CudaPlatform> {};

TEST_F(RaCuda, EveryVariantMatchesReference) {
  cuda::CudaRa b(*platform_);
  for (const char* variant : {"paper", "cub", "tuned"}) {
    SCOPED_TRACE(variant);
    test::check_backend(b, variant);
    test::check_output_reuse(b, variant);
  }
}

// Inputs past the sizes of the edge cases: the paper scan of partition counts recurses (more than
// 256 partitions), the paper reduce strides over its 1024 groups, CUB runs many tiles, and a left
// key with tens of thousands of matches spreads over many output tiles.
Relation big_sorted(std::uint64_t rows, std::uint64_t distinct, std::uint64_t max, std::uint64_t seed) {
  RelationSpec s;
  s.rows = rows;
  s.values = 1;
  s.keys.distinct = distinct;
  s.keys.max = max;
  s.value_mask = 1u;  // whole tuples repeat: set operations find matches
  return make_relation(s, seed, 2);
}

void expect_rel(RaBackend& b, const DeviceRel& d, Relation want, const std::string& what, bool multiset = false) {
  Relation got(d->rows(), d->values());
  b.download(*d, got);
  if (multiset) {  // `want` may share its tuples with the caller's relation: sort a copy
    sort_tuples(got);
    want = want.clone();
    sort_tuples(want);
  }
  std::string diff = first_difference(got, want);
  EXPECT_TRUE(diff.empty()) << what << ": " << diff;
}

TEST_F(RaCuda, LargeInputsMatchReference) {
  cuda::CudaRa b(*platform_);
  const Relation a = big_sorted(300007, 100000, 199999, 5), c = big_sorted(200003, 100000, 199999, 6);
  const Relation few = big_sorted(3, 1, 0, 7), many = big_sorted(70001, 1, 0, 8);  // every key 0
  DeviceRel da, dc, dfew, dmany, out;
  b.upload(a, da);
  b.upload(c, dc);
  b.upload(few, dfew);
  b.upload(many, dmany);
  for (const char* variant : {"paper", "cub", "tuned"}) {
    SCOPED_TRACE(variant);
    for (const Predicate& p : {Predicate{0, 0, 99999}, Predicate{1, 1, 1}, Predicate{0, 1, 0}}) {
      b.select(*da, p, variant, out);
      expect_rel(b, out, ref::select(a, p), "select");
    }
    b.unique(*da, variant, out);
    expect_rel(b, out, ref::unique(a), "unique");
    b.join(*da, *dc, variant, out);
    expect_rel(b, out, ref::join(a, c), "join", true);
    b.join(*dfew, *dmany, variant, out);
    expect_rel(b, out, ref::join(few, many), "join, one key with 70001 matches per left row", true);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
      EXPECT_TRUE(b.reduce(*da, op, variant).value == ref::reduce(a, op)) << "reduce " << to_string(op);
      if (!offers(b, Op::ReduceByKey, variant)) continue;
      b.reduce_by_key(*da, op, variant, out);
      expect_rel(b, out, ref::reduce_by_key(a, op), std::string("reduce_by_key ") + to_string(op));
    }
    for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
      if (!offers(b, Op::SetUnion, variant)) break;
      b.set_op(*da, *dc, op, variant, out);
      expect_rel(b, out, ref::set_op(a, c, op), std::string("set ") + to_string(op));
    }
  }
}

// `rows` tuples of `values` values in no order: keys from `key(i)`, values random (all ones when
// `ones`), so that sums carry past 32 bits.
Relation unsorted(std::uint64_t rows, int values, std::uint64_t seed, std::uint32_t (*key)(std::uint64_t, std::uint64_t),
                  bool ones = false) {
  Relation r(rows, values);
  for (std::uint64_t i = 0; i < rows; ++i) {
    r.tuple(i)[0] = key(seed, i);
    for (int v = 1; v <= values; ++v)
      r.tuple(i)[v] = ones ? 0xffffffffu : static_cast<std::uint32_t>(rand_at(seed + 1, i * 8 + static_cast<std::uint64_t>(v)));
  }
  return r;
}
std::uint32_t random_key(std::uint64_t seed, std::uint64_t i) { return static_cast<std::uint32_t>(rand_at(seed, i)); }
std::uint32_t few_keys(std::uint64_t seed, std::uint64_t i) { return static_cast<std::uint32_t>(rand_at(seed, i) % 5); }
std::uint32_t max_key(std::uint64_t, std::uint64_t) { return 0xffffffffu; }

// Sort (cub: radix sort of (key, row), then a gather) on unsorted inputs of every width: empty,
// one tuple, sizes around the block, more than 65536 tuples; every key equal (where only a stable
// sort keeps the input order), few distinct keys, keys at 2^32 - 1. The last value numbers the
// rows, so any instability shows as a difference.
TEST_F(RaCuda, SortIsStableAndMatchesReference) {
  cuda::CudaRa b(*platform_);
  ASSERT_TRUE(offers(b, Op::Sort, "cub"));
  DeviceRel d, out;
  for (int values : {0, 1, 2, 3, 7})
    for (std::uint64_t n : {0ull, 1ull, 2ull, 255ull, 257ull, 4099ull, 70001ull, 300007ull})
      for (auto key : {random_key, few_keys, max_key}) {
        Relation in = unsorted(n, values, 17 + n, key);
        if (values > 0)
          for (std::uint64_t i = 0; i < n; ++i) in.tuple(i)[values] = static_cast<std::uint32_t>(i);
        b.upload(in, d);
        b.sort(*d, "cub", out);
        ASSERT_EQ(out->rows(), n);
        expect_rel(b, out, ref::sort(in),
                   "sort of " + std::to_string(n) + " tuples, " + std::to_string(values) + " values, key " +
                       std::to_string(key(17 + n, 0)));
      }
}

// The tuned streaming kernels at every tuple width (their uint4 paths are compiled per width) and
// row counts that leave every possible tail, against the reference; paper alongside. Also on grids
// capped at 1 and 3 blocks, so that every width runs many grid strides (the natural grid covers
// most of these sizes in one stride) and several blocks' atomics meet in one result.
TEST_F(RaCuda, TunedStreamingPrimitivesAtEveryWidth) {
  cuda::CudaRa b(*platform_);
  DeviceRel da, db, out;
  for (std::uint32_t cap : {0u, 1u, 3u}) {
    for (int values = 0; values <= kMaxValues; ++values)
      for (std::uint64_t n : {0ull, 1ull, 2ull, 3ull, 5ull, 7ull, 255ull, 257ull, 4099ull, 70001ull, 300007ull}) {
        SCOPED_TRACE(std::to_string(n) + " tuples, " + std::to_string(values) + " values, grid cap " + std::to_string(cap));
        b.state().max_grid = cap;
        const Relation a = unsorted(n, values, 3 + n, random_key), c = unsorted(n, values, 5 + n, random_key);
        const Relation ones = unsorted(n, values, 7, max_key, true);
        b.upload(a, da);
        b.upload(c, db);
        std::vector<std::vector<int>> projections{{0}, {values, 0}};
        std::vector<int> reversed, twice;
        for (int k = values; k >= 0; --k) reversed.push_back(k);
        for (int k = 0; k < std::min(2 * (values + 1), kMaxValues + 1); ++k) twice.push_back(k % (values + 1));
        projections.push_back(reversed);
        projections.push_back(twice);
        for (const char* variant : {"paper", "tuned"}) {
          if (cap && std::string(variant) == "paper") continue;  // the cap only changes tuned grids
          SCOPED_TRACE(variant);
          for (const std::vector<int>& cols : projections) {
            b.project(*da, cols, variant, out);
            expect_rel(b, out, ref::project(a, cols), "project of " + std::to_string(cols.size()) + " columns");
          }
          for (ArithOp op : {ArithOp::Add, ArithOp::Subtract, ArithOp::Multiply}) {
            b.arith(*da, *db, op, variant, out);
            expect_rel(b, out, ref::arith(a, c, op), std::string("arith ") + to_string(op));
          }
          for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max})
            EXPECT_TRUE(b.reduce(*da, op, variant).value == ref::reduce(a, op)) << "reduce " << to_string(op);
        }
        // Sums past 2^32 (every value 0xffffffff) and extremes at the 32-bit limits.
        b.upload(ones, da);
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max})
          EXPECT_TRUE(b.reduce(*da, op, "tuned").value == ref::reduce(ones, op)) << "reduce of ones " << to_string(op);
      }
  }
}

// Tuned select/unique run tuples of up to 4 words; wider ones are a skip with its reason, never the
// cub path recorded under the name tuned.
TEST_F(RaCuda, TunedCompactionSkipsWideTuplesInsteadOfFallingBack) {
  cuda::CudaRa b(*platform_);
  DeviceRel da, out;
  b.upload(unsorted(100, 4, 3, random_key), da);
  EXPECT_THROW(b.select(*da, Predicate{}, "tuned", out), SkipCase);
  EXPECT_THROW(b.unique(*da, "tuned", out), SkipCase);
  EXPECT_NO_THROW(b.select(*da, Predicate{}, "cub", out));
}

// The keep rules every compaction kernel applies (KeepFlag) and the merge positions of the union
// (merge_scatter), run on the host over the edge inputs: the multiset semantics of select, unique
// and the set operations checked without a device.
Relation keep_rows(std::uint32_t mode, const Relation& in, const Relation* other, const Predicate& p) {
  const auto w = static_cast<std::uint32_t>(in.width());
  const cuda::KeepFlag keep{mode, in.data(), static_cast<std::uint32_t>(in.rows()), w,
                            other ? other->data() : in.data(), other ? static_cast<std::uint32_t>(other->rows()) : 0u,
                            static_cast<std::uint32_t>(p.word()), p.lo32(), p.hi32()};
  Relation out(in.rows(), in.values());
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < in.rows(); ++i)
    if (keep(i)) std::copy_n(in.tuple(i), w, out.tuple(n++));
  out.set_rows(n);
  return out;
}

Relation merge_positions(const Relation& a, const Relation& b) {  // what merge_scatter writes
  const auto w = static_cast<std::uint32_t>(a.width());
  const auto n = static_cast<std::uint32_t>(a.rows()), m = static_cast<std::uint32_t>(b.rows());
  Relation out(a.rows() + b.rows(), a.values());
  for (std::uint32_t i = 0; i < n; ++i)
    std::copy_n(a.tuple(i), w, out.tuple(i + cuda::lower_bound_rows(b.data(), 0, m, w, a.tuple(i), w)));
  for (std::uint32_t j = 0; j < m; ++j)
    std::copy_n(b.tuple(j), w, out.tuple(j + cuda::upper_bound_rows(a.data(), 0, n, w, b.tuple(j), w)));
  return out;
}

TEST(RaCudaHost, KeepRulesMatchReference) {
  for (int values = 1; values <= 3; values += 2) {
    const std::vector<test::Input> inputs = test::edge_inputs(values);
    for (const test::Input& a : inputs) {
      SCOPED_TRACE(a.name + " values=" + std::to_string(values));
      for (const Predicate& p : {Predicate{0, 1, 0}, Predicate{0, 0xffffffffu, 0xffffffffu}, Predicate{1, 0, 0x7fffffffu}})
        EXPECT_EQ(first_difference(keep_rows(cuda::kSelect, a.rel, nullptr, p), ref::select(a.rel, p)), "");
      EXPECT_EQ(first_difference(keep_rows(cuda::kUnique, a.rel, nullptr, {}), ref::unique(a.rel)), "");
      for (const test::Input& b : inputs) {
        if (b.rel.rows() > 300 && b.name != a.name) continue;
        SCOPED_TRACE("with " + b.name);
        EXPECT_EQ(first_difference(keep_rows(cuda::kIntersection, a.rel, &b.rel, {}),
                                   ref::set_op(a.rel, b.rel, SetOp::Intersection)), "");
        EXPECT_EQ(first_difference(keep_rows(cuda::kDifference, a.rel, &b.rel, {}),
                                   ref::set_op(a.rel, b.rel, SetOp::Difference)), "");
        const Relation b_only = keep_rows(cuda::kUnionKeep, b.rel, &a.rel, {});
        EXPECT_EQ(first_difference(merge_positions(a.rel, b_only), ref::set_op(a.rel, b.rel, SetOp::Union)), "");
      }
    }
  }
}

TEST_F(RaCuda, PinnedHostRelationsRoundTrip) {
  cuda::CudaRa b(*platform_);
  Relation h = b.host_relation(1000, 3, Transfer::Pinned);
  EXPECT_EQ(h.memory_kind(), Transfer::Pinned);
  for (std::uint64_t i = 0; i < h.words(); ++i) h.data()[i] = static_cast<std::uint32_t>(i * 2654435761u);
  DeviceRel d;
  b.upload(h, d);
  Relation back = b.host_relation(1000, 3, Transfer::Pinned);
  b.download(*d, back);
  EXPECT_TRUE(same_tuples(h, back));
}

}  // namespace
}  // namespace hdb::ra
