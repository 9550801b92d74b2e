// The cpu backend's serial and parallel variants against the reference, on edge cases.
#include <gtest/gtest.h>

#include "ra_backend.hpp"
#include "ra_conformance.hpp"

namespace hdb::ra {
namespace {

TEST(RaCpu, SerialMatchesReference) {
  cpu::CpuRa b(1);
  test::check_backend(b, "serial");
}

TEST(RaCpu, ParallelMatchesReference) {
  // More threads than cores, so chunk edges fall inside key runs of the small inputs too.
  cpu::CpuRa b(4);
  test::check_backend(b, "parallel");
  test::check_output_reuse(b, "parallel");
}

TEST(RaCpu, ParallelSplitsLargeInputsAtRunBoundaries) {
  // Large enough for several chunks, with long runs of equal keys crossing the chunk bounds.
  RelationSpec s;
  s.rows = 200000;
  s.values = 1;
  s.keys.distinct = 7;
  s.value_mask = 1;
  Relation a = make_relation(s, 3, 2);
  s.keys.distinct = 5000;
  s.value_mask = 3;
  Relation c = make_relation(s, 4, 2);
  cpu::CpuRa par(3), ser(1);
  DeviceRel da, dc, o1, o2;
  par.upload(a, da);
  par.upload(c, dc);
  Relation h1(0, 1), h2(0, 1);
  par.unique(*da, "parallel", o1);
  ser.unique(*da, "serial", o2);
  EXPECT_EQ(o1->rows(), o2->rows());
  par.reduce_by_key(*dc, ReduceOp::Sum, "parallel", o1);
  ser.reduce_by_key(*dc, ReduceOp::Sum, "serial", o2);
  par.download(*o1, h1);
  ser.download(*o2, h2);
  EXPECT_TRUE(same_tuples(h1, h2)) << first_difference(h1, h2);
  for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
    par.set_op(*dc, *da, op, "parallel", o1);
    ser.set_op(*dc, *da, op, "serial", o2);
    par.download(*o1, h1);
    ser.download(*o2, h2);
    EXPECT_TRUE(same_tuples(h1, h2)) << to_string(op) << ": " << first_difference(h1, h2);
  }
}

TEST(RaCpu, UnknownVariantIsRejected) {
  cpu::CpuRa b(1);
  DeviceRel d, o;
  b.upload(Relation(1, 1), d);
  EXPECT_THROW(b.unique(*d, "tuned", o), std::invalid_argument);
}

}  // namespace
}  // namespace hdb::ra
