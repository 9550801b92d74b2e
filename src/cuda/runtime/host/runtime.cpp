// Host execution: the CUDA runtime calls the backends make, defined here with the declarations of
// CUDA's own cuda_runtime_api.h, so the backends link against this library instead of cudart.
// Streams are in order and synchronous (a call has finished when it returns); events hold the host
// clock. Device memory is host memory in a registry: copies, memsets and frees are checked against
// it, so a wrong direction, a size past an allocation or a foreign pointer fails with the error a
// GPU gives, and AddressSanitizer sees each allocation's exact bounds.
#include <cuda_runtime.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "harness/env.hpp"
#include "runtime/host/state.hpp"
#include "runtime/host/traffic.hpp"

namespace hdb::cuda::host {
namespace {

Settings read_settings() {
  Settings s;
  s.memory_bytes = env_size("HDB_CUDA_HOST_MEMORY").value_or(0);
  s.fault_at = env_integer("HDB_CUDA_HOST_FAULT", 1, UINT64_MAX).value_or(0);
  s.threads = env_choice("HDB_CUDA_HOST_ENGINE", {"fibers", "threads"}).value_or("fibers") == "threads";
  s.trace = env_flag("HDB_CUDA_HOST_TRACE");
  const std::string order =
      env_choice("HDB_CUDA_HOST_BLOCKS", {"in-order", "reverse", "shuffled"}).value_or("in-order");
  s.blocks = order == "reverse"    ? engine::BlockOrder::Kind::reverse
             : order == "shuffled" ? engine::BlockOrder::Kind::shuffled
                                   : engine::BlockOrder::Kind::in_order;
  return s;
}

Limits make_limits() {
  Limits l;
  if (settings().memory_bytes) {
    l.memory_bytes = settings().memory_bytes;
  } else {
    const std::uint64_t ram = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGE_SIZE);
    l.memory_bytes = std::min<std::uint64_t>(80ull << 30, ram / 2);
  }
  return l;
}

struct Event {
  bool recorded = false;
  std::chrono::steady_clock::time_point at;
};

// A device pointer and size for a copy, a memset or CUB's temporary storage: inside one allocation.
bool device_range(const void* p, std::size_t n) { return n == 0 || state().inside(p, n); }

cudaError_t copy(void* dst, const void* src, std::size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  State& st = state();
  if (cudaError_t e = st.sticky()) return e;
  if (!st.valid_stream(s)) return st.set_last(cudaErrorInvalidResourceHandle);
  const bool dst_dev = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  const bool src_dev = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind != cudaMemcpyHostToHost && kind != cudaMemcpyDefault && !dst_dev && !src_dev)
    return st.set_last(cudaErrorInvalidMemcpyDirection);
  if ((dst_dev && !device_range(dst, n)) || (src_dev && !device_range(src, n)))
    return st.set_last(cudaErrorInvalidValue);
  if (n) std::memmove(dst, src, n);
  if (kind == cudaMemcpyDeviceToDevice && traffic::active()) traffic::device_copy(dst, src, n);
  return cudaSuccess;
}

cudaError_t fill(void* p, int value, std::size_t n, cudaStream_t s) {
  State& st = state();
  if (cudaError_t e = st.sticky()) return e;
  if (!st.valid_stream(s)) return st.set_last(cudaErrorInvalidResourceHandle);
  if (!device_range(p, n)) return st.set_last(cudaErrorInvalidValue);
  if (n) std::memset(p, value, n);
  if (traffic::active()) traffic::device_fill(p, n);
  return cudaSuccess;
}

}  // namespace

const Settings& settings() {
  static const Settings s = env_or_exit(read_settings);
  return s;
}

const Limits& limits() {
  static const Limits l = make_limits();
  return l;
}

State& state() {
  static State s;
  return s;
}

cudaError_t State::kernel_fault(const char* kernel, const std::string& what) {
  std::fprintf(stderr, "host execution: kernel %s faulted: %s\n", kernel, what.c_str());
  sticky_ = cudaErrorLaunchFailure;
  return sticky_;
}

