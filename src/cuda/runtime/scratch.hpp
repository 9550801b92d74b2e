#pragma once
// The one scratch-memory scheme of the CUDA backends: device memory a case (or a backend's state)
// keeps between passes and only ever grows, so the warm-up pass allocates and the timed passes
// reuse: no cudaMalloc falls inside a timed region.
//  grow(buffer, n)            a buffer the code keeps itself, grown to at least n elements
//  Scratch::get<T>(name, n)   the same, kept by name (library temp storage, per-operator scratch)
//  Scratch as an allocator    Thrust's temporaries (thrust::cuda::par(scratch)) and acquire/release
//                             pairs: blocks cached by size, returned to the cache, never freed
//                             before the Scratch is
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <map>
#include <string>

#include "runtime/cuda_check.hpp"

namespace hdb::cuda {

// Grows `b` to at least max(n, 1) elements (contents are not kept) and returns its pointer.
template <class T>
T* grow(DeviceBuffer<T>& b, std::size_t n) {
  if (b.size() < std::max<std::size_t>(n, 1)) b = DeviceBuffer<T>(std::max<std::size_t>(n, 1));
  return b.get();
}

class Scratch {
 public:
  using value_type = char;  // the allocator interface Thrust's execution policies take
  Scratch() = default;
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  ~Scratch() {
    for (auto& [size, p] : free_) cudaFree(p);
    for (auto& [p, size] : used_) cudaFree(p);
  }

  // The buffer `name`, grown to at least `count` T (count 0: as it is).
  template <class T>
  T* get(const std::string& name, std::size_t count) {
    return reinterpret_cast<T*>(grow(named_[name], count * sizeof(T)));
  }

  // A block of at least n bytes: a cached one of up to twice the size, else a new one.
  char* allocate(std::ptrdiff_t n) {
    auto bytes = static_cast<std::size_t>(n > 0 ? n : 1);
    auto it = free_.lower_bound(bytes);
    char* p = nullptr;
    if (it != free_.end() && it->first <= 2 * bytes) {
      bytes = it->first;
      p = it->second;
      free_.erase(it);
    } else {
      HDB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&p), bytes));
    }
    used_[p] = bytes;
    return p;
  }
  // Back to the cache (the memory stays allocated for the next pass).
  void deallocate(char* p, std::size_t) {
    auto it = used_.find(p);
    if (it == used_.end()) return;
    free_.emplace(it->second, p);
    used_.erase(it);
  }
  template <class U>
  U* acquire(std::size_t n) {
    return reinterpret_cast<U*>(allocate(static_cast<std::ptrdiff_t>(n * sizeof(U))));
  }
  template <class U>
  void release(U* p) {
    deallocate(reinterpret_cast<char*>(p), 0);
  }
  // Frees every named buffer and every cached block (blocks in use stay): between cases.
  void clear() {
    named_.clear();
    for (auto& [size, p] : free_) cudaFree(p);
    free_.clear();
  }

 private:
  std::map<std::string, DeviceBuffer<unsigned char>> named_;
  std::multimap<std::size_t, char*> free_;
  std::map<char*, std::size_t> used_;
};

}  // namespace hdb::cuda
