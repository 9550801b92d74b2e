#pragma once
// The time breakdown of one timed pass, and a host timer. All times are in seconds.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace hdb {

struct Breakdown {
  double h2d = 0;     // host -> device transfer
  double kernel = 0;  // device (or CPU) compute, all kernels of the operation
  double d2h = 0;     // device -> host transfer
  double total = 0;   // wall time of the whole pass including transfers
  std::vector<std::pair<std::string, double>> phases;  // named sub-steps of `kernel` (or of total)

  void add_phase(const std::string& name, double seconds) {
    for (auto& p : phases)
      if (p.first == name) {
        p.second += seconds;
        return;
      }
    phases.emplace_back(name, seconds);
  }
  // For host-only work where compute is the whole pass.
  static Breakdown compute_only(double seconds) {
    Breakdown b;
    b.kernel = b.total = seconds;
    return b;
  }
};

// The result of an operation together with its breakdown.
template <class T>
struct Timed {
  T value;
  Breakdown time;
};

class HostTimer {
 public:
  HostTimer() : start_(std::chrono::steady_clock::now()) {}
  void reset() { start_ = std::chrono::steady_clock::now(); }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_;
};

// Times fn() on the host and returns seconds.
template <class F>
double time_host(F&& fn) {
  HostTimer t;
  fn();
  return t.seconds();
}

}  // namespace hdb
