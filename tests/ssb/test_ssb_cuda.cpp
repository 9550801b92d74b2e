// The CUDA plans (fused, operators) against the hand-checked answers and the serial reference, with
// the tables in host memory and resident on the device; the memory plans against what a case
// allocates. Skipped without a device; its host-execution twin (ssb_cuda_host_test) runs everywhere.
#include <cuda_runtime.h>

#include "common/device_suite.hpp"
#include "reference/ssb.hpp"
#include "runtime/cuda_platform.hpp"
#include "ssb_backend.hpp"
#include "ssb_fixture.hpp"

namespace hdb::ssb {
namespace {

class SsbCuda : public ::hdb::test::DeviceSuite<cuda::CudaPlatform> {};

#ifdef HDB_CUDA_HOST
constexpr bool kExactDeviceMemory = true;
#else
constexpr bool kExactDeviceMemory = false;
#endif

std::uint64_t device_used() {
  std::size_t free_bytes = 0, total = 0;
  EXPECT_EQ(cudaMemGetInfo(&free_bytes, &total), cudaSuccess);
  return total - free_bytes;
}

// Every query on every variant, `passes` passes each (a second reuses the prepared buffers), against
// the reference; the device memory a case holds after its passes is at most its plan (the columns the
// query reads and plan_scratch). Returns the cases checked.
int expect_all_equal(const Tables& t, Residency where, int passes, Transfer transfer = Transfer::Pinned) {
  cuda::CudaSsb backend;
  EXPECT_EQ(backend.variants(), (std::vector<std::string>{"fused", "operators"}));
  int checked = 0;
  for (const Query& q : queries()) {
    const Result want = reference_query(q.name, t);
    for (const std::string& v : backend.variants()) {
      SCOPED_TRACE("Q" + q.name + " " + v);
      MemoryPlan plan;
      plan.add("columns", touched_bytes(q, t));
      backend.plan_scratch(q, t, v, plan);
      const std::uint64_t before = device_used();
      auto run = backend.prepare(q, t, v, transfer, where);
      for (int pass = 0; pass < passes; ++pass) {
        Breakdown b = run->pass();
        EXPECT_GT(b.kernel, 0.0);
        EXPECT_EQ(b.h2d > 0, where == Residency::Host);
        EXPECT_FALSE(b.phases.empty());
        EXPECT_EQ(b.phases.front().name, "build");
        const Verification ok = compare_result(q, run->result(), want);
        EXPECT_TRUE(ok.ok) << "pass " << pass << ": " << ok.detail;
      }
      // Under host execution cudaMemGetInfo counts this process's allocations to the byte. On a GPU it
      // counts in 2 MiB pages and every process's memory (ctest -j runs other GPU tests beside this
      // one): the first GPU run saw 0 bytes for a 256-byte case and 490 MiB for a 0.2 MB plan, so the
      // plan is checked where the count is exact, and on a GPU only the answers are.
      if (kExactDeviceMemory) {
        const std::uint64_t used = device_used() - before;
        EXPECT_GE(used, touched_bytes(q, t));
        EXPECT_LE(used, plan.total()) << "the plan misses buffers: " << plan.describe(0);
      }
      ++checked;
    }
  }
  return checked;
}

TEST_F(SsbCuda, HandCheckedTable) {
  const Tables t = test::hand_tables();
  EXPECT_EQ(expect_all_equal(t, Residency::Host, 2), 26);
  EXPECT_EQ(expect_all_equal(t, Residency::Device, 2, Transfer::Pageable), 26);
  cuda::CudaSsb backend;
  for (const auto& [name, want] : test::hand_answers())
    for (const std::string& v : backend.variants()) {
      auto run = backend.prepare(query(name), t, v, Transfer::Pinned, Residency::Device);
      run->pass();
      EXPECT_EQ(run->result().rows, want.rows) << "Q" << name << " " << v;
    }
}

TEST_F(SsbCuda, GeneratedSf001) {
  const Tables t = generate_tables(0.01, 5, 2);
  EXPECT_EQ(expect_all_equal(t, Residency::Host, 2), 26);
  EXPECT_EQ(expect_all_equal(t, Residency::Device, 1, Transfer::Pageable), 26);
  // Q3.3 / Q3.4 / Q2.3 at SF 0.01 have rows only by chance; the busier ones must have some.
  for (const char* name : {"1.1", "2.1", "3.1", "4.1"}) EXPECT_FALSE(reference_query(name, t).rows.empty()) << name;
}

// The fused probe (Q1.x: a block reduction over shared memory with barriers; the others: 64-bit
// atomics into the group array) on a few tiles, the last partial: small enough for ThreadSanitizer
// under host execution's threads engine (scripts/test).
TEST_F(SsbCuda, FusedProbeOnSmallInputs) {
  Tables t = test::hand_tables();
  // 1,300 lineorder rows: three tiles of 512, the last partial; the hand rows repeated.
  const std::size_t base = t[Col::lo_orderdate].size();
  for (std::size_t r = base; r < 1300; ++r)
    for (int c = 0; c <= static_cast<int>(Col::lo_supplycost); ++c) {
      Column& col = t.cols[static_cast<std::size_t>(c)];
      col.push_back(col[r % base]);
    }
  cuda::CudaSsb backend;
  for (const Query& q : queries()) {
    auto run = backend.prepare(q, t, "fused", Transfer::Pinned, Residency::Device);
    run->pass();
    const Verification ok = compare_result(q, run->result(), reference_query(q.name, t));
    EXPECT_TRUE(ok.ok) << "Q" << q.name << ": " << ok.detail;
  }
}

TEST_F(SsbCuda, UnknownVariantIsAnError) {
  cuda::CudaSsb backend;
  const Tables t = test::hand_tables();
  EXPECT_THROW(backend.prepare(query("1.1"), t, "serial", Transfer::Pinned, Residency::Host), std::invalid_argument);
}

}  // namespace
}  // namespace hdb::ssb
