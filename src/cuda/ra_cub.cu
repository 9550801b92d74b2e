// The cub variant (library compositions, sort included) and the tuned variant of select, unique
// and join (single pass where the library allows it, fused count+scan and a load-balanced writer).
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
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
}

// Indices of the kept rows into "cub.idx" (one single-pass DeviceSelect); returns how many.
std::uint32_t select_rows(CudaRa::State& s, const KeepFlag& keep) {
  std::uint32_t* idx = s.scratch.get<std::uint32_t>("cub.idx", keep.n);
  std::uint32_t* num = s.scratch.get<std::uint32_t>("cub.num", 1);
  cub_call(s, "cub::DeviceSelect::If", [&](void* temp, std::size_t& bytes) {
    return cub::DeviceSelect::If(temp, bytes, Count(0), idx, num, static_cast<int>(keep.n), keep, s.stream.get());
  });
  return read_count(s, num);
}

struct ValueAt {
  const std::uint32_t* in;
  std::uint32_t w, v;
  __host__ __device__ std::uint64_t operator()(std::uint32_t i) const { return in[static_cast<std::uint64_t>(i) * w + v]; }
};

struct Fold {
  std::uint32_t op;
  __device__ std::uint64_t operator()(std::uint64_t a, std::uint64_t b) const {
    return op == 0 ? a + b : op == 1 ? (a < b ? a : b) : (a > b ? a : b);
  }
};

// Matches of left row i in right (0 for i == nl, so an exclusive scan over nl + 1 items ends in
// the total).
struct MatchCount {
  const std::uint32_t* l;
  std::uint32_t nl, wl;
  const std::uint32_t* r;
  std::uint32_t nr, wr;
  __host__ __device__ std::uint32_t first(std::uint32_t i) const {
    const std::uint32_t key = l[static_cast<std::uint64_t>(i) * wl];
    return lower_bound_rows(r, 0, nr, wr, &key, 1);
  }
  __host__ __device__ std::uint32_t operator()(std::uint32_t i) const {
    if (i >= nl) return 0;
    const std::uint32_t key = l[static_cast<std::uint64_t>(i) * wl];
    const std::uint32_t f = lower_bound_rows(r, 0, nr, wr, &key, 1);
    return upper_bound_rows(r, f, nr, wr, &key, 1) - f;
  }
};

__device__ void write_joined(const MatchCount& m, std::uint32_t i, std::uint32_t j, std::uint32_t* dst) {
  for (std::uint32_t k = 0; k < m.wl; ++k) dst[k] = m.l[static_cast<std::uint64_t>(i) * m.wl + k];
  for (std::uint32_t k = 1; k < m.wr; ++k) dst[m.wl + k - 1] = m.r[static_cast<std::uint64_t>(j) * m.wr + k];
}

__global__ void match_counts(MatchCount m, std::uint32_t* counts) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= m.nl) counts[i] = m(i);
}

// One thread per left row writes its matches at offsets[i].
__global__ void join_write_rows(MatchCount m, const std::uint32_t* offsets, std::uint32_t* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= m.nl) return;
  const std::uint32_t ow = m.wl + m.wr - 1;
  const std::uint32_t cnt = offsets[i + 1] - offsets[i];
  if (cnt == 0) return;
  const std::uint32_t f = m.first(i);
  for (std::uint32_t k = 0; k < cnt; ++k)
    write_joined(m, i, f + k, out + (static_cast<std::uint64_t>(offsets[i]) + k) * ow);
}

// One thread per output tuple: its left row is found by binary search in the offsets, so a key
// with a huge fan-out is spread over many threads and consecutive threads write consecutive tuples.
__global__ void join_write_balanced(MatchCount m, const std::uint32_t* offsets, std::uint32_t total, std::uint32_t* out) {
  const std::uint32_t o = blockIdx.x * blockDim.x + threadIdx.x;
  if (o >= total) return;
  std::uint32_t lo = 0, hi = m.nl + 1;  // first index with offsets[idx] > o
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= o) lo = mid + 1;
    else hi = mid;
  }
  const std::uint32_t i = lo - 1;
  write_joined(m, i, m.first(i) + (o - offsets[i]), out + static_cast<std::uint64_t>(o) * (m.wl + m.wr - 1));
}

// Sort input: the key of row i and i itself, the pairs DeviceRadixSort orders.
__global__ void key_row_pairs(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t* keys,
                              std::uint32_t* rows) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  keys[i] = in[static_cast<std::uint64_t>(i) * w];
  rows[i] = i;
}

template <int W>
struct Tup {
  std::uint32_t w[W];
};

