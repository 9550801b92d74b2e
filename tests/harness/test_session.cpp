// The session and the shared main, driven through a fake platform and a tiny benchmark.
#include <gtest/gtest.h>

#include <fstream>
#include <map>

#include "fake_platform.hpp"
#include "harness/console.hpp"
#include "harness/errors.hpp"
#include "harness/main.hpp"
#include "scratch.hpp"

using namespace hdb;

namespace {

// Runs one benchmark whose cases behave as scripted by their variant name.
BenchmarkDef scripted_benchmark(int* setups) {
  BenchmarkDef def;
  def.name = "fake";
  def.description = "test benchmark";
  def.run = [setups](Session& s) {
    for (const char* variant : {"good", "skips", "wrong", "throws"}) {
      for (std::uint64_t size : s.sizes())
        for (Transfer t : s.transfers()) {
          std::string v = variant;
          s.run({"op", v, {}, size, t}, CaseSetup{nullptr, [&, v]() {
                                                    ++*setups;
                                                    if (v == "skips") throw SkipCase("too large for this test");
                                                    Prepared p;
                                                    p.pass = [v] {
                                                      if (v == "throws") throw DeviceError("kernel launch failed");
                                                      return Breakdown::compute_only(1e-3);
                                                    };
                                                    p.verify = [v] {
                                                      return v == "wrong" ? Verification::fail("element 3 differs")
                                                                          : Verification::pass("ok");
                                                    };
                                                    p.elements = size / 4;
                                                    p.min_bytes_moved = 2 * size;
                                                    return p;
                                                  }});
        }
    }
  };
  return def;
}

int run(const BenchmarkDef& def, std::vector<std::string> args, bool has_device = true) {
  test::FakePlatform platform(has_device);
  args.insert(args.begin(), "hdb-fake-fake");
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  return run_main(static_cast<int>(argv.size()), argv.data(), def, platform);
}

}  // namespace

TEST(Session, RecordsOkSkippedAndFailedCasesAndKeepsGoing) {
  int setups = 0;
  std::string path = test::scratch("session.json");
  int rc = run(scripted_benchmark(&setups), {"--sizes", "32K,64K", "--passes", "3", "--json", path, "--quiet"});
  EXPECT_EQ(rc, kExitFailure);  // a failed case fails the run
  EXPECT_EQ(setups, 8);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  ASSERT_EQ(j["results"].size(), 8u);
  EXPECT_EQ(j["summary"]["ok"], 2);
  EXPECT_EQ(j["summary"]["skipped"], 2);
  EXPECT_EQ(j["summary"]["failed"], 4);
  for (const auto& r : j["results"]) {
    if (r["variant"] == "good") {
      EXPECT_EQ(r["status"], "ok");
      EXPECT_TRUE(r["verification"]["verified"]);
      EXPECT_GE(r["trials"].size(), 3u);
      EXPECT_NEAR(r["throughput"]["pct_of_peak"].get<double>(),
                  100.0 * 2 * r["size_bytes"].get<double>() / 1e-3 / 1e9 / 100.0, 1e-6);
    } else if (r["variant"] == "skips") {
      EXPECT_EQ(r["status"], "skipped");
      EXPECT_EQ(r["reason"], "too large for this test");
    } else if (r["variant"] == "wrong") {
      // A failed verification is never a number in a report.
      EXPECT_EQ(r["status"], "failed");
      EXPECT_NE(r["reason"].get<std::string>().find("element 3 differs"), std::string::npos);
      EXPECT_TRUE(r["trials"].empty());
    } else {
      EXPECT_EQ(r["status"], "failed");
      EXPECT_NE(r["reason"].get<std::string>().find("kernel launch failed"), std::string::npos);
    }
  }
}

