// Step 1b, tuned (issue 45, item 3): U'_M = U_M ∪ U_D with X_M and X_D by one merge-path kernel
// run twice over tiles of kTile merged entries, with no merged intermediate array:
//  - partition: the split of U_M and U_D at every tile's first diagonal (one search a tile);
//  - count: each block loads its tile's two runs into shared memory, each thread merges kItems
//    entries from its own diagonal and counts those that start a new value (both inputs are
//    distinct, so an entry is a repeat only where a U_D value equals the U_M value just before it);
//  - one scan of the tile counts (CUB) gives each tile's first id;
//  - write: the same merge again, U'_M's new values and every entry's id into X_M or X_D staged in
//    shared memory, then stored by consecutive threads.
// Against merge_path (Thrust merge_by_key, head flags, scan, scatter), which writes and reads back
// the merged values, their sources and their positions, this reads the inputs twice and writes
// only the outputs.
#include <algorithm>
#include <string>

#include "merge_device.cuh"
#include "merge_steps.cuh"
#include "runtime/launch.cuh"
#include "runtime/prim.cuh"

namespace hdb::cuda::merge {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 4;
constexpr std::uint64_t kTile = kThreads * kItems;

// Entries of A among the first `diag` of the merge of A and B, a value in both taken from A first.
template <class T>
__host__ __device__ std::uint64_t merge_split(const T* a, std::uint64_t na, const T* b, std::uint64_t nb,
                                              std::uint64_t diag) {
  std::uint64_t lo = diag > nb ? diag - nb : 0, hi = diag < na ? diag : na;
  while (lo < hi) {
    const std::uint64_t mid = (lo + hi) / 2;
    if (!(b[diag - 1 - mid] < a[mid]))  // a[mid] <= b[diag - 1 - mid]: a[mid] comes first
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <class T>
__global__ void partition_tiles(const T* a, std::uint64_t na, const T* b, std::uint64_t nb, std::uint64_t tiles,
                                std::uint64_t* parts) {
  const std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (t > tiles) return;
  parts[t] = merge_split(a, na, b, nb, std::min(t * kTile, na + nb));
}

// One tile: counts (Write false: counts[tile] = the new values in it) or writes (Write true: from
// id offsets[tile] on).
template <class T, bool Write>
__global__ void __launch_bounds__(kThreads)
    merge_tile(const T* a, std::uint64_t na, const T* b, std::uint64_t nb, const std::uint64_t* parts,
               std::uint32_t* counts, const std::uint32_t* offsets, T* dict, std::uint32_t* xm, std::uint32_t* xd) {
  __shared__ T runs[kTile];
  __shared__ typename prim::BlockScan<std::uint32_t, kThreads>::TempStorage scan;
  const std::uint64_t tile = blockIdx.x, d0 = tile * kTile, d1 = std::min(d0 + kTile, na + nb);
  const std::uint64_t a0 = parts[tile], b0 = d0 - a0;
  const auto ta = static_cast<std::uint32_t>(parts[tile + 1] - a0);
  const auto tn = static_cast<std::uint32_t>(d1 - d0), tb = tn - ta;
  for (std::uint32_t k = threadIdx.x; k < tn; k += kThreads) runs[k] = k < ta ? a[a0 + k] : b[b0 + k - ta];
  __syncthreads();

  // This thread's entries of the tile: from diagonal d on, i from A's run and j from B's.
  const std::uint32_t d = std::min<std::uint32_t>(threadIdx.x * kItems, tn);
  const T* ra = runs;
  const T* rb = runs + ta;
  auto i = static_cast<std::uint32_t>(merge_split(ra, ta, rb, tb, d));
  std::uint32_t j = d - i;
  // The merged entry before this thread's first: the larger of the two runs' entries before it
  // (in the tile or, at its start, in the inputs).
  const std::uint64_t gi = a0 + i, gj = b0 + j;
  const bool has_prev = gi > 0 || gj > 0;
  T prev{};
  if (gi > 0) prev = a[gi - 1];
  if (gj > 0 && (gi == 0 || prev < b[gj - 1])) prev = b[gj - 1];

  T item[kItems];
  bool from_a[kItems], fresh[kItems];
  std::uint32_t count = 0, n = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) {
    from_a[k] = fresh[k] = false;
    if (d + static_cast<std::uint32_t>(k) >= tn) continue;
    const bool take_a = j >= tb || (i < ta && !(rb[j] < ra[i]));
    item[k] = take_a ? ra[i] : rb[j];
    from_a[k] = take_a;
    fresh[k] = !(has_prev || k > 0) || prev != item[k];
    count += fresh[k];
    prev = item[k];
    ++n;
    take_a ? ++i : ++j;
  }
  std::uint32_t before = 0, total = 0;
  prim::BlockScan<std::uint32_t, kThreads>(scan).ExclusiveSum(count, before, total);
  if constexpr (!Write) {
    if (threadIdx.x == 0) counts[tile] = total;
  } else {
    // Ids from the tile's first on; a repeat takes the id of the value before it. The outputs are
    // staged in shared memory and stored by consecutive threads: the tile's new values are consecutive
    // in U'_M from offsets[tile], its A entries in X_M from a0, its B entries in X_D from b0 (stored
    // from the thread that merged them, a warp's stores spanned 4 entries a lane: 35 % of each
    // sector used). `runs` is free: every thread's merge ended before the scan's barrier.
    __shared__ std::uint32_t ids[kTile];  // the tile's entries' ids: A's run, then B's
    T* values = runs;
    // An entry's id is first + (the tile's new values up to and including it) - 1.
    const std::uint32_t first = offsets[tile];
    std::uint32_t slot = before;
    auto li = static_cast<std::uint32_t>(gi - a0), lj = static_cast<std::uint32_t>(gj - b0);
#pragma unroll
    for (int k = 0; k < kItems; ++k) {
      if (static_cast<std::uint32_t>(k) >= n) break;
      if (fresh[k]) values[slot++] = item[k];
      const std::uint32_t id = first + slot - 1;
      if (from_a[k])
        ids[li++] = id;
      else
        ids[ta + lj++] = id;
    }
    __syncthreads();
    for (std::uint32_t k = threadIdx.x; k < total; k += kThreads) dict[std::uint64_t{first} + k] = values[k];
    for (std::uint32_t k = threadIdx.x; k < ta; k += kThreads) xm[a0 + k] = ids[k];
    for (std::uint32_t k = threadIdx.x; k < tb; k += kThreads) xd[b0 + k] = ids[ta + k];
  }
}

}  // namespace

std::uint64_t dict_merge_tiles_scratch(std::uint64_t n) {
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  std::size_t scan = 0;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const std::uint32_t*>(nullptr),
                                                static_cast<std::uint32_t*>(nullptr), static_cast<int>(tiles + 1)));
  return (tiles + 1) * (8 + 4 + 4) + scan;
}

