#include <gtest/gtest.h>

#include "fake_platform.hpp"
#include "harness/errors.hpp"
#include "harness/memory_plan.hpp"

using namespace hdb;

TEST(MemoryPlan, SumsNamedItemsAndMergesRepeats) {
  MemoryPlan plan;
  plan.add("input", 3 << 20).add("output", 1 << 20).add("input", 1 << 20).add("nothing", 0);
  EXPECT_EQ(plan.total(), 5u << 20);
  ASSERT_EQ(plan.items().size(), 2u);  // a zero-byte item is not listed
  EXPECT_EQ(plan.items()[0].second, 4u << 20);
}

TEST(MemoryPlan, SkipReasonListsEveryAllocationLargestFirst) {
  MemoryPlan plan("device memory");
  plan.add("input", 32 << 20).add("sort temporary storage", 40 << 20).add("counts", 2048);
  EXPECT_NO_THROW(plan.require(plan.total()));
  try {
    plan.require(64 << 20);
    FAIL() << "72 MiB fitted in 64 MiB";
  } catch (const SkipCase& e) {
    EXPECT_STREQ(e.what(),
                 "needs 72 MiB of device memory (sort temporary storage 40 MiB, input 32 MiB, counts 2 KiB), more "
                 "than the 64 MiB it has");
  }
}

TEST(MemoryPlan, PlatformLimitCapsWhatTheDeviceReports) {
  test::FakePlatform p;  // reports 1 GiB
  EXPECT_EQ(p.memory_bytes(), 1ull << 30);
  p.set_memory_limit(64 << 20);
  EXPECT_EQ(p.memory_bytes(), 64u << 20);
  p.set_memory_limit(4ull << 30);  // a limit above the device's memory changes nothing
  EXPECT_EQ(p.memory_bytes(), 1ull << 30);
}
