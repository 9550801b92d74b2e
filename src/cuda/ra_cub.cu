// The cub variant (library compositions, sort included) and the tuned variant of select, unique
// and join (single pass where the library allows it, fused count+scan and a load-balanced writer).
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "runtime/prim.cuh"
#include <thrust/iterator/constant_iterator.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/discard_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "ra_device.cuh"

namespace hdb::ra::cuda {
namespace {

using Count = thrust::counting_iterator<std::uint32_t>;

// Temp storage for one CUB call: query, then run in the grow-only "cub.temp" buffer.
template <class Call>
void cub_call(CudaRa::State& s, const char* what, Call&& call) {
  std::size_t bytes = 0;
  HDB_CUDA_CHECK(call(static_cast<void*>(nullptr), bytes));
  void* temp = s.scratch.get<unsigned char>("cub.temp", bytes);
  cudaError_t err = call(temp, bytes);
  hdb::cuda::check(err, what, __FILE__, __LINE__);
  hdb::cuda::sync_check(what, __FILE__, __LINE__);  // HDB_CUDA_SYNC_CHECK=1: CUB's kernels, as every launch
}

// ---- the CUB calls: each written once, run by the operator and asked for its size by cub_plan ----

cudaError_t select_row_indices(void* temp, std::size_t& bytes, const KeepFlag& keep, std::uint32_t* idx,
                               std::uint32_t* num, int n, cudaStream_t st) {
  return prim::DeviceSelect::If(temp, bytes, Count(0), idx, num, n, keep, st);
}

// Indices of the kept rows into "cub.idx" (one single-pass DeviceSelect); returns how many, read
// back in a phase of its own ("readback": the count sizes the next step).
std::uint32_t select_rows(CudaRa::State& s, PhaseTimer& t, const KeepFlag& keep) {
  std::uint32_t* idx = s.scratch.get<std::uint32_t>("cub.idx", keep.n);
  std::uint32_t* num = s.scratch.get<std::uint32_t>("cub.num", 1);
  cub_call(s, "cub::DeviceSelect::If", [&](void* temp, std::size_t& bytes) {
    return select_row_indices(temp, bytes, keep, idx, num, static_cast<int>(keep.n), s.stream.get());
  });
  t.phase("readback");
  return read_count(s, num);
}

struct ValueAt {
  const std::uint32_t* in;
  std::uint32_t w, v;
  __host__ __device__ std::uint64_t operator()(std::uint32_t i) const {
    return in[static_cast<std::uint64_t>(i) * w + v];
  }
};

struct Fold {
  std::uint32_t op;
  __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const {
    return op == 0 ? a + b : op == 1 ? (a < b ? a : b) : (a > b ? a : b);
  }
};

// Word `word` (a value attribute) of every tuple, folded in 64 bits.
cudaError_t reduce_word(void* temp, std::size_t& bytes, const std::uint32_t* in, std::uint32_t w, std::uint32_t word,
                        std::uint64_t* out, int n, Fold fold, std::uint64_t identity, cudaStream_t st) {
  auto values = thrust::make_transform_iterator(Count(0), ValueAt{in, w, word});
  return prim::DeviceReduce::Reduce(temp, bytes, values, out, n, fold, identity, st);
}

// A 32-bit match count read as a JoinCount: CUB's scan accumulates in its input's value type.
struct Widen {
  __host__ __device__ JoinCount operator()(std::uint32_t c) const { return c; }
};

// The tuned join's match counts: each run's end galloped from its first match, which the sorted
// search found (first[i]; JoinKeys::count_from).
template <int KW>
struct GallopCounts {
  JoinKeys<KW> m;
  const std::uint32_t* first;
  __host__ __device__ JoinCount operator()(std::uint32_t i) const {
    return i < m.nl ? m.count_from(i, first[i]) : JoinCount{0};
  }
};

// Exclusive 64-bit scan of the match counts computed in the scan's loads (tuned: no count array).
template <int KW>
cudaError_t scan_fused_counts(void* temp, std::size_t& bytes, const JoinKeys<KW>& m, const std::uint32_t* first,
                              JoinCount* offsets, int items, cudaStream_t st) {
  auto counts = thrust::make_transform_iterator(Count(0), GallopCounts<KW>{m, first});
  return prim::DeviceScan::ExclusiveSum(temp, bytes, counts, offsets, items, st);
}

// ---- the tuned join's sorted search: every left key's first match by merge path -----------------
// A binary search of each left key over the whole right relation reads ~log2(nr) scattered rows a
// key (28 at 256M rows), and the writer searched again for each output tuple. Instead the two
// sorted key sequences are merged by merge path (left before right on equal keys), a tile of
// kSearchTile merged keys a block, staged in shared memory: a left key's first match is the number
// of right keys merged before it. Each key is read once, by consecutive threads.
constexpr int kSearchItems = 8;
constexpr std::uint32_t kSearchTile = kBlock * kSearchItems;

// The number of left keys among the first d merged keys (left first on ties): the merge path's
// split at diagonal d, by binary search on the keys at strides wl and wr.
template <int KW>
__host__ __device__ std::uint32_t join_split(const JoinKeys<KW>& m, std::uint64_t d) {
  std::uint32_t lo = static_cast<std::uint32_t>(d > m.nr ? d - m.nr : 0);
  std::uint32_t hi = static_cast<std::uint32_t>(std::min<std::uint64_t>(d, m.nl));
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    const std::uint64_t j = d - 1 - mid;  // the right key opposite left key mid on the diagonal
    if (compare_tuple(m.l + static_cast<std::uint64_t>(mid) * m.wl, m.r + j * m.wr, KW) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

template <int KW>
__global__ void join_search_partition(JoinKeys<KW> m, std::uint64_t tiles, std::uint32_t* parts) {
  const std::uint64_t t = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (t > tiles) return;
  parts[t] = join_split(m, std::min<std::uint64_t>(t * kSearchTile, std::uint64_t{m.nl} + m.nr));
}

// One tile: its left keys [a0, a1) and right keys [b0, b1) into shared memory (left then right,
// KW words each), each thread's kSearchItems merged keys from its diagonal on; a left key taken
// records the right keys before it.
template <int KW>
__global__ void __launch_bounds__(kBlock)
    join_sorted_search(JoinKeys<KW> m, const std::uint32_t* parts, std::uint32_t* first) {
  __shared__ std::uint32_t keys[kSearchTile * KW];
  const std::uint64_t tile = blockIdx.x, d0 = tile * kSearchTile;
  const std::uint64_t d1 = std::min<std::uint64_t>(d0 + kSearchTile, std::uint64_t{m.nl} + m.nr);
  const std::uint32_t a0 = parts[tile], a1 = parts[tile + 1];
  const auto b0 = static_cast<std::uint32_t>(d0 - a0);
  const std::uint32_t na = a1 - a0, n = static_cast<std::uint32_t>(d1 - d0), nb = n - na;
  for (std::uint32_t k = threadIdx.x; k < n * KW; k += kBlock) {
    const std::uint32_t key = k / KW, word = k % KW;
    keys[k] = key < na ? m.l[static_cast<std::uint64_t>(a0 + key) * m.wl + word]
                       : m.r[static_cast<std::uint64_t>(b0 + key - na) * m.wr + word];
  }
  __syncthreads();
  const std::uint32_t* ka = keys;
  const std::uint32_t* kb = keys + static_cast<std::size_t>(na) * KW;
  // This thread's split of the tile's merge at diagonal d (as join_split, in shared memory).
  const std::uint32_t d = std::min<std::uint32_t>(threadIdx.x * kSearchItems, n);
  std::uint32_t lo = d > nb ? d - nb : 0, hi = std::min(d, na);
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (compare_tuple(ka + static_cast<std::size_t>(mid) * KW, kb + static_cast<std::size_t>(d - 1 - mid) * KW, KW) <=
        0)
      lo = mid + 1;
    else
      hi = mid;
  }
  std::uint32_t i = lo, j = d - lo;
  for (int k = 0; k < kSearchItems && i + j < n; ++k) {
    if (j >= nb || (i < na && compare_tuple(ka + static_cast<std::size_t>(i) * KW,
                                            kb + static_cast<std::size_t>(j) * KW, KW) <= 0)) {
      first[a0 + i] = b0 + j;
      ++i;
    } else {
      ++j;
    }
  }
}

// Exclusive 64-bit scan of a 32-bit count array (cub).
cudaError_t scan_count_array(void* temp, std::size_t& bytes, const std::uint32_t* counts, JoinCount* offsets, int items,
                             cudaStream_t st) {
  auto wide = thrust::make_transform_iterator(counts, Widen{});
  return prim::DeviceScan::ExclusiveSum(temp, bytes, wide, offsets, items, st);
}

// A left row's match count fits 32 bits (fewer than 2^31 right rows); offsets do not.
template <int KW>
__global__ void match_counts(JoinKeys<KW> m, std::uint32_t* counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= m.nl) counts[i] = static_cast<std::uint32_t>(m(i));
}

// One thread per left row writes its matches at offsets[i].
template <int KW>
__global__ void join_write_rows(JoinKeys<KW> m, const JoinCount* offsets, std::uint32_t* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m.nl) return;
  const std::uint32_t ow = m.out_width();
  const JoinCount begin = offsets[i], cnt = offsets[i + 1] - begin;
  if (cnt == 0) return;
  const std::uint32_t f = m.first(i);
  for (JoinCount k = 0; k < cnt; ++k) m.write(i, f + static_cast<std::uint32_t>(k), out + (begin + k) * ow);
}

// One thread per output tuple (grid-stride, 64-bit output index): its left row is found by binary
// search in the offsets, so a key with a huge fan-out is spread over many threads and consecutive
// threads write consecutive tuples.
template <int KW>
__global__ void join_write_balanced(JoinKeys<KW> m, const JoinCount* offsets, const std::uint32_t* first,
                                    JoinCount total, std::uint32_t* out) {
  const std::uint32_t ow = m.out_width();
  const JoinCount stride = static_cast<JoinCount>(gridDim.x) * blockDim.x;
  for (JoinCount o = static_cast<JoinCount>(blockIdx.x) * blockDim.x + threadIdx.x; o < total; o += stride) {
    const std::uint32_t i = left_row_of(offsets, m.nl, o);
    m.write(i, first[i] + static_cast<std::uint32_t>(o - offsets[i]), out + o * ow);
  }
}

// Sort input: the key of row i and i itself, the pairs DeviceRadixSort orders; a 64-bit key as one
// number (high word first in the tuple).
__global__ void key_row_pairs(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t* keys,
                              std::uint32_t* rows) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = in[static_cast<std::uint64_t>(i) * w];
  rows[i] = i;
}
__global__ void key64_row_pairs(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint64_t* keys,
                                std::uint32_t* rows) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t* t = in + static_cast<std::uint64_t>(i) * w;
  keys[i] = (std::uint64_t{t[0]} << 32) | t[1];
  rows[i] = i;
}