bool State::inside(const void* p, std::size_t n) const {
  std::lock_guard<std::mutex> lock(mem_m_);
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocs_.upper_bound(a);
  if (it == allocs_.begin()) return false;
  --it;
  return a >= it->first && a - it->first <= it->second && n <= it->second - (a - it->first);
}

bool State::valid_stream(cudaStream_t s) const {
  return s == nullptr || s == cudaStreamLegacy || s == cudaStreamPerThread || streams_.count(s) != 0;
}
void State::add_stream(cudaStream_t s) { streams_.insert(s); }
void State::remove_stream(cudaStream_t s) { streams_.erase(s); }

bool State::inject_fault_now() {
  const std::uint64_t at = settings().fault_at;
  return at != 0 && launches_ == at;
}

}  // namespace hdb::cuda::host

using hdb::cuda::host::limits;
using hdb::cuda::host::state;

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) { return device == 0 ? cudaSuccess : state().set_last(cudaErrorInvalidDevice); }

cudaError_t cudaGetDevice(int* device) {
  *device = 0;
  return cudaSuccess;
}

cudaError_t cudaDeviceSynchronize() { return state().sticky(); }

cudaError_t cudaGetLastError() { return state().take_last(); }
cudaError_t cudaPeekAtLastError() { return state().peek_last(); }

const char* cudaGetErrorName(cudaError_t e) {
  switch (e) {
#define HDB_NAME(x) \
  case x: return #x;
    HDB_NAME(cudaSuccess)
    HDB_NAME(cudaErrorInvalidValue)
    HDB_NAME(cudaErrorMemoryAllocation)
    HDB_NAME(cudaErrorInitializationError)
    HDB_NAME(cudaErrorInvalidConfiguration)
    HDB_NAME(cudaErrorInvalidDevicePointer)
    HDB_NAME(cudaErrorInvalidMemcpyDirection)
    HDB_NAME(cudaErrorInsufficientDriver)
    HDB_NAME(cudaErrorNoDevice)
    HDB_NAME(cudaErrorInvalidDevice)
    HDB_NAME(cudaErrorInvalidResourceHandle)
    HDB_NAME(cudaErrorNotReady)
    HDB_NAME(cudaErrorIllegalAddress)
    HDB_NAME(cudaErrorLaunchOutOfResources)
    HDB_NAME(cudaErrorLaunchFailure)
    HDB_NAME(cudaErrorNotSupported)
#undef HDB_NAME
    default: return "cudaErrorUnknown";
  }
}

const char* cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorInvalidResourceHandle: return "invalid resource handle";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
    case cudaErrorNotSupported: return "operation not supported";
    default: return cudaGetErrorName(e);
  }
}

cudaError_t cudaRuntimeGetVersion(int* v) {
  *v = CUDART_VERSION;
  return cudaSuccess;
}

