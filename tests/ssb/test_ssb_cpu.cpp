// The CPU plans (serial, parallel) against the serial reference: the hand-checked table, generated
// SF 0.01 and a .tbl round trip of it.
#include <gtest/gtest.h>

#include <filesystem>

#include "common/fuzz.hpp"
#include "reference/ssb.hpp"
#include "ssb_backend.hpp"
#include "ssb_fixture.hpp"

namespace hdb::ssb {
namespace {

// Runs every query on every variant (two passes: the second reuses the prepared buffers) and
// compares with the reference; returns the cases checked.
int expect_all_equal(const Tables& t, int threads) {
  cpu::CpuPlatform platform(threads);
  cpu::CpuSsb backend(platform);
  EXPECT_EQ(backend.variants(), (std::vector<std::string>{"serial", "parallel"}));
  int checked = 0;
  for (const Query& q : queries()) {
    const Result want = reference_query(q.name, t);
    for (const std::string& v : backend.variants()) {
      auto run = backend.prepare(q, t, v, Transfer::None, Residency::Device);
      for (int pass = 0; pass < 2; ++pass) {
        Breakdown b = run->pass();
        EXPECT_GT(b.total, 0.0);
        const Verification ok = compare_result(q, run->result(), want);
        EXPECT_TRUE(ok.ok) << "Q" << q.name << " " << v << " pass " << pass << ": " << ok.detail;
      }
      ++checked;
    }
  }
  return checked;
}

TEST(SsbCpu, HandCheckedTable) {
  const Tables t = test::hand_tables();
  EXPECT_EQ(expect_all_equal(t, 4), 26);
  cpu::CpuPlatform platform(2);
  cpu::CpuSsb backend(platform);
  for (const auto& [name, want] : test::hand_answers()) {
    auto run = backend.prepare(query(name), t, "parallel", Transfer::None, Residency::Device);
    run->pass();
    EXPECT_EQ(run->result().rows, want.rows) << "Q" << name;
  }
}

TEST(SsbCpu, GeneratedAndTblRoundTrip) {
  // More threads than cores: the chunking and the merge of partial aggregates run either way.
  const Tables t = generate_tables(0.01, 5, 2);
  expect_all_equal(t, 4);
  const std::filesystem::path dir = hdb::test::make_temp_dir("hdb-ssb-cpu");
  write_tbl_files(t, dir.string());
  const Tables loaded = load_tables(dir.string());
  std::filesystem::remove_all(dir);
  expect_all_equal(loaded, 3);
  // Q3.3 / Q3.4 / Q2.3 at SF 0.01 have rows only by chance; the busier ones must have some.
  for (const char* name : {"1.1", "2.1", "3.1", "4.1"})
    EXPECT_FALSE(reference_query(name, loaded).rows.empty()) << name;
}

TEST(SsbCpu, UnknownVariantIsAnError) {
  cpu::CpuPlatform platform(1);
  cpu::CpuSsb backend(platform);
  const Tables t = test::hand_tables();
  EXPECT_THROW(backend.prepare(query("1.1"), t, "fused", Transfer::None, Residency::Device), std::invalid_argument);
}

}  // namespace
}  // namespace hdb::ssb
