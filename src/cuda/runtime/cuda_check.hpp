#pragma once
// Checked CUDA calls and RAII owners for device memory, pinned host memory, streams and events.
// Errors throw (never exit): DeviceError naming the call, SkipCase for out-of-memory, DeviceLost
// for the sticky errors after which the process's CUDA context is unusable.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/env.hpp"
#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "harness/timing.hpp"
#include "runtime/launch.cuh"

namespace hdb::cuda {

// Errors after which the process's CUDA context is unusable: every later call returns the same
// error until the process ends (driver_types.h: "leaves the process in an inconsistent state ...
// the process must be terminated and relaunched"; an uncorrectable ECC or NVLink error and
// cudaErrorUnknown, which a GPU fault may also leave, likewise). Such an error surfaces at whatever
// call comes next (an event sync, a copy), not at the kernel that caused it.
inline bool is_sticky(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContained:
    case cudaErrorExternalDevice:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorUnknown: return true;
    default: return false;
  }
}

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::string msg = std::string(call) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ") at " +
                    file + ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free allocation error
    throw SkipCase("out of device memory: " + msg);
  }
  if (is_sticky(err))
    throw DeviceLost(msg +
                     "; the device context is lost: every later CUDA call of this process fails (a kernel's "
                     "fault shows at the next call that waits; HDB_CUDA_SYNC_CHECK=1 checks after every launch "
                     "to name the kernel)");
  throw DeviceError(msg);
}

// HDB_CUDA_SYNC_CHECK=1 (read once, by CudaPlatform::init; 0 or unset: off, anything else exits 2): every
// HDB_CUDA_CHECK_LAUNCH also waits for the device and checks, so an asynchronous fault is reported at the launch that
// caused it. For triage only: it serialises host and device, and the times it gives are not the benchmark's.
inline bool sync_check_enabled() {
  static const bool on = env_or_exit([] { return env_flag("HDB_CUDA_SYNC_CHECK"); });
  return on;
}

// With HDB_CUDA_SYNC_CHECK=1: waits for the device and checks, naming `what` (the launch).
inline void sync_check(const char* what, const char* file, int line) {
  if (!sync_check_enabled()) return;
  check(cudaDeviceSynchronize(),
        (std::string(what) + " (HDB_CUDA_SYNC_CHECK: the device synchronised after it)").c_str(), file, line);
}

// After a kernel launch: launch errors are reported by cudaGetLastError; with HDB_CUDA_SYNC_CHECK=1
// the kernel's own faults too.
inline void check_launch(const char* what, const char* file, int line) {
  check(cudaGetLastError(), what, file, line);
  sync_check(what, file, line);
}

#define HDB_CUDA_CHECK(call) ::hdb::cuda::check((call), #call, __FILE__, __LINE__)
#define HDB_CUDA_CHECK_LAUNCH(what) ::hdb::cuda::check_launch(what, __FILE__, __LINE__)

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t n) : n_(n) {
    if (n) HDB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p_), n * sizeof(T)));
  }
  ~DeviceBuffer() { reset(); }
  DeviceBuffer(DeviceBuffer&& o) noexcept : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  T* get() const { return p_; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  void reset() {
    if (p_) cudaFree(p_);
    p_ = nullptr;
    n_ = 0;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
};

// Host memory for transfers: pageable (operator new) or pinned (cudaMallocHost).
template <class T>
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(std::size_t n, Transfer mode) : n_(n), pinned_(mode == Transfer::Pinned) {
    if (!n) return;
    if (pinned_) {
      HDB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&p_), n * sizeof(T)));
    } else {
      p_ = static_cast<T*>(::operator new(n * sizeof(T)));
    }
  }
  ~HostBuffer() { reset(); }
  HostBuffer(HostBuffer&& o) noexcept
      : p_(std::exchange(o.p_, nullptr)), n_(std::exchange(o.n_, 0)), pinned_(o.pinned_) {}
  HostBuffer& operator=(HostBuffer&& o) noexcept {
    if (this != &o) {
      reset();
      p_ = std::exchange(o.p_, nullptr);
      n_ = std::exchange(o.n_, 0);
      pinned_ = o.pinned_;
    }
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  T* get() const { return p_; }
  T& operator[](std::size_t i) const { return p_[i]; }
  std::size_t size() const { return n_; }
  std::size_t bytes() const { return n_ * sizeof(T); }
  bool pinned() const { return pinned_; }
  void reset() {
    if (p_) {
      if (pinned_)
        cudaFreeHost(p_);
      else
        ::operator delete(p_);
    }
    p_ = nullptr;
    n_ = 0;
  }

 private:
  T* p_ = nullptr;
  std::size_t n_ = 0;
  bool pinned_ = false;
};

