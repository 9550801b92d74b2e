#pragma once
// The time breakdown of one timed pass, and a host timer. All times are in seconds.
#include <chrono>
#include <string>
#include <utility>
#include <vector>

namespace hdb {

// What a phase's time is spent on. Totals per kind are Breakdown's h2d / kernel / d2h; named
// phases refine them (or, for host and network, name host time outside the kernel).
enum class PhaseKind { H2D, D2H, Kernel, Host, Network };
const char* to_string(PhaseKind k);

struct Phase {
  std::string name;
  PhaseKind kind = PhaseKind::Kernel;
  double seconds = 0;
  bool operator==(const Phase& o) const { return name == o.name && kind == o.kind && seconds == o.seconds; }
};

struct Breakdown {
  double h2d = 0;             // host -> device transfer
  double kernel = 0;          // device (or CPU) compute, all kernels of the operation
  double d2h = 0;             // device -> host transfer
  double total = 0;           // wall time of the whole pass including transfers
  std::vector<Phase> phases;  // named sub-steps, each of one kind

  void add_phase(const std::string& name, double seconds, PhaseKind kind = PhaseKind::Kernel) {
    for (auto& p : phases)
      if (p.name == name) {
        p.seconds += seconds;
        return;
      }
    phases.push_back({name, kind, seconds});
  }
  // For host-only work where compute is the whole pass.
  static Breakdown compute_only(double seconds) {
    Breakdown b;
    b.kernel = b.total = seconds;
    return b;
  }
  // For a pass that is one copy over the bus and nothing else (the bus ceilings).
  static Breakdown transfer_only(bool to_device, double seconds) {
    Breakdown b;
    (to_device ? b.h2d : b.d2h) = b.total = seconds;
    return b;
  }
  // Adds the copies of `copy` (an upload's h2d, a download's d2h): over a bus as transfer time;
  // without one (the cpu backend's relations live in host memory) as host phases stage_in/out.
  void add_copy(const Breakdown& copy, bool over_bus) {
    if (over_bus) {
      h2d += copy.h2d;
      d2h += copy.d2h;
      return;
    }
    if (copy.h2d > 0) add_phase("stage_in", copy.h2d, PhaseKind::Host);
    if (copy.d2h > 0) add_phase("stage_out", copy.d2h, PhaseKind::Host);
  }
  // The time the stopping rule watches: the kernel, or the transfer of a pass that has no kernel.
  double measured() const { return kernel > 0 ? kernel : h2d + d2h > 0 ? h2d + d2h : total; }
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
  double seconds() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count(); }

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
