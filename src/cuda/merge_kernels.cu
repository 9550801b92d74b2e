// Custom merge kernels: the paper's dictionary slice merge (§3.1) with the post-processing that
// closes the gaps done on the device, and step 2b with one thread per output word.
#include <algorithm>

#include <thrust/execution_policy.h>
#include <thrust/scan.h>

#include "merge_steps.cuh"

namespace hdb::cuda::merge {
namespace {

__device__ std::uint64_t umin(std::uint64_t a, std::uint64_t b) { return a < b ? a : b; }

template <class T>
__device__ std::uint64_t lower_bound_dev(const T* d, std::uint64_t n, const T& v) {
  std::uint64_t lo = 0, hi = n;
  while (lo < hi) {
    std::uint64_t mid = (lo + hi) / 2;
    if (d[mid] < v) lo = mid + 1;
    else hi = mid;
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
  pack_word(w, rows, width, out, [=](std::uint64_t r) -> std::uint32_t {
    return r < nm ? xm[unpack_bits(old, ow, r)] : xd[ids[r - nm]];
  });
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

unsigned blocks_for(std::uint64_t n) { return static_cast<unsigned>((n + 255) / 256); }

}  // namespace

template <class T>
std::uint64_t dict_merge_slice(Scratch& a, cudaStream_t s, const T* um, std::uint64_t n1, const T* ud,
                               std::uint64_t n2, T* dict, std::uint32_t* xm, std::uint32_t* xd) {
  // The paper found its peak between 64x64 and 256x256 threads; 16 D1 entries per thread, at
  // most 256x256 threads.
  std::uint64_t threads = std::min<std::uint64_t>(std::max<std::uint64_t>((n1 + 15) / 16, 1), 65536);
  std::uint64_t len = std::max<std::uint64_t>(1, (n1 + threads - 1) / threads);
  T* inter = a.acquire<T>(n1 + n2);
  auto* counts = a.acquire<std::uint64_t>(threads + 1);
  HDB_CUDA_CHECK(cudaMemsetAsync(counts + threads, 0, 8, s));
  slice_merge<<<blocks_for(threads), 256, 0, s>>>(um, n1, ud, n2, len, threads, inter, xm, xd, counts);
  HDB_CUDA_CHECK_LAUNCH("slice_merge");
  // No synchronisation here: close_gaps follows on the same stream (see merge_thrust.cu).
  thrust::exclusive_scan(thrust::cuda::par_nosync(a).on(s), counts, counts + threads + 1, counts);
  close_gaps<<<blocks_for(threads), 256, 0, s>>>(um, n1, ud, n2, len, threads, inter, xm, xd, counts, dict);
  HDB_CUDA_CHECK_LAUNCH("close_gaps");
  std::uint64_t m = 0;
  HDB_CUDA_CHECK(cudaMemcpyAsync(&m, counts + threads, 8, cudaMemcpyDeviceToHost, s));
  HDB_CUDA_CHECK(cudaStreamSynchronize(s));
  a.release(inter);
  a.release(counts);
  return m;
}

void reencode_lookup(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows,
                     const std::uint32_t* xm, const std::uint32_t* delta_ids, const std::uint32_t* xd, std::uint64_t rows,
                     unsigned width, std::uint64_t word_begin, std::uint64_t word_end, std::uint64_t* out) {
  if (word_end <= word_begin) return;
  reencode_lookup_kernel<<<blocks_for(word_end - word_begin), 256, 0, s>>>(old, old_width, main_rows, xm, delta_ids, xd,
                                                                           rows, width, word_begin, word_end, out);
  HDB_CUDA_CHECK_LAUNCH("reencode_lookup");
}

template <class T>
void reencode_binsearch(cudaStream_t s, const std::uint64_t* old, unsigned old_width, std::uint64_t main_rows, const T* um,
                        const T* delta, const T* dict, std::uint64_t dict_size, std::uint64_t rows, unsigned width,
                        std::uint64_t* out) {
  std::uint64_t nwords = BitPacked::words_for(rows, width);
  if (!nwords) return;
  reencode_binsearch_kernel<<<blocks_for(nwords), 256, 0, s>>>(old, old_width, main_rows, um, delta, dict, dict_size, rows,
                                                               width, nwords, out);
  HDB_CUDA_CHECK_LAUNCH("reencode_binsearch");
}

#define HDB_INSTANTIATE(T)                                                                                            \
  template std::uint64_t dict_merge_slice<T>(Scratch&, cudaStream_t, const T*, std::uint64_t, const T*,            \
                                             std::uint64_t, T*, std::uint32_t*, std::uint32_t*);                       \
  template void reencode_binsearch<T>(cudaStream_t, const std::uint64_t*, unsigned, std::uint64_t, const T*, const T*, \
                                      const T*, std::uint64_t, std::uint64_t, unsigned, std::uint64_t*);
HDB_INSTANTIATE(std::uint32_t)
HDB_INSTANTIATE(std::uint64_t)
HDB_INSTANTIATE(U128)
#undef HDB_INSTANTIATE

}  // namespace hdb::cuda::merge
