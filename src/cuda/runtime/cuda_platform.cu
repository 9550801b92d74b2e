#include "runtime/cuda_platform.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "harness/errors.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/patterns.cuh"
#ifndef HDB_CUDA_HOST
#include "harness/sizes.hpp"
#include "runtime/nvml.hpp"
#else
#include "runtime/host/traffic.hpp"
#endif

namespace hdb::cuda {

double pcie_theoretical_gbps(int gen, int width) {
  // GT/s per lane and the line code's efficiency; gen 6 uses FLIT mode (242/256 payload).
  static const double rate[] = {0, 2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
  static const double eff[] = {0, 0.8, 0.8, 128.0 / 130, 128.0 / 130, 128.0 / 130, 242.0 / 256};
  if (gen < 1 || gen > 6 || width < 1) return 0;
  return rate[gen] * eff[gen] / 8.0 * width;
}

namespace {
int gen_from_speed(const std::string& s) {  // "16.0 GT/s PCIe" -> 4
  double gt = std::atof(s.c_str());
  if (gt >= 60) return 6;
  if (gt >= 30) return 5;
  if (gt >= 15) return 4;
  if (gt >= 7) return 3;
  if (gt >= 4) return 2;
  if (gt > 0) return 1;
  return 0;
}
std::string read_line(const std::string& path) {
  std::ifstream f(path);
  std::string s;
  std::getline(f, s);
  return s;
}
}  // namespace

PcieLink query_pcie_link(int device) {
  PcieLink link;
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device) != cudaSuccess) return link;
  // NVML is part of the driver; dlopen keeps executables loadable where there is none.
  if (void* h = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using Init = int (*)();
    using ByBus = int (*)(const char*, void**);
    using Get = int (*)(void*, unsigned*);
    auto init = reinterpret_cast<Init>(dlsym(h, "nvmlInit_v2"));
    auto by_bus = reinterpret_cast<ByBus>(dlsym(h, "nvmlDeviceGetHandleByPciBusId_v2"));
    auto cur_gen = reinterpret_cast<Get>(dlsym(h, "nvmlDeviceGetCurrPcieLinkGeneration"));
    auto cur_w = reinterpret_cast<Get>(dlsym(h, "nvmlDeviceGetCurrPcieLinkWidth"));
    auto max_gen = reinterpret_cast<Get>(dlsym(h, "nvmlDeviceGetMaxPcieLinkGeneration"));
    auto max_w = reinterpret_cast<Get>(dlsym(h, "nvmlDeviceGetMaxPcieLinkWidth"));
    auto shutdown = reinterpret_cast<Init>(dlsym(h, "nvmlShutdown"));
    void* dev = nullptr;
    unsigned v[4] = {};
    if (init && by_bus && cur_gen && cur_w && max_gen && max_w && init() == 0) {
      if (by_bus(bus_id, &dev) == 0 && cur_gen(dev, &v[0]) == 0 && cur_w(dev, &v[1]) == 0 && max_gen(dev, &v[2]) == 0 &&
          max_w(dev, &v[3]) == 0) {
        link = {int(v[0]), int(v[1]), int(v[2]), int(v[3]), 0, "nvml"};
      }
      if (shutdown) shutdown();
    }
    dlclose(h);
  }
  if (link.source.empty()) {
    std::string id = bus_id;
    std::transform(id.begin(), id.end(), id.begin(), [](unsigned char c) { return std::tolower(c); });
    std::string dir = "/sys/bus/pci/devices/" + id + "/";
    link.gen = gen_from_speed(read_line(dir + "current_link_speed"));
    link.max_gen = gen_from_speed(read_line(dir + "max_link_speed"));
    link.width = std::atoi(read_line(dir + "current_link_width").c_str());
    link.max_width = std::atoi(read_line(dir + "max_link_width").c_str());
    link.source = link.max_gen ? "sysfs" : "unknown";
  }
  link.theoretical_gbps = pcie_theoretical_gbps(link.max_gen, link.max_width);
  return link;
}

