#pragma once
// Checked CUDA calls and RAII owners for device memory, pinned host memory, streams and events.
// Errors throw (never exit): DeviceError naming the call, SkipCase for out-of-memory.
#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "harness/errors.hpp"
#include "harness/options.hpp"

namespace hdb::cuda {

inline void check(cudaError_t err, const char* call, const char* file, int line) {
  if (err == cudaSuccess) return;
  std::string msg = std::string(call) + " failed: " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) +
                    ") at " + file + ":" + std::to_string(line);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();  // clear the sticky-free allocation error
    throw SkipCase("out of device memory: " + msg);
  }
  throw DeviceError(msg);
}

#define HDB_CUDA_CHECK(call) ::hdb::cuda::check((call), #call, __FILE__, __LINE__)
// After a kernel launch: launch errors are reported by cudaGetLastError.
#define HDB_CUDA_CHECK_LAUNCH(what) ::hdb::cuda::check(cudaGetLastError(), what, __FILE__, __LINE__)

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
      if (pinned_) cudaFreeHost(p_);
      else ::operator delete(p_);
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

// Times a region on one stream with a pair of events: t.start(s); ...; double sec = t.stop(s);
class EventTimer {
 public:
  void start(cudaStream_t s = nullptr) { a_.record(s); }
  double stop(cudaStream_t s = nullptr) {
    b_.record(s);
    return elapsed(a_, b_);
  }

 private:
  Event a_, b_;
};

}  // namespace hdb::cuda
