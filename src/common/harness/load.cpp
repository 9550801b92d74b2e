#include "harness/load.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <unistd.h>

namespace hdb {
namespace {

using Sample = std::vector<std::pair<int, std::pair<std::string, unsigned long long>>>;

Sample sample_processes() {
  Sample out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string n = e.path().filename().string();
    if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream f(e.path() / "stat");
    std::string line, name;
    unsigned long long ticks = 0;
    if (std::getline(f, line) && parse_stat(line, name, ticks)) out.push_back({std::atoi(n.c_str()), {name, ticks}});
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

bool parse_loadavg(const std::string& line, double avg[3], int& running) {
  std::istringstream in(line);
  std::string tasks;
  if (!(in >> avg[0] >> avg[1] >> avg[2] >> tasks)) return false;
  const auto slash = tasks.find('/');
  if (slash == std::string::npos) return false;
  running = std::atoi(tasks.substr(0, slash).c_str());
  return true;
}

bool parse_stat(const std::string& line, std::string& name, unsigned long long& ticks) {
  // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so it ends at the last ')'.
  const auto open = line.find('('), close = line.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  name = line.substr(open + 1, close - open - 1);
  std::istringstream in(line.substr(close + 1));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  // After the comm: state is field 3; utime and stime are fields 14 and 15.
  for (int i = 3; i <= 15; ++i) {
    if (!(in >> field)) return false;
    if (i == 14) utime = std::strtoull(field.c_str(), nullptr, 10);
    if (i == 15) stime = std::strtoull(field.c_str(), nullptr, 10);
  }
  ticks = utime + stime;
  return true;
}

std::vector<BusyProcess> busy_between(const Sample& a, const Sample& b, double seconds, long ticks_per_second,
                                      int self_pid, const std::string& self_name, double min_cores) {
  std::map<int, unsigned long long> before;
  for (const auto& [pid, p] : a) before[pid] = p.second;
  std::vector<BusyProcess> out;
  for (const auto& [pid, p] : b) {
    auto it = before.find(pid);
    if (it == before.end() || pid == self_pid || p.first == self_name || p.second < it->second) continue;
    const double cores = static_cast<double>(p.second - it->second) / static_cast<double>(ticks_per_second) / seconds;
    if (cores >= min_cores) out.push_back({pid, p.first, cores});
  }
  std::sort(out.begin(), out.end(), [](const BusyProcess& x, const BusyProcess& y) { return x.cores > y.cores; });
  return out;
}

nlohmann::json machine_load(std::chrono::milliseconds window, double min_cores) {
  nlohmann::json j = nlohmann::json::object();
  {
    std::ifstream f("/proc/loadavg");
    std::string line;
    double avg[3] = {0, 0, 0};
    int running = 0;
    if (std::getline(f, line) && parse_loadavg(line, avg, running))
      j["loadavg"] = {avg[0], avg[1], avg[2]}, j["running"] = running;
  }
  std::string self_name;
  {
    std::ifstream f("/proc/self/stat");
    std::string line;
    unsigned long long ticks = 0;
    if (std::getline(f, line)) parse_stat(line, self_name, ticks);
  }
  const long hz = sysconf(_SC_CLK_TCK);
  const auto t0 = std::chrono::steady_clock::now();
  Sample a = sample_processes();
  std::this_thread::sleep_for(window);
  Sample b = sample_processes();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (a.empty() || hz <= 0 || seconds <= 0) return j;  // no /proc: load averages at most
  double total = 0;
  nlohmann::json others = nlohmann::json::array();
  for (const BusyProcess& p : busy_between(a, b, seconds, hz, static_cast<int>(getpid()), self_name, min_cores)) {
    total += p.cores;
    if (others.size() < 8) others.push_back({{"pid", p.pid}, {"name", p.name}, {"cores", p.cores}});
  }
  j["window_s"] = seconds;
  j["other_busy_processes"] = std::move(others);
  j["other_cores"] = total;
  j["busy"] = total >= kBusyCores;
  return j;
}

}  // namespace hdb