cudaError_t sort_keys32(void* temp, std::size_t& bytes, const std::uint32_t* in, std::uint32_t* out, int n,
                        cudaStream_t st) {
  return prim::DeviceRadixSort::SortKeys(temp, bytes, in, out, n, 0, 32, st);
}
// Double buffers: CUB ping-pongs between the halves and needs no copy of its own in temp storage.
template <class Key>
cudaError_t sort_pairs(void* temp, std::size_t& bytes, prim::DoubleBuffer<Key>& keys,
                       prim::DoubleBuffer<std::uint32_t>& rows, int n, cudaStream_t st) {
  return prim::DeviceRadixSort::SortPairs(temp, bytes, keys, rows, n, 0, static_cast<int>(8 * sizeof(Key)), st);
}

// Tuples of four words are aligned to 16 bytes (a relation's rows are, from its 256-byte aligned
// start), so that CUB, which gives structs its untuned policy, at least loads each as one 16-byte
// vector rather than four words. Three and five words cannot be without padding.
template <int W>
constexpr std::size_t kTupAlign = W == 4 ? 16 : 4;

template <int W>
struct alignas(kTupAlign<W>) Tup {
  std::uint32_t w[W];
};

// Equality on the key (the first KW words) alone, so DeviceSelect::Unique keeps the first tuple of
// each key run.
template <int W, int KW>
struct alignas(kTupAlign<W>) KeyTup {
  std::uint32_t w[W];
  __host__ __device__ bool operator==(const KeyTup& o) const { return same_key<KW>(w, o.w); }
  __host__ __device__ bool operator!=(const KeyTup& o) const { return !same_key<KW>(w, o.w); }
};