TEST(Session, OnlyFilterAndList) {
  int setups = 0;
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--sizes", "32K", "--only", "op/good", "--quiet"}), kExitOk);
  EXPECT_EQ(setups, 1);
  setups = 0;
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--sizes", "32K", "--only", "op/g*", "--quiet"}), kExitOk);
  EXPECT_EQ(setups, 1);
  setups = 0;
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--list"}), kExitOk);
  EXPECT_EQ(setups, 0);  // listing builds no inputs
  // An id as --list prints it selects exactly that case; a pattern that selects nothing is a usage error.
  EXPECT_EQ(
      run(scripted_benchmark(&setups), {"--sizes", "32K,64K", "--only", "op/good[transfer=pinned]@64K", "--quiet"}),
      kExitOk);
  EXPECT_EQ(setups, 1);
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--sizes", "32K", "--only", "nothing*", "--quiet"}), kExitUsage);
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--list", "--only", "op/none"}), kExitUsage);
}

TEST(Session, ListPrintsExactlyTheIdsARunRecords) {
  int setups = 0;
  std::string path = test::scratch("session_list.json");
  ::testing::internal::CaptureStdout();
  ASSERT_EQ(run(scripted_benchmark(&setups), {"--sizes", "32K", "--transfer", "both", "--list"}), kExitOk);
  std::string listed = ::testing::internal::GetCapturedStdout();
  run(scripted_benchmark(&setups), {"--sizes", "32K", "--transfer", "both", "--json", path, "--quiet"});
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  std::string recorded;
  for (const auto& r : j["results"]) recorded += r["id"].get<std::string>() + "\n";
  EXPECT_EQ(listed, recorded);
  EXPECT_NE(recorded.find("op/good[transfer=pageable]@32K"), std::string::npos);
  std::remove(path.c_str());
}

TEST(Session, ExitCodes) {
  int setups = 0;
  BenchmarkDef def = scripted_benchmark(&setups);
  EXPECT_EQ(run(def, {"--passes", "0"}), kExitUsage);
  EXPECT_EQ(run(def, {"--sizes", "12Q"}), kExitUsage);
  EXPECT_EQ(run(def, {"--bogus"}), kExitUsage);
  EXPECT_EQ(run(def, {"--help"}), kExitOk);
  EXPECT_EQ(run(def, {"--version"}), kExitOk);
  EXPECT_EQ(run(def, {"--sizes", "32K"}, /*has_device=*/false), kExitNoDevice);
  EXPECT_EQ(setups, 0);
}

TEST(Session, SeedsDependOnDataNotVariant) {
  Options o;
  ResultDb db("x", "y");
  Console c(true);
  Session s(o, nullptr, db, c);
  EXPECT_EQ(s.seed("relation", 1024), s.seed("relation", 1024));
  EXPECT_NE(s.seed("relation", 1024), s.seed("relation", 2048));
  EXPECT_NE(s.seed("relation", 1024), s.seed("other", 1024));
}

namespace {
Prepared quick_case() {
  Prepared p;
  p.pass = [] { return Breakdown::compute_only(1e-3); };
  p.verify = [] { return Verification::pass("ok"); };
  p.elements = 1;
  return p;
}
nlohmann::json read_json(const std::string& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}
}  // namespace

TEST(Session, DocumentsAreMarkedRunningUntilTheRunEnds) {
  std::string path = test::scratch("progress.json");
  nlohmann::json seen;
  BenchmarkDef def;
  def.name = "fake";
  def.description = "test benchmark";
  def.run = [&](Session& s) {
    s.run({"op", "first", {}, 32768}, CaseSetup{nullptr, [] { return quick_case(); }});
    s.run({"op", "second", {}, 32768}, CaseSetup{nullptr, [&] {
                                                   seen = read_json(path);  // the file as the first case left it
                                                   return quick_case();
                                                 }});
  };
  ASSERT_EQ(run(def, {"--sizes", "32K", "--json", path, "--quiet"}), kExitOk);
  EXPECT_EQ(seen["complete"], false);
  EXPECT_EQ(seen["incomplete_reason"], "running");
  EXPECT_EQ(seen["results"].size(), 1u);
  nlohmann::json done = read_json(path);
  EXPECT_EQ(done["complete"], true);
  EXPECT_FALSE(done.contains("incomplete_reason"));
  EXPECT_EQ(done["results"].size(), 2u);
}

