// The paper's multi-kernel structure on CUDA, kernel for kernel the same as kernels/ra.cl: a
// partition kernel stages kept tuples in shared memory after a Hillis-Steele prefix sum and writes
// them in bulk to its partition's slot, scan kernels turn partition counts into offsets, and a
// gather kernel closes the gaps.
#include "ra_device.cuh"

namespace hdb::ra::cuda {
namespace {

// Exclusive block scan of one value per thread (Algorithm 3), double-buffered in shared memory.
__device__ std::uint32_t block_exclusive_scan(std::uint32_t x, std::uint32_t* tmp, std::uint32_t& total) {
  const unsigned lid = threadIdx.x;
  std::uint32_t* src = tmp;
  std::uint32_t* dst = tmp + kBlock;
  src[lid] = x;
  __syncthreads();
  for (unsigned off = 1; off < kBlock; off <<= 1) {
    std::uint32_t v = src[lid];
    if (lid >= off) v += src[lid - off];
    dst[lid] = v;
    __syncthreads();
    std::uint32_t* t = src;
    src = dst;
    dst = t;
  }
  const std::uint32_t inclusive = src[lid];
  total = src[kBlock - 1];
  __syncthreads();
  return inclusive - x;
}

__global__ void compact_partition(KeepFlag keep, std::uint32_t emit_index, std::uint32_t* part, std::uint32_t* counts) {
  __shared__ std::uint32_t scan_tmp[2 * kBlock];
  __shared__ std::uint32_t stage[kBlock * kMaxWidth];
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  const std::uint32_t w = keep.w;
  std::uint32_t flag = gid < keep.n && keep(gid) ? 1u : 0u;
  std::uint32_t total;
  const std::uint32_t idx = block_exclusive_scan(flag, scan_tmp, total);
  const std::uint32_t ow = emit_index ? 1u : w;
  if (flag) {
    if (emit_index) stage[idx] = gid;
    else
      for (std::uint32_t k = 0; k < w; ++k) stage[idx * w + k] = keep.in[static_cast<std::uint64_t>(gid) * w + k];
  }
  __syncthreads();
  std::uint32_t* slot = part + static_cast<std::uint64_t>(blockIdx.x) * kBlock * ow;
  for (std::uint32_t k = threadIdx.x; k < total * ow; k += kBlock) slot[k] = stage[k];
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

__global__ void gather_partitions(const std::uint32_t* part, const std::uint32_t* counts, const std::uint32_t* offsets,
                                  std::uint32_t w, std::uint32_t* out) {
  const std::uint32_t words = counts[blockIdx.x] * w;
  const std::uint32_t* src = part + static_cast<std::uint64_t>(blockIdx.x) * kBlock * w;
  std::uint32_t* dst = out + static_cast<std::uint64_t>(offsets[blockIdx.x]) * w;
  for (std::uint32_t k = threadIdx.x; k < words; k += kBlock) dst[k] = src[k];
}

__global__ void scan_blocks(const std::uint32_t* in, std::uint32_t n, std::uint32_t* out, std::uint32_t* block_sums) {
  __shared__ std::uint32_t tmp[2 * kBlock];
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  std::uint32_t total;
  const std::uint32_t ex = block_exclusive_scan(gid < n ? in[gid] : 0u, tmp, total);
  if (gid < n) out[gid] = ex;
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

__global__ void scan_add(std::uint32_t* out, std::uint32_t n, const std::uint32_t* block_offsets) {
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  if (gid < n) out[gid] += block_offsets[blockIdx.x];
}

__global__ void join_partition(const std::uint32_t* l, std::uint32_t nl, std::uint32_t wl, const std::uint32_t* r,
                               std::uint32_t nr, std::uint32_t wr, std::uint32_t* first_match,
                               std::uint32_t* local_offset, std::uint32_t* counts) {
  __shared__ std::uint32_t scan_tmp[2 * kBlock];
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  std::uint32_t cnt = 0, first = 0;
  if (gid < nl) {
    const std::uint32_t key = l[static_cast<std::uint64_t>(gid) * wl];
    first = lower_bound_rows(r, 0, nr, wr, &key, 1);
    cnt = upper_bound_rows(r, first, nr, wr, &key, 1) - first;
  }
  std::uint32_t total;
  const std::uint32_t ex = block_exclusive_scan(cnt, scan_tmp, total);
  if (gid < nl) {
    first_match[gid] = first;
    local_offset[gid] = ex;
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

__global__ void join_compute(const std::uint32_t* l, std::uint32_t nl, std::uint32_t wl, const std::uint32_t* r,
                             std::uint32_t nr, std::uint32_t wr, const std::uint32_t* first_match,
                             const std::uint32_t* local_offset, const std::uint32_t* offsets, std::uint32_t* out) {
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  if (gid >= nl) return;
  const std::uint32_t key = l[static_cast<std::uint64_t>(gid) * wl];
  const std::uint32_t ow = wl + wr - 1;
  std::uint64_t o = static_cast<std::uint64_t>(offsets[blockIdx.x]) + local_offset[gid];
  for (std::uint32_t j = first_match[gid]; j < nr && r[static_cast<std::uint64_t>(j) * wr] == key; ++j, ++o) {
    std::uint32_t* dst = out + o * ow;
    for (std::uint32_t k = 0; k < wl; ++k) dst[k] = l[static_cast<std::uint64_t>(gid) * wl + k];
    for (std::uint32_t k = 1; k < wr; ++k) dst[wl + k - 1] = r[static_cast<std::uint64_t>(j) * wr + k];
  }
}

__device__ std::uint64_t fold(std::uint32_t op, std::uint64_t a, std::uint64_t b) {
  return op == 0 ? a + b : op == 1 ? (a < b ? a : b) : (a > b ? a : b);
}

__global__ void reduce_partial(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t op,
                               std::uint64_t* partials) {
  __shared__ std::uint64_t tmp[kBlock];
  const std::uint64_t identity = op == 1 ? 0xffffffffull : 0ull;
  for (std::uint32_t v = 1; v < w; ++v) {
    std::uint64_t acc = identity;
    for (std::uint32_t i = blockIdx.x * kBlock + threadIdx.x; i < n; i += gridDim.x * kBlock)
      acc = fold(op, acc, in[static_cast<std::uint64_t>(i) * w + v]);
    tmp[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = kBlock / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) tmp[threadIdx.x] = fold(op, tmp[threadIdx.x], tmp[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) partials[static_cast<std::uint64_t>(blockIdx.x) * (w - 1) + v - 1] = tmp[0];
    __syncthreads();
  }
}

__global__ void reduce_final(const std::uint64_t* partials, std::uint32_t groups, std::uint32_t values, std::uint32_t op,
                             std::uint64_t* result) {
  __shared__ std::uint64_t tmp[kBlock];
  const std::uint64_t identity = op == 1 ? 0xffffffffull : 0ull;
  for (std::uint32_t v = 0; v < values; ++v) {
    std::uint64_t acc = identity;
    for (std::uint32_t g = threadIdx.x; g < groups; g += kBlock) acc = fold(op, acc, partials[g * values + v]);
    tmp[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = kBlock / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) tmp[threadIdx.x] = fold(op, tmp[threadIdx.x], tmp[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) result[v] = tmp[0];
    __syncthreads();
  }
}

std::uint32_t blocks_for(std::uint64_t n) { return static_cast<std::uint32_t>((n + kBlock - 1) / kBlock); }

// Exclusive scan of n counts into out; returns the total (read back to size the output).
std::uint32_t scan_counts(CudaRa::State& s, const std::uint32_t* in, std::uint32_t* out, std::uint32_t n, int level = 0) {
  if (n == 0) return 0;
  const std::uint32_t blocks = blocks_for(n);
  std::uint32_t* sums = s.scratch.get<std::uint32_t>("paper.scan.sums." + std::to_string(level), blocks);
  scan_blocks<<<blocks, kBlock, 0, s.stream.get()>>>(in, n, out, sums);
  HDB_CUDA_CHECK_LAUNCH("scan_blocks");
  if (blocks == 1) return read_count(s, sums);
  std::uint32_t* offs = s.scratch.get<std::uint32_t>("paper.scan.offsets." + std::to_string(level), blocks);
  const std::uint32_t total = scan_counts(s, sums, offs, blocks, level + 1);
  scan_add<<<blocks, kBlock, 0, s.stream.get()>>>(out, n, offs);
  HDB_CUDA_CHECK_LAUNCH("scan_add");
  return total;
}

// Partition + scan; the kept tuples (or row indices) wait in "paper.part" for gather().
std::uint32_t partition(CudaRa::State& s, PhaseTimer& t, std::uint32_t mode, const CudaRelation& in,
                        const CudaRelation* other, const Predicate& pred, bool emit_index) {
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) return 0;
  const std::uint32_t blocks = blocks_for(n);
  const std::uint32_t ow = emit_index ? 1u : static_cast<std::uint32_t>(in.width());
  std::uint32_t* part = s.scratch.get<std::uint32_t>("paper.part", static_cast<std::uint64_t>(blocks) * kBlock * ow);
  std::uint32_t* counts = s.scratch.get<std::uint32_t>("paper.counts", blocks);
  std::uint32_t* offsets = s.scratch.get<std::uint32_t>("paper.offsets", blocks);
  t.phase("partition");
  compact_partition<<<blocks, kBlock, 0, s.stream.get()>>>(keep_flag(mode, in, other, pred), emit_index ? 1u : 0u, part,
                                                          counts);
  HDB_CUDA_CHECK_LAUNCH("compact_partition");
  t.phase("scan");
  return scan_counts(s, counts, offsets, blocks);
}

void gather(CudaRa::State& s, PhaseTimer& t, std::uint64_t rows_in, std::uint32_t ow, std::uint32_t* out) {
  const std::uint32_t blocks = blocks_for(rows_in);
  t.phase("gather");
  gather_partitions<<<blocks, kBlock, 0, s.stream.get()>>>(
      s.scratch.get<std::uint32_t>("paper.part", 0), s.scratch.get<std::uint32_t>("paper.counts", 0),
      s.scratch.get<std::uint32_t>("paper.offsets", 0), ow, out);
  HDB_CUDA_CHECK_LAUNCH("gather_partitions");
}

}  // namespace

Breakdown paper_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const CudaRelation* other,
                        const Predicate& pred, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t total = partition(s, t, mode, in, other, pred, false);
  CudaRelation& out = ensure(out_handle, total, in.values());
  if (total) gather(s, t, in.rows(), static_cast<std::uint32_t>(in.width()), out.data());
  return t.finish();
}

Breakdown paper_union(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t w = static_cast<std::uint32_t>(a.width());
  const std::uint32_t kept = partition(s, t, kUnionKeep, b, &a, Predicate{}, false);
  std::uint32_t* bprime = s.scratch.get<std::uint32_t>("paper.union.b", static_cast<std::uint64_t>(kept) * w);
  if (kept) gather(s, t, b.rows(), w, bprime);
  const std::uint32_t n = rows32(a.rows());
  const std::uint32_t total = rows32(static_cast<std::uint64_t>(n) + kept);
  CudaRelation& out = ensure(out_handle, total, a.values());
  t.phase("merge");
  launch_merge_scatter(s, a.data(), n, bprime, kept, w, out.data());
  return t.finish();
}

Breakdown paper_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  const std::uint32_t values = static_cast<std::uint32_t>(in.values());
  result = identity_aggregate(in.values(), op);
  if (n == 0 || values == 0) return t.finish();
  const std::uint32_t groups = std::min<std::uint32_t>(blocks_for(n), 1024);
  std::uint64_t* partials = s.scratch.get<std::uint64_t>("paper.reduce.partials", static_cast<std::uint64_t>(groups) * values);
  std::uint64_t* d_result = s.scratch.get<std::uint64_t>("paper.reduce.result", values);
  const std::uint32_t opc = op == ReduceOp::Sum ? 0 : op == ReduceOp::Min ? 1 : 2;
  t.phase("partition");
  reduce_partial<<<groups, kBlock, 0, s.stream.get()>>>(in.data(), n, static_cast<std::uint32_t>(in.width()), opc, partials);
  HDB_CUDA_CHECK_LAUNCH("reduce_partial");
  t.phase("compute");
  reduce_final<<<1, kBlock, 0, s.stream.get()>>>(partials, groups, values, opc, d_result);
  HDB_CUDA_CHECK_LAUNCH("reduce_final");
  HDB_CUDA_CHECK(cudaMemcpyAsync(result.value.data(), d_result, values * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                                 s.stream.get()));
  return t.finish();
}

Breakdown paper_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t runs = partition(s, t, kUnique, in, nullptr, Predicate{}, true);
  CudaRelation& out = ensure(out_handle, runs, in.values());
  if (runs) {
    std::uint32_t* heads = s.scratch.get<std::uint32_t>("paper.rbk.heads", runs);
    gather(s, t, in.rows(), 1, heads);
    t.phase("compute");
    launch_reduce_runs(s, in, op, heads, runs, out.data());
  }
  return t.finish();
}

Breakdown paper_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  const int out_values = l.values() + r.values();
  if (nl == 0 || nr == 0) {
    ensure(out_handle, 0, out_values);
    return t.finish();
  }
  const std::uint32_t blocks = blocks_for(nl);
  std::uint32_t* first = s.scratch.get<std::uint32_t>("paper.join.first", nl);
  std::uint32_t* local_off = s.scratch.get<std::uint32_t>("paper.join.local", nl);
  std::uint32_t* counts = s.scratch.get<std::uint32_t>("paper.counts", blocks);
  std::uint32_t* offsets = s.scratch.get<std::uint32_t>("paper.offsets", blocks);
  const auto wl = static_cast<std::uint32_t>(l.width()), wr = static_cast<std::uint32_t>(r.width());
  t.phase("partition");
  join_partition<<<blocks, kBlock, 0, s.stream.get()>>>(l.data(), nl, wl, r.data(), nr, wr, first, local_off, counts);
  HDB_CUDA_CHECK_LAUNCH("join_partition");
  t.phase("scan");
  const std::uint32_t total = scan_counts(s, counts, offsets, blocks);
  CudaRelation& out = ensure(out_handle, total, out_values);
  if (total) {
    t.phase("compute");
    join_compute<<<blocks, kBlock, 0, s.stream.get()>>>(l.data(), nl, wl, r.data(), nr, wr, first, local_off, offsets,
                                                       out.data());
    HDB_CUDA_CHECK_LAUNCH("join_compute");
  }
  return t.finish();
}

}  // namespace hdb::ra::cuda