template <int W>
struct TupInRange {
  std::uint32_t attr, lo, hi;
  __device__ bool operator()(const Tup<W>& t) const { return t.w[attr] >= lo && t.w[attr] <= hi; }
};

// A 64-bit key or value (words attr and attr + 1, high first) against 64-bit bounds.
template <int W>
struct TupWideInRange {
  std::uint32_t attr;
  std::uint64_t lo, hi;
  __device__ bool operator()(const Tup<W>& t) const {
    const std::uint64_t k = (std::uint64_t{t.w[attr]} << 32) | t.w[attr + 1];
    return k >= lo && k <= hi;
  }
};

// A tuple of two words as one 8-byte word (word 0 its low half, on the little-endian GPU): CUB
// selects primitive types with its tuned policy (sm_90: 8- and 16-byte loads, more items per
// thread), structs with its untuned fallback (4-byte loads: issue 45, the select at 36 % of the copy).
struct PairInRange {
  std::uint32_t shift, lo, hi;  // shift: 32 x the attribute's word
  __device__ bool operator()(std::uint64_t t) const {
    const auto x = static_cast<std::uint32_t>(t >> shift);
    return x >= lo && x <= hi;
  }
};
// A tuple of one word (the key) as that word.
struct WordInRange {
  std::uint32_t lo, hi;
  __device__ bool operator()(std::uint32_t x) const { return x >= lo && x <= hi; }
};
// A 64-bit key of two words (word 0 high, word 1 low, as TupWideInRange reads them).
struct PairWideInRange {
  std::uint64_t lo, hi;
  __device__ bool operator()(std::uint64_t t) const {
    const std::uint64_t k = (t << 32) | (t >> 32);
    return k >= lo && k <= hi;
  }
};

template <class Pred>
cudaError_t select_pairs(void* temp, std::size_t& bytes, const std::uint32_t* in, std::uint32_t* out,
                         std::uint32_t* num, int n, Pred p, cudaStream_t st) {
  return prim::DeviceSelect::If(temp, bytes, reinterpret_cast<const std::uint64_t*>(in),
                                reinterpret_cast<std::uint64_t*>(out), num, n, p, st);
}

template <int W, class Pred>
cudaError_t select_tuples(void* temp, std::size_t& bytes, const std::uint32_t* in, std::uint32_t* out,
                          std::uint32_t* num, int n, Pred p, cudaStream_t st) {
  return prim::DeviceSelect::If(temp, bytes, reinterpret_cast<const Tup<W>*>(in), reinterpret_cast<Tup<W>*>(out), num,
                                n, p, st);
}
template <int W, int KW>
cudaError_t unique_tuples(void* temp, std::size_t& bytes, const std::uint32_t* in, std::uint32_t* out,
                          std::uint32_t* num, int n, cudaStream_t st) {
  return prim::DeviceSelect::Unique(temp, bytes, reinterpret_cast<const KeyTup<W, KW>*>(in),
                                    reinterpret_cast<KeyTup<W, KW>*>(out), num, n, st);
}

