// The CPU backend (serial and parallel) against the serial reference.
#include "tpch_backend.hpp"
#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {

TEST(TpchCpu, SerialAndParallelEqualTheReference) {
  cpu::CpuTpch backend(4);  // more threads than cores here: chunking is exercised either way
  expect_all_equal(backend, backend.variants(), Transfer::None);
}

TEST(TpchCpu, UnknownVariantIsSkipped) {
  cpu::CpuTpch backend(2);
  Plan p = random_kernel("A", 10, 1, 1);
  EXPECT_THROW(backend.prepare(p, "fused", Transfer::None), SkipCase);
}

}  // namespace hdb::tpch::test
