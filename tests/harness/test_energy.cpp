// The machine's state and energy counters, read from recorded sysfs fixtures (this machine exposes
// no RAPL): the powercap layout of a two-package Intel server, counter wrap-around, what is left out,
// and the reasons recorded when there is no counter.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "harness/caches.hpp"
#include "harness/context.hpp"
#include "harness/energy.hpp"
#include "scratch.hpp"

using namespace hdb;
namespace fs = std::filesystem;

namespace {

void put(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text << "\n";
}

// /sys/class/powercap as Linux lays it out: top-level zones per package, subzones core/uncore/dram,
// and the psys zone some laptops have (not a package: left out).
std::string powercap_fixture(const std::string& name) {
  fs::path root = test::scratch(name);
  auto zone = [&](const std::string& dir, const std::string& zname, std::uint64_t uj) {
    put(root / dir / "name", zname);
    put(root / dir / "energy_uj", std::to_string(uj));
    put(root / dir / "max_energy_range_uj", "262143328850");
  };
  zone("intel-rapl:0", "package-0", 1000000);
  zone("intel-rapl:0/intel-rapl:0:0", "core", 500000);
  zone("intel-rapl:0/intel-rapl:0:1", "dram", 200000);
  zone("intel-rapl:1", "package-1", 3000000);
  zone("intel-rapl:1/intel-rapl:1:0", "dram", 100000);
  zone("intel-rapl:2", "psys", 9000000);
  return root.string();
}

void set_uj(const std::string& root, const std::string& zone, std::uint64_t uj) {
  put(fs::path(root) / zone / "energy_uj", std::to_string(uj));
}

}  // namespace

TEST(Rapl, SumsPackagesAndTheirDramButNotCoreOrPsys) {
  std::string root = powercap_fixture("powercap-sum");
  EnergyProbe p = open_rapl(root);
  ASSERT_TRUE(p.meter) << p.reason;
  EXPECT_STREQ(p.meter->source(), "rapl");
  EXPECT_EQ(p.meter->what(), "RAPL package-0 dram package-1 dram");
  EXPECT_DOUBLE_EQ(p.meter->joules(), 0.0);
  set_uj(root, "intel-rapl:0", 3000000);                 // +2 J
  set_uj(root, "intel-rapl:0/intel-rapl:0:1", 700000);   // +0.5 J
  set_uj(root, "intel-rapl:0/intel-rapl:0:0", 9500000);  // core: inside package-0 already, not added
  set_uj(root, "intel-rapl:2", 99000000);                // psys: not a package
  EXPECT_NEAR(p.meter->joules(), 2.5, 1e-9);
}

TEST(Rapl, ACounterThatWrapsAroundKeepsCounting) {
  std::string root = powercap_fixture("powercap-wrap");
  EnergyProbe p = open_rapl(root);
  ASSERT_TRUE(p.meter);
  set_uj(root, "intel-rapl:1", 262143328850 - 1000000);  // 1 J below the range...
  double before = p.meter->joules();
  set_uj(root, "intel-rapl:1", 500000);  // ...then past it: +1.5 J
  EXPECT_NEAR(p.meter->joules() - before, 1.5, 1e-6);
}

TEST(Rapl, NoPowercapOrAnUnreadableCounterGivesTheReasonNotANumber) {
  EnergyProbe none = open_rapl(test::scratch("no-such-powercap"));
  EXPECT_FALSE(none.meter);
  EXPECT_NE(none.reason.find("no powercap"), std::string::npos) << none.reason;

  std::string root = powercap_fixture("powercap-unreadable");
  fs::remove(fs::path(root) / "intel-rapl:1/intel-rapl:1:0/energy_uj");
  EnergyProbe partial = open_rapl(root);
  EXPECT_FALSE(partial.meter);  // a sum without one zone would be a wrong number
  EXPECT_NE(partial.reason.find("intel-rapl:1:0/energy_uj"), std::string::npos) << partial.reason;
}

namespace {
class ScriptedMeter : public EnergyMeter {
 public:
  double value = 0;
  const char* source() const override { return "test"; }
  std::string what() const override { return "scripted"; }
  double joules() override { return value; }
};
}  // namespace

