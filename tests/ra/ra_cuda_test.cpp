// The CUDA variants (paper, cub, tuned, hash; sort as cub) against the reference on the edge cases, with
// 32- and 64-bit keys; skipped where there is no CUDA device (this runs on a GPU machine, e.g. under
// scripts/gpu-check). The RaCudaHost tests run everywhere: the device functors (keep rules, join
// counts and writes, the 64-bit offset search) on the host, and plan_scratch.
#include <gtest/gtest.h>

#include <algorithm>
#include <type_traits>
#include <vector>

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
  for (const char* variant : {"paper", "cub", "tuned", "hash"}) {
    SCOPED_TRACE(variant);
    test::check_backend(b, variant);
    test::check_output_reuse(b, variant);
  }
}

// 64-bit keys (two words, high first; keys sharing the high word, the largest keys of 64 bits) in
// every operator of every variant.
TEST_F(RaCuda, EveryVariantMatchesReferenceWithSixtyFourBitKeys) {
  cuda::CudaRa b(*platform_);
  for (const char* variant : {"paper", "cub", "tuned", "hash"}) {
    SCOPED_TRACE(variant);
    test::check_backend(b, variant, 2);
  }
}

// The hash variant on shuffled inputs of many table slots: a heavy key (one slot's atomics and a
// long chain), few distinct tuples, all keys 0xffffffff (a legal key, never the empty slot).
TEST_F(RaCuda, HashOnLargeShuffledInputs) {
  cuda::CudaRa b(*platform_);
  test::check_shuffled_large(b, "hash");
}

// The hash kernels' atomics (slots claimed by compare-and-swap, chains pushed by exchange,
// aggregates and counts) on inputs of a few blocks: small enough for ThreadSanitizer under host
// execution's threads engine (scripts/test), which reports a plain access racing with them.
TEST_F(RaCuda, HashAtomicsOnSmallInputs) {
  cuda::CudaRa b(*platform_);
  test::check_shuffled_large(b, "hash", 700);
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
  Relation got(d->rows(), d->values(), d->key_words());
  b.download(*d, got);
  if (multiset) {  // `want` may share its tuples with the caller's relation: sort a copy
    sort_tuples(got);
    want = tuple_sorted(want);
  }
  std::string diff = first_difference(got, want);
  EXPECT_TRUE(diff.empty()) << what << ": " << diff;
}

// Every operator of `variants` on a and c (sorted), and a join of `few` with `many` (every key 0).
void expect_operators(RaBackend& b, const Relation& a, const Relation& c, const Relation& few, const Relation& many,
                      const std::vector<const char*>& variants) {
  DeviceRel da, dc, dfew, dmany, out;
  b.upload(a, da);
  b.upload(c, dc);
  b.upload(few, dfew);
  b.upload(many, dmany);
  for (const char* variant : variants) {
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

TEST_F(RaCuda, LargeInputsMatchReference) {
  cuda::CudaRa b(*platform_);
  expect_operators(b, big_sorted(300007, 100000, 199999, 5), big_sorted(200003, 100000, 199999, 6),
                   big_sorted(3, 1, 0, 7), big_sorted(70001, 1, 0, 8), {"paper", "cub", "tuned"});
}

// The kernels with shared memory and barriers (paper's partitions, scans, reductions and joins, the
// tuned join's sorted search) and with warp intrinsics (tuned reduce) on inputs of a few blocks, the
// last one partial: small enough for ThreadSanitizer under host execution's threads engine
// (scripts/test), which reports a missing __syncthreads as a race.
TEST_F(RaCuda, KernelsWithBarriersOnSmallInputs) {
  cuda::CudaRa b(*platform_);
  expect_operators(b, big_sorted(700, 300, 599, 5), big_sorted(501, 300, 599, 6), big_sorted(3, 1, 0, 7),
                   big_sorted(300, 1, 0, 8), {"paper", "tuned"});
  // The tuned join's sorted search over three tiles of 2,048 merged keys, runs of equal keys
  // across their edges.
  DeviceRel dl, dr, out;
  const Relation l = big_sorted(2500, 300, 599, 9), r = big_sorted(1800, 300, 599, 10);
  b.upload(l, dl);
  b.upload(r, dr);
  b.join(*dl, *dr, "tuned", out);
  expect_rel(b, out, ref::join(l, r), "tuned join over several search tiles", true);
}

// `rows` tuples of `values` values in no order: keys from `key(i)`, values random (all ones when
// `ones`), so that sums carry past 32 bits.
Relation unsorted(std::uint64_t rows, int values, std::uint64_t seed,
                  std::uint32_t (*key)(std::uint64_t, std::uint64_t), bool ones = false) {
  Relation r(rows, values);
  for (std::uint64_t i = 0; i < rows; ++i) {
    r.tuple(i)[0] = key(seed, i);
    for (int v = 1; v <= values; ++v)
      r.tuple(i)[v] =
          ones ? 0xffffffffu : static_cast<std::uint32_t>(rand_at(seed + 1, i * 8 + static_cast<std::uint64_t>(v)));
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

// project (each column list), add/subtract/multiply and reduce of `variant` (those it offers) on a
// and c (uploaded as da and db) against the reference.
void expect_streaming(RaBackend& b, const char* variant, const Relation& a, const Relation& c,
                      const std::vector<std::vector<int>>& projections, const DeviceRel& da, const DeviceRel& db,
                      DeviceRel& out) {
  SCOPED_TRACE(variant);
  for (const std::vector<int>& cols : projections) {
    if (!offers(b, Op::Project, variant)) break;
    b.project(*da, cols, variant, out);
    expect_rel(b, out, ref::project(a, cols), "project of " + std::to_string(cols.size()) + " columns");
  }
  for (ArithOp op : {ArithOp::Add, ArithOp::Subtract, ArithOp::Multiply}) {
    if (!offers(b, Op::Add, variant)) break;
    b.arith(*da, *db, op, variant, out);
    expect_rel(b, out, ref::arith(a, c, op), std::string("arith ") + to_string(op));
  }
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max})
    EXPECT_TRUE(b.reduce(*da, op, variant).value == ref::reduce(a, op)) << "reduce " << to_string(op);
}

// Sums past 2^32 and extremes at the 32-bit limits: tuned reduce of `ones` (every value 0xffffffff).
void expect_reduce_of_ones(RaBackend& b, const Relation& ones, DeviceRel& d) {
  b.upload(ones, d);
  for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max})
    EXPECT_TRUE(b.reduce(*d, op, "tuned").value == ref::reduce(ones, op)) << "reduce of ones " << to_string(op);
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
        SCOPED_TRACE(std::to_string(n) + " tuples, " + std::to_string(values) + " values, grid cap " +
                     std::to_string(cap));
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
        for (const char* variant : {"paper", "tuned"})
          if (!cap || std::string(variant) == "tuned")  // the cap only changes tuned grids
            expect_streaming(b, variant, a, c, projections, da, db, out);
        expect_reduce_of_ones(b, ones, da);
      }
  }
}

