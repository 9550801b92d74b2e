// Custom merge kernels: the paper's dictionary slice merge (§3.1) with the post-processing that
// closes the gaps done on the device, step 2b with one thread per output word, and the string
// steps (1a by rounds of CUB radix sorts over chunk keys, 1b by merge path), as on OpenCL.
#include <algorithm>
#include <string>
#include <utility>

#include "runtime/prim.cuh"
#include "runtime/thrust_policy.cuh"
#include <thrust/scan.h>

#include "merge_device.cuh"
#include "merge_steps.cuh"

namespace hdb::cuda::merge {
namespace {

__device__ std::uint64_t umin(std::uint64_t a, std::uint64_t b) { return a < b ? a : b; }

template <class T>
__device__ std::uint64_t lower_bound_dev(const T* d, std::uint64_t n, const T& v) {
  std::uint64_t lo = 0, hi = n;
  while (lo < hi) {
    std::uint64_t mid = (lo + hi) / 2;
    if (d[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

struct Slice {
  std::uint64_t i0, i1, k0, k1;
};

// D1 is cut into equal slices; D2's slice holds the values not below D1[i0] and below D1[i1].
template <class T>
__device__ Slice slice_of(const T* d1, std::uint64_t n1, const T* d2, std::uint64_t n2, std::uint64_t t,
                          std::uint64_t len) {
  Slice s;
  s.i0 = umin(t * len, n1);
  s.i1 = umin(s.i0 + len, n1);
  s.k0 = t == 0 ? 0 : (s.i0 < n1 ? lower_bound_dev(d2, n2, d1[s.i0]) : n2);
  s.k1 = s.i1 < n1 ? lower_bound_dev(d2, n2, d1[s.i1]) : n2;
  return s;
}

template <class T>
__global__ void slice_merge(const T* d1, std::uint64_t n1, const T* d2, std::uint64_t n2, std::uint64_t len,
                            std::uint64_t threads, T* inter, std::uint32_t* x1, std::uint32_t* x2,
                            std::uint64_t* counts) {
  std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (t >= threads) return;
  Slice s = slice_of(d1, n1, d2, n2, t, len);
  T* out = inter + s.i0 + s.k0;
  std::uint64_t w = 0, i = s.i0, k = s.k0;
  while (i < s.i1 && k < s.k1) {
    T a = d1[i], b = d2[k];
    if (a < b) {
      out[w] = a;
      x1[i++] = static_cast<std::uint32_t>(w);
    } else if (b < a) {
      out[w] = b;
      x2[k++] = static_cast<std::uint32_t>(w);
    } else {
      out[w] = a;
      x1[i++] = x2[k++] = static_cast<std::uint32_t>(w);
    }
    ++w;
  }
  for (; i < s.i1; ++i, ++w) out[w] = d1[i], x1[i] = static_cast<std::uint32_t>(w);
  for (; k < s.k1; ++k, ++w) out[w] = d2[k], x2[k] = static_cast<std::uint32_t>(w);
  counts[t] = w;
}

template <class T>
__global__ void close_gaps(const T* d1, std::uint64_t n1, const T* d2, std::uint64_t n2, std::uint64_t len,
                           std::uint64_t threads, const T* inter, std::uint32_t* x1, std::uint32_t* x2,
                           const std::uint64_t* offsets, T* dict) {
  std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (t >= threads) return;
  Slice s = slice_of(d1, n1, d2, n2, t, len);
  std::uint64_t off = offsets[t], cnt = offsets[t + 1] - off;
  const T* in = inter + s.i0 + s.k0;
  for (std::uint64_t j = 0; j < cnt; ++j) dict[off + j] = in[j];
  for (std::uint64_t i = s.i0; i < s.i1; ++i) x1[i] += static_cast<std::uint32_t>(off);
  for (std::uint64_t k = s.k0; k < s.k1; ++k) x2[k] += static_cast<std::uint32_t>(off);
}

// One thread per output word: gathers the ids of the rows overlapping the word, so no two threads
// write one word and no atomics are needed.
template <class IdOf>
__device__ void pack_word(std::uint64_t w, std::uint64_t rows, unsigned width, std::uint64_t* out, IdOf id_of) {
  std::uint64_t bit0 = w * 64, r0 = bit0 / width, r1 = umin(rows, (bit0 + 64 + width - 1) / width), acc = 0;
  for (std::uint64_t r = r0; r < r1; ++r) {
    std::uint64_t id = id_of(r);
    long long shift = static_cast<long long>(r * width) - static_cast<long long>(bit0);
    acc |= shift >= 0 ? id << shift : id >> (-shift);
  }
  out[w] = acc;
}

__global__ void reencode_lookup_kernel(const std::uint64_t* old, unsigned ow, std::uint64_t nm, const std::uint32_t* xm,
                                       const std::uint32_t* ids, const std::uint32_t* xd, std::uint64_t rows,
                                       unsigned width, std::uint64_t wb, std::uint64_t we, std::uint64_t* out) {
  std::uint64_t w = wb + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (w >= we) return;
  pack_word(w, rows, width, out,
            [=](std::uint64_t r) -> std::uint32_t { return r < nm ? xm[unpack_bits(old, ow, r)] : xd[ids[r - nm]]; });
}

template <class T>
__global__ void reencode_binsearch_kernel(const std::uint64_t* old, unsigned ow, std::uint64_t nm, const T* um,
                                          const T* delta, const T* dict, std::uint64_t m, std::uint64_t rows,
                                          unsigned width, std::uint64_t nwords, std::uint64_t* out) {
  std::uint64_t w = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (w >= nwords) return;
  pack_word(w, rows, width, out, [=](std::uint64_t r) -> std::uint32_t {
    const T& v = r < nm ? um[unpack_bits(old, ow, r)] : delta[r - nm];
    return static_cast<std::uint32_t>(lower_bound_dev(dict, m, v));
  });
}

}  // namespace

template <class T>
std::uint64_t dict_merge_slice(Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud, std::uint64_t n2,
                               T* dict, std::uint32_t* xm, std::uint32_t* xd) {
  // The paper found its peak between 64x64 and 256x256 threads; 16 D1 entries per thread, at
  // most 256x256 threads.
  std::uint64_t threads = std::min<std::uint64_t>(std::max<std::uint64_t>((n1 + 15) / 16, 1), 65536);
  std::uint64_t len = std::max<std::uint64_t>(1, (n1 + threads - 1) / threads);
  T* inter = a.acquire<T>(n1 + n2);
  auto* counts = a.acquire<std::uint64_t>(threads + 1);
  HDB_CUDA_CHECK(cudaMemsetAsync(counts + threads, 0, 8, s));
  HDB_LAUNCH(slice_merge, blocks_for(threads), 256, 0, s)(um, n1, ud, n2, len, threads, inter, xm, xd, counts);
  HDB_CUDA_CHECK_LAUNCH("slice_merge");
  // No synchronisation here: close_gaps follows on the same stream (see merge_thrust.cu).
  thrust::exclusive_scan(thrust_policy(a, s), counts, counts + threads + 1, counts);
  HDB_LAUNCH(close_gaps, blocks_for(threads), 256, 0, s)(um, n1, ud, n2, len, threads, inter, xm, xd, counts, dict);
  HDB_CUDA_CHECK_LAUNCH("close_gaps");
  std::uint64_t m = 0;
  HDB_CUDA_CHECK(cudaMemcpyAsync(&m, counts + threads, 8, cudaMemcpyDeviceToHost, s));
  HDB_CUDA_CHECK(cudaStreamSynchronize(s));
  a.release(inter);
  a.release(counts);
  return m;
}

void reencode_lookup(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                     const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd,
                     std::uint64_t rows, unsigned width, std::uint64_t word_begin, std::uint64_t word_end,
                     std::uint64_t* out) {
  if (word_end <= word_begin) return;
  HDB_LAUNCH(reencode_lookup_kernel, blocks_for(word_end - word_begin), 256, 0, s)
  (old, old_width, main_rows, xm, delta_ids, xd, rows, width, word_begin, word_end, out);
  HDB_CUDA_CHECK_LAUNCH("reencode_lookup");
}

template <class T>
void reencode_binsearch(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                        const T* um, const T* delta, const T* dict, std::uint64_t dict_size, std::uint64_t rows,
                        unsigned width, std::uint64_t* out) {
  std::uint64_t nwords = BitPacked::words_for(rows, width);
  if (!nwords) return;
  HDB_LAUNCH(reencode_binsearch_kernel, blocks_for(nwords), 256, 0, s)
  (old, old_width, main_rows, um, delta, dict, dict_size, rows, width, nwords, out);
  HDB_CUDA_CHECK_LAUNCH("reencode_binsearch");
}

// ---- strings: the algorithm of kernels/merge.cl (OpenCL) kernel for kernel; see there and
// docs/merge.md. Chunk k of a string: its bytes [7k, 7k+7) big-endian in the high 56 bits (zero
// padded), the bytes left from 7k capped at 8 in the low 8 bits. ----
namespace {

constexpr std::uint32_t kKeyMore = 8;  // the count of a chunk with bytes after it
__device__ std::uint32_t key_count(std::uint64_t k) { return static_cast<std::uint32_t>(k & 0xff); }

__device__ std::uint64_t str_key(const unsigned char* bytes, std::uint32_t b, std::uint32_t e, std::uint32_t chunk) {
  const std::uint32_t s = b + 7u * chunk, left = s < e ? e - s : 0u;
  std::uint64_t key = 0;
  for (std::uint32_t i = 0; i < 7u; ++i) key = (key << 8) | (i < left ? std::uint64_t{bytes[s + i]} : 0u);
  return (key << 8) | (left < kKeyMore ? left : kKeyMore);
}

// String i of x against string j of y (-1, 0, 1): chunk-0 keys first, then the bytes from 7 on.
__device__ int str_cmp(const std::uint64_t* xk, DevStrings x, std::uint32_t i, const std::uint64_t* yk, DevStrings y,
                       std::uint32_t j) {
  const std::uint64_t a = xk[i], c = yk[j];
  if (a != c) return a < c ? -1 : 1;
  if (key_count(a) < kKeyMore) return 0;
  const std::uint32_t x0 = x.offs[i], lx = x.offs[i + 1] - x0, y0 = y.offs[j], ly = y.offs[j + 1] - y0;
  const std::uint32_t n = lx < ly ? lx : ly;
  for (std::uint32_t b = 7; b < n; ++b) {
    const unsigned char p = x.bytes[x0 + b], q = y.bytes[y0 + b];
    if (p != q) return p < q ? -1 : 1;
  }
  return lx < ly ? -1 : (lx > ly ? 1 : 0);
}

__device__ std::uint32_t gid() { return blockIdx.x * blockDim.x + threadIdx.x; }

__global__ void str_keys(DevStrings x, std::uint64_t* keys) {
  const std::uint32_t i = gid();
  if (i < x.n) keys[i] = str_key(x.bytes, x.offs[i], x.offs[i + 1], 0);
}

// 1a round set-up: every position active in group 0, perm the identity, only position 0 a head
// (head[n] = 0 closes the scan of the heads).
__global__ void str_init(std::uint32_t n, std::uint32_t* act, std::uint32_t* grp, std::uint32_t* perm,
                         std::uint32_t* head) {
  const std::uint32_t i = gid();
  if (i > n) return;
  head[i] = i == 0 && n > 0 ? 1u : 0u;
  if (i == n) return;
  act[i] = i;
  grp[i] = 0;
  perm[i] = i;
}

// Chunk `chunk` of the active entries' strings, and their indices (the sort's payload).
__global__ void str_round_keys(DevStrings x, const std::uint32_t* perm, const std::uint32_t* act, std::uint32_t a,
                               std::uint32_t chunk, std::uint64_t* keys, std::uint32_t* index) {
  const std::uint32_t i = gid();
  if (i >= a) return;
  const std::uint32_t s = perm[act[i]];
  keys[i] = str_key(x.bytes, x.offs[s], x.offs[s + 1], chunk);
  index[i] = i;
}

__global__ void str_gather_groups(const std::uint32_t* grp, const std::uint32_t* order, std::uint32_t a,
                                  std::uint32_t* g) {
  const std::uint32_t i = gid();
  if (i < a) g[i] = grp[order[i]];
}

__global__ void str_round_gather(const std::uint64_t* keys, const std::uint32_t* order, const std::uint32_t* perm,
                                 const std::uint32_t* act, std::uint32_t a, std::uint64_t* sorted_keys,
                                 std::uint32_t* moved) {
  const std::uint32_t i = gid();
  if (i >= a) return;
  const std::uint32_t o = order[i];
  sorted_keys[i] = keys[o];
  moved[i] = perm[act[o]];
}

__global__ void str_round_place(const std::uint64_t* sorted_keys, const std::uint32_t* g, const std::uint32_t* moved,
                                const std::uint32_t* act, std::uint32_t a, std::uint32_t* perm, std::uint32_t* head,
                                std::uint32_t* hd) {
  const std::uint32_t i = gid();
  if (i >= a) return;
  perm[act[i]] = moved[i];
  const bool new_group = i == 0 || g[i] != g[i - 1];
  const bool split = !new_group && sorted_keys[i] != sorted_keys[i - 1];
  if (split) head[act[i]] = 1u;
  hd[i] = (new_group || split) ? 1u : 0u;
}

// keep[a] = 0 and hd[a] = 0 close the scans (kpos[a], hpos[a] are the totals).
__global__ void str_round_keep(const std::uint64_t* sorted_keys, std::uint32_t* hd, std::uint32_t a,
                               std::uint32_t* keep) {
  const std::uint32_t i = gid();
  if (i > a) return;
  if (i == a) {
    keep[a] = 0;
    return;
  }
  const bool single = hd[i] && (i + 1 == a || hd[i + 1]);
  keep[i] = (!single && key_count(sorted_keys[i]) == kKeyMore) ? 1u : 0u;
}

__global__ void str_round_compact(const std::uint32_t* act, const std::uint32_t* keep, const std::uint32_t* kpos,
                                  const std::uint32_t* hd, const std::uint32_t* hpos, std::uint32_t a,
                                  std::uint32_t* act_next, std::uint32_t* grp_next) {
  const std::uint32_t i = gid();
  if (i >= a || !keep[i]) return;
  act_next[kpos[i]] = act[i];
  grp_next[kpos[i]] = hpos[i] + hd[i];
}

__global__ void str_unique(DevStrings x, const std::uint32_t* perm, const std::uint32_t* head,
                           const std::uint32_t* upos, std::uint32_t m, std::uint32_t* ids, std::uint32_t* src,
                           std::uint32_t* len) {
  const std::uint32_t p = gid();
  if (p >= x.n) return;
  const std::uint32_t s = perm[p], id = upos[p] + head[p] - 1u;
  ids[s] = id;
  if (head[p]) {
    src[id] = s;
    len[id] = x.offs[s + 1] - x.offs[s];
  }
  if (p == 0) len[m] = 0u;
}

// out string i = string src[i] of a (src < a.n) or src - a.n of b, at out_offs[i].
__global__ void str_gather(DevStrings a, DevStrings b, const std::uint32_t* src, std::uint32_t m,
                           const std::uint32_t* out_offs, unsigned char* out) {
  const std::uint32_t i = gid();
  if (i >= m) return;
  const std::uint32_t s = src[i];
  const bool from_a = s < a.n;
  const DevStrings& x = from_a ? a : b;
  const std::uint32_t j = from_a ? s : s - static_cast<std::uint32_t>(a.n), b0 = x.offs[j], len = x.offs[j + 1] - b0;
  const std::uint32_t d = out_offs[i];
  for (std::uint32_t c = 0; c < len; ++c) out[d + c] = x.bytes[b0 + c];
}

// 1b merge path on strings (mp_split / mp_partition / mp_merge of merge.cl with string comparisons).
struct StrPair {
  const std::uint64_t *ak, *bk;
  DevStrings a, b;
};

__device__ std::uint32_t smp_split(const StrPair& p, std::uint32_t d, std::uint32_t lo, std::uint32_t hi) {
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    if (str_cmp(p.bk, p.b, d - mid - 1, p.ak, p.a, mid) >= 0)
      lo = mid + 1;  // a[mid] <= b[d - mid - 1]
    else
      hi = mid;
  }
  return lo;
}

__global__ void smp_partition(StrPair p, std::uint32_t tile, std::uint32_t groups, std::uint32_t* split) {
  const std::uint32_t g = gid();
  if (g > groups) return;
  const auto na = static_cast<std::uint32_t>(p.a.n), nb = static_cast<std::uint32_t>(p.b.n);
  const auto d = static_cast<std::uint32_t>(umin(std::uint64_t{g} * tile, std::uint64_t{na} + nb));
  split[g] = smp_split(p, d, d > nb ? d - nb : 0, d < na ? d : na);
}

// counts has one entry per thread plus a closing 0 (the count pass writes it); the write pass takes
// their exclusive scan.
__global__ void smp_merge(StrPair p, std::uint32_t tile, std::uint32_t items, const std::uint32_t* split, bool write,
                          std::uint32_t m, std::uint32_t* counts, std::uint32_t* src, std::uint32_t* len,
                          std::uint32_t* xm, std::uint32_t* xd) {
  const std::uint32_t g = blockIdx.x, item = gid();
  const auto na = static_cast<std::uint32_t>(p.a.n), nb = static_cast<std::uint32_t>(p.b.n);
  const std::uint64_t n = std::uint64_t{na} + nb, d0 = std::uint64_t{item} * items;
  if (!write && item == 0) counts[(n + items - 1) / items] = 0u;
  if (write && item == 0) len[m] = 0u;
  if (d0 >= n) return;
  const auto d1 = static_cast<std::uint32_t>(umin(n, d0 + items)), gd0 = g * tile;
  const auto gd1 = static_cast<std::uint32_t>(umin(n, std::uint64_t{gd0} + tile));
  const std::uint32_t a0 = split[g], a1 = split[g + 1], b0 = gd0 - a0, b1 = gd1 - a1,
                      d = static_cast<std::uint32_t>(d0);
  const std::uint32_t lo = d > b1 ? d - b1 : 0u, l = a0 > lo ? a0 : lo, h = a1 < d - b0 ? a1 : d - b0;
  std::uint32_t i = smp_split(p, d, l, h), k = d - i;
  bool prev_a = true;
  std::uint32_t prev = 0;
  if (i > 0) prev = i - 1;
  if (k > 0 && (i == 0 || str_cmp(p.ak, p.a, i - 1, p.bk, p.b, k - 1) < 0)) {
    prev_a = false;
    prev = k - 1;
  }
  bool first = d == 0;
  std::uint32_t id = write ? counts[item] - 1 : 0, heads = 0;
  for (std::uint32_t j = d; j < d1; ++j) {
    const bool from_a = k >= nb || (i < na && str_cmp(p.bk, p.b, k, p.ak, p.a, i) >= 0);
    const std::uint32_t v = from_a ? i : k;
    bool head = first;
    if (!first)
      head = str_cmp(prev_a ? p.ak : p.bk, prev_a ? p.a : p.b, prev, from_a ? p.ak : p.bk, from_a ? p.a : p.b, v) < 0;
    if (head) {
      ++heads;
      if (write) {
        ++id;
        src[id] = from_a ? v : na + v;
        const DevStrings& x = from_a ? p.a : p.b;
        len[id] = x.offs[v + 1] - x.offs[v];
      }
    }
    if (write) {
      if (from_a)
        xm[i] = id;
      else
        xd[k] = id;
    }
    if (from_a)
      ++i;
    else
      ++k;
    prev = v;
    prev_a = from_a;
    first = false;
  }
  if (!write) counts[item] = heads;
}

// CUB's temporary storage for an exclusive scan of up to n uint32 entries (the scans' own count
// type), as CUB reports it.
std::size_t str_scan_temp(std::uint64_t n) {
  std::size_t b = 0;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(nullptr, b, static_cast<const std::uint32_t*>(nullptr),
                                                static_cast<std::uint32_t*>(nullptr), static_cast<std::uint32_t>(n)));
  return b;
}

// CUB's temporary storage for 1a's calls on up to n entries (its radix sorts and scans), as CUB
// reports it.
std::size_t str_cub_temp(std::uint64_t n) {
  std::size_t most = 0, b = 0;
  const auto items = static_cast<std::uint32_t>(n);
  HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(
      nullptr, b, static_cast<const std::uint64_t*>(nullptr), static_cast<std::uint64_t*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), items));
  most = std::max(most, b);
  HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(
      nullptr, b, static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), items));
  most = std::max(most, b);
  return std::max(most, str_scan_temp(std::uint64_t{items} + 1));
}

