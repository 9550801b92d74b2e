// The CUDA backends against the serial reference: the kernels of their own (operator, fused) and
// the composition over the CUDA RA primitives (which sorts on the device). Skipped without a device.
#include <algorithm>

#include "bench/tpch_ra.hpp"
#include "common/device_suite.hpp"
#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "runtime/cuda_platform.hpp"
#include "tpch_backend.hpp"
#include "tpch_test_plans.hpp"

namespace hdb::tpch::test {

class TpchCuda : public ::hdb::test::DeviceSuite<cuda::CudaPlatform> {};

TEST_F(TpchCuda, OperatorAndFusedEqualTheReference) {
  cuda::CudaTpch backend;
  expect_all_equal(backend, backend.variants(), Transfer::Pinned);
  expect_all_equal(backend, backend.variants(), Transfer::Pageable, false);
  expect_all_equal(backend, backend.variants(), Transfer::Pinned, true, 64);
  ra::cuda::CudaRa ra(*platform_);
  RaComposed composed(ra);
  ASSERT_FALSE(composed.variants().empty());
  expect_all_equal(composed, composed.variants(), Transfer::Pinned);
  // At 64-bit keys (CudaRa takes them): every plan but C on TPC-H tables (wider than RA's 8 words),
  // and on ra-tuned but the one whose selection reads tuples of a 64-bit key and four values (the
  // tuned select's limit; first run by host execution).
  ASSERT_EQ(composed.variants(), (std::vector<std::string>{"ra-paper", "ra-tuned"}));
  EXPECT_EQ(expect_all_equal(composed, composed.variants(), Transfer::Pinned, true, 64), 19 + 18);
  // Kernel B re-sorts between its joins with CudaRa's sort, on the device.
  const Plan b = random_kernel("B", 1000, 77, 2);
  for (const std::string& v : composed.variants()) {
    SCOPED_TRACE(v);
    Breakdown t = composed.prepare(b, v, Transfer::Pinned)->pass();
    auto ends = [&](const std::string& suffix) {
      return std::any_of(t.phases.begin(), t.phases.end(), [&](const auto& ph) {
        return ph.name.size() > suffix.size() &&
               ph.name.compare(ph.name.size() - suffix.size(), suffix.size(), suffix) == 0;
      });
    };
    EXPECT_TRUE(ends(".sort"));
  }
}

// The fused probe (a block-wide scan over the block's matches, one atomic per block) on plans of a
// few blocks, the last partial, and the operator plan beside it: small enough for ThreadSanitizer
// under host execution's threads engine (scripts/test).
TEST_F(TpchCuda, FusedProbeOnSmallInputs) {
  cuda::CudaTpch backend;
  for (const char* k : {"A", "B", "C"}) {
    const Plan plan = random_kernel(k, 1500, 4321, 2, 32);
    const Relation want = reference_execute(plan);
    for (const std::string& v : backend.variants()) {
      SCOPED_TRACE(std::string(k) + " / " + v);
      std::unique_ptr<TpchRun> run;
      try {
        run = backend.prepare(plan, v, Transfer::Pinned);
      } catch (const SkipCase& e) {
        EXPECT_EQ(v, "fused") << e.what();
        continue;
      }
      run->pass();
      Verification ok = compare_result(run->result(), want, checksum(want), 1);
      EXPECT_TRUE(ok.ok) << ok.detail;
    }
  }
}

}  // namespace hdb::tpch::test
