// Rank 0's merge of the per-rank documents of an EP run (no MPI needed).
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/mpi.hpp"

using namespace hdb;

namespace {
nlohmann::json doc(int rank, double kernel_median, const char* status = "ok") {
  nlohmann::json r = {{"id", "select/tuned@1M"}, {"status", status}};
  if (std::string(status) == "ok") r["stats"] = {{"kernel_s", {{"median", kernel_median}}}};
  return {{"schema", "hetdb-bench/1"},
          {"rank", rank},
          {"exit_code", 0},
          {"context", {{"host", "node" + std::to_string(rank / 2)}, {"device", {{"name", "dev"}}}}},
          {"results", nlohmann::json::array({r})},
          {"summary", {{"ok", 1}, {"skipped", 0}, {"failed", 0}}}};
}
}  // namespace

// Without a launcher the EP environment is one inactive rank (no MPI_Init).
TEST(MpiEnv, InactiveWithoutLauncher) {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_RANK"))
    GTEST_SKIP() << "started by an MPI launcher";
  int argc = 1;
  char name[] = "test";
  char* args[] = {name, nullptr};
  char** argv = args;
  MpiEnv mpi(&argc, &argv);
  EXPECT_FALSE(mpi.active());
  EXPECT_EQ(mpi.rank(), 0);
  EXPECT_EQ(mpi.size(), 1);
  EXPECT_EQ(mpi.local_size(), 1);
  EXPECT_EQ(mpi.gather("doc"), std::vector<std::string>{"doc"});
  EXPECT_TRUE(mpi.all(true));
  EXPECT_FALSE(mpi.all(false));
}

TEST(MpiMerge, StatisticsAcrossRanksAndOutliers) {
  std::vector<nlohmann::json> docs = {doc(0, 1.0), doc(1, 1.02), doc(2, 0.99), doc(3, 2.0)};
  nlohmann::json m = merge_rank_documents(docs);
  ASSERT_EQ(m["results"].size(), 1u);
  const auto& a = m["results"][0]["across_ranks"];
  EXPECT_EQ(a["n"], 4);
  EXPECT_DOUBLE_EQ(a["min"].get<double>(), 0.99);
  EXPECT_DOUBLE_EQ(a["max"].get<double>(), 2.0);
  EXPECT_EQ(a["outlier_ranks"], nlohmann::json::array({3}));
  EXPECT_EQ(m["mpi"]["size"], 4);
  EXPECT_EQ(m["mpi"]["ranks"][1]["host"], "node0");
  EXPECT_EQ(m["mpi"]["ranks"][3]["results"].size(), 1u);  // per-rank data kept
  EXPECT_FALSE(m.contains("rank"));
}

TEST(MpiMerge, SkippedAndFailedRanksAreReportedByRank) {
  nlohmann::json no_device = {{"rank", 0}, {"exit_code", 77}, {"skipped", "no CUDA device (test)"}};
  std::vector<nlohmann::json> docs = {no_device, doc(1, 1.0), doc(2, 1.0, "failed")};
  nlohmann::json m = merge_rank_documents(docs);
  EXPECT_EQ(m["schema"], "hetdb-bench/1");  // base document comes from a rank that ran
  EXPECT_EQ(m["mpi"]["ranks"][0]["skipped"], "no CUDA device (test)");
  EXPECT_EQ(m["results"][0]["across_ranks"]["n"], 1);
  EXPECT_EQ(m["summary"]["failed"], 1);  // a case failed on rank 2 fails the run
}

// The merged document is complete when every rank that ran completed; else it carries the first
// incomplete rank's reason.
TEST(MpiMerge, CompleteOnlyWhenEveryRankCompleted) {
  auto marked = [](int rank, bool complete, const char* reason = nullptr) {
    nlohmann::json d = doc(rank, 1.0);
    d["complete"] = complete;
    if (reason) d["incomplete_reason"] = reason;
    return d;
  };
  nlohmann::json no_device = {{"rank", 2}, {"exit_code", 77}, {"skipped", "no device"}};
  nlohmann::json m = merge_rank_documents({marked(0, true), marked(1, true), no_device});
  EXPECT_EQ(m["complete"], true);
  EXPECT_FALSE(m.contains("incomplete_reason"));
  m = merge_rank_documents(
      {marked(0, true), marked(1, false, "interrupted by signal 15"), marked(2, false, "running")});
  EXPECT_EQ(m["complete"], false);
  EXPECT_EQ(m["incomplete_reason"], "rank 1: interrupted by signal 15");
  // The base document (rank 0's) said complete; the merged one does not.
  m = merge_rank_documents({marked(0, false, "running"), marked(1, true)});
  EXPECT_EQ(m["incomplete_reason"], "rank 0: running");
}

// Issue 20: the mode recorded is the mode that ran, and the hosts with their ranks are listed (a
// rank without a device still names its host).
TEST(MpiMerge, ModeAndHostsWithTheirRanks) {
  nlohmann::json no_device = {{"rank", 4}, {"exit_code", 77}, {"skipped", "no device"}, {"host", "node0"}};
  std::vector<nlohmann::json> docs = {doc(0, 1.0), doc(1, 1.0), doc(2, 1.0), doc(3, 1.0), no_device};
  nlohmann::json m = merge_rank_documents(docs, "tp");
  EXPECT_EQ(m["mpi"]["mode"], "tp");
  EXPECT_EQ(merge_rank_documents(docs)["mpi"]["mode"], "ep");
  EXPECT_EQ(m["mpi"]["hosts"], nlohmann::json::parse(R"([{"host": "node0", "ranks": [0, 1, 4]},
                                                         {"host": "node1", "ranks": [2, 3]}])"));
  EXPECT_EQ(m["mpi"]["ranks"][4]["host"], "node0");
  EXPECT_EQ(m["summary"]["failed"], 0);  // 77 (no device) is not a failure
}

// Every rank's failure counts, whatever its exit code; a rank whose failed cases are counted
// already is not counted twice.
TEST(MpiMerge, EveryFailedRankCounts) {
  nlohmann::json usage = {{"rank", 1}, {"exit_code", 2}};
  nlohmann::json killed = {{"rank", 2}, {"exit_code", 143}};
  nlohmann::json wrote_nothing = doc(3, 1.0);
  wrote_nothing["exit_code"] = 1;  // ran its cases, then failed (e.g. writing its results)
  nlohmann::json failed_case = doc(4, 1.0, "failed");
  failed_case["exit_code"] = 1;
  nlohmann::json m = merge_rank_documents({doc(0, 1.0), usage, killed, wrote_nothing, failed_case});
  EXPECT_EQ(m["summary"]["ok"], 1);
  EXPECT_EQ(m["summary"]["failed"], 4);
}
