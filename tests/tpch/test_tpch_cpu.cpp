// The CPU backends against the serial reference: the RA composition over CpuRa (ra-serial,
// ra-parallel) and the columnar engine (columnar-serial, columnar-parallel).
#include <stdexcept>

#include "bench/tpch_ra.hpp"
#include "ra_backend.hpp"
#include "tpch_backend.hpp"
#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {

TEST(TpchCpu, ColumnarEqualsTheReference) {
  cpu::CpuPlatform backend_cores(4);  // more threads than cores here: chunking is exercised either way
  cpu::CpuTpch backend(backend_cores);
  expect_all_equal(backend, backend.variants(), Transfer::None);
}

TEST(TpchCpu, ColumnarEqualsTheReferenceAt64BitKeys) {
  cpu::CpuPlatform backend_cores(4);
  cpu::CpuTpch backend(backend_cores);
  expect_all_equal(backend, backend.variants(), Transfer::None, true, 64);
}

TEST(TpchCpu, RaCompositionEqualsTheReferenceAt64BitKeys) {
  cpu::CpuPlatform ra_cores(4);
  ra::cpu::CpuRa ra(ra_cores);
  RaComposed backend(ra);
  // Every plan but C on TPC-H tables, whose joined tuples pass RA's 8 words with 64-bit keys: 19 of
  // 20, on both variants. B and C re-key on a 64-bit value (o_custkey / r2_value: project_words
  // makes its two words the key) and C on random data selects on one (a 64-bit value predicate).
  EXPECT_EQ(expect_all_equal(backend, backend.variants(), Transfer::None, true, 64), 2 * 19);
}

TEST(TpchCpu, RaCompositionEqualsTheReference) {
  cpu::CpuPlatform ra_cores(4);
  ra::cpu::CpuRa ra(ra_cores);
  RaComposed backend(ra);
  ASSERT_EQ(backend.variants(), (std::vector<std::string>{"ra-serial", "ra-parallel"}));
  expect_all_equal(backend, backend.variants(), Transfer::None);
}

TEST(TpchCpu, MultiBackendDispatchesByVariant) {
  cpu::CpuPlatform ra_cores(2);
  ra::cpu::CpuRa ra(ra_cores);
  RaComposed composed(ra);
  cpu::CpuPlatform columnar_cores(2);
  cpu::CpuTpch columnar(columnar_cores);
  MultiBackend both({&composed, &columnar});
  EXPECT_EQ(both.variants().size(), 4u);
  Plan p = random_kernel("A", 10, 1, 1);
  // A name no backend registered is an error, not a skipped case (docs/cases.md).
  EXPECT_THROW(both.prepare(p, "fused", Transfer::None), std::invalid_argument);
  EXPECT_THROW(columnar.prepare(p, "columnar", Transfer::None), std::invalid_argument);
  EXPECT_NE(both.prepare(p, "columnar-serial", Transfer::None), nullptr);
}

}  // namespace hdb::tpch::test