// Tuples of one or two words as one 4- or 8-byte word (word 0 the low half), so that CUB takes its
// tuned policy for a primitive type, as select_pairs does. Where the key is the whole tuple (one
// word; two with a 64-bit key): Unique on the words. A 32-bit key in a two-word tuple is word 0
// alone: UniqueByKey with the words as keys and equality on their low halves; it carries no value
// (a constant in, discarded out), so only the words are loaded.
struct SameLowWord {
  __host__ __device__ bool operator()(std::uint64_t a, std::uint64_t b) const {
    return static_cast<std::uint32_t>(a) == static_cast<std::uint32_t>(b);
  }
};
template <int W, int KW>
cudaError_t unique_words(void* temp, std::size_t& bytes, const std::uint32_t* in, std::uint32_t* out,
                         std::uint32_t* num, int n, cudaStream_t st) {
  if constexpr (W == 1) {
    return prim::DeviceSelect::Unique(temp, bytes, in, out, num, n, st);
  } else if constexpr (KW == 2) {
    return prim::DeviceSelect::Unique(temp, bytes, reinterpret_cast<const std::uint64_t*>(in),
                                      reinterpret_cast<std::uint64_t*>(out), num, n, st);
  } else {
    return prim::DeviceSelect::UniqueByKey(
        temp, bytes, reinterpret_cast<const std::uint64_t*>(in), thrust::constant_iterator<std::uint8_t>(0),
        reinterpret_cast<std::uint64_t*>(out), thrust::make_discard_iterator(), num, n, SameLowWord{}, st);
  }
}

// The one call tuned select/unique makes for tuples of W words with keys of KW words; `call`
// receives it as f(temp, bytes).
template <int W, int KW, class Run>
auto tuned_compact_call(std::uint32_t mode, const Predicate& pred, const std::uint32_t* in, std::uint32_t* out,
                        std::uint32_t* num, int n, cudaStream_t st, Run&& run) {
  // Device buffers start 256-byte aligned; a relation that starts elsewhere would fault on a GPU.
  if (reinterpret_cast<std::uintptr_t>(in) % kTupAlign<W> || reinterpret_cast<std::uintptr_t>(out) % kTupAlign<W>)
    throw std::logic_error("tuned select/unique: a relation of " + std::to_string(W) + "-word tuples not aligned to " +
                           std::to_string(kTupAlign<W>) + " bytes");
  if (mode == kSelect) {
    if constexpr (W == 1) {
      const WordInRange p{pred.lo32(), pred.hi32()};
      return run("cub::DeviceSelect::If (keys as 4-byte words)", [&](void* temp, std::size_t& bytes) {
        return prim::DeviceSelect::If(temp, bytes, in, out, num, n, p, st);
      });
    } else if constexpr (W == 2) {
      if (pred.wide()) {
        const PairWideInRange p{pred.lo, pred.hi};
        return run("cub::DeviceSelect::If (tuples as 8-byte words, 64-bit attribute)",
                   [&](void* temp, std::size_t& bytes) { return select_pairs(temp, bytes, in, out, num, n, p, st); });
      }
      const PairInRange p{32u * static_cast<std::uint32_t>(pred.word()), pred.lo32(), pred.hi32()};
      return run("cub::DeviceSelect::If (tuples as 8-byte words)",
                 [&](void* temp, std::size_t& bytes) { return select_pairs(temp, bytes, in, out, num, n, p, st); });
    } else {
      if (pred.wide()) {
        const TupWideInRange<W> p{static_cast<std::uint32_t>(pred.word()), pred.lo, pred.hi};
        return run("cub::DeviceSelect::If (tuples, 64-bit attribute)", [&](void* temp, std::size_t& bytes) {
          return select_tuples<W>(temp, bytes, in, out, num, n, p, st);
        });
      }
      const TupInRange<W> p{static_cast<std::uint32_t>(pred.word()), pred.lo32(), pred.hi32()};
      return run("cub::DeviceSelect::If (tuples)",
                 [&](void* temp, std::size_t& bytes) { return select_tuples<W>(temp, bytes, in, out, num, n, p, st); });
    }
  }
  if constexpr (W <= 2) {
    const char* what = W == 1    ? "cub::DeviceSelect::Unique (keys as 4-byte words)"
                       : KW == 2 ? "cub::DeviceSelect::Unique (tuples as 8-byte words)"
                                 : "cub::DeviceSelect::UniqueByKey (tuples as 8-byte words, equal on word 0)";
    return run(what,
               [&](void* temp, std::size_t& bytes) { return unique_words<W, KW>(temp, bytes, in, out, num, n, st); });
  } else {
    return run("cub::DeviceSelect::Unique (tuples)",
               [&](void* temp, std::size_t& bytes) { return unique_tuples<W, KW>(temp, bytes, in, out, num, n, st); });
  }
}