// Equality on the key alone, so DeviceSelect::Unique keeps the first tuple of each key run.
template <int W>
struct KeyTup {
  std::uint32_t w[W];
  __host__ __device__ bool operator==(const KeyTup& o) const { return w[0] == o.w[0]; }
  __host__ __device__ bool operator!=(const KeyTup& o) const { return w[0] != o.w[0]; }
};

template <int W>
struct TupInRange {
  std::uint32_t attr, lo, hi;
  __device__ bool operator()(const Tup<W>& t) const { return t.w[attr] >= lo && t.w[attr] <= hi; }
};

template <int W>
void tuned_compact_w(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const Predicate& pred,
                     std::uint32_t* out, std::uint32_t* num) {
  const int n = static_cast<int>(in.rows());
  if (mode == kSelect) {
    TupInRange<W> p{static_cast<std::uint32_t>(pred.word()), pred.lo32(), pred.hi32()};
    cub_call(s, "cub::DeviceSelect::If (tuples)", [&](void* temp, std::size_t& bytes) {
      return cub::DeviceSelect::If(temp, bytes, reinterpret_cast<const Tup<W>*>(in.data()), reinterpret_cast<Tup<W>*>(out),
                                   num, n, p, s.stream.get());
    });
  } else {
    cub_call(s, "cub::DeviceSelect::Unique (tuples)", [&](void* temp, std::size_t& bytes) {
      return cub::DeviceSelect::Unique(temp, bytes, reinterpret_cast<const KeyTup<W>*>(in.data()),
                                       reinterpret_cast<KeyTup<W>*>(out), num, n, s.stream.get());
    });
  }
}

}  // namespace

Breakdown cub_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const CudaRelation* other,
                      const Predicate& pred, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) {
    ensure(out_handle, 0, in.values());
    return t.finish();
  }
  t.phase("select");
  const std::uint32_t total = select_rows(s, keep_flag(mode, in, other, pred));
  CudaRelation& out = ensure(out_handle, total, in.values());
  t.phase("gather");
  launch_gather_rows(s, in.data(), static_cast<std::uint32_t>(in.width()), s.scratch.get<std::uint32_t>("cub.idx", 0), total,
                     out.data());
  return t.finish();
}

Breakdown cub_union(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t w = static_cast<std::uint32_t>(a.width());
  std::uint32_t kept = 0;
  std::uint32_t* bprime = nullptr;
  if (b.rows()) {
    t.phase("select");
    kept = select_rows(s, keep_flag(kUnionKeep, b, &a, Predicate{}));
    bprime = s.scratch.get<std::uint32_t>("cub.union.b", static_cast<std::uint64_t>(kept) * w);
    t.phase("gather");
    launch_gather_rows(s, b.data(), w, s.scratch.get<std::uint32_t>("cub.idx", 0), kept, bprime);
  }
  const std::uint32_t n = rows32(a.rows());
  CudaRelation& out = ensure(out_handle, static_cast<std::uint64_t>(n) + kept, a.values());
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
  t.phase("compute");
  for (int v = 0; v < in.values(); ++v) {
    auto values = thrust::make_transform_iterator(
        Count(0), ValueAt{in.data(), static_cast<std::uint32_t>(in.width()), static_cast<std::uint32_t>(v + 1)});
    cub_call(s, "cub::DeviceReduce::Reduce", [&](void* temp, std::size_t& bytes) {
      return cub::DeviceReduce::Reduce(temp, bytes, values, d_out + v, static_cast<int>(n), fold, identity, s.stream.get());
    });
  }
  HDB_CUDA_CHECK(cudaMemcpyAsync(result.value.data(), d_out, static_cast<std::size_t>(in.values()) * sizeof(std::uint64_t),
                                 cudaMemcpyDeviceToHost, s.stream.get()));
  return t.finish();
}

Breakdown cub_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) {
    ensure(out_handle, 0, in.values());
    return t.finish();
  }
  t.phase("select");
  const std::uint32_t runs = select_rows(s, keep_flag(kUnique, in, nullptr, Predicate{}));
  CudaRelation& out = ensure(out_handle, runs, in.values());
  t.phase("compute");
  launch_reduce_runs(s, in, op, s.scratch.get<std::uint32_t>("cub.idx", 0), runs, out.data());
  return t.finish();
}

