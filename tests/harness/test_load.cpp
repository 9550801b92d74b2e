// The machine-load record (harness/load.hpp): /proc parsing, which processes count as busy, and a
// real sample that sees a spinning child process.
#include <gtest/gtest.h>

#include <atomic>
#include <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/load.hpp"

namespace hdb {
namespace {

TEST(Load, ParsesLoadavg) {
  double avg[3];
  int running = 0;
  ASSERT_TRUE(parse_loadavg("0.52 1.58 2.59 3/412 12345", avg, running));
  EXPECT_DOUBLE_EQ(avg[0], 0.52);
  EXPECT_DOUBLE_EQ(avg[2], 2.59);
  EXPECT_EQ(running, 3);
  EXPECT_FALSE(parse_loadavg("", avg, running));
  EXPECT_FALSE(parse_loadavg("0.1 0.2 0.3 nothing", avg, running));
}

TEST(Load, ParsesStatWithSpacesAndParenthesesInTheName) {
  std::string name;
  unsigned long long ticks = 0;
  ASSERT_TRUE(parse_stat("42 (cc1 (plus) x) R 1 2 3 4 5 6 7 8 9 10 100 23 0 0 20 0", name, ticks));
  EXPECT_EQ(name, "cc1 (plus) x");
  EXPECT_EQ(ticks, 123u);
  EXPECT_FALSE(parse_stat("42 (short) R 1 2", name, ticks));
  EXPECT_FALSE(parse_stat("no parentheses", name, ticks));
}

TEST(Load, BusyAreOtherProcessesAboveAQuarterCore) {
  using S = std::vector<std::pair<int, std::pair<std::string, unsigned long long>>>;
  S a = {{1, {"init", 0}},   {10, {"cc1plus", 100}}, {11, {"hdb-ra-cpu", 100}},
         {12, {"idle", 50}}, {13, {"me", 0}},        {14, {"gone", 0}}};
  S b = {{1, {"init", 1}},   {10, {"cc1plus", 200}}, {11, {"hdb-ra-cpu", 300}},
         {12, {"idle", 55}}, {13, {"me", 100}},      {15, {"new", 100}}};
  // 1 s at 100 ticks/s: cc1plus used a whole core; idle 5%; the other rank (same name) and this
  // process are left out; a process that appeared or vanished has no rate.
  auto busy = busy_between(a, b, 1.0, 100, 13, "hdb-ra-cpu");
  ASSERT_EQ(busy.size(), 1u);
  EXPECT_EQ(busy[0].name, "cc1plus");
  EXPECT_DOUBLE_EQ(busy[0].cores, 1.0);
}

// A shell spinning in a loop is another busy process (seen at a threshold of 1% of a core, so that
// a loaded test machine cannot starve it below the threshold); a child of this process's own name
// counts as a rank of the same job and is left out.
TEST(Load, ASpinningProcessIsSeenAndOwnRanksAreNot) {
  pid_t shell = fork();
  ASSERT_GE(shell, 0);
  if (shell == 0) {
    execl("/bin/sh", "sh", "-c", "while :; do :; done", static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_t rank = fork();
  ASSERT_GE(rank, 0);
  if (rank == 0) {
    std::atomic<unsigned long> x{0};
    for (;;) x.fetch_add(1, std::memory_order_relaxed);
  }
  usleep(100 * 1000);
  nlohmann::json j = machine_load(std::chrono::milliseconds(400), 0.01);
  kill(shell, SIGKILL);
  kill(rank, SIGKILL);
  waitpid(shell, nullptr, 0);
  waitpid(rank, nullptr, 0);
  ASSERT_TRUE(j.contains("loadavg"));
  EXPECT_EQ(j["loadavg"].size(), 3u);
  bool shell_seen = false, rank_seen = false;
  for (const auto& p : j["other_busy_processes"]) {
    shell_seen = shell_seen || p["pid"].get<int>() == shell;
    rank_seen = rank_seen || p["pid"].get<int>() == rank;
  }
  EXPECT_TRUE(shell_seen) << j.dump();
  EXPECT_FALSE(rank_seen) << j.dump();
  EXPECT_GT(j["other_cores"].get<double>(), 0.01);
  EXPECT_TRUE(j["busy"].is_boolean());
}

}  // namespace
}  // namespace hdb