// Calls tuned_compact_call<W, KW> for the run-time width w and key words kw: a key and up to three
// values (1..4 words with a 32-bit key, 2..5 with a 64-bit key).
template <class Run>
auto tuned_compact_dispatch(int w, int kw, std::uint32_t mode, const Predicate& pred, const std::uint32_t* in,
                            std::uint32_t* out, std::uint32_t* num, int n, cudaStream_t st, Run&& run) {
  if (kw == 2) {
    switch (w) {
      case 2: return tuned_compact_call<2, 2>(mode, pred, in, out, num, n, st, run);
      case 3: return tuned_compact_call<3, 2>(mode, pred, in, out, num, n, st, run);
      case 4: return tuned_compact_call<4, 2>(mode, pred, in, out, num, n, st, run);
      default: return tuned_compact_call<5, 2>(mode, pred, in, out, num, n, st, run);
    }
  }
  switch (w) {
    case 1: return tuned_compact_call<1, 1>(mode, pred, in, out, num, n, st, run);
    case 2: return tuned_compact_call<2, 1>(mode, pred, in, out, num, n, st, run);
    case 3: return tuned_compact_call<3, 1>(mode, pred, in, out, num, n, st, run);
    default: return tuned_compact_call<4, 1>(mode, pred, in, out, num, n, st, run);
  }
}

template <int KW>
Breakdown cub_join_kw(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, bool tuned,
                      DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  if (empty_join(l, r, out_handle)) return t.finish();
  const int out_values = l.values() + r.values();
  const JoinKeys<KW> m{l.data(), nl, static_cast<std::uint32_t>(l.width()),
                       r.data(), nr, static_cast<std::uint32_t>(r.width())};
  JoinCount* offsets = s.scratch.get<JoinCount>("cub.join.offsets", static_cast<std::uint64_t>(nl) + 1);
  const int items = static_cast<int>(nl) + 1;  // nl < 2^31 - 1 (rows32): CUB's int num_items holds it
  std::uint32_t* first = nullptr;
  if (tuned) {
    // Every left key's first match by merge path, then the counts computed inside the scan's loads
    // (galloped from the first match): no count array is written or read back.
    t.phase("search");
    const std::uint64_t tiles = (std::uint64_t{nl} + nr + kSearchTile - 1) / kSearchTile;
    std::uint32_t* parts = s.scratch.get<std::uint32_t>("cub.join.parts", tiles + 1);
    first = s.scratch.get<std::uint32_t>("cub.join.first", nl);
    HDB_LAUNCH(join_search_partition<KW>, static_cast<std::uint32_t>((tiles + 1 + kBlock - 1) / kBlock), kBlock, 0,
               s.stream.get())
    (m, tiles, parts);
    HDB_CUDA_CHECK_LAUNCH("join_search_partition");
    HDB_LAUNCH(join_sorted_search<KW>, static_cast<std::uint32_t>(tiles), kBlock, 0, s.stream.get())(m, parts, first);
    HDB_CUDA_CHECK_LAUNCH("join_sorted_search");
    t.phase("scan");
    cub_call(s, "cub::DeviceScan::ExclusiveSum (fused counts, galloped)", [&](void* temp, std::size_t& bytes) {
      return scan_fused_counts<KW>(temp, bytes, m, first, offsets, items, s.stream.get());
    });
  } else {
    std::uint32_t* counts = s.scratch.get<std::uint32_t>("cub.join.counts", static_cast<std::uint64_t>(nl) + 1);
    t.phase("partition");
    HDB_LAUNCH(match_counts<KW>, (nl + 1 + kBlock - 1) / kBlock, kBlock, 0, s.stream.get())(m, counts);
    HDB_CUDA_CHECK_LAUNCH("match_counts");
    t.phase("scan");
    scan_counts(s, counts, offsets, static_cast<std::uint64_t>(items));
  }
  t.phase("readback");  // the total sizes the output
  const JoinCount total = read_count64(s, offsets + nl);
  CudaRelation& out = ensure(out_handle, total, out_values, KW);
  if (total) {
    t.phase("compute");
    if (tuned) {
      // One thread per output tuple up to the grid's 2^31 - 1 blocks, then grid strides.
      const JoinCount blocks = std::min<JoinCount>((total + kBlock - 1) / kBlock, 0x7fffffffull);
      HDB_LAUNCH(join_write_balanced<KW>, static_cast<std::uint32_t>(blocks), kBlock, 0, s.stream.get())
      (m, offsets, first, total, out.data());
    } else {
      HDB_LAUNCH(join_write_rows<KW>, (nl + kBlock - 1) / kBlock, kBlock, 0, s.stream.get())(m, offsets, out.data());
    }
    HDB_CUDA_CHECK_LAUNCH("join write");
  }
  return t.finish();
}

// ---- plan_scratch ---------------------------------------------------------------------------------

bool device_present() {
  int count = 0;
  const bool present = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();  // clear the error a machine without a driver leaves
  return present;
}

// CUB's temporary storage for `call`, asked as the operator asks (d_temp_storage == nullptr: CUB
// computes the size and launches nothing). The query still needs a device: CUB picks its tuning
// policy (tile sizes, hence the tile-state and histogram sizes) from the device's PTX version and
// fails (cudaGetDevice / cudaFuncGetAttributes) where there is none. Only then (the host unit
// tests; the benchmark plans after the platform found a device) the plan takes `bound`, an upper
// bound given where it is called; any other failure is an error.
template <class Call>
std::uint64_t cub_temp_bytes(const char* what, std::uint64_t bound, Call&& call) {
  std::size_t bytes = 0;
  const cudaError_t err = call(static_cast<void*>(nullptr), bytes);
  if (err == cudaSuccess) return bytes;
  cudaGetLastError();
  if (!device_present()) return bound;
  hdb::cuda::check(err, what, __FILE__, __LINE__);
  return bytes;
}