// Sort with 64-bit keys (radix sort of (64-bit key, row) pairs, then a gather): random keys over 64
// bits, few keys sharing their high word, every key 2^64 - 1; the last value numbers the rows, so
// an unstable order shows. Key-only tuples (two words) take the pairs path too.
TEST_F(RaCuda, SortSixtyFourBitKeysIsStable) {
  cuda::CudaRa b(*platform_);
  DeviceRel d, out;
  for (int values : {0, 1, 2, 6})
    for (std::uint64_t n : {0ull, 1ull, 2ull, 257ull, 4099ull, 70001ull, 300007ull})
      for (int kind = 0; kind < 3; ++kind) {
        Relation in(n, values, 2);
        for (std::uint64_t i = 0; i < n; ++i) {
          const std::uint64_t r = rand_at(29 + n, i);
          set_key(in.tuple(i), 2, kind == 0 ? r : kind == 1 ? (std::uint64_t{7} << 32) | (r % 5) : ~std::uint64_t{0});
          for (int v = 2; v < in.width(); ++v)
            in.tuple(i)[v] = static_cast<std::uint32_t>(rand_at(31, i * 8 + static_cast<std::uint64_t>(v)));
          if (values > 0) in.tuple(i)[in.width() - 1] = static_cast<std::uint32_t>(i);
        }
        b.upload(in, d);
        b.sort(*d, "cub", out);
        ASSERT_EQ(out->rows(), n);
        EXPECT_EQ(out->key_words(), 2);
        expect_rel(b, out, ref::sort(in),
                   "sort of " + std::to_string(n) + " tuples, " + std::to_string(values) + " values, key kind " +
                       std::to_string(kind));
      }
}