Breakdown cub_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, bool tuned, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  const int out_values = l.values() + r.values();
  if (nl == 0 || nr == 0) {
    ensure(out_handle, 0, out_values);
    return t.finish();
  }
  const MatchCount m{l.data(), nl, static_cast<std::uint32_t>(l.width()), r.data(), nr, static_cast<std::uint32_t>(r.width())};
  std::uint32_t* offsets = s.scratch.get<std::uint32_t>("cub.join.offsets", static_cast<std::uint64_t>(nl) + 1);
  const int items = static_cast<int>(nl) + 1;
  if (tuned) {
    // Counts computed inside the scan's loads: no count array is written or read back.
    t.phase("scan");
    auto counts = thrust::make_transform_iterator(Count(0), m);
    cub_call(s, "cub::DeviceScan::ExclusiveSum (fused counts)", [&](void* temp, std::size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, counts, offsets, items, s.stream.get());
    });
  } else {
    std::uint32_t* counts = s.scratch.get<std::uint32_t>("cub.join.counts", static_cast<std::uint64_t>(nl) + 1);
    t.phase("partition");
    match_counts<<<(nl + 1 + kBlock - 1) / kBlock, kBlock, 0, s.stream.get()>>>(m, counts);
    HDB_CUDA_CHECK_LAUNCH("match_counts");
    t.phase("scan");
    cub_call(s, "cub::DeviceScan::ExclusiveSum", [&](void* temp, std::size_t& bytes) {
      return cub::DeviceScan::ExclusiveSum(temp, bytes, counts, offsets, items, s.stream.get());
    });
  }
  const std::uint32_t total = read_count(s, offsets + nl);
  CudaRelation& out = ensure(out_handle, total, out_values);
  if (total) {
    t.phase("compute");
    if (tuned) join_write_balanced<<<(total + kBlock - 1) / kBlock, kBlock, 0, s.stream.get()>>>(m, offsets, total, out.data());
    else join_write_rows<<<(nl + kBlock - 1) / kBlock, kBlock, 0, s.stream.get()>>>(m, offsets, out.data());
    HDB_CUDA_CHECK_LAUNCH("join write");
  }
  return t.finish();
}

Breakdown cub_sort(CudaRa::State& s, const CudaRelation& in, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  const auto w = static_cast<std::uint32_t>(in.width());
  CudaRelation& out = ensure(out_handle, n, in.values());
  if (n == 0) return t.finish();
  t.phase("sort");
  // Radix sort is stable, so equal keys keep their input order. Keys alone: sorted in place of the
  // output, nothing to gather.
  if (w == 1) {
    cub_call(s, "cub::DeviceRadixSort::SortKeys", [&](void* temp, std::size_t& bytes) {
      return cub::DeviceRadixSort::SortKeys(temp, bytes, in.data(), out.data(), static_cast<int>(n), 0, 32, s.stream.get());
    });
    return t.finish();
  }
  // Double buffers: CUB ping-pongs between the halves and needs no copy of its own in temp storage.
  std::uint32_t* keys = s.scratch.get<std::uint32_t>("cub.sort.keys", 2 * static_cast<std::uint64_t>(n));
  std::uint32_t* rows = s.scratch.get<std::uint32_t>("cub.sort.rows", 2 * static_cast<std::uint64_t>(n));
  key_row_pairs<<<(n + kBlock - 1) / kBlock, kBlock, 0, s.stream.get()>>>(in.data(), n, w, keys, rows);
  HDB_CUDA_CHECK_LAUNCH("key_row_pairs");
  cub::DoubleBuffer<std::uint32_t> dkeys(keys, keys + n), drows(rows, rows + n);
  cub_call(s, "cub::DeviceRadixSort::SortPairs", [&](void* temp, std::size_t& bytes) {
    return cub::DeviceRadixSort::SortPairs(temp, bytes, dkeys, drows, static_cast<int>(n), 0, 32, s.stream.get());
  });
  t.phase("gather");
  launch_gather_rows(s, in.data(), w, drows.Current(), n, out.data());
  return t.finish();
}

Breakdown tuned_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const Predicate& pred,
                        DeviceRel& out_handle) {
  const int w = in.width();
  // Running the cub path here would record cub's time as tuned's: say so instead.
  if (w > 4)
    throw SkipCase("tuned select/unique handles tuples of up to 4 words, these have " + std::to_string(w) +
                   " (variant cub runs them)");
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  // One pass writes straight into the output, so it is sized for the worst case (every tuple kept)
  // and its row count set from the selected count afterwards.
  CudaRelation& out = ensure(out_handle, n, in.values());
  if (n) {
    std::uint32_t* num = s.scratch.get<std::uint32_t>("cub.num", 1);
    t.phase("compute");
    switch (w) {
      case 1: tuned_compact_w<1>(s, mode, in, pred, out.data(), num); break;
      case 2: tuned_compact_w<2>(s, mode, in, pred, out.data(), num); break;
      case 3: tuned_compact_w<3>(s, mode, in, pred, out.data(), num); break;
      default: tuned_compact_w<4>(s, mode, in, pred, out.data(), num); break;
    }
    out.shape(read_count(s, num), in.values());
  }
  return t.finish();
}

}  // namespace hdb::ra::cuda
