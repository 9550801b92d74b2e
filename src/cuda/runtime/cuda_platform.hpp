#pragma once
// The CUDA platform: device selection, properties for the context block (including the PCIe link
// from NVML, loaded at run time so that machines without a driver still start), and the measured
// device-memory copy ceiling.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/platform.hpp"

namespace hdb::cuda {

class Nvml;

struct PcieLink {
  int gen = 0, width = 0;          // current link (may be down-clocked at idle)
  int max_gen = 0, max_width = 0;  // what the link can do
  double theoretical_gbps = 0;     // per direction, at max_gen x max_width, after encoding
  std::string source;              // "nvml", "sysfs" or "unknown"
};

class CudaPlatform : public Platform {
 public:
  // Host execution (the CUDA sources run on the CPU, docs/cuda.md) is a backend of its own name, so
  // its results are never read as a GPU's.
#ifdef HDB_CUDA_HOST
  std::string name() const override { return "cuda-host"; }
#else
  std::string name() const override { return "cuda"; }
#endif
  void init(const Options& opts) override;
  nlohmann::json context() const override;
  bool has_transfers() const override { return true; }
  double measure_copy_ceiling() override;
  int device() const { return device_; }
  int sm_count() const { return sm_count_; }
#ifndef HDB_CUDA_HOST
  // Every pattern (runtime/patterns.cuh). Host execution measures the copy alone: its times are no
  // processor's, and its kernels at a GPU's buffer sizes would take minutes.
  PatternRates measure_pattern_ceilings() override;
  // The host's LLC and the device's L2 (a memset of twice its size, as nvbench's cold mode does).
  std::string flush_caches() override;
  std::string cold_pass_note() const override;
  EnergyProbe open_energy_meter() override;
  std::vector<std::string> throttling() override;
  nlohmann::json device_state() override;
  ~CudaPlatform() override;
#else
  // The traffic profile (runtime/host/traffic.hpp; runtime/host/traffic_platform.cpp).
  std::string traffic_problem() const override;
  void hand_over_traffic(char** argv) override;
  void traffic_begin() override;
  nlohmann::json traffic_end() override;
#endif

 protected:
  std::uint64_t device_memory_bytes() const override;

 private:
  int device_ = 0;
  int sm_count_ = 0;
#ifndef HDB_CUDA_HOST
  std::shared_ptr<Nvml> nvml_;  // null where NVML does not load; nvml_why_ says why
  std::string nvml_why_;
  void* flush_buffer_ = nullptr;
  std::size_t flush_bytes_ = 0;
#endif
};

PcieLink query_pcie_link(int device);

// Whether cudaGetDeviceCount's error `err` means the machine has no CUDA device at all (a skip,
// exit code 77), given whether an NVIDIA driver is installed: only the errors of a machine without
// one (no device, no driver or the toolkit's stub library in its place) and only where
// nvidia_driver_present() is false. Anything else is a failure: where a driver is installed the
// same errors mean a driver too old for this runtime, or a broken installation, which must not pass
// as "skipped".
bool device_count_error_is_no_device(cudaError_t err, bool driver_present);
// Whether this machine has an NVIDIA driver: /dev/nvidiactl or /proc/driver/nvidia/version exists,
// or nvidia-smi is on PATH.
bool nvidia_driver_present();
// Theoretical per-direction GB/s of a PCIe link (generation, lanes), after line encoding.
double pcie_theoretical_gbps(int gen, int width);

}  // namespace hdb::cuda