// The streaming primitives with 64-bit keys at every width (tuned: the reduce kernels compiled per
// width for KW = 2, the uint4 arithmetic whose key words are the first two of each tuple), with
// tails and sums past 2^32, on the natural grid and on one capped at 3 blocks.
TEST_F(RaCuda, StreamingPrimitivesWithSixtyFourBitKeys) {
  cuda::CudaRa b(*platform_);
  DeviceRel da, db, out;
  for (std::uint32_t cap : {0u, 3u})
    for (int values = 0; values <= max_values(2); ++values)
      for (std::uint64_t n : {0ull, 1ull, 3ull, 5ull, 7ull, 257ull, 4099ull, 70001ull}) {
        SCOPED_TRACE(std::to_string(n) + " tuples, " + std::to_string(values) + " values, grid cap " +
                     std::to_string(cap));
        b.state().max_grid = cap;
        Relation a(n, values, 2), c(n, values, 2), ones(n, values, 2);
        for (std::uint64_t i = 0; i < n; ++i) {
          set_key(a.tuple(i), 2, rand_at(3 + n, i));
          set_key(c.tuple(i), 2, rand_at(5 + n, i));
          set_key(ones.tuple(i), 2, wide_key(static_cast<std::uint32_t>(i)));
          for (int v = 2; v < a.width(); ++v) {
            a.tuple(i)[v] = static_cast<std::uint32_t>(rand_at(7, i * 8 + static_cast<std::uint64_t>(v)));
            c.tuple(i)[v] = static_cast<std::uint32_t>(rand_at(9, i * 8 + static_cast<std::uint64_t>(v)));
            ones.tuple(i)[v] = 0xffffffffu;
          }
        }
        b.upload(a, da);
        b.upload(c, db);
        std::vector<std::vector<int>> projections{{0}};
        if (values > 0) projections.push_back({values, 0, 1});
        for (const char* variant : {"paper", "cub", "tuned"})
          if (!cap || std::string(variant) == "tuned")  // the cap only changes tuned grids
            expect_streaming(b, variant, a, c, projections, da, db, out);
        expect_reduce_of_ones(b, ones, da);
      }
}

// Tuned select/unique run tuples of a key and up to 3 values (4 words, 5 with a 64-bit key); more
// values are a skip with its reason, never the cub path recorded under the name tuned.
// Tuned select and unique at every width they take, key-only tuples included: one word (CUB on
// 4-byte words), two words (8-byte words: a unique on a 32-bit key is UniqueByKey equal on the low
// half only, so tuples of one key with different values are one), four words (16-byte aligned
// structs), three and five (structs); on the edge inputs and in reverse, selects on the key (all,
// a middle range, none) and on the first value.
TEST_F(RaCuda, TunedCompactionAtEveryWidth) {
  cuda::CudaRa b(*platform_);
  DeviceRel d, out;
  for (int kw : {1, 2})
    for (int values = 0; values <= 3; ++values) {
      const std::uint64_t mid_lo = kw == 1 ? 0x40000000u : std::uint64_t{1} << 40;
      std::vector<Predicate> preds{{0, 0, ~0ull}, {0, mid_lo, 3 * mid_lo}, {0, 5, 4}};
      if (values > 0) preds.push_back({1, 0, 0x7fffffffu});
      for (const test::Input& in : test::edge_inputs(values, kw)) {
        Relation reversed(in.rel.rows(), values, kw);
        for (std::uint64_t i = 0; i < in.rel.rows(); ++i)
          std::copy_n(in.rel.tuple(in.rel.rows() - 1 - i), in.rel.width(), reversed.tuple(i));
        for (const Relation* r : {&in.rel, static_cast<const Relation*>(&reversed)}) {
          const std::string what = in.name + (r == &reversed ? " reversed, " : ", ") + std::to_string(kw * 32) +
                                   "-bit keys, " + std::to_string(values) + " values";
          b.upload(*r, d);
          b.unique(*d, "tuned", out);
          expect_rel(b, out, ref::unique(*r), "tuned unique of " + what);
          for (const Predicate& p : preds) {
            b.select(*d, p, "tuned", out);
            expect_rel(b, out, ref::select(*r, p),
                       "tuned select of " + what + " on attribute " + std::to_string(p.attribute) + " in [" +
                           std::to_string(p.lo) + ", " + std::to_string(p.hi) + "]");
          }
        }
      }
    }
}

TEST_F(RaCuda, TunedCompactionSkipsWideTuplesInsteadOfFallingBack) {
  cuda::CudaRa b(*platform_);
  DeviceRel da, out;
  b.upload(unsorted(100, 4, 3, random_key), da);
  EXPECT_THROW(b.select(*da, Predicate{}, "tuned", out), SkipCase);
  EXPECT_THROW(b.unique(*da, "tuned", out), SkipCase);
  EXPECT_NO_THROW(b.select(*da, Predicate{}, "cub", out));
  Relation wide5, wide6(100, 4, 2);  // 64-bit keys: 3 and 4 values
  for (const test::Input& in : test::edge_inputs(3, 2))
    if (in.name == "dups1000") wide5 = in.rel;
  ASSERT_EQ(wide5.rows(), 1000u);
  b.upload(wide5, da);
  b.select(*da, Predicate{0, 0, ~0ull}, "tuned", out);
  expect_rel(b, out, wide5, "tuned select of everything, 64-bit keys and 3 values");
  b.unique(*da, "tuned", out);
  expect_rel(b, out, ref::unique(wide5), "tuned unique, 64-bit keys and 3 values");
  b.upload(wide6, da);
  EXPECT_THROW(b.unique(*da, "tuned", out), SkipCase);
}

