#pragma once
// Energy counters read around a case's timed passes (the result's `energy`): RAPL's package (and
// DRAM) counters for the host CPU from /sys/class/powercap; a GPU platform supplies its own (NVML).
// Where there is no counter, the reason is recorded instead of a number.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hdb {

class EnergyMeter {
 public:
  virtual ~EnergyMeter() = default;
  virtual const char* source() const = 0;  // "rapl", "nvml"
  virtual std::string what() const = 0;    // what the counter covers
  // Joules since the meter was opened; counter wrap-around is accounted for. Throws on a read error.
  virtual double joules() = 0;
};

// A meter, or the reason there is none.
struct EnergyProbe {
  std::unique_ptr<EnergyMeter> meter;
  std::string reason;
};

// RAPL through the powercap interface: every top-level zone named package-N, and their dram
// subzones. `root` replaces /sys/class/powercap for tests; HDB_POWERCAP_ROOT does the same for a
// whole run (the recorded fixture in tests/harness).
EnergyProbe open_rapl(std::string root = "");

// Reads a meter around a stretch of passes: start() before, stop() after; pauses (cache flushes
// between passes) are left out with pause()/resume().
class EnergySpan {
 public:
  explicit EnergySpan(EnergyMeter* m) : meter_(m) {}
  void start();
  void pause();
  void resume() { start(); }
  void stop() { pause(); }
  // The result's `energy` object for `passes` timed passes.
  nlohmann::json to_json(int passes, const std::string& no_meter_reason) const;

 private:
  EnergyMeter* meter_;
  static constexpr double kMinSpanS = 0.01;
  double joules_ = 0, seconds_ = 0;
  int spans_ = 0;
  bool running_ = false;
  double j0_ = 0;
  double t0_ = 0;
  std::string error_;
};

}  // namespace hdb
