#pragma once
// NVML for one CUDA device, loaded with dlopen (it is part of the driver: executables stay loadable
// where there is none): the device's state for the context and every case (clocks, power,
// temperature, clock-event reasons) and its total-energy counter (Volta and later).
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/energy.hpp"

namespace hdb::cuda {

class Nvml {
 public:
  // The NVML device of CUDA device `pci_bus_id`, or null with `why` set.
  static std::shared_ptr<Nvml> open(const std::string& pci_bus_id, std::string& why);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  // sm_clock_mhz, memory_clock_mhz, power_w, temperature_c, clock_event_reasons: what NVML answers.
  nlohmann::json state() const;
  // Names of the active reasons that lower clocks (power cap, thermal, power brake); empty if none
  // or unreadable.
  std::vector<std::string> throttling() const;
  // Millijoules since the driver loaded; false when NVML cannot say (before Volta).
  bool energy_mj(unsigned long long& mj) const;

 private:
  struct Api;
  Nvml() = default;
  void* lib_ = nullptr;
  void* device_ = nullptr;
  std::unique_ptr<Api> api_;
};

// The board's energy counter as an EnergyMeter (source "nvml").
EnergyProbe open_nvml_energy(const std::shared_ptr<Nvml>& nvml, const std::string& why_not);

}  // namespace hdb::cuda