// The keep rules every compaction kernel applies (KeepFlag) and the merge positions of the union
// (merge_scatter), run on the host over the edge inputs: the multiset semantics of select, unique
// and the set operations checked without a device.
Relation keep_rows(std::uint32_t mode, const Relation& in, const Relation* other, Predicate p) {
  const auto w = static_cast<std::uint32_t>(in.width());
  p.key_words = in.key_words();
  const cuda::KeepFlag keep =
      cuda::make_keep_flag(mode, in.data(), static_cast<std::uint32_t>(in.rows()), in.width(), in.key_words(),
                           other ? other->data() : nullptr, other ? static_cast<std::uint32_t>(other->rows()) : 0u, p);
  Relation out(in.rows(), in.values(), in.key_words());
  std::uint64_t n = 0;
  for (std::uint32_t i = 0; i < in.rows(); ++i)
    if (keep(i)) std::copy_n(in.tuple(i), w, out.tuple(n++));
  out.set_rows(n);
  return out;
}

Relation merge_positions(const Relation& a, const Relation& b) {  // what merge_scatter writes
  const auto w = static_cast<std::uint32_t>(a.width());
  const auto n = static_cast<std::uint32_t>(a.rows()), m = static_cast<std::uint32_t>(b.rows());
  Relation out(a.rows() + b.rows(), a.values(), a.key_words());
  for (std::uint32_t i = 0; i < n; ++i)
    std::copy_n(a.tuple(i), w, out.tuple(i + cuda::lower_bound_rows(b.data(), 0, m, w, a.tuple(i), w)));
  for (std::uint32_t j = 0; j < m; ++j)
    std::copy_n(b.tuple(j), w, out.tuple(j + cuda::upper_bound_rows(a.data(), 0, n, w, b.tuple(j), w)));
  return out;
}

// Select predicates for keys of kw words: nothing, the largest key, about half the keys (at
// wide_key's midpoint for 64-bit keys, where keys share high words), bounds above 2^32 on a 32-bit
// key, one on a value.
std::vector<Predicate> host_predicates(int kw) {
  const std::uint64_t max = kw == 2 ? ~std::uint64_t{0} : 0xffffffffu;
  const std::uint64_t half = kw == 2 ? wide_key(0x7fffffffu) : 0x7fffffffu;
  std::vector<Predicate> p{Predicate{0, 1, 0}, Predicate{0, max, max}, Predicate{0, 0, half},
                           Predicate{0, half + 1, max - 1}, Predicate{1, 0, 0x7fffffffu}};
  if (kw == 1) p.push_back(Predicate{0, 1ull << 32, ~0ull});  // selects nothing
  for (Predicate& x : p) x.key_words = kw;
  return p;
}

TEST(RaCudaHost, KeepRulesMatchReference) {
  for (int kw : {1, 2}) {
    for (int values = 1; values <= 3; values += 2) {
      const std::vector<test::Input> inputs = test::edge_inputs(values, kw);
      for (const test::Input& a : inputs) {
        SCOPED_TRACE(a.name + " values=" + std::to_string(values) + " key bits=" + std::to_string(32 * kw));
        for (const Predicate& p : host_predicates(kw))
          EXPECT_EQ(first_difference(keep_rows(cuda::kSelect, a.rel, nullptr, p), ref::select(a.rel, p)), "")
              << "select attribute " << p.attribute << " in [" << p.lo << ", " << p.hi << "]";
        EXPECT_EQ(first_difference(keep_rows(cuda::kUnique, a.rel, nullptr, {}), ref::unique(a.rel)), "");
        for (const test::Input& b : inputs) {
          if (b.rel.rows() > 300 && b.name != a.name) continue;
          SCOPED_TRACE("with " + b.name);
          EXPECT_EQ(first_difference(keep_rows(cuda::kIntersection, a.rel, &b.rel, {}),
                                     ref::set_op(a.rel, b.rel, SetOp::Intersection)),
                    "");
          EXPECT_EQ(first_difference(keep_rows(cuda::kDifference, a.rel, &b.rel, {}),
                                     ref::set_op(a.rel, b.rel, SetOp::Difference)),
                    "");
          const Relation b_only = keep_rows(cuda::kUnionKeep, b.rel, &a.rel, {});
          EXPECT_EQ(first_difference(merge_positions(a.rel, b_only), ref::set_op(a.rel, b.rel, SetOp::Union)), "");
        }
      }
    }
  }
}

