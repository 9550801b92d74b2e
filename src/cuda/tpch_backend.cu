#include "tpch_backend.hpp"

#include <algorithm>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

#include "harness/errors.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/scratch.hpp"

namespace hdb::cuda {
namespace {

using tpch::FusedPlan;
using tpch::Op;
using tpch::Plan;
using tpch::Relation;
using tpch::Step;
using u32 = std::uint32_t;
using u64 = std::uint64_t;

constexpr int kThreads = 256;
constexpr int kItems = 4;  // rows per thread in the fused tile
constexpr u64 kEmpty = ~0ull;
constexpr int kMaxIn = 4, kMaxCols = 8, kMaxJoins = 3, kMaxPreds = 4;

unsigned blocks(u64 n, u64 per_block = kThreads) { return static_cast<unsigned>(std::max<u64>(1, (n + per_block - 1) / per_block)); }

__device__ __forceinline__ bool in_range(u32 x, u32 lo, u32 hi) { return x >= lo && x <= hi; }

// ---- operator-at-a-time kernels -------------------------------------------------------------

__global__ void flag_range(const u32* x, u64 n, u32 lo, u32 hi, u32* flag) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < n) flag[i] = in_range(x[i], lo, hi) ? 1u : 0u;
}

__global__ void scatter_index(const u32* flag, const u32* pos, u64 n, u32* idx) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < n && flag[i]) idx[pos[i]] = static_cast<u32>(i);
}

__global__ void gather(const u32* src, const u32* idx, u64 n, u32* dst) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < n) dst[i] = src[idx[i]];
}

__global__ void iota(u32* v, u64 n) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < n) v[i] = static_cast<u32>(i);
}

// For each left key: where its matches start in the sorted right keys, and how many there are.
__global__ void match_range(const u32* lk, u64 nl, const u32* rk, u64 nr, u32* first, u64* count) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= nl) return;
  u32 k = lk[i];
  u64 a = 0, b = nr;
  while (a < b) {  // lower bound
    u64 m = (a + b) / 2;
    if (rk[m] < k) a = m + 1;
    else b = m;
  }
  u64 lo = a;
  b = nr;
  while (a < b) {  // upper bound
    u64 m = (a + b) / 2;
    if (rk[m] <= k) a = m + 1;
    else b = m;
  }
  first[i] = static_cast<u32>(lo);
  count[i] = a - lo;
}

__global__ void expand(const u32* first, const u64* count, const u64* offset, u64 nl, const u32* rrow, u32* li, u32* ri) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= nl) return;
  u64 o = offset[i];
  for (u64 k = 0; k < count[i]; ++k) {
    li[o + k] = static_cast<u32>(i);
    ri[o + k] = rrow[first[i] + k];
  }
}

// ---- fused (Crystal-style) kernels -----------------------------------------------------------

struct DPred {
  int col;
  u32 lo, hi;
};

struct BuildArgs {
  const u32* cols[kMaxCols];
  u64 rows;
  int key_col;
  int n_preds;
  DPred preds[kMaxPreds];
  unsigned long long* table;
  u64 mask;
};

struct FusedArgs {
  const u32* cols[kMaxIn][kMaxCols];
  u64 probe_rows;
  int n_probe_preds;
  DPred probe_preds[kMaxPreds];
  int n_joins;
  int probe_in[kMaxJoins], probe_col[kMaxJoins];
  const unsigned long long* table[kMaxJoins];
  u64 mask[kMaxJoins];
  int join_of_input[kMaxIn];
  int n_out;
  int out_in[kMaxCols], out_col[kMaxCols];
  u32* out[kMaxCols];
  unsigned long long* count;
};

__device__ __forceinline__ u64 slot_of(u32 key, u64 mask) {
  u64 h = key * 0x9E3779B97F4A7C15ull;
  return (h ^ (h >> 29)) & mask;
}

__global__ void build_table(BuildArgs a) {
  u64 r = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (r >= a.rows) return;
  for (int p = 0; p < a.n_preds; ++p)
    if (!in_range(a.cols[a.preds[p].col][r], a.preds[p].lo, a.preds[p].hi)) return;
  u32 key = a.cols[a.key_col][r];
  unsigned long long packed = (static_cast<u64>(key) << 32) | r;  // r < 2^31: never kEmpty
  for (u64 s = slot_of(key, a.mask);; s = (s + 1) & a.mask)
    if (atomicCAS(&a.table[s], static_cast<unsigned long long>(kEmpty), packed) == kEmpty) return;
}

