// The CPU backends against the serial reference: the RA composition over CpuRa (ra-serial,
// ra-parallel) and the columnar engine (columnar-serial, columnar-parallel).
#include "bench/tpch_ra.hpp"
#include "ra_backend.hpp"
#include "tpch_backend.hpp"
#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {

TEST(TpchCpu, ColumnarEqualsTheReference) {
  cpu::CpuTpch backend(4);  // more threads than cores here: chunking is exercised either way
  expect_all_equal(backend, backend.variants(), Transfer::None);
}

TEST(TpchCpu, RaCompositionEqualsTheReference) {
  ra::cpu::CpuRa ra(4);
  RaComposed backend(ra);
  ASSERT_EQ(backend.variants(), (std::vector<std::string>{"ra-serial", "ra-parallel"}));
  expect_all_equal(backend, backend.variants(), Transfer::None);
}

TEST(TpchCpu, MultiBackendDispatchesByVariant) {
  ra::cpu::CpuRa ra(2);
  RaComposed composed(ra);
  cpu::CpuTpch columnar(2);
  MultiBackend both({&composed, &columnar});
  EXPECT_EQ(both.variants().size(), 4u);
  Plan p = random_kernel("A", 10, 1, 1);
  EXPECT_THROW(both.prepare(p, "fused", Transfer::None), SkipCase);
  EXPECT_NE(both.prepare(p, "columnar-serial", Transfer::None), nullptr);
}

}  // namespace hdb::tpch::test