cudaError_t cudaDriverGetVersion(int* v) {
  *v = 0;  // no driver: host execution
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* p, int device) {
  if (device != 0) return state().set_last(cudaErrorInvalidDevice);
  const auto& l = limits();
  *p = cudaDeviceProp{};
  std::snprintf(p->name, sizeof p->name, "host execution, not a GPU (Hopper limits)");
  p->totalGlobalMem = l.memory_bytes;
  p->sharedMemPerBlock = l.shared_per_block;
  p->sharedMemPerBlockOptin = l.shared_per_block_optin;
  p->sharedMemPerMultiprocessor = l.shared_per_sm;
  p->warpSize = l.warp_size;
  p->maxThreadsPerBlock = l.max_threads_per_block;
  p->maxThreadsDim[0] = 1024;
  p->maxThreadsDim[1] = 1024;
  p->maxThreadsDim[2] = 64;
  p->maxGridSize[0] = 0x7fffffff;
  p->maxGridSize[1] = 65535;
  p->maxGridSize[2] = 65535;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = l.sm_count;
  p->l2CacheSize = l.l2_bytes;
  p->maxThreadsPerMultiProcessor = l.max_threads_per_sm;
  p->unifiedAddressing = 1;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attr, int device) {
  if (device != 0) return state().set_last(cudaErrorInvalidDevice);
  const auto& l = limits();
  switch (attr) {
    case cudaDevAttrMultiProcessorCount: *value = l.sm_count; break;
    case cudaDevAttrMaxThreadsPerBlock: *value = l.max_threads_per_block; break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin: *value = static_cast<int>(l.shared_per_block_optin); break;
    case cudaDevAttrL2CacheSize: *value = l.l2_bytes; break;
    case cudaDevAttrWarpSize: *value = l.warp_size; break;
    case cudaDevAttrMemoryClockRate:
    case cudaDevAttrGlobalMemoryBusWidth: *value = 0; break;  // no device memory of its own
    default: return state().set_last(cudaErrorInvalidValue);
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceGetPCIBusId(char* id, int len, int device) {
  if (device != 0 || len <= 0) return state().set_last(cudaErrorInvalidValue);
  id[0] = '\0';  // not on a PCIe bus: the link is then reported as unknown
  return cudaSuccess;
}

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total) {
  auto& st = state();
  if (cudaError_t e = st.sticky()) return e;
  std::lock_guard<std::mutex> lock(st.memory_mutex());
  *total = limits().memory_bytes;
  *free_bytes = *total - st.allocated;
  return cudaSuccess;
}

cudaError_t cudaMalloc(void** p, size_t bytes) {
  auto& st = state();
  if (cudaError_t e = st.sticky()) return e;
  *p = nullptr;
  if (bytes == 0) return cudaSuccess;
  {
    std::lock_guard<std::mutex> lock(st.memory_mutex());
    if (st.allocated + bytes > limits().memory_bytes) return st.set_last(cudaErrorMemoryAllocation);
    // 256-byte aligned like cudaMalloc, and exactly `bytes` long, so AddressSanitizer reports the
    // first byte past it.
    if (posix_memalign(p, 256, bytes) != 0) return st.set_last(cudaErrorMemoryAllocation);
    st.allocations()[reinterpret_cast<std::uintptr_t>(*p)] = bytes;
    st.allocated += bytes;
  }
  // Fresh device memory is not zero on a GPU either: a pattern, so code that relies on it fails.
  std::memset(*p, 0xa5, bytes);
  return cudaSuccess;
}

cudaError_t cudaFree(void* p) {
  auto& st = state();
  if (!p) return st.sticky();
  std::lock_guard<std::mutex> lock(st.memory_mutex());
  auto it = st.allocations().find(reinterpret_cast<std::uintptr_t>(p));
  if (it == st.allocations().end()) return st.set_last(cudaErrorInvalidValue);
  st.allocated -= it->second;
  st.allocations().erase(it);
  std::free(p);
  return st.sticky();
}

cudaError_t cudaMallocHost(void** p, size_t bytes) {
  auto& st = state();
  if (cudaError_t e = st.sticky()) return e;
  if (posix_memalign(p, 4096, std::max<size_t>(bytes, 1)) != 0) return st.set_last(cudaErrorMemoryAllocation);
  std::lock_guard<std::mutex> lock(st.memory_mutex());
  st.pinned()[reinterpret_cast<std::uintptr_t>(*p)] = bytes;
  return cudaSuccess;
}

cudaError_t cudaFreeHost(void* p) {
  auto& st = state();
  if (!p) return cudaSuccess;
  std::lock_guard<std::mutex> lock(st.memory_mutex());
  auto it = st.pinned().find(reinterpret_cast<std::uintptr_t>(p));
  if (it == st.pinned().end()) return st.set_last(cudaErrorInvalidValue);
  st.pinned().erase(it);
  std::free(p);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t n, cudaMemcpyKind kind) {
  return hdb::cuda::host::copy(dst, src, n, kind, nullptr);
}
cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t n, cudaMemcpyKind kind, cudaStream_t s) {
  return hdb::cuda::host::copy(dst, src, n, kind, s);
}
cudaError_t cudaMemset(void* p, int value, size_t n) { return hdb::cuda::host::fill(p, value, n, nullptr); }
cudaError_t cudaMemsetAsync(void* p, int value, size_t n, cudaStream_t s) {
  return hdb::cuda::host::fill(p, value, n, s);
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* s, unsigned int) {
  if (cudaError_t e = state().sticky()) return e;
  *s = reinterpret_cast<cudaStream_t>(new char(0));
  state().add_stream(*s);
  return cudaSuccess;
}
cudaError_t cudaStreamCreate(cudaStream_t* s) { return cudaStreamCreateWithFlags(s, 0); }

