#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "harness/result.hpp"

using namespace hdb;

namespace {
Record sample_record() {
  Record r;
  r.key = {"select", "tuned", {{"selectivity", "0.5"}}, 1 << 20};
  r.elements = 1 << 17;
  r.input_bytes = 1 << 20;
  r.min_bytes_moved = 3 << 19;
  r.transfer_bytes = 3 << 19;
  r.transfer = "pinned";
  r.verified = true;
  r.verify_detail = "equal";
  for (double k : {1e-3, 2e-3, 3e-3}) {
    Breakdown b;
    b.h2d = 1e-3;
    b.kernel = k;
    b.d2h = 1e-3;
    b.total = k + 2e-3;
    b.add_phase("partition", k / 2);
    b.add_phase("gather", k / 2);
    r.trials.push_back(b);
  }
  return r;
}
}  // namespace

TEST(Results, ThroughputAndParityFromMedians) {
  Record r = sample_record();
  Throughput t = throughput(r, 1.5);
  EXPECT_NEAR(t.kernel_gbps, (1 << 20) / 2e-3 / 1e9, 1e-9);
  EXPECT_NEAR(t.total_gbps, (1 << 20) / 4e-3 / 1e9, 1e-9);
  EXPECT_NEAR(t.parity, 2e-3 / 2e-3, 1e-12);
  EXPECT_NEAR(t.pct_of_peak, 100.0 * (3 << 19) / 2e-3 / 1e9 / 1.5, 1e-9);
  EXPECT_NEAR(t.elements_per_s, (1 << 17) / 2e-3, 1e-6);
}

TEST(Results, JsonFollowsTheSchema) {
  ResultDb db("ra", "cuda");
  db.set_context({{"host", "h"}});
  db.set_ceiling(2.0);
  db.add(sample_record());
  Record skipped;
  skipped.key = {"join", "paper", {}, 1ull << 30};
  skipped.status = Status::Skipped;
  skipped.reason = "out of device memory";
  db.add(skipped);
  nlohmann::json j = db.to_json();
  EXPECT_EQ(j["schema"], "hetdb-bench/1");
  EXPECT_EQ(j["benchmark"], "ra");
  EXPECT_EQ(j["backend"], "cuda");
  EXPECT_EQ(j["ceiling"]["memory_copy_gbps"], 2.0);
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& r = j["results"][0];
  EXPECT_EQ(r["id"], "select/tuned[selectivity=0.5]@1M");
  EXPECT_EQ(r["size_label"], "2^20");
  EXPECT_EQ(r["params"]["selectivity"], "0.5");
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["trials"].size(), 3u);
  EXPECT_EQ(r["trials"][0]["phases_s"]["partition"], 0.5e-3);
  EXPECT_EQ(r["stats"]["kernel_s"]["median"], 2e-3);
  EXPECT_EQ(r["stats"]["phases_s"]["gather"]["n"], 3);
  EXPECT_GT(r["throughput"]["pct_of_peak"].get<double>(), 0);
  EXPECT_EQ(r["bytes"]["min_moved"], 3 << 19);
  EXPECT_EQ(j["results"][1]["status"], "skipped");
  EXPECT_EQ(j["results"][1]["reason"], "out of device memory");
  EXPECT_FALSE(j["results"][1].contains("stats"));
  EXPECT_EQ(j["summary"]["ok"], 1);
  EXPECT_EQ(j["summary"]["skipped"], 1);
}

TEST(Results, CsvHasAHeaderAndOneRowPerRecord) {
  ResultDb db("bus", "cpu");
  db.add(sample_record());
  std::string csv = db.to_csv();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 2);
  EXPECT_NE(csv.find("bus,cpu,\"select\",\"tuned\",\"selectivity=0.5\",1048576,pinned,ok,1,3"), std::string::npos);
}

TEST(Results, FilesAreWrittenAtomically) {
  std::string path = ::testing::TempDir() + "hdb_results_test.json";
  ResultDb db("bus", "cpu");
  db.add(sample_record());
  db.write_json(path);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["results"].size(), 1u);
  std::ifstream tmp(path + ".tmp");
  EXPECT_FALSE(tmp.good());
  std::remove(path.c_str());
}