// What the join kernels do, on the host with the same functor (JoinKeys): count each left tuple's
// matches, exclusive 64-bit scan, write each match at its offset (the cub writer; the tuned writer
// finds each output's left row with left_row_of). Checked against the reference at 32- and 64-bit
// keys, where 64-bit keys share high words and differ in the low word.
template <int KW>
Relation host_join(const Relation& l, const Relation& r, bool balanced) {
  const cuda::JoinKeys<KW> m{l.data(), static_cast<std::uint32_t>(l.rows()), static_cast<std::uint32_t>(l.width()),
                             r.data(), static_cast<std::uint32_t>(r.rows()), static_cast<std::uint32_t>(r.width())};
  std::vector<cuda::JoinCount> offsets(l.rows() + 1, 0);
  for (std::uint32_t i = 0; i < m.nl; ++i) offsets[i + 1] = offsets[i] + m(i);
  EXPECT_EQ(m(m.nl), 0u);
  Relation out(offsets[m.nl], l.values() + r.values(), KW);
  EXPECT_EQ(static_cast<int>(m.out_width()), out.width());
  if (balanced) {
    for (cuda::JoinCount o = 0; o < offsets[m.nl]; ++o) {
      const std::uint32_t i = cuda::left_row_of(offsets.data(), m.nl, o);
      m.write(i, m.first(i) + static_cast<std::uint32_t>(o - offsets[i]), out.tuple(o));
    }
  } else {
    for (std::uint32_t i = 0; i < m.nl; ++i)
      for (cuda::JoinCount k = 0; k < offsets[i + 1] - offsets[i]; ++k)
        m.write(i, m.first(i) + static_cast<std::uint32_t>(k), out.tuple(offsets[i] + k));
  }
  return out;
}

TEST(RaCudaHost, JoinFunctorsMatchReference) {
  for (int kw : {1, 2})
    for (int values : {1, 3}) {
      const std::vector<test::Input> inputs = test::edge_inputs(values, kw);
      for (const test::Input& a : inputs)
        for (const test::Input& b : inputs) {
          // Larger inputs only with themselves, up to 257 tuples (all keys equal: 66049 pairs).
          if (b.rel.rows() > 300 && (b.name != a.name || a.rel.rows() > 257)) continue;
          SCOPED_TRACE(a.name + " with " + b.name + " values=" + std::to_string(values) + " kw=" + std::to_string(kw));
          Relation want = ref::join(a.rel, b.rel);
          sort_tuples(want);
          for (bool balanced : {false, true}) {
            Relation got = kw == 2 ? host_join<2>(a.rel, b.rel, balanced) : host_join<1>(a.rel, b.rel, balanced);
            sort_tuples(got);
            EXPECT_EQ(first_difference(got, want), "") << (balanced ? "balanced writer" : "row writer");
          }
        }
    }
}

// Join counts are 64-bit end to end: each left tuple's count, the scan's type (CUB accumulates in
// its input's value type, so the counts themselves are JoinCount) and the offsets. 65537 x 65537
// tuples of one key: 4295098369 pairs, which a 32-bit running sum would wrap to 131073.
TEST(RaCudaHost, JoinCountsAndOffsetsPassThirtyTwoBits) {
  static_assert(std::is_same_v<cuda::JoinCount, std::uint64_t>);
  static_assert(std::is_same_v<decltype(std::declval<cuda::JoinKeys<1>>()(0u)), cuda::JoinCount>);
  static_assert(std::is_same_v<decltype(std::declval<cuda::JoinKeys<2>>()(0u)), cuda::JoinCount>);
  for (int kw : {1, 2}) {
    Relation l(65537, 1, kw);
    for (std::uint64_t i = 0; i < l.rows(); ++i) {
      set_key(l.tuple(i), kw, kw == 2 ? (std::uint64_t{5} << 32) | 9 : 9);
      l.tuple(i)[kw] = static_cast<std::uint32_t>(i);
    }
    cuda::JoinCount total = 0;
    const auto n = static_cast<std::uint32_t>(l.rows()), w = static_cast<std::uint32_t>(l.width());
    for (std::uint32_t i = 0; i <= n; ++i)
      total += kw == 2 ? cuda::JoinKeys<2>{l.data(), n, w, l.data(), n, w}(i)
                       : cuda::JoinKeys<1>{l.data(), n, w, l.data(), n, w}(i);
    EXPECT_EQ(total, 65537ull * 65537ull) << "kw=" << kw;
    EXPECT_EQ(total, ref::join_rows(l, l));
  }
  // The balanced writer's search over offsets beyond 2^32: output tuple o belongs to the last left
  // row whose offset is at most o (rows with no matches have equal offsets and own nothing).
  const std::vector<cuda::JoinCount> offsets{0, 3000000000ull, 3000000000ull, 6000000000ull, 9000000001ull};
  EXPECT_EQ(cuda::left_row_of(offsets.data(), 4, 0), 0u);
  EXPECT_EQ(cuda::left_row_of(offsets.data(), 4, 2999999999ull), 0u);
  EXPECT_EQ(cuda::left_row_of(offsets.data(), 4, 3000000000ull), 2u);
  EXPECT_EQ(cuda::left_row_of(offsets.data(), 4, 5000000000ull), 2u);
  EXPECT_EQ(cuda::left_row_of(offsets.data(), 4, 6000000000ull), 3u);
  EXPECT_EQ(cuda::left_row_of(offsets.data(), 4, 9000000000ull), 3u);
}