TEST(Session, AnErrorOutsideTheCasesStopsTheRunAndSaysSo) {
  std::string path = test::scratch("stopped.json");
  for (bool usage : {false, true}) {
    BenchmarkDef def;
    def.name = "fake";
    def.description = "test benchmark";
    def.run = [usage](Session& s) {
      s.run({"op", "first", {}, 32768}, CaseSetup{nullptr, [] { return quick_case(); }});
      if (usage) throw UsageError("--corpus: cannot open 'gone.txt'");
      throw std::runtime_error("the corpus vanished");
    };
    ::testing::internal::CaptureStderr();
    int rc = run(def, {"--sizes", "32K", "--json", path, "--quiet"});
    std::string err = ::testing::internal::GetCapturedStderr();
    EXPECT_EQ(rc, usage ? kExitUsage : kExitFailure);
    nlohmann::json j = read_json(path);
    EXPECT_EQ(j["complete"], false);
    std::string reason = j["incomplete_reason"];
    EXPECT_EQ(reason.rfind("stopped by an error: ", 0), 0u) << reason;
    EXPECT_NE(reason.find(usage ? "gone.txt" : "the corpus vanished"), std::string::npos) << reason;
    EXPECT_EQ(j["results"].size(), 1u);  // the result taken before the error is kept
    EXPECT_NE(err.find(usage ? "gone.txt" : "the corpus vanished"), std::string::npos) << err;
  }
}

TEST(Session, OutputPathsAreCheckedBeforeAnyWork) {
  int setups = 0;
  ::testing::internal::CaptureStderr();
  int rc = run(scripted_benchmark(&setups), {"--sizes", "32K", "--json", test::scratch("no-dir/x.json"), "--quiet"});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, kExitUsage);
  EXPECT_EQ(setups, 0);
  EXPECT_NE(err.find("--json: cannot write"), std::string::npos) << err;
  EXPECT_NE(err.find("no-dir"), std::string::npos) << err;
}

TEST(Session, SeedsUseAll64Bits) {
  int setups = 0;
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--seed", "18446744073709551616", "--quiet"}), kExitUsage);
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--seed", "-1", "--quiet"}), kExitUsage);
  EXPECT_EQ(setups, 0);
  Options a, b;
  a.seed = 1;
  b.seed = (1ull << 32) + 1;  // the same low 32 bits
  ResultDb db("x", "y");
  Console c(true);
  Session sa(a, nullptr, db, c), sb(b, nullptr, db, c);
  EXPECT_NE(sa.seed("relation", 1024), sb.seed("relation", 1024));
}

