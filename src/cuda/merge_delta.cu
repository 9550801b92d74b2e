// Step 1a, tuned (issue 45, item 2): the delta's (value, row) pairs sorted by CUB's radix sort, a
// flag at the head of each run of equal values, an inclusive scan of the flags (each sorted
// position's id + 1), and one scatter that writes U_D from the heads and every row's id to its
// row. Against the paper's Thrust composition (sort, unique, then a binary search of every delta
// row in U_D: log2 |U_D| dependent loads a row, the cost that grows with the unique values), no row
// is searched. 32- and 64-bit values: CUB's radix sort takes no 16-byte key.
#include <algorithm>
#include <string>

#include "merge_device.cuh"
#include "merge_steps.cuh"
#include "runtime/launch.cuh"
#include "runtime/prim.cuh"

namespace hdb::cuda::merge {
namespace {

__global__ void row_numbers(std::uint64_t n, std::uint32_t* rows) {
  const std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (j < n) rows[j] = static_cast<std::uint32_t>(j);
}

// pos[j]: the distinct values up to sorted position j; the head of each run writes its value.
template <class T>
__global__ void scatter_delta_ids(const T* sorted, const std::uint32_t* rows, const std::uint32_t* pos, std::uint64_t n,
                                  T* ud, std::uint32_t* ids) {
  const std::uint64_t j = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (j >= n) return;
  const std::uint32_t id = pos[j] - 1;
  if (j == 0 || pos[j - 1] != pos[j]) ud[id] = sorted[j];
  ids[rows[j]] = id;
}

// CUB's temporary storage for the sort and the scan of n items (one buffer serves both).
template <class T>
std::size_t cub_temp(std::uint64_t n) {
  std::size_t sort = 0, scan = 0;
  const auto items = static_cast<int>(n);
  HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(nullptr, sort, static_cast<const T*>(nullptr),
                                                  static_cast<T*>(nullptr), static_cast<const std::uint32_t*>(nullptr),
                                                  static_cast<std::uint32_t*>(nullptr), items));
  HDB_CUDA_CHECK(prim::DeviceScan::InclusiveSum(nullptr, scan, static_cast<const std::uint32_t*>(nullptr),
                                                static_cast<std::uint32_t*>(nullptr), items));
  return std::max(sort, scan);
}

}  // namespace

template <class T>
std::uint64_t delta_dict_pairs_scratch(std::uint64_t n) {
  return n ? n * sizeof(T) + 3 * n * 4 + cub_temp<T>(n) : 0;
}

template <class T>
std::uint64_t delta_dict_pairs(Scratch& sc, cudaStream_t s, const T* delta, std::uint64_t n, T* ud,
                               std::uint32_t* ids) {
  if (n == 0) return 0;
  T* sorted = sc.get<T>("1a_pairs_sorted", n);
  std::uint32_t* rows = sc.get<std::uint32_t>("1a_pairs_rows", n);  // then the run-head flags
  std::uint32_t* sorted_rows = sc.get<std::uint32_t>("1a_pairs_sorted_rows", n);
  std::uint32_t* pos = sc.get<std::uint32_t>("1a_pairs_pos", n);
  const std::size_t temp_bytes = cub_temp<T>(n);
  void* temp = sc.get<unsigned char>("1a_pairs_cub_temp", temp_bytes);
  const auto items = static_cast<int>(n);  // n < 2^32 (32-bit ids); CUB counts in int

  HDB_LAUNCH(row_numbers, blocks_for(n), 256, 0, s)(n, rows);
  HDB_CUDA_CHECK_LAUNCH("row_numbers");
  std::size_t tb = temp_bytes;
  HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(temp, tb, delta, sorted, rows, sorted_rows, items, 0,
                                                  static_cast<int>(sizeof(T) * 8), s));
  HDB_LAUNCH(head_flags<T>, blocks_for(n), 256, 0, s)(sorted, n, rows);
  HDB_CUDA_CHECK_LAUNCH("head_flags");
  tb = temp_bytes;
  HDB_CUDA_CHECK(prim::DeviceScan::InclusiveSum(temp, tb, rows, pos, items, s));
  HDB_LAUNCH(scatter_delta_ids, blocks_for(n), 256, 0, s)(sorted, sorted_rows, pos, n, ud, ids);
  HDB_CUDA_CHECK_LAUNCH("scatter_delta_ids");
  return read_u32(s, pos + n - 1);
}

#define HDB_INSTANTIATE(T)                                           \
  template std::uint64_t delta_dict_pairs_scratch<T>(std::uint64_t); \
  template std::uint64_t delta_dict_pairs<T>(Scratch&, cudaStream_t, const T*, std::uint64_t, T*, std::uint32_t*);
HDB_INSTANTIATE(std::uint32_t)
HDB_INSTANTIATE(std::uint64_t)
#undef HDB_INSTANTIATE

}  // namespace hdb::cuda::merge