cudaError_t cudaStreamDestroy(cudaStream_t s) {
  if (!state().valid_stream(s) || !s) return state().set_last(cudaErrorInvalidResourceHandle);
  state().remove_stream(s);
  delete reinterpret_cast<char*>(s);
  return state().sticky();
}

cudaError_t cudaStreamSynchronize(cudaStream_t s) {
  if (!state().valid_stream(s)) return state().set_last(cudaErrorInvalidResourceHandle);
  return state().sticky();
}

cudaError_t cudaStreamWaitEvent(cudaStream_t s, cudaEvent_t e, unsigned int) {
  if (!state().valid_stream(s) || !e) return state().set_last(cudaErrorInvalidResourceHandle);
  return state().sticky();
}

cudaError_t cudaEventCreate(cudaEvent_t* e) {
  if (cudaError_t err = state().sticky()) return err;
  *e = reinterpret_cast<cudaEvent_t>(new hdb::cuda::host::Event);
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* e, unsigned int) { return cudaEventCreate(e); }

cudaError_t cudaEventDestroy(cudaEvent_t e) {
  if (!e) return state().set_last(cudaErrorInvalidResourceHandle);
  delete reinterpret_cast<hdb::cuda::host::Event*>(e);
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t e, cudaStream_t s) {
  auto& st = state();
  if (cudaError_t err = st.sticky()) return err;
  if (!e || !st.valid_stream(s)) return st.set_last(cudaErrorInvalidResourceHandle);
  auto* ev = reinterpret_cast<hdb::cuda::host::Event*>(e);
  ev->recorded = true;
  ev->at = std::chrono::steady_clock::now();
  return cudaSuccess;
}

cudaError_t cudaEventSynchronize(cudaEvent_t e) {
  if (!e) return state().set_last(cudaErrorInvalidResourceHandle);
  return state().sticky();
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t stop) {
  auto& st = state();
  if (cudaError_t err = st.sticky()) return err;
  auto* a = reinterpret_cast<hdb::cuda::host::Event*>(start);
  auto* b = reinterpret_cast<hdb::cuda::host::Event*>(stop);
  if (!a || !b || !a->recorded || !b->recorded) return st.set_last(cudaErrorInvalidResourceHandle);
  *ms = std::chrono::duration<float, std::milli>(b->at - a->at).count();
  return cudaSuccess;
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void*, int block_size, size_t) {
  if (block_size <= 0) return state().set_last(cudaErrorInvalidValue);
  *blocks = std::max(1, limits().max_threads_per_sm / block_size);
  return cudaSuccess;
}

// cuda_runtime.h's template form of the call above comes here.
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* f, int block_size,
                                                                   size_t shared, unsigned int) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, f, block_size, shared);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void*) {
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = limits().max_threads_per_block;
  attr->maxDynamicSharedSizeBytes = static_cast<int>(limits().shared_per_block);
  attr->ptxVersion = 90;
  attr->binaryVersion = 90;
  return cudaSuccess;
}

}  // extern "C"
