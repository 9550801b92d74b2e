#include "harness/context.hpp"
#include "harness/caches.hpp"
#include "harness/load.hpp"
#include "hdb_git_commit.hpp"  // HDB_GIT_COMMIT, written at every build (cmake/GitCommit.cmake)

#include <sys/utsname.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <ctime>
#include <fstream>
#include <string>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#ifndef HDB_CXX_FLAGS
#define HDB_CXX_FLAGS ""
#endif
#ifndef HDB_BUILD_TYPE
#define HDB_BUILD_TYPE ""
#endif
#ifndef HDB_VERSION
#define HDB_VERSION "0"
#endif

namespace hdb {

namespace {
std::string cpuinfo_field(const std::string& key) {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.compare(0, key.size(), key) == 0) {
      auto c = line.find(':');
      if (c != std::string::npos) return line.substr(c + 2);
    }
  return "";
}
std::uint64_t meminfo_kb(const std::string& key) {
  std::ifstream f("/proc/meminfo");
  std::string k;
  std::uint64_t v;
  std::string unit;
  while (f >> k >> v) {
    std::getline(f, unit);
    if (k == key + ":") return v;
  }
  return 0;
}
std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[64];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}
std::string read_first_line(const char* path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}
}  // namespace

nlohmann::json machine_state(const std::string& sys_root) {
  const std::string cpu = sys_root + "/devices/system/cpu";
  nlohmann::json m = nlohmann::json::object();
  auto put_word = [&](const char* key, const std::string& path) {
    std::string v = read_first_line(path.c_str());
    if (!v.empty()) m[key] = v;
  };
  auto put_khz = [&](const char* key, const std::string& path) {
    std::string v = read_first_line(path.c_str());
    if (!v.empty()) m[key] = std::strtod(v.c_str(), nullptr) / 1e3;
  };
  put_word("governor", cpu + "/cpu0/cpufreq/scaling_governor");
  put_word("frequency_driver", cpu + "/cpu0/cpufreq/scaling_driver");
  put_khz("frequency_mhz", cpu + "/cpu0/cpufreq/scaling_cur_freq");
  put_khz("frequency_max_mhz", cpu + "/cpu0/cpufreq/cpuinfo_max_freq");
  put_word("boost", cpu + "/cpufreq/boost");
  if (!m.contains("governor"))
    m["cpufreq"] = "not exposed (" + cpu + "/cpu0/cpufreq is absent: a VM or a kernel without cpufreq)";
  std::string smt = read_first_line((cpu + "/smt/active").c_str());
  if (!smt.empty()) m["smt_active"] = smt == "1";
  int nodes = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(sys_root + "/devices/system/node", ec)) {
    std::string n = e.path().filename().string();
    nodes += n.rfind("node", 0) == 0 && n.size() > 4 && std::isdigit(static_cast<unsigned char>(n[4]));
  }
  if (nodes > 0) m["numa_nodes"] = nodes;
  return m;
}

std::uint64_t read_tsc() {
#if defined(__x86_64__) || defined(__i386__)
  return __rdtsc();
#else
  return 0;
#endif
}

double measure_tsc_hz() {
  static double cached = -1;
  if (cached >= 0) return cached;
  if (read_tsc() == 0) return cached = 0;
  // Two 50 ms windows against steady_clock; the larger estimate wins (preemption only shortens).
  double best = 0;
  for (int i = 0; i < 2; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    std::uint64_t c0 = read_tsc();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::uint64_t c1 = read_tsc();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double hz = static_cast<double>(c1 - c0) / s;
    if (hz > best) best = hz;
  }
  return cached = best;
}

nlohmann::json host_context(const Options& opts) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  struct utsname u {};
  uname(&u);
  std::string os = read_first_line("/etc/os-release");
  {
    std::ifstream f("/etc/os-release");
    std::string line;
    while (std::getline(f, line))
      if (line.rfind("PRETTY_NAME=", 0) == 0) os = line.substr(13, line.size() - 14);
  }
  return {
      {"host", host},
      {"cpu", cpuinfo_field("model name")},
      {"logical_cores", std::thread::hardware_concurrency()},
      {"threads_used", effective_threads(opts)},
      {"memory_bytes", meminfo_kb("MemTotal") * 1024},
      {"llc_bytes", last_level_cache_bytes()},
      {"load", {{"before", machine_load()}}},
      {"machine", machine_state()},
      {"os", os},
      {"kernel", std::string(u.sysname) + " " + u.release + " " + u.machine},
      {"compiler", std::string("g++/") + __VERSION__},
      {"flags", HDB_CXX_FLAGS},
      {"build_type", HDB_BUILD_TYPE},
      {"version", HDB_VERSION},
      {"git_commit", HDB_GIT_COMMIT},
      {"command_line", opts.command_line},
      {"time_utc", now_iso()},
      {"seed", opts.seed},
      {"sizes", opts.sizes},
      {"stopping_rule",
       {{"warmup", opts.warmup},
        {"min_passes", opts.passes},
        {"max_passes", opts.max_passes},
        {"max_time_s", opts.max_time},
        {"target_cv", opts.target_noise},
        {"flush_caches", opts.flush_caches},
        {"discard_on_throttle", opts.discard_on_throttle}}},
  };
}

}  // namespace hdb