unsigned grid(std::uint64_t n) { return blocks_for(std::max<std::uint64_t>(n, 1)); }

constexpr int kStrBuffers = 15;  // the 1a round buffers of n + 1 entries (below)
constexpr std::uint32_t kMergeItems = 16, kMergeBlock = 256, kMergeTile = kMergeItems * kMergeBlock;

}  // namespace

std::uint64_t delta_dict_str_scratch(std::uint64_t n) {
  return kStrBuffers * (n + 1) * 4 + 2 * n * 8 + str_cub_temp(n);
}

std::uint64_t dict_merge_str_scratch(std::uint64_t n) {
  const std::uint64_t threads = (n + kMergeItems - 1) / kMergeItems, groups = (n + kMergeTile - 1) / kMergeTile;
  // 1b only scans (the counts of its threads, then the lengths of up to n entries).
  return (groups + 1) * 4 + 2 * (threads + 1) * 4 + n * 8 + n * 4 + (n + 1) * 4 +
         str_scan_temp(std::max(threads, n) + 1);
}

StrCount delta_dict_str(Scratch& sc, cudaStream_t s, DevStrings x, std::uint32_t* ud_offs, unsigned char* ud_bytes,
                        std::uint32_t* ids) {
  const auto n = static_cast<std::uint32_t>(x.n);
  if (n == 0) return {};
  std::uint32_t* u[kStrBuffers];
  static const char* const names[kStrBuffers] = {"act",  "act_next", "grp",   "grp_next", "perm",
                                                 "head", "index",    "order", "order2",   "g",
                                                 "g2",   "moved",    "hd",    "keep",     "kpos"};
  for (int b = 0; b < kStrBuffers; ++b) u[b] = sc.get<std::uint32_t>(std::string("str1a_") + names[b], n + 1);
  std::uint32_t *act = u[0], *act_next = u[1], *grp = u[2], *grp_next = u[3], *perm = u[4], *head = u[5], *index = u[6],
                *order = u[7], *order2 = u[8], *g = u[9], *g2 = u[10], *moved = u[11], *hd = u[12], *keep = u[13],
                *kpos = u[14];
  auto* keys = sc.get<std::uint64_t>("str1a_keys", n);
  auto* sorted_keys = sc.get<std::uint64_t>("str1a_sorted_keys", n);
  std::size_t temp_bytes = str_cub_temp(n);
  void* temp = sc.get<unsigned char>("str1a_cub_temp", temp_bytes);
  std::uint32_t* hpos = kpos;  // hd's scan, taken before keep's (below)
  auto scan = [&](const std::uint32_t* in, std::uint32_t* out, std::uint32_t count) {
    std::size_t tb = temp_bytes;
    HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(temp, tb, in, out, count, s));
  };
  HDB_LAUNCH(str_init, grid(n + 1), 256, 0, s)(n, act, grp, perm, head);
  HDB_CUDA_CHECK_LAUNCH("str_init");
  std::uint32_t a = n;
  for (std::uint32_t chunk = 0; a > 0; ++chunk) {
    HDB_LAUNCH(str_round_keys, grid(a), 256, 0, s)(x, perm, act, a, chunk, keys, index);
    HDB_CUDA_CHECK_LAUNCH("str_round_keys");
    std::size_t tb = temp_bytes;
    HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(temp, tb, keys, sorted_keys, index, order, a, 0, 64, s));
    HDB_LAUNCH(str_gather_groups, grid(a), 256, 0, s)(grp, order, a, g);
    HDB_CUDA_CHECK_LAUNCH("str_gather_groups");
    const std::uint32_t* gs = g;
    const std::uint32_t* os = order;
    if (chunk > 0) {  // round 0: one group
      tb = temp_bytes;
      HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(temp, tb, g, g2, order, order2, a, 0, 32, s));
      gs = g2;
      os = order2;
    }
    HDB_LAUNCH(str_round_gather, grid(a), 256, 0, s)(keys, os, perm, act, a, sorted_keys, moved);
    HDB_CUDA_CHECK_LAUNCH("str_round_gather");
    HDB_LAUNCH(str_round_place, grid(a), 256, 0, s)(sorted_keys, gs, moved, act, a, perm, head, hd);
    HDB_CUDA_CHECK_LAUNCH("str_round_place");
    HDB_LAUNCH(str_round_keep, grid(a + 1), 256, 0, s)(sorted_keys, hd, a, keep);
    HDB_CUDA_CHECK_LAUNCH("str_round_keep");
    // The group numbers of the next round: hd's scan, into grp_next through the compaction.
    std::uint32_t* hscan = index;  // free until the next round's keys
    scan(hd, hscan, a);
    scan(keep, kpos, a + 1);
    const std::uint32_t next = read_u32(s, kpos + a);
    if (next > 0) {
      HDB_LAUNCH(str_round_compact, grid(a), 256, 0, s)(act, keep, kpos, hd, hscan, a, act_next, grp_next);
      HDB_CUDA_CHECK_LAUNCH("str_round_compact");
      std::swap(act, act_next);
      std::swap(grp, grp_next);
    }
    a = next;
  }
  // U_D: heads numbered (head[n] = 0 closes the scan), each row's id, each entry's source and
  // length; lengths -> offsets; bytes.
  scan(head, hpos, n + 1);
  const std::uint32_t m = read_u32(s, hpos + n);
  std::uint32_t *src = order, *len = keep;
  HDB_LAUNCH(str_unique, grid(n), 256, 0, s)(x, perm, head, hpos, m, ids, src, len);
  HDB_CUDA_CHECK_LAUNCH("str_unique");
  scan(len, ud_offs, m + 1);
  const std::uint32_t total = read_u32(s, ud_offs + m);
  HDB_LAUNCH(str_gather, grid(m), 256, 0, s)(x, x, src, m, ud_offs, ud_bytes);
  HDB_CUDA_CHECK_LAUNCH("str_gather");
  return {m, total};
}

