// The paper's multi-kernel structure on CUDA, kernel for kernel the same as kernels/ra.cl: a
// partition kernel stages kept tuples in shared memory after a Hillis-Steele prefix sum and writes
// them in bulk to its partition's slot, scan kernels turn partition counts into offsets, and a
// gather kernel closes the gaps.
#include "ra_device.cuh"

namespace hdb::ra::cuda {
namespace {

// Exclusive block scan of one value per thread (Algorithm 3), double-buffered in shared memory.
// T: 32-bit for compaction counts (at most n < 2^31), 64-bit for join counts (JoinCount).
template <class T>
__device__ T block_exclusive_scan(T x, T* tmp, T& total) {
  const unsigned lid = threadIdx.x;
  T* src = tmp;
  T* dst = tmp + kBlock;
  src[lid] = x;
  __syncthreads();
  for (unsigned off = 1; off < kBlock; off <<= 1) {
    T v = src[lid];
    if (lid >= off) v += src[lid - off];
    dst[lid] = v;
    __syncthreads();
    T* t = src;
    src = dst;
    dst = t;
  }
  const T inclusive = src[lid];
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
    if (emit_index)
      stage[idx] = gid;
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

template <class T>
__global__ void scan_blocks(const T* in, std::uint32_t n, T* out, T* block_sums) {
  __shared__ T tmp[2 * kBlock];
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  T total;
  const T ex = block_exclusive_scan<T>(gid < n ? in[gid] : T{0}, tmp, total);
  if (gid < n) out[gid] = ex;
  if (threadIdx.x == 0) block_sums[blockIdx.x] = total;
}

template <class T>
__global__ void scan_add(T* out, std::uint32_t n, const T* block_offsets) {
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  if (gid < n) out[gid] += block_offsets[blockIdx.x];
}

// Each left tuple's first match and match count (binary searches on its KW key words), the counts
// prefix-summed per block in 64 bits: a block's 256 counts of up to 2^31 each pass 2^32.
template <int KW>
__global__ void join_partition(JoinKeys<KW> j, std::uint32_t* first_match, JoinCount* local_offset, JoinCount* counts) {
  __shared__ JoinCount scan_tmp[2 * kBlock];
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  const std::uint32_t nl = j.nl;
  JoinCount cnt = 0;
  std::uint32_t first = 0;
  if (gid < nl) {
    std::uint32_t key[KW];
    j.key(gid, key);
    first = lower_bound_rows(j.r, 0, j.nr, j.wr, key, KW);
    cnt = upper_bound_rows(j.r, first, j.nr, j.wr, key, KW) - first;
  }
  JoinCount total;
  const JoinCount ex = block_exclusive_scan<JoinCount>(cnt, scan_tmp, total);
  if (gid < nl) {
    first_match[gid] = first;
    local_offset[gid] = ex;
  }
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

template <int KW>
__global__ void join_compute(JoinKeys<KW> jk, const std::uint32_t* first_match, const JoinCount* local_offset,
                             const JoinCount* offsets, std::uint32_t* out) {
  const std::uint32_t gid = blockIdx.x * kBlock + threadIdx.x;
  if (gid >= jk.nl) return;
  std::uint32_t key[KW];
  jk.key(gid, key);
  const std::uint32_t ow = jk.out_width();
  JoinCount o = offsets[blockIdx.x] + local_offset[gid];
  for (std::uint32_t j = first_match[gid]; j < jk.nr && same_key<KW>(jk.r + static_cast<std::uint64_t>(j) * jk.wr, key);
       ++j, ++o)
    jk.write(gid, j, out + o * ow);
}

__device__ std::uint64_t fold(std::uint32_t op, std::uint64_t a, std::uint64_t b) {
  return op == 0 ? a + b : op == 1 ? (a < b ? a : b) : (a > b ? a : b);
}

// Per block, each value attribute (words kw .. w - 1) folded in 64 bits.
__global__ void reduce_partial(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t kw,
                               std::uint32_t op, std::uint64_t* partials) {
  __shared__ std::uint64_t tmp[kBlock];
  const std::uint64_t identity = op == 1 ? 0xffffffffull : 0ull;
  for (std::uint32_t v = kw; v < w; ++v) {
    std::uint64_t acc = identity;
    for (std::uint32_t i = blockIdx.x * kBlock + threadIdx.x; i < n; i += gridDim.x * kBlock)
      acc = fold(op, acc, in[static_cast<std::uint64_t>(i) * w + v]);
    tmp[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned s = kBlock / 2; s > 0; s >>= 1) {
      if (threadIdx.x < s) tmp[threadIdx.x] = fold(op, tmp[threadIdx.x], tmp[threadIdx.x + s]);
      __syncthreads();
    }
    if (threadIdx.x == 0) partials[static_cast<std::uint64_t>(blockIdx.x) * (w - kw) + v - kw] = tmp[0];
    __syncthreads();
  }
}

__global__ void reduce_final(const std::uint64_t* partials, std::uint32_t groups, std::uint32_t values,
                             std::uint32_t op, std::uint64_t* result) {
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

std::uint32_t read_back(CudaRa::State& s, const std::uint32_t* d) { return read_count(s, d); }
JoinCount read_back(CudaRa::State& s, const JoinCount* d) { return read_count64(s, d); }

// The total of a scan (scan_counts' answer; null: 0) read back to size the next step: a host round
// trip the operator cannot do without, timed as its own phase.
template <class T>
T read_total(CudaRa::State& s, PhaseTimer& t, const T* d_total) {
  if (!d_total) return 0;
  t.phase("readback");
  return read_back(s, d_total);
}

// Exclusive scan of n counts into out; returns where the total waits on the device (null for
// n == 0), for read_total once every level's kernels are launched. The block sums of level k wait
// in "paper.scan.sums.k" / "paper.scan.offsets.k" (bytes, shared by both T).
template <class T>
const T* scan_counts(CudaRa::State& s, const T* in, T* out, std::uint32_t n, int level = 0) {
  if (n == 0) return nullptr;
  const std::uint32_t blocks = blocks_for(n);
  T* sums = s.scratch.get<T>("paper.scan.sums." + std::to_string(level), blocks);
  HDB_LAUNCH(scan_blocks<T>, blocks, kBlock, 0, s.stream.get())(in, n, out, sums);
  HDB_CUDA_CHECK_LAUNCH("scan_blocks");
  if (blocks == 1) return sums;  // the last level's one block sum is the total; no scan_add writes it
  T* offs = s.scratch.get<T>("paper.scan.offsets." + std::to_string(level), blocks);
  const T* total = scan_counts<T>(s, sums, offs, blocks, level + 1);
  HDB_LAUNCH(scan_add<T>, blocks, kBlock, 0, s.stream.get())(out, n, offs);
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
  HDB_LAUNCH(compact_partition, blocks, kBlock, 0, s.stream.get())
  (keep_flag(mode, in, other, pred), emit_index ? 1u : 0u, part, counts);
  HDB_CUDA_CHECK_LAUNCH("compact_partition");
  t.phase("scan");
  return read_total(s, t, scan_counts<std::uint32_t>(s, counts, offsets, blocks));
}

void gather(CudaRa::State& s, PhaseTimer& t, std::uint64_t rows_in, std::uint32_t ow, std::uint32_t* out) {
  const std::uint32_t blocks = blocks_for(rows_in);
  t.phase("gather");
  HDB_LAUNCH(gather_partitions, blocks, kBlock, 0, s.stream.get())
  (s.scratch.get<std::uint32_t>("paper.part", 0), s.scratch.get<std::uint32_t>("paper.counts", 0),
   s.scratch.get<std::uint32_t>("paper.offsets", 0), ow, out);
  HDB_CUDA_CHECK_LAUNCH("gather_partitions");
}

}  // namespace

Breakdown paper_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const CudaRelation* other,
                        const Predicate& pred, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t total = partition(s, t, mode, in, other, pred, false);
  CudaRelation& out = ensure(out_handle, total, in.values(), in.key_words());
  if (total) gather(s, t, in.rows(), static_cast<std::uint32_t>(in.width()), out.data());
  return t.finish();
}

Breakdown paper_union(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t w = static_cast<std::uint32_t>(a.width());
  const std::uint32_t n = rows32(a.rows());  // skips before anything runs
  const std::uint32_t kept = partition(s, t, kUnionKeep, b, &a, Predicate{}, false);
  std::uint32_t* bprime = s.scratch.get<std::uint32_t>("paper.union.b", static_cast<std::uint64_t>(kept) * w);
  if (kept) gather(s, t, b.rows(), w, bprime);
  // n and kept are below 2^31 each, so merge_scatter's 32-bit thread index covers n + kept; the
  // output's row count is 64-bit (no skip after the partition has run).
  const std::uint64_t total = static_cast<std::uint64_t>(n) + kept;
  CudaRelation& out = ensure(out_handle, total, a.values(), a.key_words());
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
  std::uint64_t* partials =
      s.scratch.get<std::uint64_t>("paper.reduce.partials", static_cast<std::uint64_t>(groups) * values);
  std::uint64_t* d_result = s.scratch.get<std::uint64_t>("paper.reduce.result", values);
  const std::uint32_t opc = op == ReduceOp::Sum ? 0 : op == ReduceOp::Min ? 1 : 2;
  t.phase("partition");
  HDB_LAUNCH(reduce_partial, groups, kBlock, 0, s.stream.get())
  (in.data(), n, static_cast<std::uint32_t>(in.width()), static_cast<std::uint32_t>(in.key_words()), opc, partials);
  HDB_CUDA_CHECK_LAUNCH("reduce_partial");
  t.phase("compute");
  HDB_LAUNCH(reduce_final, 1, kBlock, 0, s.stream.get())(partials, groups, values, opc, d_result);
  HDB_CUDA_CHECK_LAUNCH("reduce_final");
  t.close();  // the read-back of the results ends the operator: outside its kernel time
  read_results(s, d_result, in.values(), result);
  return t.finish();
}

Breakdown paper_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t runs = partition(s, t, kUnique, in, nullptr, Predicate{}, true);
  CudaRelation& out = ensure(out_handle, runs, in.values(), in.key_words());
  if (runs) {
    std::uint32_t* heads = s.scratch.get<std::uint32_t>("paper.rbk.heads", runs);
    gather(s, t, in.rows(), 1, heads);
    t.phase("compute");
    launch_reduce_runs(s, in, op, heads, runs, out.data());
  }
  return t.finish();
}

namespace {
// Partition (first matches, 64-bit counts scanned per block), 64-bit scan of the block counts, one
// writer per left tuple at its exact offset.
template <int KW>
Breakdown paper_join_kw(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  if (empty_join(l, r, out_handle)) return t.finish();
  const int out_values = l.values() + r.values();
  const std::uint32_t blocks = blocks_for(nl);
  std::uint32_t* first = s.scratch.get<std::uint32_t>("paper.join.first", nl);
  JoinCount* local_off = s.scratch.get<JoinCount>("paper.join.local", nl);
  JoinCount* counts = s.scratch.get<JoinCount>("paper.join.counts", blocks);
  JoinCount* offsets = s.scratch.get<JoinCount>("paper.join.offsets", blocks);
  const JoinKeys<KW> jk{l.data(), nl, static_cast<std::uint32_t>(l.width()),
                        r.data(), nr, static_cast<std::uint32_t>(r.width())};
  t.phase("partition");
  HDB_LAUNCH(join_partition<KW>, blocks, kBlock, 0, s.stream.get())(jk, first, local_off, counts);
  HDB_CUDA_CHECK_LAUNCH("join_partition");
  t.phase("scan");
  const JoinCount total = read_total(s, t, scan_counts<JoinCount>(s, counts, offsets, blocks));
  CudaRelation& out = ensure(out_handle, total, out_values, KW);
  if (total) {
    t.phase("compute");
    HDB_LAUNCH(join_compute<KW>, blocks, kBlock, 0, s.stream.get())(jk, first, local_off, offsets, out.data());
    HDB_CUDA_CHECK_LAUNCH("join_compute");
  }
  return t.finish();
}

}  // namespace

Breakdown paper_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out_handle) {
  return l.key_words() == 2 ? paper_join_kw<2>(s, l, r, out_handle) : paper_join_kw<1>(s, l, r, out_handle);
}

namespace {
// Bytes of the block sums scan_counts<T> asks for at every level above n counts.
std::uint64_t scan_levels_bytes(std::uint64_t n, std::uint64_t item) {
  std::uint64_t bytes = 0;
  for (std::uint64_t level = 0; n > 0; ++level) {
    const std::uint64_t blocks = (n + kBlock - 1) / kBlock;
    bytes += blocks * item * (blocks > 1 ? 2 : 1);  // sums, and offsets where it recurses
    if (blocks == 1) break;
    n = blocks;
  }
  return bytes;
}

// partition(): slots of whole partitions of `ow` words, counts and offsets per partition, the scan.
void plan_partition(MemoryPlan& plan, std::uint64_t rows, std::uint64_t ow) {
  const std::uint64_t blocks = (rows + kBlock - 1) / kBlock;
  if (!blocks) return;
  plan.add("partition slots", blocks * kBlock * ow * 4)
      .add("partition counts and offsets", blocks * 8)
      .add("scan block sums", scan_levels_bytes(blocks, 4));
}
}  // namespace

void paper_plan(const OpShape& shape, MemoryPlan& plan) {
  const auto wa = static_cast<std::uint64_t>(shape.width_a), wb = static_cast<std::uint64_t>(shape.width_b);
  const std::uint64_t values = wa > static_cast<std::uint64_t>(shape.key_words) ? wa - shape.key_words : 0;
  switch (shape.op) {
    case Op::Select:
    case Op::Unique:
    case Op::SetIntersection:
    case Op::SetDifference: plan_partition(plan, shape.rows_a, wa); break;
    case Op::SetUnion:
      plan_partition(plan, shape.rows_b, wb);
      plan.add("b's tuples beyond a's (at most all of b)", shape.rows_b * wb * 4);
      break;
    case Op::ReduceByKey:
      plan_partition(plan, shape.rows_a, 1);
      plan.add("run heads", shape.out_rows * 4);
      break;
    case Op::Reduce: {
      if (!shape.rows_a || !values) break;
      const std::uint64_t groups = std::min<std::uint64_t>((shape.rows_a + kBlock - 1) / kBlock, 1024);
      plan.add("reduce partials and result", groups * values * 8 + values * 8);
      break;
    }
    case Op::Join: {
      if (!shape.rows_a || !shape.rows_b) break;
      const std::uint64_t blocks = (shape.rows_a + kBlock - 1) / kBlock;
      plan.add("join first matches", shape.rows_a * 4)
          .add("join local offsets (64-bit)", shape.rows_a * sizeof(JoinCount))
          .add("join partition counts and offsets (64-bit)", blocks * 2 * sizeof(JoinCount))
          .add("scan block sums (64-bit)", scan_levels_bytes(blocks, sizeof(JoinCount)));
      break;
    }
    case Op::Sort: cub_plan(shape, false, plan); break;  // sort is cub's only
    default: break;                                      // project, product, arithmetic: one kernel, no scratch
  }
}

}  // namespace hdb::ra::cuda