// A lost device context (a sticky CUDA error, DeviceLost) fails the case it hit, naming the error,
// and stops the run: the later cases are not set up (each would fail with the same error), the
// results taken before it stay in the files, which are marked as stopped by the error, and the exit
// code is 1. An ordinary DeviceError in a pass fails only its own case.
TEST(Session, ALostDeviceFailsItsCaseAndStopsTheRun) {
  const std::string json = test::scratch("lost.json"), csv = test::scratch("lost.csv");
  int setups = 0;
  BenchmarkDef def;
  def.name = "fake";
  def.description = "test benchmark";
  def.run = [&setups](Session& s) {
    for (const char* variant : {"first", "error", "lost", "after"}) {
      const std::string v = variant;
      s.run({"op", v, {}, 32768},
            CaseSetup{nullptr, [&setups, v] {
                        ++setups;
                        Prepared p = quick_case();
                        if (v == "error")
                          p.pass = []() -> Breakdown {
                            throw DeviceError("cudaMemcpyAsync failed: cudaErrorInvalidValue");
                          };
                        if (v == "lost")
                          p.pass = []() -> Breakdown {
                            throw DeviceLost(
                                "cudaEventSynchronize failed: cudaErrorIllegalAddress; the device context is lost");
                          };
                        return p;
                      }});
    }
  };
  ::testing::internal::CaptureStderr();
  int rc = run(def, {"--sizes", "32K", "--json", json, "--csv", csv, "--quiet"});
  std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, kExitFailure);
  EXPECT_EQ(setups, 3);  // "after" is never set up
  nlohmann::json j = read_json(json);
  EXPECT_EQ(j["complete"], false);
  const std::string reason = j["incomplete_reason"];
  EXPECT_EQ(reason.rfind("stopped by an error: case op/lost", 0), 0u) << reason;
  EXPECT_NE(reason.find("cudaErrorIllegalAddress"), std::string::npos) << reason;
  ASSERT_EQ(j["results"].size(), 3u);
  EXPECT_EQ(j["results"][0]["variant"], "first");
  EXPECT_EQ(j["results"][0]["status"], "ok");  // taken before the fault: kept, with its trials
  EXPECT_FALSE(j["results"][0]["trials"].empty());
  EXPECT_EQ(j["results"][1]["status"], "failed");  // an ordinary device error: the run went on
  EXPECT_EQ(j["results"][2]["variant"], "lost");
  EXPECT_EQ(j["results"][2]["status"], "failed");
  EXPECT_NE(j["results"][2]["reason"].get<std::string>().find("the device context is lost"), std::string::npos);
  EXPECT_TRUE(j["results"][2]["trials"].empty());
  EXPECT_EQ(j["summary"]["ok"], 1);
  EXPECT_EQ(j["summary"]["failed"], 2);
  std::ifstream f(csv);
  std::string line;
  int rows = 0;
  while (std::getline(f, line)) rows += !line.empty();
  EXPECT_EQ(rows, 4);  // the header and the three results
  EXPECT_NE(err.find("case op/lost"), std::string::npos) << err;
  EXPECT_NE(err.find("cudaErrorIllegalAddress"), std::string::npos) << err;
}

TEST(Session, ARuntimeErrorIsNamedByThePlatformWithTheStageItCameFrom) {
  // An error of the runtime's own type that no backend wrapper caught (OpenCL's cl::Error says only
  // the call) is recorded as the platform names it, with where in the case it happened.
  BenchmarkDef def;
  def.name = "fake";
  def.description = "runtime errors";
  def.run = [](Session& s) {
    for (const char* where : {"setup", "pass", "verify"}) {
      std::string w = where;
      s.run({"op", w, {}, s.sizes().front(), s.transfers().front()},
            CaseSetup{nullptr, [w]() {
                        if (w == "setup") throw test::FakeRuntimeError("clCreateBuffer");
                        Prepared p;
                        p.pass = [w] {
                          if (w == "pass") throw test::FakeRuntimeError("clEnqueueNDRangeKernel");
                          return Breakdown::compute_only(1e-3);
                        };
                        p.verify = [w]() -> Verification {
                          if (w == "verify") throw test::FakeRuntimeError("clEnqueueReadBuffer");
                          return Verification::pass("ok");
                        };
                        p.elements = 1;
                        return p;
                      }});
    }
  };
  std::string path = test::scratch("session-runtime.json");
  EXPECT_EQ(run(def, {"--sizes", "32K", "--warmup", "0", "--json", path, "--quiet"}), kExitFailure);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  std::map<std::string, std::string> reason;
  for (const auto& r : j["results"]) reason[r["variant"]] = r["reason"];
  EXPECT_EQ(reason["setup"], "fake runtime call clCreateBuffer failed during the case's preparation");
  EXPECT_EQ(reason["pass"], "fake runtime call clEnqueueNDRangeKernel failed during a timed pass");
  EXPECT_EQ(reason["verify"], "fake runtime call clEnqueueReadBuffer failed during verification");
}

