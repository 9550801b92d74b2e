#pragma once
// Device building blocks of the CUDA merge: each step works on device pointers on one stream.
// Thrust compositions (merge_thrust.cu) and custom kernels (merge_kernels.cu) are compiled apart
// so the two heavy translation units build in parallel.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <map>

#include "runtime/cuda_check.hpp"
#include "workloads/columns.hpp"

namespace hdb::cuda::merge {

// A caching device allocator for Thrust's temporaries and the steps' scratch: the warm-up pass
// allocates, timed passes reuse, so no cudaMalloc falls inside a timed region.
class CachedAlloc {
 public:
  using value_type = char;
  CachedAlloc() = default;
  CachedAlloc(const CachedAlloc&) = delete;
  CachedAlloc& operator=(const CachedAlloc&) = delete;
  ~CachedAlloc() {
    for (auto& [size, p] : free_) cudaFree(p);
    for (auto& [p, size] : used_) cudaFree(p);
  }
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
  void deallocate(char* p, std::size_t) {
    auto it = used_.find(p);
    if (it == used_.end()) return;
    free_.emplace(it->second, p);
    used_.erase(it);
  }
  template <class U>
  U* get(std::size_t n) {
    return reinterpret_cast<U*>(allocate(static_cast<std::ptrdiff_t>(n * sizeof(U))));
  }
  template <class U>
  void put(U* p) {
    deallocate(reinterpret_cast<char*>(p), 0);
  }

 private:
  std::multimap<std::size_t, char*> free_;
  std::map<char*, std::size_t> used_;
};

enum class DictMergeKind { Slice, Csum, Mum, MergePath };

// 1a: U_D into `ud` (room for n), the id in U_D of every delta row into `ids`; returns |U_D|.
// Thrust sort + unique as the paper, ids by vectorised lower_bound.
template <class T>
std::uint64_t delta_dict(CachedAlloc& a, cudaStream_t s, const T* delta, std::uint64_t n, T* ud, std::uint32_t* ids);

// 1b: U'_M into `dict` (room for n1 + n2), X_M and X_D; returns |U'_M|.
template <class T>
std::uint64_t dict_merge(DictMergeKind kind, CachedAlloc& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                         std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd);

// The paper's dictionary slice merge (custom kernels, gap closing on the device).
template <class T>
std::uint64_t dict_merge_slice(CachedAlloc& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                               std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd);

// 2b with X_M / X_D for the output words [word_begin, word_end) (chunks start on 64-row marks).
void reencode_lookup(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                     const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd, std::uint64_t rows,
                     unsigned width, std::uint64_t word_begin, std::uint64_t word_end, std::uint64_t* out);

// Unoptimised 2b: every row's value is searched in U'_M.
template <class T>
void reencode_binsearch(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows, const T* um,
                        const T* delta, const T* dict, std::uint64_t dict_size, std::uint64_t rows, unsigned width,
                        std::uint64_t* out);

}  // namespace hdb::cuda::merge