TEST(EnergySpan, ReportsJoulesPerPassAndLeavesPausesOut) {
  ScriptedMeter m;
  EnergySpan span(&m);
  span.start();
  m.value = 4;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  span.pause();
  m.value = 100;  // a flush between passes: not counted
  span.resume();
  m.value = 106;
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  span.stop();
  nlohmann::json j = span.to_json(5, "");
  EXPECT_EQ(j.at("source"), "test");
  EXPECT_DOUBLE_EQ(j.at("joules").get<double>(), 10.0);
  EXPECT_DOUBLE_EQ(j.at("joules_per_pass").get<double>(), 2.0);
  EXPECT_GT(j.at("seconds").get<double>(), 0.05);
  EXPECT_NEAR(j.at("watts").get<double>(), 10.0 / j.at("seconds").get<double>(), 1e-9);
}

TEST(EnergySpan, StretchesShorterThanTheCounterResolvesGiveNoNumber) {
  ScriptedMeter m;
  EnergySpan span(&m);
  span.start();
  m.value = 1;
  span.stop();
  nlohmann::json j = span.to_json(1, "");
  EXPECT_EQ(j.at("source"), "none");
  EXPECT_NE(j.at("reason").get<std::string>().find("below the 10 ms"), std::string::npos) << j.dump();
  EXPECT_EQ(EnergySpan(nullptr).to_json(3, "no counter here"),
            (nlohmann::json{{"source", "none"}, {"reason", "no counter here"}}));
}

TEST(MachineState, ReadsGovernorClocksSmtAndNumaNodes) {
  fs::path sys = test::scratch("sys-state");
  put(sys / "devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance");
  put(sys / "devices/system/cpu/cpu0/cpufreq/scaling_driver", "acpi-cpufreq");
  put(sys / "devices/system/cpu/cpu0/cpufreq/scaling_cur_freq", "2450000");
  put(sys / "devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "3700000");
  put(sys / "devices/system/cpu/smt/active", "1");
  fs::create_directories(sys / "devices/system/node/node0");
  fs::create_directories(sys / "devices/system/node/node1");
  fs::create_directories(sys / "devices/system/node/power");
  nlohmann::json m = machine_state(sys.string());
  EXPECT_EQ(m.at("governor"), "performance");
  EXPECT_DOUBLE_EQ(m.at("frequency_mhz").get<double>(), 2450.0);
  EXPECT_DOUBLE_EQ(m.at("frequency_max_mhz").get<double>(), 3700.0);
  EXPECT_EQ(m.at("smt_active"), true);
  EXPECT_EQ(m.at("numa_nodes"), 2);
  EXPECT_FALSE(m.contains("cpufreq"));
}

TEST(MachineState, AVmWithoutCpufreqSaysSo) {
  fs::path sys = test::scratch("sys-vm");
  put(sys / "devices/system/cpu/smt/active", "0");
  nlohmann::json m = machine_state(sys.string());
  EXPECT_FALSE(m.contains("governor"));
  EXPECT_NE(m.at("cpufreq").get<std::string>().find("not exposed"), std::string::npos);
  EXPECT_EQ(m.at("smt_active"), false);
}

TEST(Caches, TheLastLevelIsTheLargestAndTheFlushWritesTwiceIt) {
  fs::path cpu = test::scratch("sys-cache");
  put(cpu / "cpu0/cache/index0/size", "48K");
  put(cpu / "cpu0/cache/index2/size", "2048K");
  put(cpu / "cpu0/cache/index3/size", "480M");
  EXPECT_EQ(last_level_cache_bytes(cpu.string()), 480ull << 20);
  EXPECT_EQ(last_level_cache_bytes(test::scratch("sys-no-cache")), 0u);
  HostCacheFlusher f(1 << 20);
  EXPECT_EQ(f.buffer_bytes(), 2u << 20);
  f.flush();
  f.flush();
  EXPECT_NE(f.describe().find("host LLC 1M"), std::string::npos) << f.describe();
  EXPECT_EQ(HostCacheFlusher(0).buffer_bytes(), 1ull << 30);
}