class Stream {
 public:
  Stream() { HDB_CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() {
    if (s_) cudaStreamDestroy(s_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { HDB_CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

class Event {
 public:
  Event() { HDB_CUDA_CHECK(cudaEventCreate(&e_)); }
  ~Event() {
    if (e_) cudaEventDestroy(e_);
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s = nullptr) { HDB_CUDA_CHECK(cudaEventRecord(e_, s)); }
  void sync() const { HDB_CUDA_CHECK(cudaEventSynchronize(e_)); }

 private:
  cudaEvent_t e_ = nullptr;
};

// Seconds between two recorded events (waits for `stop`).
inline double elapsed(const Event& start, const Event& stop) {
  stop.sync();
  float ms = 0;
  HDB_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
  return static_cast<double>(ms) * 1e-3;
}

// The one phase timer of the CUDA backends: events recorded on a stream at the borders of a
// pass's segments. Events are created with the timer (`borders` of them) or when it first needs
// more (the warm-up pass), then reused.
//   one region:    t.start(s); ...; double sec = t.stop(s);
//   borders:       t.mark(0, s); ...; t.mark(1, s); ...; then t.between(0, 1)
//   named phases:  t.begin(s); t.phase("a"); ...; t.phase("b"); ...; Breakdown b = t.finish();
//                  (kernel = total = first border to last, each phase its own segment)
//   a read-back last: t.close(); <copy to the host, wait>; Breakdown b = t.finish();
//                  (the end border is recorded before the copy: the span ends with the device work)
class PhaseTimer {
 public:
  explicit PhaseTimer(std::size_t borders = 2) { reserve(borders); }
  void start(cudaStream_t s = nullptr) { mark(0, s); }
  double stop(cudaStream_t s = nullptr) {
    mark(1, s);
    return between(0, 1);
  }
  void mark(std::size_t i, cudaStream_t s) {
    reserve(i + 1);
    ev_[i]->record(s);
  }
  // Seconds from border a to border b (waits for b).
  double between(std::size_t a, std::size_t b) const { return elapsed(*ev_[a], *ev_[b]); }
  void begin(cudaStream_t s) {
    stream_ = s;
    names_.clear();
    closed_ = false;
  }
  // Ends the running phase (if any) and starts `name`.
  void phase(const std::string& name) {
    mark(names_.size(), stream_);
    names_.push_back(name);
    closed_ = false;
  }
  // Ends the running phase now, without waiting: for an operator whose last step is a host
  // read-back (a count, a reduce result), so that its kernel time is not the host round trip's.
  // finish() then only reads the times.
  void close() {
    if (names_.empty() || closed_) return;
    mark(names_.size(), stream_);
    closed_ = true;
  }
  Breakdown finish() {
    Breakdown b;
    if (names_.empty()) return b;
    const std::size_t last = names_.size();
    if (!closed_) mark(last, stream_);
    closed_ = false;
    b.kernel = b.total = between(0, last);
    for (std::size_t i = 0; i < last; ++i) b.add_phase(names_[i], between(i, i + 1));
    return b;
  }

 private:
  void reserve(std::size_t n) {
    while (ev_.size() < n) ev_.push_back(std::make_unique<Event>());
  }
  std::vector<std::unique_ptr<Event>> ev_;
  std::vector<std::string> names_;
  cudaStream_t stream_ = nullptr;
  bool closed_ = false;  // close() recorded the end border
};

}  // namespace hdb::cuda
