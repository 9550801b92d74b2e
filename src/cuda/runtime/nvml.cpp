#include "runtime/nvml.hpp"

#include <dlfcn.h>

#include <stdexcept>

#include "runtime/nvml_reasons.hpp"

namespace hdb::cuda {

// NVML's C ABI: nvmlReturn_t is an int enum (0 = success), nvmlDevice_t an opaque pointer;
// nvmlClockType_t SM = 1, MEM = 2; nvmlTemperatureSensors_t GPU = 0.
struct Nvml::Api {
  using Init = int (*)();
  Init init = nullptr, shutdown = nullptr;
  int (*by_bus)(const char*, void**) = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;
  int (*power)(void*, unsigned*) = nullptr;
  int (*temperature)(void*, int, unsigned*) = nullptr;
  int (*reasons)(void*, unsigned long long*) = nullptr;
  int (*energy)(void*, unsigned long long*) = nullptr;
};

namespace {
template <class F>
void bind(void* lib, F& f, const char* name) {
  f = reinterpret_cast<F>(dlsym(lib, name));
}
}  // namespace

std::shared_ptr<Nvml> Nvml::open(const std::string& pci_bus_id, std::string& why) {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    why = "NVML (libnvidia-ml.so.1, part of the NVIDIA driver) does not load: no driver on this machine";
    return nullptr;
  }
  std::shared_ptr<Nvml> n(new Nvml);
  n->lib_ = lib;
  n->api_ = std::make_unique<Api>();
  Api& a = *n->api_;
  bind(lib, a.init, "nvmlInit_v2");
  bind(lib, a.shutdown, "nvmlShutdown");
  bind(lib, a.by_bus, "nvmlDeviceGetHandleByPciBusId_v2");
  bind(lib, a.clock, "nvmlDeviceGetClockInfo");
  bind(lib, a.power, "nvmlDeviceGetPowerUsage");
  bind(lib, a.temperature, "nvmlDeviceGetTemperature");
  bind(lib, a.reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!a.reasons) bind(lib, a.reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  bind(lib, a.energy, "nvmlDeviceGetTotalEnergyConsumption");
  if (!a.init || !a.by_bus || a.init() != 0) {
    why = "NVML did not initialise (nvmlInit_v2)";
    a.shutdown = nullptr;  // nothing to shut down
    return nullptr;
  }
  if (a.by_bus(pci_bus_id.c_str(), &n->device_) != 0) {
    why = "NVML does not know the CUDA device at PCI bus " + pci_bus_id;
    return nullptr;
  }
  return n;
}

Nvml::~Nvml() {
  if (api_ && api_->shutdown) api_->shutdown();
  if (lib_) dlclose(lib_);
}

nlohmann::json Nvml::state() const {
  nlohmann::json s = nlohmann::json::object();
  const Api& a = *api_;
  unsigned v = 0;
  if (a.clock && a.clock(device_, 1, &v) == 0) s["sm_clock_mhz"] = v;
  if (a.clock && a.clock(device_, 2, &v) == 0) s["memory_clock_mhz"] = v;
  if (a.power && a.power(device_, &v) == 0) s["power_w"] = v / 1e3;
  if (a.temperature && a.temperature(device_, 0, &v) == 0) s["temperature_c"] = v;
  unsigned long long mask = 0;
  if (a.reasons && a.reasons(device_, &mask) == 0) {
    ClockEventReasons r = decode_clock_event_reasons(mask);
    s["clock_event_reasons"] = {{"throttling", r.throttling}, {"other", r.other}};
  }
  return s;
}

std::vector<std::string> Nvml::throttling() const {
  unsigned long long mask = 0;
  if (!api_->reasons || api_->reasons(device_, &mask) != 0) return {};
  return decode_clock_event_reasons(mask).throttling;
}

bool Nvml::energy_mj(unsigned long long& mj) const { return api_->energy && api_->energy(device_, &mj) == 0; }

namespace {
class NvmlEnergyMeter : public EnergyMeter {
 public:
  NvmlEnergyMeter(std::shared_ptr<Nvml> n, unsigned long long mj0) : nvml_(std::move(n)), mj0_(mj0) {}
  const char* source() const override { return "nvml"; }
  std::string what() const override { return "the GPU board (nvmlDeviceGetTotalEnergyConsumption)"; }
  double joules() override {
    unsigned long long mj = 0;
    if (!nvml_->energy_mj(mj)) throw std::runtime_error("nvmlDeviceGetTotalEnergyConsumption failed");
    return static_cast<double>(mj - mj0_) * 1e-3;
  }

 private:
  std::shared_ptr<Nvml> nvml_;
  unsigned long long mj0_;
};
}  // namespace

EnergyProbe open_nvml_energy(const std::shared_ptr<Nvml>& nvml, const std::string& why_not) {
  EnergyProbe p;
  unsigned long long mj = 0;
  if (!nvml) {
    p.reason = why_not;
  } else if (!nvml->energy_mj(mj)) {
    p.reason = "NVML has no total-energy counter for this GPU (it needs Volta or later)";
  } else {
    p.meter = std::make_unique<NvmlEnergyMeter>(nvml, mj);
  }
  return p;
}

}  // namespace hdb::cuda