// Upper bounds of CUB 3.x's temporary storage where no device can be asked (see cub_temp_bytes):
//  - single-pass scans and selections (decoupled look-back): one tile status of at most 24 bytes
//    (a status word and two 64-bit partials) per tile of at least 128 items, plus padding tiles
//    and alignment: below n / 4 bytes + 1 MiB;
//  - reductions: one partial per block of a grid of at most a few thousand blocks: 1 MiB;
//  - radix sort over double buffers (onesweep): per pass 256 bins per portion of 2^28 items, and
//    a look-back of 256 4-byte counters per tile of at least 256 items: below 4n bytes + 8 MiB
//    (the 8 MiB also covers the older upsweep/downsweep spine); SortKeys from one buffer into
//    another adds CUB's own copy of the keys (n x key bytes).
std::uint64_t single_pass_bound(std::uint64_t n) { return n / 4 + (1ull << 20); }
constexpr std::uint64_t kReduceBound = 1ull << 20;
std::uint64_t radix_sort_bound(std::uint64_t n) { return 4 * n + (8ull << 20); }

// The query's num_items: the operator's own (below 2^31 - 1; larger inputs are skipped by rows32
// when the operator runs, so their plan only needs to be no smaller than this one).
int items_of(std::uint64_t n) { return static_cast<int>(std::min<std::uint64_t>(n, 0x7ffffffeull)); }

}  // namespace

Breakdown cub_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const CudaRelation* other,
                      const Predicate& pred, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) {
    ensure(out_handle, 0, in.values(), in.key_words());
    return t.finish();
  }
  t.phase("select");
  const std::uint32_t total = select_rows(s, t, keep_flag(mode, in, other, pred));
  CudaRelation& out = ensure(out_handle, total, in.values(), in.key_words());
  t.phase("gather");
  launch_gather_rows(s, in.data(), static_cast<std::uint32_t>(in.width()), s.scratch.get<std::uint32_t>("cub.idx", 0),
                     total, out.data());
  return t.finish();
}

Breakdown cub_union(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t w = static_cast<std::uint32_t>(a.width());
  const std::uint32_t n = rows32(a.rows());  // skips before anything runs
  std::uint32_t kept = 0;
  std::uint32_t* bprime = nullptr;
  if (b.rows()) {
    t.phase("select");
    kept = select_rows(s, t, keep_flag(kUnionKeep, b, &a, Predicate{}));
    bprime = s.scratch.get<std::uint32_t>("cub.union.b", static_cast<std::uint64_t>(kept) * w);
    t.phase("gather");
    launch_gather_rows(s, b.data(), w, s.scratch.get<std::uint32_t>("cub.idx", 0), kept, bprime);
  }
  CudaRelation& out = ensure(out_handle, static_cast<std::uint64_t>(n) + kept, a.values(), a.key_words());
  t.phase("merge");
  launch_merge_scatter(s, a.data(), n, bprime, kept, w, out.data());
  return t.finish();
}

Breakdown cub_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result) {
  PhaseTimer& t = s.begin_op();
  result = identity_aggregate(in.values(), op);
  const std::uint64_t identity = op == ReduceOp::Min ? 0xffffffffull : 0;
  const std::uint32_t n = rows32(in.rows());
  if (n == 0 || in.values() == 0) return t.finish();
  std::uint64_t* d_out = s.scratch.get<std::uint64_t>("cub.reduce", static_cast<std::uint64_t>(in.values()));
  const Fold fold{op == ReduceOp::Sum ? 0u : op == ReduceOp::Min ? 1u : 2u};
  const auto w = static_cast<std::uint32_t>(in.width()), kw = static_cast<std::uint32_t>(in.key_words());
  t.phase("compute");
  for (int v = 0; v < in.values(); ++v) {
    cub_call(s, "cub::DeviceReduce::Reduce", [&](void* temp, std::size_t& bytes) {
      return reduce_word(temp, bytes, in.data(), w, kw + static_cast<std::uint32_t>(v), d_out + v, static_cast<int>(n),
                         fold, identity, s.stream.get());
    });
  }
  t.close();  // the read-back of the results ends the operator: outside its kernel time
  read_results(s, d_out, in.values(), result);
  return t.finish();
}

Breakdown cub_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) {
    ensure(out_handle, 0, in.values(), in.key_words());
    return t.finish();
  }
  t.phase("select");
  const std::uint32_t runs = select_rows(s, t, keep_flag(kUnique, in, nullptr, Predicate{}));
  CudaRelation& out = ensure(out_handle, runs, in.values(), in.key_words());
  t.phase("compute");
  launch_reduce_runs(s, in, op, s.scratch.get<std::uint32_t>("cub.idx", 0), runs, out.data());
  return t.finish();
}

