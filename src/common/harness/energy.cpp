#include "harness/energy.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace hdb {

namespace {
namespace fs = std::filesystem;

std::string read_word(const fs::path& p) {
  std::ifstream f(p);
  std::string s;
  f >> s;
  return s;
}

struct RaplZone {
  fs::path energy;      // energy_uj
  std::uint64_t range;  // max_energy_range_uj: the counter wraps to 0 there
  std::uint64_t last;
  std::string name;
};

bool read_uj(const fs::path& p, std::uint64_t& v) {
  std::ifstream f(p);
  return static_cast<bool>(f >> v);
}

class RaplMeter : public EnergyMeter {
 public:
  explicit RaplMeter(std::vector<RaplZone> zones) : zones_(std::move(zones)) {}
  const char* source() const override { return "rapl"; }
  std::string what() const override {
    std::string s = "RAPL";
    for (const auto& z : zones_) s += " " + z.name;
    return s;
  }
  double joules() override {
    for (auto& z : zones_) {
      std::uint64_t v = 0;
      if (!read_uj(z.energy, v)) throw std::runtime_error("reading " + z.energy.string() + " failed");
      total_uj_ += v >= z.last ? v - z.last : v + (z.range - z.last);
      z.last = v;
    }
    return static_cast<double>(total_uj_) * 1e-6;
  }

 private:
  std::vector<RaplZone> zones_;
  std::uint64_t total_uj_ = 0;
};

// Adds the zone at `dir` when its counter can be read; returns why not otherwise.
std::string add_zone(const fs::path& dir, std::vector<RaplZone>& zones) {
  RaplZone z;
  z.name = read_word(dir / "name");
  z.energy = dir / "energy_uj";
  std::uint64_t range = 0;
  if (!read_uj(dir / "max_energy_range_uj", range) || range == 0) range = ~std::uint64_t{0};
  z.range = range;
  if (!read_uj(z.energy, z.last))
    return z.energy.string() + " is not readable (on Linux 5.10 and later only root may read it)";
  zones.push_back(std::move(z));
  return "";
}
}  // namespace

EnergyProbe open_rapl(std::string root) {
  if (root.empty()) {
    const char* env = std::getenv("HDB_POWERCAP_ROOT");
    root = env && *env ? env : "/sys/class/powercap";
  }
  EnergyProbe probe;
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    probe.reason = root + " does not exist: this kernel exposes no powercap (RAPL) counters";
    return probe;
  }
  std::vector<RaplZone> zones;
  std::string why;
  std::vector<fs::path> packages;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    std::string n = e.path().filename().string();
    // Top-level zones only ("intel-rapl:0"; subzones are "intel-rapl:0:1"), AMD's too: Linux names
    // both vendors' RAPL zones intel-rapl.
    if (n.rfind("intel-rapl:", 0) != 0 || n.find(':', 11) != std::string::npos) continue;
    if (read_word(e.path() / "name").rfind("package", 0) == 0) packages.push_back(e.path());
  }
  if (packages.empty()) {
    probe.reason = "no RAPL package zone under " + root + " (no intel-rapl:N/name package-N)";
    return probe;
  }
  std::sort(packages.begin(), packages.end());
  for (const auto& p : packages) {
    std::string w = add_zone(p, zones);
    if (!w.empty()) why = w;
    for (const auto& sub : fs::directory_iterator(p, ec))
      if (sub.path().filename().string().rfind(p.filename().string() + ":", 0) == 0 &&
          read_word(sub.path() / "name") == "dram") {
        std::string ws = add_zone(sub.path(), zones);
        if (!ws.empty()) why = ws;
      }
  }
  // A partial sum would be a wrong number: every zone is read, or none.
  if (!why.empty()) {
    probe.reason = why;
    return probe;
  }
  probe.meter = std::make_unique<RaplMeter>(std::move(zones));
  return probe;
}

namespace {
double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
}  // namespace

void EnergySpan::start() {
  if (!meter_ || !error_.empty() || running_) return;
  try {
    j0_ = meter_->joules();
    t0_ = now_s();
    running_ = true;
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

void EnergySpan::pause() {
  if (!meter_ || !error_.empty() || !running_) return;
  running_ = false;
  try {
    double j = meter_->joules();
    seconds_ += now_s() - t0_;
    joules_ += j - j0_;
    ++spans_;
  } catch (const std::exception& e) {
    error_ = e.what();
  }
}

nlohmann::json EnergySpan::to_json(int passes, const std::string& no_meter_reason) const {
  if (!meter_) return {{"source", "none"}, {"reason", no_meter_reason}};
  if (!error_.empty()) return {{"source", "none"}, {"reason", std::string(meter_->source()) + ": " + error_}};
  if (passes <= 0 || seconds_ <= 0) return {{"source", "none"}, {"reason", "no timed pass to attribute energy to"}};
  // RAPL updates its counters about every millisecond, NVML's total energy more slowly: a stretch
  // shorter than kMinSpanS between two reads is mostly quantisation.
  if (seconds_ / spans_ < kMinSpanS)
    return {{"source", "none"},
            {"reason", std::string(meter_->source()) + ": the timed stretches between counter reads averaged " +
                           std::to_string(seconds_ / spans_ * 1e3) + " ms, below the " +
                           std::to_string(int(kMinSpanS * 1e3)) + " ms the counters resolve"}};
  return {
      {"source", meter_->source()},          {"what", meter_->what()},     {"joules", joules_}, {"seconds", seconds_},
      {"joules_per_pass", joules_ / passes}, {"watts", joules_ / seconds_}};
}

}  // namespace hdb