// plan_scratch needs no device state (the platform is not even initialised here): every buffer by
// name, 64-bit join offsets, sort buffers at the key width and CUB's temporary storage (CUB's own
// answer where there is a device, the documented bound without one).
std::uint64_t item(const MemoryPlan& plan, const std::string& name) {
  for (const auto& [what, bytes] : plan.items())
    if (what == name) return bytes;
  ADD_FAILURE() << "no item '" << name << "' in the plan";
  return 0;
}

TEST(RaCudaHost, PlanScratchCountsEveryBuffer) {
  hdb::cuda::CudaPlatform platform;
  cuda::CudaRa b(platform);
  auto plan = [&](Op op, const std::string& variant, std::uint64_t rows_a, int width_a, int kw,
                  std::uint64_t rows_b = 0, int width_b = 0, std::uint64_t out_rows = 0, int out_width = 0) {
    OpShape s;
    s.op = op;
    s.variant = variant;
    s.rows_a = rows_a;
    s.width_a = width_a;
    s.rows_b = rows_b;
    s.width_b = width_b;
    s.key_words = kw;
    s.out_rows = out_rows;
    s.out_width = out_width;
    MemoryPlan p;
    b.plan_scratch(s, p);
    return p;
  };
  const std::uint64_t n = 1u << 20;
  // Sort, 64-bit keys: 64-bit keys and row numbers double-buffered, and the radix sort's storage.
  MemoryPlan sort64 = plan(Op::Sort, "cub", n, 3, 2);
  EXPECT_EQ(item(sort64, "sort keys (double buffer)"), 2 * n * 8);
  EXPECT_EQ(item(sort64, "sort row numbers (double buffer)"), 2 * n * 4);
  EXPECT_GT(item(sort64, "cub radix sort temporary storage"), 0u);
  EXPECT_EQ(item(plan(Op::Sort, "cub", n, 2, 1), "sort keys (double buffer)"), 2 * n * 4);
  // Keys alone: SortKeys from the input into the output keeps a copy of the keys in its storage,
  // the figure the old fit check left out.
  EXPECT_GE(item(plan(Op::Sort, "cub", n, 1, 1), "cub radix sort temporary storage (with its own copy of the keys)"),
            4 * n);
  // Join: offsets (and the paper's local offsets and partition counts) are 64-bit.
  for (int kw : {1, 2}) {
    MemoryPlan cub = plan(Op::Join, "cub", n, kw + 1, kw, n, kw + 1, n, kw + 2);
    EXPECT_EQ(item(cub, "join offsets (64-bit)"), (n + 1) * 8);
    EXPECT_EQ(item(cub, "join match counts"), (n + 1) * 4);
    EXPECT_GT(item(cub, "cub scan temporary storage"), 0u);
    MemoryPlan tuned = plan(Op::Join, "tuned", n, kw + 1, kw, n, kw + 1, n, kw + 2);
    EXPECT_EQ(item(tuned, "join offsets (64-bit)"), (n + 1) * 8);
    EXPECT_GT(item(tuned, "cub scan temporary storage"), 0u);
    MemoryPlan paper = plan(Op::Join, "paper", n, kw + 1, kw, n, kw + 1, n, kw + 2);
    EXPECT_EQ(item(paper, "join local offsets (64-bit)"), n * 8);
    EXPECT_EQ(item(paper, "join partition counts and offsets (64-bit)"), (n / 256) * 16);
  }
  // Compaction: cub's row indices and select storage; paper's partition slots; tuned at a 64-bit
  // key with three values plans its single pass, with four it is skipped when it runs (no plan).
  MemoryPlan sel = plan(Op::Select, "cub", n, 3, 2, 0, 0, n, 3);
  EXPECT_EQ(item(sel, "selected row indices"), n * 4);
  EXPECT_GT(item(sel, "cub select temporary storage"), 0u);
  EXPECT_EQ(item(plan(Op::Unique, "paper", n, 3, 2, 0, 0, n, 3), "partition slots"), n * 3 * 4);
  MemoryPlan tuned_unique = plan(Op::Unique, "tuned", n, 5, 2, 0, 0, n / 4, 5);
  EXPECT_GT(item(tuned_unique, "cub select temporary storage"), 0u);
  // Its output is allocated for every tuple: the quarter selected is the benchmark's, the rest ours.
  EXPECT_EQ(item(tuned_unique, "output rows beyond the selected ones (sized for all)"), (n - n / 4) * 5 * 4);
  EXPECT_EQ(plan(Op::Select, "tuned", n, 6, 2, 0, 0, n, 6).items().size(), 0u);
  EXPECT_EQ(item(plan(Op::SetUnion, "cub", n, 3, 2, n, 3, 2 * n, 3), "b's tuples beyond a's (at most all of b)"),
            n * 12);
  EXPECT_GT(item(plan(Op::Reduce, "cub", n, 4, 2), "cub reduce temporary storage"), 0u);
  EXPECT_EQ(item(plan(Op::Reduce, "tuned", n, 4, 2), "reduce results"), 2u * 8);
  // Hash: a table of two slots a row (a power of two), its per-slot counts and 64-bit offsets;
  // reduce_by_key's aggregates per slot and value; join's table of one slot a left row, its chains,
  // counts and first matches per right row; set operations' table over both sides with two counts a slot.
  MemoryPlan rbk = plan(Op::ReduceByKey, "hash", n, 4, 2, 0, 0, n, 4);
  EXPECT_EQ(item(rbk, "hash table"), 2 * n * 4);
  EXPECT_EQ(item(rbk, "hash aggregates"), 2 * n * 2 * 4);
  EXPECT_EQ(item(rbk, "hash output offsets (64-bit)"), (2 * n + 1) * 8);
  EXPECT_GT(item(rbk, "cub scan temporary storage"), 0u);
  EXPECT_EQ(item(plan(Op::Unique, "hash", n + 1, 2, 1, 0, 0, n, 2), "hash table"), 4 * n * 4);
  MemoryPlan hjoin = plan(Op::Join, "hash", n, 2, 1, n / 2, 3, n, 4);
  EXPECT_EQ(item(hjoin, "hash table"), n * 4);
  EXPECT_EQ(item(hjoin, "hash chains"), n * 4);
  EXPECT_EQ(item(hjoin, "hash first matches"), n / 2 * 4);
  EXPECT_EQ(item(hjoin, "hash output counts"), (n / 2 + 1) * 4);
  MemoryPlan hset = plan(Op::SetDifference, "hash", n, 2, 1, n, 2, n, 2);
  EXPECT_EQ(item(hset, "hash table"), 4 * n * 4);
  EXPECT_EQ(item(hset, "hash counts in a and b"), 4 * n * 2 * 4);
  // Every operator and variant plans without throwing, and nothing for empty inputs.
  for (Op op : all_ops())
    for (const std::string& v : b.variants(op))
      for (int kw : {1, 2}) {
        EXPECT_NO_THROW(plan(op, v, n, kw + 1, kw, n, kw + 1, n, kw + 2)) << test_name(op) << "/" << v;
        EXPECT_EQ(plan(op, v, 0, kw + 1, kw, 0, kw + 1, 0, kw + 2).total(), 0u) << test_name(op) << "/" << v;
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

// The phases of one operator call, in order.
std::vector<std::string> phase_names(const Breakdown& b) {
  std::vector<std::string> names;
  for (const Phase& p : b.phases) names.push_back(p.name);
  return names;
}

// A count that sizes the next step is read back in a phase of its own ("readback", inside the
// kernel span); a read-back that ends the operator (tuned select's count, every reduce's results,
// copied through pinned memory) is outside it. The phases still tile the kernel span.
TEST_F(RaCuda, CountReadBacksAreTheirOwnPhaseAndEndingReadBacksAreOutsideTheKernelTime) {
  using Names = std::vector<std::string>;
  cuda::CudaRa b(*platform_);
  const Relation a = big_sorted(300007, 100000, 199999, 5), c = big_sorted(200003, 100000, 199999, 6);
  DeviceRel da, dc, out;
  b.upload(a, da);
  b.upload(c, dc);
  auto tiles = [](const Breakdown& t) {
    double sum = 0;
    for (const Phase& p : t.phases) sum += p.seconds;
    EXPECT_NEAR(sum, t.kernel, 1e-5 + 1e-2 * t.kernel);  // event times are rounded to about 0.5 us
  };
  const Predicate pred{0, 0, 99999};
  for (int pass = 0; pass < 2; ++pass) {  // the warm-up allocates; the second pass reuses
    Breakdown t = b.select(*da, pred, "paper", out);
    EXPECT_EQ(phase_names(t), (Names{"partition", "scan", "readback", "gather"}));
    tiles(t);
    t = b.select(*da, pred, "cub", out);
    EXPECT_EQ(phase_names(t), (Names{"select", "readback", "gather"}));
    tiles(t);
    t = b.select(*da, pred, "tuned", out);
    EXPECT_EQ(phase_names(t), (Names{"compute"}));
    EXPECT_EQ(out->rows(), ref::select(a, pred).rows());  // the count read after the timer closed
    tiles(t);
    t = b.join(*da, *dc, "paper", out);
    EXPECT_EQ(phase_names(t), (Names{"partition", "scan", "readback", "compute"}));
    tiles(t);
    t = b.join(*da, *dc, "cub", out);
    EXPECT_EQ(phase_names(t), (Names{"partition", "scan", "readback", "compute"}));
    tiles(t);
    t = b.join(*da, *dc, "tuned", out);
    EXPECT_EQ(phase_names(t), (Names{"search", "scan", "readback", "compute"}));
    tiles(t);
    for (const char* variant : {"paper", "cub", "tuned"}) {
      SCOPED_TRACE(variant);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
        Timed<Aggregate> r = b.reduce(*da, op, variant);
        EXPECT_TRUE(r.value == ref::reduce(a, op));
        for (const Phase& p : r.time.phases) EXPECT_NE(p.name, "readback");
        tiles(r.time);
      }
    }
  }
}

// hdb::cuda::check: the sticky errors (the context is lost: driver_types.h's "inconsistent state")
// throw DeviceLost naming the call; other errors DeviceError; out of memory a skip. No device needed.
TEST(CudaRuntimeHost, StickyErrorsThrowDeviceLost) {
  for (cudaError_t e :
       {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorHardwareStackError, cudaErrorIllegalInstruction,
        cudaErrorMisalignedAddress, cudaErrorInvalidAddressSpace, cudaErrorInvalidPc, cudaErrorLaunchTimeout,
        cudaErrorAssert, cudaErrorUnknown, cudaErrorContained, cudaErrorTensorMemoryLeak, cudaErrorExternalDevice,
        cudaErrorECCUncorrectable}) {
    SCOPED_TRACE(cudaGetErrorName(e));
    EXPECT_TRUE(hdb::cuda::is_sticky(e));
    try {
      hdb::cuda::check(e, "cudaEventSynchronize(e_)", "file.cu", 7);
      ADD_FAILURE() << "no exception";
    } catch (const DeviceLost& x) {
      const std::string what = x.what();
      EXPECT_NE(what.find("cudaEventSynchronize(e_) failed: "), std::string::npos) << what;
      EXPECT_NE(what.find(cudaGetErrorName(e)), std::string::npos) << what;
      EXPECT_NE(what.find("the device context is lost"), std::string::npos) << what;
      EXPECT_NE(what.find("HDB_CUDA_SYNC_CHECK=1"), std::string::npos) << what;
    }
  }
  for (cudaError_t e : {cudaErrorInvalidValue, cudaErrorInvalidConfiguration, cudaErrorLaunchOutOfResources,
                        cudaErrorInvalidDeviceFunction, cudaErrorNotReady}) {
    SCOPED_TRACE(cudaGetErrorName(e));
    EXPECT_FALSE(hdb::cuda::is_sticky(e));
    try {
      hdb::cuda::check(e, "kernel launch", "file.cu", 7);
      ADD_FAILURE() << "no exception";
    } catch (const DeviceLost&) {
      ADD_FAILURE() << "a recoverable error reported as a lost device";
    } catch (const DeviceError& x) {
      EXPECT_NE(std::string(x.what()).find("kernel launch failed: "), std::string::npos);
    }
  }
  EXPECT_THROW(hdb::cuda::check(cudaErrorMemoryAllocation, "cudaMalloc", "file.cu", 7), SkipCase);
  EXPECT_NO_THROW(hdb::cuda::check(cudaSuccess, "cudaMalloc", "file.cu", 7));
}

// CudaPlatform::init's reading of a cudaGetDeviceCount error: "no device" (a skip, exit code 77)
// only for the errors of a machine without a driver, and only where no NVIDIA driver is installed;
// with one installed (an old driver under the CUDA 13 runtime, a broken installation) a failure.
TEST(CudaRuntimeHost, DeviceCountErrorsSkipOnlyWithoutADriver) {
  using hdb::cuda::device_count_error_is_no_device;
  for (cudaError_t e : {cudaErrorNoDevice, cudaErrorInsufficientDriver, cudaErrorStubLibrary}) {
    SCOPED_TRACE(cudaGetErrorName(e));
    EXPECT_TRUE(device_count_error_is_no_device(e, /*driver_present=*/false));
    EXPECT_FALSE(device_count_error_is_no_device(e, /*driver_present=*/true));
  }
  for (cudaError_t e :
       {cudaErrorSystemDriverMismatch, cudaErrorInitializationError, cudaErrorCompatNotSupportedOnDevice,
        cudaErrorDevicesUnavailable, cudaErrorUnknown, cudaErrorSystemNotReady}) {
    SCOPED_TRACE(cudaGetErrorName(e));
    EXPECT_FALSE(device_count_error_is_no_device(e, false));
    EXPECT_FALSE(device_count_error_is_no_device(e, true));
  }
  // This machine: a skip is only ever taken where no driver is installed.
  hdb::cuda::CudaPlatform p;
  try {
    p.init(Options{});
  } catch (const NoDevice& e) {
    EXPECT_FALSE(hdb::cuda::nvidia_driver_present()) << e.what();
  } catch (const DeviceError& e) {
    EXPECT_TRUE(hdb::cuda::nvidia_driver_present()) << e.what();
    ADD_FAILURE() << "the CUDA set-up fails on a machine with an NVIDIA driver: " << e.what();
  }
}

}  // namespace
}  // namespace hdb::ra
