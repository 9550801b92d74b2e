#pragma once
// The machine's load around a run (issue 17): a benchmark taken while another process holds a core
// is not comparable with one taken on an idle machine, so every document says what else ran.
#include <chrono>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdb {

// One process's CPU use over the sampling window.
struct BusyProcess {
  int pid = 0;
  std::string name;
  double cores = 0;  // CPU seconds per second over the window (1.0 = one core all the time)
};

// Load averages (1, 5, 15 minutes), runnable tasks, and the other processes that used at least
// kBusyCores of a core over `window` (this process and others with its name, the ranks of an MPI
// job, left out); `busy` when those together used kBusyCores or more.
constexpr double kBusyCores = 0.25;
nlohmann::json machine_load(std::chrono::milliseconds window = std::chrono::milliseconds(100),
                            double min_cores = kBusyCores);

// Parsing of /proc, exposed for tests: "0.52 0.58 0.59 3/412 12345" -> loadavg and running; a
// /proc/<pid>/stat line -> name and utime + stime in clock ticks (false when malformed).
bool parse_loadavg(const std::string& line, double avg[3], int& running);
bool parse_stat(const std::string& line, std::string& name, unsigned long long& ticks);
// The busy processes from two samples (pid -> name, ticks) taken `seconds` apart.
std::vector<BusyProcess> busy_between(const std::vector<std::pair<int, std::pair<std::string, unsigned long long>>>& a,
                                      const std::vector<std::pair<int, std::pair<std::string, unsigned long long>>>& b,
                                      double seconds, long ticks_per_second, int self_pid, const std::string& self_name,
                                      double min_cores = kBusyCores);

}  // namespace hdb