__device__ __forceinline__ bool lookup(const unsigned long long* t, u64 mask, u32 key, u32& row) {
  for (u64 s = slot_of(key, mask);; s = (s + 1) & mask) {
    unsigned long long e = t[s];
    if (e == kEmpty) return false;
    if (static_cast<u32>(e >> 32) == key) {
      row = static_cast<u32>(e);
      return true;
    }
  }
}

// A base column's value for probe row r, given the build rows matched so far.
__device__ __forceinline__ u32 value(const FusedArgs& a, u64 r, const u32* m, int in, int col) {
  return in == 0 ? a.cols[0][col][r] : a.cols[in][col][m[a.join_of_input[in]]];
}

__device__ bool passes(const FusedArgs& a, u64 r, u32* m) {
  for (int p = 0; p < a.n_probe_preds; ++p)
    if (!in_range(a.cols[0][a.probe_preds[p].col][r], a.probe_preds[p].lo, a.probe_preds[p].hi)) return false;
  for (int j = 0; j < a.n_joins; ++j)  // a missing key also covers build rows the selects removed
    if (!lookup(a.table[j], a.mask[j], value(a, r, m, a.probe_in[j], a.probe_col[j]), m[j])) return false;
  return true;
}

// One tile of kThreads x kItems probe rows: selects and lookups in registers, a block-wide scan
// of the survivors, one atomic per tile for the output position, then only result rows written.
__global__ void __launch_bounds__(kThreads) fused_probe(FusedArgs a) {
  using Scan = cub::BlockScan<u32, kThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  __shared__ unsigned long long base;
  const u64 tile = blockIdx.x * static_cast<u64>(kThreads * kItems);
  u32 m[kItems][kMaxJoins];
  bool keep[kItems];
  u32 mine = 0;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    u64 r = tile + it * kThreads + threadIdx.x;
    keep[it] = r < a.probe_rows && passes(a, r, m[it]);
    mine += keep[it] ? 1u : 0u;
  }
  u32 offset, total;
  Scan(scan_tmp).ExclusiveSum(mine, offset, total);
  if (threadIdx.x == 0) base = total ? atomicAdd(a.count, static_cast<unsigned long long>(total)) : 0ull;
  __syncthreads();
  u64 o = base + offset;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    if (!keep[it]) continue;
    u64 r = tile + it * kThreads + threadIdx.x;
    for (int c = 0; c < a.n_out; ++c) a.out[c][o] = value(a, r, m[it], a.out_in[c], a.out_col[c]);
    ++o;
  }
}

// ---- host side ------------------------------------------------------------------------------

struct DevRel {
  std::vector<DeviceBuffer<u32>> cols;
  u64 rows = 0;
};

