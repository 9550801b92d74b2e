// The cold/warm/hot protocol as the session takes it (docs/methodology.md): the cold pass kept apart
// from the trials, untimed warm-up passes, flushes before every timed pass, throttled passes counted
// or dropped, and the energy reading's result.
#include <gtest/gtest.h>

#include <fstream>

#include "fake_platform.hpp"
#include "harness/main.hpp"
#include "scratch.hpp"

using namespace hdb;

namespace {

// A fake platform whose flushes and throttle reports are scripted and counted.
class ProtocolPlatform : public test::FakePlatform {
 public:
  int flushes = 0;
  int throttled_passes = 0;  // the first this many reads report throttling
  int reads = 0;
  std::string flush_caches() override {
    ++flushes;
    return "fake L2: cleared";
  }
  std::string cold_pass_note() const override { return "fake first pass"; }
  std::vector<std::string> throttling() override {
    return reads++ < throttled_passes ? std::vector<std::string>{"sw_power_cap"} : std::vector<std::string>{};
  }
  EnergyProbe open_energy_meter() override { return {nullptr, "fake: no counter"}; }
  nlohmann::json device_state() override { return {{"sm_clock_mhz", 1980}}; }
};

struct Counts {
  int passes = 0;
};

// One case whose pass takes 1 ms more on the first call than after, so the cold pass is told apart.
BenchmarkDef one_case(Counts* c) {
  BenchmarkDef def;
  def.name = "fake";
  def.description = "protocol test";
  def.run = [c](Session& s) {
    s.run({"op", "v", {}, 1024, Transfer::None},
          CaseSetup{nullptr, [c] {
                      Prepared p;
                      p.pass = [c] { return Breakdown::compute_only(++c->passes == 1 ? 2e-3 : 1e-3); };
                      p.verify = [] { return Verification::pass(); };
                      p.elements = 256;
                      return p;
                    }});
  };
  return def;
}

nlohmann::json run_case(ProtocolPlatform& platform, Counts& c, std::vector<std::string> args) {
  std::string path = test::scratch("protocol.json");
  args.insert(args.begin(), {"hdb-fake-fake", "--sizes", "1K", "--quiet", "--json", path});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  int rc = run_main(static_cast<int>(argv.size()), argv.data(), one_case(&c), platform);
  EXPECT_EQ(rc, kExitOk);
  std::ifstream f(path);
  return nlohmann::json::parse(f)["results"].at(0);
}

}  // namespace

TEST(Protocol, TheFirstPassIsKeptAsColdAndTheOtherWarmUpsAreUntimed) {
  ProtocolPlatform platform;
  Counts c;
  nlohmann::json r = run_case(platform, c, {"--warmup", "3", "--passes", "4", "--max-passes", "4"});
  const auto& p = r.at("protocol");
  EXPECT_DOUBLE_EQ(p.at("cold").at("kernel_s").get<double>(), 2e-3);
  EXPECT_EQ(p.at("warmup_passes"), 2);
  EXPECT_EQ(p.at("timed_as"), "hot");
  EXPECT_EQ(p.at("cold_note"), "fake first pass");
  EXPECT_FALSE(p.contains("flush"));
  ASSERT_EQ(r.at("trials").size(), 4u);
  for (const auto& t : r.at("trials")) EXPECT_DOUBLE_EQ(t.at("kernel_s").get<double>(), 1e-3);
  EXPECT_EQ(c.passes, 1 + 2 + 4);
  EXPECT_EQ(platform.flushes, 0);
  EXPECT_EQ(r.at("energy"), (nlohmann::json{{"source", "none"}, {"reason", "fake: no counter"}}));
}

TEST(Protocol, WithoutWarmUpThereIsNoColdPassAndTheNoteSaysSo) {
  ProtocolPlatform platform;
  Counts c;
  nlohmann::json r = run_case(platform, c, {"--warmup", "0", "--passes", "3", "--max-passes", "3"});
  EXPECT_TRUE(r.at("protocol").at("cold").is_null());
  EXPECT_NE(r.at("protocol").at("cold_note").get<std::string>().find("--warmup 0"), std::string::npos);
  // The case's first pass is then a timed one.
  EXPECT_DOUBLE_EQ(r.at("trials").at(0).at("kernel_s").get<double>(), 2e-3);
}

TEST(Protocol, FlushCachesEvictsBeforeTheColdPassAndEveryTimedPass) {
  ProtocolPlatform platform;
  Counts c;
  nlohmann::json r = run_case(platform, c, {"--warmup", "2", "--passes", "3", "--max-passes", "3", "--flush-caches"});
  EXPECT_EQ(r.at("protocol").at("timed_as"), "warm");
  EXPECT_EQ(r.at("protocol").at("flush"), "fake L2: cleared");
  EXPECT_EQ(platform.flushes, 1 + 3);  // the cold pass and each timed pass; not the untimed warm-up
}

TEST(Protocol, ThrottledPassesAreCountedAndKeptByDefault) {
  ProtocolPlatform platform;
  platform.throttled_passes = 2;
  Counts c;
  nlohmann::json r = run_case(platform, c, {"--passes", "3", "--max-passes", "3"});
  EXPECT_EQ(r.at("trials").size(), 3u);
  EXPECT_EQ(r.at("protocol").at("throttled"),
            (nlohmann::json{{"passes", 2}, {"reasons", {"sw_power_cap"}}, {"dropped", false}}));
  EXPECT_EQ(r.at("device_state").at("sm_clock_mhz"), 1980);
}

TEST(Protocol, DiscardOnThrottleDropsThrottledPassesAndTakesOthers) {
  ProtocolPlatform platform;
  platform.throttled_passes = 2;
  Counts c;
  nlohmann::json r = run_case(platform, c, {"--passes", "3", "--max-passes", "10", "--discard-on-throttle"});
  EXPECT_EQ(r.at("status"), "ok");
  EXPECT_EQ(r.at("trials").size(), 3u);
  EXPECT_EQ(r.at("protocol").at("throttled").at("dropped"), true);
  EXPECT_EQ(c.passes, 1 + 2 + 3);
}

TEST(Protocol, CollectiveCasesRefuseDiscardOnThrottle) {
  ProtocolPlatform platform;
  Counts c;
  BenchmarkDef def = one_case(&c);
  def.collective = true;
  std::vector<std::string> args = {"hdb-fake-fake", "--sizes", "1K", "--quiet", "--discard-on-throttle"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  EXPECT_EQ(run_main(static_cast<int>(argv.size()), argv.data(), def, platform), kExitUsage);
  EXPECT_EQ(c.passes, 0);
}

TEST(Protocol, ACaseWhosePassesAllThrottleIsSkippedWithTheReasons) {
  ProtocolPlatform platform;
  platform.throttled_passes = 1000;
  Counts c;
  nlohmann::json r = run_case(platform, c, {"--passes", "3", "--max-passes", "5", "--discard-on-throttle"});
  EXPECT_EQ(r.at("status"), "skipped");
  EXPECT_NE(r.at("reason").get<std::string>().find("sw_power_cap"), std::string::npos);
  EXPECT_EQ(c.passes, 1 + 5);
}
