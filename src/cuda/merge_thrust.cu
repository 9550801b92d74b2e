// Thrust compositions of the merge steps: 1a (sort + unique), and the dictionary merges CSUM
// (concatenate-sort-unique-map), MUM (merge-unique-map) and the tuned merge-path variant, which
// replaces MUM's two binary-search maps by one scan over the merged sequence.
#include "runtime/prim.cuh"
#include <thrust/binary_search.h>
#include "runtime/thrust_policy.cuh"
#include <thrust/iterator/counting_iterator.h>
#include <thrust/merge.h>
#include <thrust/scan.h>
#include <thrust/sort.h>
#include <thrust/unique.h>

#include "merge_device.cuh"
#include "merge_steps.cuh"

namespace hdb::cuda::merge {
namespace {

// Algorithms that return nothing to the host run without Thrust's stream synchronisation at their
// end (par would stall the host after each one and leave the device idle inside the timed region
// until the next launch); thrust::unique returns a count, so it synchronises either way. The
// temporaries go back to the allocator at once, which is safe: every user of `a` is on stream s.
auto policy(Scratch& a, cudaStream_t s) { return thrust_policy(a, s); }
auto policy_sync(Scratch& a, cudaStream_t s) { return thrust_policy_sync(a, s); }

// pos[j] = inclusive count of distinct values up to j; the head of each run writes the value and
// every element writes its map entry (a value in both inputs appears twice, adjacent, same id).
template <class T>
__global__ void scatter_ids(const T* merged, const std::uint32_t* src, const std::uint32_t* pos, std::uint64_t n,
                            std::uint64_t n1, T* dict, std::uint32_t* xm, std::uint32_t* xd) {
  std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (j >= n) return;
  std::uint32_t id = pos[j] - 1;
  if (j == 0 || pos[j - 1] != pos[j]) dict[id] = merged[j];
  std::uint32_t from = src[j];
  if (from < n1)
    xm[from] = id;
  else
    xd[from - n1] = id;
}

struct Less {
  template <class T>
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    return a < b;
  }
};

}  // namespace

// The sum, not the largest: Scratch keeps each freed block for reuse by a request of up to twice
// its size, so temporaries of far apart sizes stay allocated side by side.
template <class T>
std::uint64_t library_temp_bytes(std::uint64_t n) {
  std::uint64_t sum = 0;
  std::size_t b = 0;
  const T* in = nullptr;
  T* out = nullptr;
  const auto* ids = static_cast<const std::uint32_t*>(nullptr);
  auto* ids_out = static_cast<std::uint32_t*>(nullptr);
  if constexpr (std::is_same_v<T, U128>) {  // Thrust sorts 16-byte values by merge sort
    HDB_CUDA_CHECK(prim::DeviceMergeSort::SortKeys(nullptr, b, out, static_cast<std::int64_t>(n), Less{}));
    sum += b;
  } else {  // and integers by radix sort over a double buffer: CUB's temporary plus its second keys
    prim::DoubleBuffer<T> keys(out, out);
    HDB_CUDA_CHECK(prim::DeviceRadixSort::SortKeys(nullptr, b, keys, n));
    sum += b + n * sizeof(T);
  }
  HDB_CUDA_CHECK(prim::DeviceSelect::Unique(nullptr, b, in, out, static_cast<std::uint64_t*>(nullptr), n));
  sum += b;
  HDB_CUDA_CHECK(prim::DeviceScan::InclusiveSum(nullptr, b, ids, ids_out, n));
  sum += b;
  HDB_CUDA_CHECK(prim::DeviceMerge::MergePairs(nullptr, b, in, ids, static_cast<std::int64_t>(n), in, ids,
                                               static_cast<std::int64_t>(n), out, ids_out, Less{}));
  return sum + b;
}

template <class T>
std::uint64_t delta_dict(Scratch& a, cudaStream_t s, const T* delta, std::uint64_t n, T* ud, std::uint32_t* ids) {
  if (n == 0) return 0;
  HDB_CUDA_CHECK(cudaMemcpyAsync(ud, delta, n * sizeof(T), cudaMemcpyDeviceToDevice, s));
  thrust::sort(policy(a, s), ud, ud + n);
  std::uint64_t m = thrust::unique(policy_sync(a, s), ud, ud + n) - ud;
  thrust::lower_bound(policy(a, s), ud, ud + m, delta, delta + n, ids);
  return m;
}

template <class T>
std::uint64_t dict_merge(DictMergeKind kind, Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                         std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd) {
  std::uint64_t n = n1 + n2;
  if (n == 0) return 0;
  if (kind == DictMergeKind::Slice) return dict_merge_slice(a, s, um, n1, ud, n2, dict, xm, xd);
  if (kind == DictMergeKind::Tiles) return dict_merge_tiles(a, s, um, n1, ud, n2, dict, xm, xd);
  if (kind == DictMergeKind::MergePath) {
    T* merged = a.acquire<T>(n);
    auto* src = a.acquire<std::uint32_t>(n);
    auto* pos = a.acquire<std::uint32_t>(n);
    thrust::merge_by_key(policy(a, s), um, um + n1, ud, ud + n2, thrust::counting_iterator<std::uint32_t>(0),
                         thrust::counting_iterator<std::uint32_t>(static_cast<std::uint32_t>(n1)), merged, src);
    HDB_LAUNCH(head_flags, blocks_for(n), 256, 0, s)(merged, n, pos);
    HDB_CUDA_CHECK_LAUNCH("head_flags");
    thrust::inclusive_scan(policy(a, s), pos, pos + n, pos);
    HDB_LAUNCH(scatter_ids, blocks_for(n), 256, 0, s)(merged, src, pos, n, n1, dict, xm, xd);
    HDB_CUDA_CHECK_LAUNCH("scatter_ids");
    const std::uint32_t m = read_u32(s, pos + n - 1);
    a.release(merged);
    a.release(src);
    a.release(pos);
    return m;
  }
  std::uint64_t m = 0;
  if (kind == DictMergeKind::Csum) {
    if (n1) HDB_CUDA_CHECK(cudaMemcpyAsync(dict, um, n1 * sizeof(T), cudaMemcpyDeviceToDevice, s));
    if (n2) HDB_CUDA_CHECK(cudaMemcpyAsync(dict + n1, ud, n2 * sizeof(T), cudaMemcpyDeviceToDevice, s));
    thrust::sort(policy(a, s), dict, dict + n);
  } else {
    thrust::merge(policy(a, s), um, um + n1, ud, ud + n2, dict);
  }
  m = thrust::unique(policy_sync(a, s), dict, dict + n) - dict;
  thrust::lower_bound(policy(a, s), dict, dict + m, um, um + n1, xm);
  thrust::lower_bound(policy(a, s), dict, dict + m, ud, ud + n2, xd);
  return m;
}

#define HDB_INSTANTIATE(T)                                                                                       \
  template std::uint64_t delta_dict<T>(Scratch&, cudaStream_t, const T*, std::uint64_t, T*, std::uint32_t*);     \
  template std::uint64_t dict_merge<T>(DictMergeKind, Scratch&, cudaStream_t, const T*, std::uint64_t, const T*, \
                                       std::uint64_t, T*, std::uint32_t*, std::uint32_t*);                       \
  template std::uint64_t library_temp_bytes<T>(std::uint64_t);
HDB_INSTANTIATE(std::uint32_t)
HDB_INSTANTIATE(std::uint64_t)
HDB_INSTANTIATE(U128)
#undef HDB_INSTANTIATE

}  // namespace hdb::cuda::merge