Breakdown cub_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, bool tuned, DeviceRel& out_handle) {
  return l.key_words() == 2 ? cub_join_kw<2>(s, l, r, tuned, out_handle) : cub_join_kw<1>(s, l, r, tuned, out_handle);
}

Breakdown cub_sort(CudaRa::State& s, const CudaRelation& in, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  const auto w = static_cast<std::uint32_t>(in.width());
  const int kw = in.key_words();
  CudaRelation& out = ensure(out_handle, n, in.values(), kw);
  if (n == 0) return t.finish();
  t.phase("sort");
  // Radix sort is stable, so equal keys keep their input order. 32-bit keys alone: sorted in place
  // of the output, nothing to gather. (A 64-bit key alone is two words high first, not a
  // little-endian 64-bit number: it takes the pairs path.)
  if (w == 1) {
    cub_call(s, "cub::DeviceRadixSort::SortKeys", [&](void* temp, std::size_t& bytes) {
      return sort_keys32(temp, bytes, in.data(), out.data(), static_cast<int>(n), s.stream.get());
    });
    return t.finish();
  }
  std::uint32_t* rows = s.scratch.get<std::uint32_t>("cub.sort.rows", 2 * static_cast<std::uint64_t>(n));
  prim::DoubleBuffer<std::uint32_t> drows(rows, rows + n);
  if (kw == 2) {
    auto* keys = s.scratch.get<std::uint64_t>("cub.sort.keys64", 2 * static_cast<std::uint64_t>(n));
    HDB_LAUNCH(key64_row_pairs, (n + kBlock - 1) / kBlock, kBlock, 0, s.stream.get())(in.data(), n, w, keys, rows);
    HDB_CUDA_CHECK_LAUNCH("key64_row_pairs");
    prim::DoubleBuffer<std::uint64_t> dkeys(keys, keys + n);
    cub_call(s, "cub::DeviceRadixSort::SortPairs (64-bit keys)", [&](void* temp, std::size_t& bytes) {
      return sort_pairs(temp, bytes, dkeys, drows, static_cast<int>(n), s.stream.get());
    });
  } else {
    std::uint32_t* keys = s.scratch.get<std::uint32_t>("cub.sort.keys", 2 * static_cast<std::uint64_t>(n));
    HDB_LAUNCH(key_row_pairs, (n + kBlock - 1) / kBlock, kBlock, 0, s.stream.get())(in.data(), n, w, keys, rows);
    HDB_CUDA_CHECK_LAUNCH("key_row_pairs");
    prim::DoubleBuffer<std::uint32_t> dkeys(keys, keys + n);
    cub_call(s, "cub::DeviceRadixSort::SortPairs", [&](void* temp, std::size_t& bytes) {
      return sort_pairs(temp, bytes, dkeys, drows, static_cast<int>(n), s.stream.get());
    });
  }
  t.phase("gather");
  launch_gather_rows(s, in.data(), w, drows.Current(), n, out.data());
  return t.finish();
}

Breakdown tuned_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const Predicate& pred,
                        DeviceRel& out_handle) {
  const int w = in.width();
  // Running the cub path here would record cub's time as tuned's: say so instead.
  if (w > in.key_words() + 3)
    throw SkipCase("tuned select/unique handles tuples of a key and up to 3 values, these have " +
                   std::to_string(in.values()) + " values (variant cub runs them)");
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  // One pass writes straight into the output, so it is sized for the worst case (every tuple kept)
  // and its row count set from the selected count afterwards.
  CudaRelation& out = ensure(out_handle, n, in.values(), in.key_words());
  if (n) {
    std::uint32_t* num = s.scratch.get<std::uint32_t>("cub.num", 1);
    Predicate p = pred;
    p.key_words = in.key_words();
    t.phase("compute");
    tuned_compact_dispatch(w, in.key_words(), mode, p, in.data(), out.data(), num, static_cast<int>(n), s.stream.get(),
                           [&](const char* what, auto&& call) { cub_call(s, what, call); });
    t.close();  // the read-back of the count ends the operator: outside its kernel time
    out.shape(read_count(s, num), in.values(), in.key_words());
  }
  return t.finish();
}

void scan_counts(CudaRa::State& s, const std::uint32_t* counts, JoinCount* offsets, std::uint64_t items) {
  cub_call(s, "cub::DeviceScan::ExclusiveSum", [&](void* temp, std::size_t& bytes) {
    return scan_count_array(temp, bytes, counts, offsets, static_cast<int>(items), s.stream.get());
  });
}

std::uint64_t scan_counts_temp_bytes(std::uint64_t items) {
  return cub_temp_bytes("cub::DeviceScan::ExclusiveSum", single_pass_bound(items), [&](void* t, std::size_t& bytes) {
    return scan_count_array(t, bytes, nullptr, nullptr, items_of(items), nullptr);
  });
}