class CudaRun : public tpch::TpchRun {
 public:
  CudaRun(const Plan& plan, bool fused, Transfer t) : plan_(plan), fused_(fused), transfer_(t) {
    schemas_ = tpch::plan_schemas(plan_);
    for (const auto& in : plan_.inputs)
      if (in->rows() >= (u64{1} << 31)) throw SkipCase("relations of 2^31 rows or more are not supported");
    if (fused_) {
      std::string why;
      if (!tpch::fuse_plan(plan_, fused_plan_, why)) throw SkipCase("not fusable: " + why);
      check_fusable_limits();
    }
    Transfer host_kind = t == Transfer::None ? Transfer::Pinned : t;
    rel_.resize(plan_.inputs.size() + plan_.steps.size());
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i) {
      const Relation& in = *plan_.inputs[i];
      DevRel& d = rel_[i];
      d.rows = in.rows();
      for (const auto& c : in.cols) {
        HostBuffer<u32> h(std::max<u64>(1, c.v.size()), host_kind);
        std::copy(c.v.begin(), c.v.end(), h.get());
        host_in_.push_back(std::move(h));
        d.cols.emplace_back(std::max<u64>(1, c.v.size()));
      }
    }
    host_count_ = HostBuffer<u64>(2, Transfer::Pinned);
  }

  Breakdown pass() override {
    HostTimer wall;
    Breakdown b;
    cudaStream_t s = stream_.get();
    PhaseTimer t;
    t.start(s);
    std::size_t h = 0;
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i)
      for (auto& c : rel_[i].cols) {
        HDB_CUDA_CHECK(cudaMemcpyAsync(c.get(), host_in_[h].get(), rel_[i].rows * sizeof(u32), cudaMemcpyHostToDevice, s));
        ++h;
      }
    b.h2d = t.stop(s);
    const DevRel& out = fused_ ? run_fused(b) : run_operators(b);
    // The answer back to the host.
    const std::size_t width = schemas_.back().size();
    host_rows_ = out.rows;
    // Host buffers for the answer grow before the d2h events: allocation is never timed.
    if (host_out_.size() < width) host_out_.resize(width);
    for (std::size_t c = 0; c < width; ++c)
      if (host_out_[c].size() < std::max<u64>(1, out.rows))
        host_out_[c] = HostBuffer<u32>(std::max<u64>(1, out.rows), transfer_ == Transfer::None ? Transfer::Pinned : transfer_);
    t.start(s);
    for (std::size_t c = 0; c < width; ++c) {
      HDB_CUDA_CHECK(cudaMemcpyAsync(host_out_[c].get(), out.cols[c].get(), out.rows * sizeof(u32), cudaMemcpyDeviceToHost, s));
    }
    b.d2h = t.stop(s);
    b.total = wall.seconds();
    return b;
  }

  Relation result() override {
    Relation r;
    r.name = plan_.kernel;
    for (std::size_t c = 0; c < schemas_.back().size(); ++c)
      r.cols.push_back({schemas_.back()[c], std::vector<u32>(host_out_[c].get(), host_out_[c].get() + host_rows_)});
    return r;
  }

 private:
  // The last offset plus the last count: the counting pass that sizes an output.
  u64 read_total(const u64* last_offset, const u64* last_count) {
    cudaStream_t s = stream_.get();
    HDB_CUDA_CHECK(cudaMemcpyAsync(host_count_.get(), last_offset, sizeof(u64), cudaMemcpyDeviceToHost, s));
    HDB_CUDA_CHECK(cudaMemcpyAsync(host_count_.get() + 1, last_count, sizeof(u64), cudaMemcpyDeviceToHost, s));
    stream_.sync();
    return host_count_[0] + host_count_[1];
  }

  template <class T>
  void exclusive_sum(const T* in, T* out, u64 n) {
    std::size_t bytes = 0;
    HDB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, static_cast<int>(n), stream_.get()));
    char* tmp = grow(cub_tmp_, bytes);
    HDB_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(tmp, bytes, in, out, static_cast<int>(n), stream_.get()));
  }

  // out[o + k] = in[k][idx] for every column of `in` except `skip`.
  void gather_cols(const DevRel& in, const u32* idx, u64 n, DevRel& out, std::size_t o, int skip) {
    for (std::size_t k = 0; k < in.cols.size(); ++k) {
      if (static_cast<int>(k) == skip) continue;
      u32* dst = grow(out.cols[o++], n);
      if (n) gather<<<blocks(n), kThreads, 0, stream_.get()>>>(in.cols[k].get(), idx, n, dst);
    }
    HDB_CUDA_CHECK_LAUNCH("gather");
    out.rows = n;
  }

  void select(const Step& s, const DevRel& in, DevRel& out) {
    const u64 n = in.rows;
    cudaStream_t st = stream_.get();
    u32* flag = grow(flag_, n + 1);
    u32* pos = grow(pos_, n + 1);
    if (n) {
      flag_range<<<blocks(n), kThreads, 0, st>>>(in.cols[static_cast<std::size_t>(s.col)].get(), n, s.lo, s.hi, flag);
      HDB_CUDA_CHECK_LAUNCH("flag_range");
      exclusive_sum(flag, pos, n);
    }
    // The kept count: last position + last flag.
    u32* last = reinterpret_cast<u32*>(host_count_.get());
    last[0] = last[1] = 0;
    if (n) {
      HDB_CUDA_CHECK(cudaMemcpyAsync(&last[0], pos + n - 1, sizeof(u32), cudaMemcpyDeviceToHost, st));
      HDB_CUDA_CHECK(cudaMemcpyAsync(&last[1], flag + n - 1, sizeof(u32), cudaMemcpyDeviceToHost, st));
      stream_.sync();
    }
    const u64 kept = u64{last[0]} + last[1];
    u32* idx = grow(idx_a_, kept);
    if (n) {
      scatter_index<<<blocks(n), kThreads, 0, st>>>(flag, pos, n, idx);
      HDB_CUDA_CHECK_LAUNCH("scatter_index");
    }
    out.cols.resize(in.cols.size());
    gather_cols(in, idx, kept, out, 0, -1);
  }

  void join(const Step& s, const DevRel& left, const DevRel& right, DevRel& out) {
    cudaStream_t st = stream_.get();
    const u64 nl = left.rows, nr = right.rows;
    // Sort the right side's (key, row) pairs (CUB radix sort).
    u32* rows_in = grow(rrow_in_, nr);
    u32* keys_out = grow(rkey_sorted_, nr);
    u32* rows_out = grow(rrow_sorted_, nr);
    if (nr) {
      iota<<<blocks(nr), kThreads, 0, st>>>(rows_in, nr);
      HDB_CUDA_CHECK_LAUNCH("iota");
      std::size_t bytes = 0;
      const u32* rk = right.cols[static_cast<std::size_t>(s.right_col)].get();
      HDB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(nullptr, bytes, rk, keys_out, rows_in, rows_out, static_cast<int>(nr), 0, 32, st));
      char* tmp = grow(cub_tmp_, bytes);
      HDB_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(tmp, bytes, rk, keys_out, rows_in, rows_out, static_cast<int>(nr), 0, 32, st));
    }
    // Count matches per left row, place them (scan), expand into row-id pairs, gather.
    u32* first = grow(first_, nl);
    u64* count = grow(count_, nl + 1);
    u64* offset = grow(offset_, nl + 1);
    u64 total = 0;
    if (nl) {
      match_range<<<blocks(nl), kThreads, 0, st>>>(left.cols[static_cast<std::size_t>(s.col)].get(), nl, keys_out, nr, first, count);
      HDB_CUDA_CHECK_LAUNCH("match_range");
      exclusive_sum(count, offset, nl);
      total = read_total(offset + nl - 1, count + nl - 1);
    }
    if (total >= (u64{1} << 31)) throw SkipCase("join result of " + std::to_string(total) + " rows exceeds 2^31");
    u32* li = grow(idx_a_, total);
    u32* ri = grow(idx_b_, total);
    if (nl) {
      expand<<<blocks(nl), kThreads, 0, st>>>(first, count, offset, nl, rows_out, li, ri);
      HDB_CUDA_CHECK_LAUNCH("expand");
    }
    out.cols.resize(left.cols.size() + right.cols.size() - 1);
    gather_cols(left, li, total, out, 0, -1);
    gather_cols(right, ri, total, out, left.cols.size(), s.right_col);
  }

  void project(const Step& s, const DevRel& in, DevRel& out) {
    out.cols.resize(s.cols.size());
    for (std::size_t k = 0; k < s.cols.size(); ++k) {
      u32* dst = grow(out.cols[k], in.rows);
      HDB_CUDA_CHECK(cudaMemcpyAsync(dst, in.cols[static_cast<std::size_t>(s.cols[k])].get(), in.rows * sizeof(u32),
                                     cudaMemcpyDeviceToDevice, stream_.get()));
    }
    out.rows = in.rows;
  }

  const DevRel& run_operators(Breakdown& b) {
    cudaStream_t st = stream_.get();
    for (std::size_t k = 0; k < plan_.steps.size(); ++k) {
      const Step& s = plan_.steps[k];
      DevRel& out = rel_[plan_.inputs.size() + k];
      const DevRel& in = rel_[static_cast<std::size_t>(s.in)];
      PhaseTimer t;
      t.start(st);
      switch (s.op) {
        case Op::Select:
          select(s, in, out);
          break;
        case Op::Join:
          join(s, in, rel_[static_cast<std::size_t>(s.right)], out);
          break;
        case Op::Project:
          project(s, in, out);
          break;
      }
      double sec = t.stop(st);
      b.add_phase(s.name, sec);
      b.kernel += sec;
    }
    return rel_.back();
  }

  void check_fusable_limits() const {
    const FusedPlan& f = fused_plan_;
    bool ok = plan_.inputs.size() <= kMaxIn && f.joins.size() <= kMaxJoins && f.probe_preds.size() <= kMaxPreds &&
              f.outputs.size() <= kMaxCols;
    for (const auto& in : plan_.inputs) ok = ok && in->cols.size() <= kMaxCols;
    for (const auto& j : f.joins) ok = ok && j.build_preds.size() <= kMaxPreds;
    if (!ok) throw SkipCase("the plan exceeds the fused kernel's fixed limits");
  }

  const DevRel& run_fused(Breakdown& b) {
    cudaStream_t st = stream_.get();
    const FusedPlan& f = fused_plan_;
    FusedArgs a{};
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i)
      for (std::size_t c = 0; c < rel_[i].cols.size(); ++c) a.cols[i][c] = rel_[i].cols[c].get();
    a.probe_rows = rel_[0].rows;
    a.n_probe_preds = static_cast<int>(f.probe_preds.size());
    for (std::size_t p = 0; p < f.probe_preds.size(); ++p) a.probe_preds[p] = {f.probe_preds[p].col, f.probe_preds[p].lo, f.probe_preds[p].hi};
    a.n_joins = static_cast<int>(f.joins.size());
    tables_.resize(f.joins.size());
    for (std::size_t j = 0; j < f.joins.size(); ++j) {
      const auto& fj = f.joins[j];
      const DevRel& build = rel_[static_cast<std::size_t>(fj.build_input)];
      u64 cap = 16;
      while (cap < 2 * build.rows) cap *= 2;  // load factor <= 1/2: short probe sequences
      unsigned long long* table = grow(tables_[j], cap);
      BuildArgs ba{};
      for (std::size_t c = 0; c < build.cols.size(); ++c) ba.cols[c] = build.cols[c].get();
      ba.rows = build.rows;
      ba.key_col = fj.build_key;
      ba.n_preds = static_cast<int>(fj.build_preds.size());
      for (std::size_t p = 0; p < fj.build_preds.size(); ++p) ba.preds[p] = {fj.build_preds[p].col, fj.build_preds[p].lo, fj.build_preds[p].hi};
      ba.table = table;
      ba.mask = cap - 1;
      PhaseTimer t;
      t.start(st);
      HDB_CUDA_CHECK(cudaMemsetAsync(table, 0xff, cap * sizeof(unsigned long long), st));
      if (build.rows) build_table<<<blocks(build.rows), kThreads, 0, st>>>(ba);
      HDB_CUDA_CHECK_LAUNCH("build_table");
      double sec = t.stop(st);
      b.add_phase("build_" + plan_.inputs[static_cast<std::size_t>(fj.build_input)]->name, sec);
      b.kernel += sec;
      a.probe_in[j] = fj.probe.input;
      a.probe_col[j] = fj.probe.col;
      a.table[j] = table;
      a.mask[j] = cap - 1;
      a.join_of_input[fj.build_input] = static_cast<int>(j);
    }
    // Each probe row yields at most one result row (unique build keys).
    DevRel& out = fused_out_;
    out.cols.resize(f.outputs.size());
    a.n_out = static_cast<int>(f.outputs.size());
    for (std::size_t c = 0; c < f.outputs.size(); ++c) {
      a.out_in[c] = f.outputs[c].input;
      a.out_col[c] = f.outputs[c].col;
      a.out[c] = grow(out.cols[c], a.probe_rows);
    }
    a.count = reinterpret_cast<unsigned long long*>(grow(total_, 2));
    PhaseTimer t;
    t.start(st);
    HDB_CUDA_CHECK(cudaMemsetAsync(a.count, 0, sizeof(u64), st));
    if (a.probe_rows) fused_probe<<<blocks(a.probe_rows, kThreads * kItems), kThreads, 0, st>>>(a);
    HDB_CUDA_CHECK_LAUNCH("fused_probe");
    HDB_CUDA_CHECK(cudaMemcpyAsync(host_count_.get(), a.count, sizeof(u64), cudaMemcpyDeviceToHost, st));
    double sec = t.stop(st);
    b.add_phase("probe", sec);
    b.kernel += sec;
    out.rows = host_count_[0];
    return out;
  }

  const Plan& plan_;
  bool fused_;
  Transfer transfer_;
  std::vector<std::vector<tpch::ColumnInfo>> schemas_;
  FusedPlan fused_plan_;
  Stream stream_;
  std::vector<HostBuffer<u32>> host_in_;
  std::vector<DevRel> rel_;  // inputs, then one per step
  DevRel fused_out_;
  std::vector<DeviceBuffer<unsigned long long>> tables_;
  DeviceBuffer<u32> flag_, pos_, idx_a_, idx_b_, first_, rrow_in_, rkey_sorted_, rrow_sorted_;
  DeviceBuffer<u64> count_, offset_, total_;
  DeviceBuffer<char> cub_tmp_;
  HostBuffer<u64> host_count_;  // pinned: the counts read back to size outputs
  std::vector<HostBuffer<u32>> host_out_;
  u64 host_rows_ = 0;
};

}  // namespace

std::unique_ptr<tpch::TpchRun> CudaTpch::prepare(const Plan& plan, const std::string& variant, Transfer transfer) {
  if (variant != "operator" && variant != "fused") throw SkipCase("unknown variant " + variant);
  return std::make_unique<CudaRun>(plan, variant == "fused", transfer);
}

}  // namespace hdb::cuda