StrCount dict_merge_str(Scratch& sc, cudaStream_t s, DevStrings um, DevStrings ud, std::uint32_t* dict_offs,
                        unsigned char* dict_bytes, std::uint32_t* xm, std::uint32_t* xd) {
  const std::uint64_t n = um.n + ud.n;
  if (n == 0) return {};
  const std::uint64_t threads = (n + kMergeItems - 1) / kMergeItems, groups = (n + kMergeTile - 1) / kMergeTile;
  auto* ak = sc.get<std::uint64_t>("str1b_keys_a", um.n);
  auto* bk = sc.get<std::uint64_t>("str1b_keys_b", ud.n);
  auto* split = sc.get<std::uint32_t>("str1b_split", groups + 1);
  auto* counts = sc.get<std::uint32_t>("str1b_counts", threads + 1);
  auto* starts = sc.get<std::uint32_t>("str1b_starts", threads + 1);
  auto* src = sc.get<std::uint32_t>("str1b_src", n);
  auto* len = sc.get<std::uint32_t>("str1b_len", n + 1);
  std::size_t temp_bytes = str_scan_temp(std::max(threads, n) + 1);
  void* temp = sc.get<unsigned char>("str1b_cub_temp", temp_bytes);
  if (um.n) HDB_LAUNCH(str_keys, grid(um.n), 256, 0, s)(um, ak);
  if (ud.n) HDB_LAUNCH(str_keys, grid(ud.n), 256, 0, s)(ud, bk);
  HDB_CUDA_CHECK_LAUNCH("str_keys");
  StrPair p{ak, bk, um, ud};
  HDB_LAUNCH(smp_partition, grid(groups + 1), 256, 0, s)(p, kMergeTile, static_cast<std::uint32_t>(groups), split);
  HDB_CUDA_CHECK_LAUNCH("smp_partition");
  HDB_LAUNCH(smp_merge, static_cast<unsigned>(groups), kMergeBlock, 0, s)
  (p, kMergeTile, kMergeItems, split, false, 0, counts, src, len, xm, xd);
  HDB_CUDA_CHECK_LAUNCH("smp_merge (count)");
  std::size_t tb = temp_bytes;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(temp, tb, counts, starts, static_cast<std::uint32_t>(threads + 1), s));
  const std::uint32_t m = read_u32(s, starts + threads);
  HDB_LAUNCH(smp_merge, static_cast<unsigned>(groups), kMergeBlock, 0, s)
  (p, kMergeTile, kMergeItems, split, true, m, starts, src, len, xm, xd);
  HDB_CUDA_CHECK_LAUNCH("smp_merge (write)");
  tb = temp_bytes;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(temp, tb, len, dict_offs, m + 1, s));
  const std::uint32_t total = read_u32(s, dict_offs + m);
  HDB_LAUNCH(str_gather, grid(m), 256, 0, s)(um, ud, src, m, dict_offs, dict_bytes);
  HDB_CUDA_CHECK_LAUNCH("str_gather");
  return {m, total};
}

#define HDB_INSTANTIATE(T)                                                                                             \
  template std::uint64_t dict_merge_slice<T>(Scratch&, cudaStream_t, const T*, std::uint64_t, const T*, std::uint64_t, \
                                             T*, std::uint32_t*, std::uint32_t*);                                      \
  template void reencode_binsearch<T>(cudaStream_t, const std::uint64_t*, unsigned, std::uint64_t, const T*, const T*, \
                                      const T*, std::uint64_t, std::uint64_t, unsigned, std::uint64_t*);
HDB_INSTANTIATE(std::uint32_t)
HDB_INSTANTIATE(std::uint64_t)
HDB_INSTANTIATE(U128)
#undef HDB_INSTANTIATE

}  // namespace hdb::cuda::merge