template <class T>
std::uint64_t dict_merge_tiles(Scratch& sc, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                               std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd) {
  const std::uint64_t n = n1 + n2;
  if (n == 0) return 0;
  const std::uint64_t tiles = (n + kTile - 1) / kTile;
  auto* parts = sc.get<std::uint64_t>("1b_tiles_parts", tiles + 1);
  auto* counts = sc.get<std::uint32_t>("1b_tiles_counts", tiles + 1);
  auto* offsets = sc.get<std::uint32_t>("1b_tiles_offsets", tiles + 1);
  std::size_t temp_bytes = 0;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(nullptr, temp_bytes, counts, offsets, static_cast<int>(tiles + 1), s));
  void* temp = sc.get<unsigned char>("1b_tiles_cub_temp", temp_bytes);

  HDB_LAUNCH(partition_tiles<T>, blocks_for(tiles + 1), 256, 0, s)(um, n1, ud, n2, tiles, parts);
  HDB_CUDA_CHECK_LAUNCH("partition_tiles");
  HDB_CUDA_CHECK(cudaMemsetAsync(counts + tiles, 0, 4, s));  // the scan's last item: offsets[tiles] = |U'_M|
  auto* merge_tile_count = merge_tile<T, false>;
  auto* merge_tile_write = merge_tile<T, true>;
  HDB_LAUNCH(merge_tile_count, static_cast<unsigned>(tiles), kThreads, 0, s)
  (um, n1, ud, n2, parts, counts, nullptr, nullptr, nullptr, nullptr);
  HDB_CUDA_CHECK_LAUNCH("merge_tile (count)");
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(temp, temp_bytes, counts, offsets, static_cast<int>(tiles + 1), s));
  HDB_LAUNCH(merge_tile_write, static_cast<unsigned>(tiles), kThreads, 0, s)
  (um, n1, ud, n2, parts, nullptr, offsets, dict, xm, xd);
  HDB_CUDA_CHECK_LAUNCH("merge_tile (write)");
  return read_u32(s, offsets + tiles);
}

#define HDB_INSTANTIATE(T)                                                                                             \
  template std::uint64_t dict_merge_tiles<T>(Scratch&, cudaStream_t, const T*, std::uint64_t, const T*, std::uint64_t, \
                                             T*, std::uint32_t*, std::uint32_t*);
HDB_INSTANTIATE(std::uint32_t)
HDB_INSTANTIATE(std::uint64_t)
HDB_INSTANTIATE(U128)
#undef HDB_INSTANTIATE

}  // namespace hdb::cuda::merge