// Every case is set up plan -> fit -> prepare: a case whose plan exceeds the platform's memory
// (capped by --memory-limit) is skipped with the plan's list before prepare runs; the plan is kept in
// the result either way.
TEST(Session, ACaseIsPreparedOnlyWhenItsMemoryPlanFits) {
  int prepared = 0;
  BenchmarkDef def;
  def.name = "fake";
  def.description = "test benchmark";
  def.run = [&prepared](Session& s) {
    for (std::uint64_t bytes : {std::uint64_t{1} << 20, std::uint64_t{8} << 20}) {
      CaseSetup setup;
      setup.plan = [bytes](MemoryPlan& plan) { plan.add("input", bytes).add("output", bytes / 2); };
      setup.prepare = [&prepared] {
        ++prepared;
        return quick_case();
      };
      s.run({"op", "v", {}, bytes}, setup);
    }
  };
  std::string path = test::scratch("session-plan.json");
  ASSERT_EQ(run(def, {"--sizes", "32K", "--memory-limit", "4M", "--json", path, "--quiet"}), kExitOk);
  EXPECT_EQ(prepared, 1);
  nlohmann::json j = read_json(path);
  ASSERT_EQ(j["results"].size(), 2u);
  const nlohmann::json& fits = j["results"][0];
  EXPECT_EQ(fits["status"], "ok");
  EXPECT_EQ(fits["memory_plan"]["where"], "device memory");
  EXPECT_EQ(fits["memory_plan"]["bytes"], (1u << 20) + (1u << 19));
  ASSERT_EQ(fits["memory_plan"]["items"].size(), 2u);
  EXPECT_EQ(fits["memory_plan"]["items"][0]["what"], "input");
  EXPECT_EQ(fits["memory_plan"]["items"][1]["bytes"], 1u << 19);
  const nlohmann::json& over = j["results"][1];
  EXPECT_EQ(over["status"], "skipped");
  EXPECT_EQ(over["memory_plan"]["bytes"], (8u << 20) + (4u << 20));
  const std::string reason = over["reason"];
  EXPECT_EQ(reason.rfind("needs 12 MiB of device memory (input 8 MiB, output 4 MiB)", 0), 0u) << reason;
}

namespace {

// A platform that takes traffic profiles (as host execution's instrumented build does): each profile
// says two launches and three times the case's input size through DRAM.
class TrafficPlatform : public test::FakePlatform {
 public:
  std::string traffic_problem() const override { return ""; }
  void traffic_begin() override { ++begun; }
  nlohmann::json traffic_end() override {
    ++ended;
    return {{"launches", 2}, {"dram_bytes_model", 3.0 * 32768}};
  }
  int begun = 0, ended = 0;
};

}  // namespace

TEST(Session, TrafficPassAddsTheProfileToCasesThatPassed) {
  int setups = 0;
  const std::string path = test::scratch("traffic.json");
  TrafficPlatform platform;
  std::vector<std::string> args{"hdb-fake-fake", "--sizes", "32K", "--traffic", "--json", path, "--quiet"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  run_main(static_cast<int>(argv.size()), argv.data(), scripted_benchmark(&setups), platform);
  // Only the case that passed gets a traffic pass: the others skipped, failed verification or threw.
  EXPECT_EQ(platform.begun, 1);
  EXPECT_EQ(platform.ended, 1);
  std::ifstream f(path);
  const nlohmann::json j = nlohmann::json::parse(f);
  for (const auto& r : j["results"]) {
    if (r["variant"] == "good") {
      ASSERT_TRUE(r.contains("traffic"));
      EXPECT_EQ(r["traffic"]["launches_per_op"], 2);
      EXPECT_DOUBLE_EQ(r["traffic"]["traffic_ratio"].get<double>(), 3.0 * 32768 / (2 * 32768));
    } else {
      EXPECT_FALSE(r.contains("traffic")) << r["variant"];
    }
  }
}

TEST(Session, TrafficOnAPlatformThatCannotTakeItIsAUsageError) {
  int setups = 0;
  EXPECT_EQ(run(scripted_benchmark(&setups), {"--sizes", "32K", "--traffic", "--quiet"}), kExitUsage);
  EXPECT_EQ(setups, 0);
}