bool device_count_error_is_no_device(cudaError_t err, bool driver_present) {
  if (driver_present) return false;
  return err == cudaErrorNoDevice || err == cudaErrorInsufficientDriver || err == cudaErrorStubLibrary;
}

bool nvidia_driver_present() {
  if (::access("/dev/nvidiactl", F_OK) == 0 || ::access("/proc/driver/nvidia/version", F_OK) == 0) return true;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (std::size_t pos = 0; pos <= dirs.size();) {
    std::size_t colon = dirs.find(':', pos);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(pos, colon - pos);
    if (!dir.empty() && ::access((dir + "/nvidia-smi").c_str(), X_OK) == 0) return true;
    pos = colon + 1;
  }
  return false;
}

namespace {
std::string cuda_version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }
}  // namespace

void CudaPlatform::init(const Options& opts) {
  // HDB_CUDA_SYNC_CHECK is read now, not at the first launch: a bad value stops the run (exit 2, the
  // variable named) before any case, with or without a device.
  (void)sync_check_enabled();
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    const bool driver = nvidia_driver_present();
    if (device_count_error_is_no_device(err, driver))
      throw NoDevice(std::string("no CUDA device (") + cudaGetErrorString(err) + ")");
    // A failure, not a skip: say what the runtime needs and what the driver offers.
    int runtime = 0, supported = 0;
    cudaRuntimeGetVersion(&runtime);
    cudaDriverGetVersion(&supported);
    std::string versions = "CUDA runtime " + cuda_version(runtime) + ", the driver supports CUDA " +
                           (supported ? cuda_version(supported) : std::string("(none reported)"));
    throw DeviceError(std::string("cudaGetDeviceCount failed: ") + cudaGetErrorName(err) + " (" +
                      cudaGetErrorString(err) + ")" +
                      (driver ? " on a machine with an NVIDIA driver installed (nvidia-smi names its version)" : "") +
                      "; " + versions);
  }
  if (count == 0) throw NoDevice("no CUDA device (none found)");
  if (opts.device >= count)
    throw UsageError("--device " + std::to_string(opts.device) + ": " + std::to_string(count) +
                     " CUDA device(s) (allowed: 0.." + std::to_string(count - 1) + ")");
  // Under mpirun the ranks of a node take consecutive devices, wrapping around.
  device_ = (opts.device + opts.local_rank) % count;
  HDB_CUDA_CHECK(cudaSetDevice(device_));
  HDB_CUDA_CHECK(cudaDeviceGetAttribute(&sm_count_, cudaDevAttrMultiProcessorCount, device_));
  HDB_CUDA_CHECK(cudaFree(nullptr));  // create the context outside any timed region
#ifndef HDB_CUDA_HOST
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device_) == cudaSuccess)
    nvml_ = Nvml::open(bus_id, nvml_why_);
  else
    nvml_why_ = "cudaDeviceGetPCIBusId failed: NVML cannot be matched to the device";
#endif
}

#ifndef HDB_CUDA_HOST
CudaPlatform::~CudaPlatform() {
  if (flush_buffer_) cudaFree(flush_buffer_);
}

std::string CudaPlatform::flush_caches() {
  std::string host = flush_host_cache();
  int l2 = 0;
  HDB_CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device_));
  if (l2 <= 0) return host + "; the device reports no L2";
  if (!flush_buffer_) {
    flush_bytes_ = 2 * static_cast<std::size_t>(l2);
    HDB_CUDA_CHECK(cudaMalloc(&flush_buffer_, flush_bytes_));
  }
  static int round = 0;
  round = (round + 1) & 0xff;
  HDB_CUDA_CHECK(cudaMemsetAsync(flush_buffer_, round, flush_bytes_, nullptr));
  HDB_CUDA_CHECK(cudaDeviceSynchronize());
  return host + "; device L2 " + format_size(static_cast<std::uint64_t>(l2)) + ": set a " + format_size(flush_bytes_) +
         " buffer (cudaMemsetAsync)";
}

