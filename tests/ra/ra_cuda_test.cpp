// The CUDA variants (paper, cub, tuned) against the reference on the edge cases; skipped where
// there is no CUDA device (this runs on a GPU machine, e.g. under scripts/gpu-check).
#include <gtest/gtest.h>

#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "reference/ra.hpp"
#include "common/device_suite.hpp"
#include "ra_conformance.hpp"
#include "runtime/cuda_platform.hpp"

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
    if (std::string(variant) == "tuned") continue;  // the rest: paper and cub only
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
      EXPECT_TRUE(b.reduce(*da, op, variant).value == ref::reduce(a, op)) << "reduce " << to_string(op);
      b.reduce_by_key(*da, op, variant, out);
      expect_rel(b, out, ref::reduce_by_key(a, op), std::string("reduce_by_key ") + to_string(op));
    }
    for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
      b.set_op(*da, *dc, op, variant, out);
      expect_rel(b, out, ref::set_op(a, c, op), std::string("set ") + to_string(op));
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