void cub_plan(const OpShape& shape, bool tuned, MemoryPlan& plan) {
  const std::uint64_t na = shape.rows_a, wa = static_cast<std::uint64_t>(shape.width_a);
  const int kw = shape.key_words;
  const cudaStream_t st = nullptr;
  // Indices and count of a DeviceSelect over rows, and its temporary storage.
  auto plan_select_rows = [&](std::uint64_t rows) {
    plan.add("selected row indices", rows * 4).add("selected count", 4);
    plan.add("cub select temporary storage",
             cub_temp_bytes("cub::DeviceSelect::If", single_pass_bound(rows), [&](void* temp, std::size_t& bytes) {
               return select_row_indices(temp, bytes, KeepFlag{}, nullptr, nullptr, items_of(rows), st);
             }));
  };
  switch (shape.op) {
    case Op::Select:
    case Op::Unique:
      if (!na) break;
      if (!tuned) {
        plan_select_rows(na);
        break;
      }
      if (wa > static_cast<std::uint64_t>(kw) + 3) break;  // skipped when it runs
      {
        Predicate pred;  // attribute 0: the 64-bit key's comparison where the key is 64-bit
        pred.key_words = kw;
        const std::uint32_t mode = shape.op == Op::Select ? kSelect : kUnique;
        // The single pass writes into an output sized for every tuple kept; the benchmark counts
        // the output at the rows selected, so the rest is counted here.
        plan.add("output rows beyond the selected ones (sized for all)", (na - std::min(shape.out_rows, na)) * wa * 4);
        plan.add("selected count", 4);
        plan.add("cub select temporary storage",
                 tuned_compact_dispatch(
                     static_cast<int>(wa), kw, mode, pred, nullptr, nullptr, nullptr, items_of(na), st,
                     [&](const char* what, auto&& call) { return cub_temp_bytes(what, single_pass_bound(na), call); }));
      }
      break;
    case Op::SetIntersection:
    case Op::SetDifference:
    case Op::ReduceByKey:
      if (na) plan_select_rows(na);
      break;
    case Op::SetUnion:
      if (!shape.rows_b) break;
      plan_select_rows(shape.rows_b);
      plan.add("b's tuples beyond a's (at most all of b)",
               shape.rows_b * static_cast<std::uint64_t>(shape.width_b) * 4);
      break;
    case Op::Reduce: {
      const std::uint64_t values = wa > static_cast<std::uint64_t>(kw) ? wa - static_cast<std::uint64_t>(kw) : 0;
      if (!na || !values) break;
      plan.add("reduce results", values * 8);
      if (tuned) break;  // one kernel, atomics into the results
      plan.add("cub reduce temporary storage",
               cub_temp_bytes("cub::DeviceReduce::Reduce", kReduceBound, [&](void* temp, std::size_t& bytes) {
                 return reduce_word(temp, bytes, nullptr, static_cast<std::uint32_t>(wa),
                                    static_cast<std::uint32_t>(kw), nullptr, items_of(na), Fold{0}, 0, st);
               }));
      break;
    }
    case Op::Join: {
      if (!na || !shape.rows_b) break;
      const std::uint64_t items = na + 1;
      plan.add("join offsets (64-bit)", items * sizeof(JoinCount));
      std::uint64_t temp = 0;
      if (tuned) {
        const std::uint64_t tiles = (na + shape.rows_b + kSearchTile - 1) / kSearchTile;
        plan.add("join first matches", na * 4).add("join search partitions", (tiles + 1) * 4);
        auto fused = [&](auto m) {
          return cub_temp_bytes("cub::DeviceScan::ExclusiveSum (fused counts, galloped)", single_pass_bound(items),
                                [&](void* t, std::size_t& bytes) {
                                  return scan_fused_counts(t, bytes, m, nullptr, nullptr, items_of(items), st);
                                });
        };
        temp = kw == 2 ? fused(JoinKeys<2>{}) : fused(JoinKeys<1>{});
      } else {
        plan.add("join match counts", items * 4);
        temp = scan_counts_temp_bytes(items);
      }
      plan.add("cub scan temporary storage", temp);
      break;
    }
    case Op::Sort: {
      if (!na) break;
      const int n = items_of(na);
      if (wa == 1) {
        plan.add("cub radix sort temporary storage (with its own copy of the keys)",
                 cub_temp_bytes("cub::DeviceRadixSort::SortKeys", radix_sort_bound(na) + 4 * na,
                                [&](void* temp, std::size_t& bytes) {
                                  return sort_keys32(temp, bytes, nullptr, nullptr, n, st);
                                }));
        break;
      }
      plan.add("sort keys (double buffer)", 2 * na * 4 * static_cast<std::uint64_t>(kw))
          .add("sort row numbers (double buffer)", 2 * na * 4);
      prim::DoubleBuffer<std::uint32_t> rows;
      std::uint64_t temp = 0;
      if (kw == 2) {
        prim::DoubleBuffer<std::uint64_t> keys;
        temp = cub_temp_bytes("cub::DeviceRadixSort::SortPairs (64-bit keys)", radix_sort_bound(na),
                              [&](void* t, std::size_t& bytes) { return sort_pairs(t, bytes, keys, rows, n, st); });
      } else {
        prim::DoubleBuffer<std::uint32_t> keys;
        temp = cub_temp_bytes("cub::DeviceRadixSort::SortPairs", radix_sort_bound(na),
                              [&](void* t, std::size_t& bytes) { return sort_pairs(t, bytes, keys, rows, n, st); });
      }
      plan.add("cub radix sort temporary storage", temp);
      break;
    }
    default: break;  // project, product, arithmetic: one kernel, no scratch
  }
}

}  // namespace hdb::ra::cuda