std::string CudaPlatform::cold_pass_note() const {
  return Platform::cold_pass_note() +
         "; on CUDA also the loading of each kernel's module at its first launch (lazy loading, the default "
         "since CUDA 12.2) and the first allocations of stream-ordered pools; the CUDA context was created before "
         "(cudaFree(0) at start-up)";
}

EnergyProbe CudaPlatform::open_energy_meter() { return open_nvml_energy(nvml_, nvml_why_); }

nlohmann::json CudaPlatform::device_state() { return nvml_ ? nvml_->state() : nlohmann::json(nullptr); }

std::vector<std::string> CudaPlatform::throttling() { return nvml_ ? nvml_->throttling() : std::vector<std::string>{}; }
#endif

nlohmann::json CudaPlatform::context() const {
  cudaDeviceProp p{};
  HDB_CUDA_CHECK(cudaGetDeviceProperties(&p, device_));
  int runtime = 0, driver = 0, mem_clock_khz = 0, bus_width = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  cudaDeviceGetAttribute(&mem_clock_khz, cudaDevAttrMemoryClockRate, device_);
  cudaDeviceGetAttribute(&bus_width, cudaDevAttrGlobalMemoryBusWidth, device_);
  PcieLink link = query_pcie_link(device_);
  char bus_id[32] = {};
  cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, device_);
  return nlohmann::json{
      {"name", p.name},
      {"kind", name()},
      {"index", device_},
      {"compute_capability", std::to_string(p.major) + "." + std::to_string(p.minor)},
      {"sm_count", p.multiProcessorCount},
      {"global_memory_bytes", p.totalGlobalMem},
      {"l2_cache_bytes", p.l2CacheSize},
      {"shared_memory_per_block_optin", p.sharedMemPerBlockOptin},
      {"memory_bus_width_bits", bus_width},
      {"memory_clock_khz", mem_clock_khz},
      // DDR: two transfers per clock.
      {"memory_theoretical_gbps", 2.0 * mem_clock_khz * 1e3 * (bus_width / 8.0) / 1e9},
      {"cuda_runtime", runtime},
      {"cuda_driver", driver},
      {"pci_bus_id", bus_id},
      {"pcie",
       {{"gen", link.gen},
        {"width", link.width},
        {"max_gen", link.max_gen},
        {"max_width", link.max_width},
        {"theoretical_gbps_per_direction", link.theoretical_gbps},
        {"source", link.source}}},
#ifndef HDB_CUDA_HOST
      {"nvml", nvml_ ? nvml_->state() : nlohmann::json{{"reason", nvml_why_}}},
#else
      // The instrumented build (--traffic): every load and store a call, so its times are
      // slower still than plain host execution's.
      {"traffic_instrumented", host::traffic::instrumented()},
#endif
  };
}

std::uint64_t CudaPlatform::device_memory_bytes() const {
  std::size_t free_b = 0, total = 0;
  HDB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total));
  return free_b;
}

#ifndef HDB_CUDA_HOST
PatternRates CudaPlatform::measure_pattern_ceilings() {
  // Three buffers of 1 GiB (or a quarter of free memory each), as the copy's.
  return measure_patterns(std::min<std::uint64_t>(1ull << 30, device_memory_bytes() / 4), sm_count_, 5);
}
#endif

double CudaPlatform::measure_copy_ceiling() {
  // 1 GiB (or a quarter of free memory) per buffer: far beyond Hopper's 50-60 MB L2.
  std::size_t bytes = std::min<std::uint64_t>(1ull << 30, device_memory_bytes() / 4) & ~std::size_t{255};
  DeviceBuffer<char> a(bytes), b(bytes);
  HDB_CUDA_CHECK(cudaMemset(a.get(), 1, bytes));
  HDB_CUDA_CHECK(cudaMemset(b.get(), 2, bytes));
  double best = 1e30;
  for (int i = 0; i < 5; ++i) {
    PhaseTimer t;
    t.start();
    HDB_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice));
    best = std::min(best, t.stop());
  }
  return 2.0 * static_cast<double>(bytes) / best / 1e9;
}

}  // namespace hdb::cuda
