#pragma once
// Host execution's traffic profile (--traffic, docs/cuda.md "What the kernels ask of memory"): what
// the kernels ask of global memory, counted as a GPU's load/store unit would see it.
//  - The kernels of the instrumented build (hdb-<bench>-cuda-host under bin/traffic/, compiled with
//    GCC's -fsanitize=thread but linked against traffic_hooks.cpp instead of libtsan) call `access`
//    at every load, store and atomic; the launch engine marks launches and blocks.
//  - An access counts when it lands in a device allocation while a kernel runs: shared memory, the
//    threads' own stack and the kernel's parameters do not.
//  - Accesses are grouped into warp requests as the hardware issues them: a warp is 32 consecutive
//    threads of a block, and one request is the N-th execution of one load or store instruction (its
//    call site) by the warp's threads. Its sectors are the distinct 32-byte sectors it touches.
//  - An L2 model (an LRU over sectors, write-back, no fetch on a store miss) gives the bytes DRAM
//    would move; cudaMemset and device-to-device copies go through it too.
// Counting runs only between begin() and end(), on the thread that called begin().
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace hdb::cuda::host::traffic {

// The GPU the profile is modelled on: its L2 and the two constants of model_ms.
struct DeviceModel {
  std::string name;
  double l2_bytes = 0;
  double copy_gbps = 0;  // its measured device-to-device copy rate (bytes read + written)
  double launch_s = 0;   // the time of one launch of an empty-sized kernel
  std::string source;    // where the constants come from
};
// The H200 of results/reference/nvidia-h200.
const DeviceModel& h200();

enum class Kind : std::uint8_t { Load, Store, Atomic };

// True in the instrumented build (traffic_hooks.cpp is linked and sets it at start-up).
bool instrumented();
void set_instrumented();

// Counting on: from a cold L2, every counter zero.
void begin(const DeviceModel& device);
// Counting off; the profile (docs/results-schema.md, `traffic`).
nlohmann::json end();

namespace detail {
extern bool counting;  // between begin() and end(): read by the hooks before anything else
}
inline bool active() { return detail::counting; }

// From the instrumented kernels (traffic_hooks.cpp): `site` is the address of the instruction.
void access(const void* site, const void* address, std::size_t bytes, Kind kind);
// From the launch engine: a launch of `threads` threads a block; each block's end, in order.
void launch_begin(unsigned threads);
void block_end();
void launch_end();
// From the block's synchronisation: a __syncthreads the block passed (once a block), a warp
// intrinsic the warp executed (once a warp).
void barrier();
void shuffle();
// From the runtime: cudaMemset and device-to-device copies, which a GPU runs as its own kernels.
void device_fill(const void* p, std::size_t bytes);
void device_copy(const void* dst, const void* src, std::size_t bytes);
// A CUB or Thrust call, which host execution runs as a host stand-in (prim.hpp, thrust_policy.cuh):
// its accesses are not a GPU kernel's and are left out of the profile; the calls are counted.
void library_call();

}  // namespace hdb::cuda::host::traffic
