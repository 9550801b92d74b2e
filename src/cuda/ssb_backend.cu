#include "ssb_backend.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <type_traits>

#include "harness/errors.hpp"
#include "harness/variants.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/prim.cuh"
#include "runtime/scratch.hpp"

namespace hdb::cuda {
namespace {

using ssb::Agg;
using ssb::Col;
using ssb::Pred;
using ssb::Query;
using ssb::Residency;
using ssb::Table;
using ssb::Tables;
using u32 = std::uint32_t;
using u64 = std::uint64_t;
using i64 = long long;  // the sums: atomicAdd's unsigned long long, read as two's complement
using ull = unsigned long long;

constexpr int kThreads = 128;  // Crystal's tile: 128 threads x 4 rows
constexpr int kItems = 4;
constexpr int kTile = kThreads * kItems;
constexpr int kStreamThreads = 256;  // the operator kernels: one row per thread
constexpr int kMaxRanges = 2, kMaxPreds = 3, kMaxDims = 4;
// Dense arrays (4 bytes a key between the smallest and largest) and dense group arrays (the product
// of the group-by columns' spans; 12 bytes a group with its seen flag, as much again for the
// compacted answer) beyond these are skipped cases, with the reason.
constexpr u64 kMaxSpan = u64{1} << 28;
constexpr u64 kMaxGroups = u64{1} << 24;
// Up to this many groups (12 KB of shared memory a block) the probe sums a tile's rows in shared
// memory and adds each group to the global array once per block: Q4.1's 175 groups would otherwise
// take an atomic on one of 175 addresses for every passing row.
constexpr u32 kSharedGroups = 1024;

unsigned blocks(u64 n, u64 per_block) {
  return static_cast<unsigned>(std::max<u64>(1, (n + per_block - 1) / per_block));
}

// A predicate on one column: its value in one of up to kMaxRanges ranges [lo, lo + width].
struct RangePred {
  const u32* col;
  int n;
  u32 lo[kMaxRanges], width[kMaxRanges];
  __device__ __forceinline__ bool test(u64 row) const {
    const u32 v = col[row];
    bool ok = false;
    for (int k = 0; k < n; ++k) ok |= v - lo[k] <= width[k];
    return ok;
  }
};

// One dimension's dense array as the probe reads it: map[fk - min_key] is the row's group offset
// (-1: no passing row has that key), times stride its share of the group index.
struct DimProbe {
  const u32* fk;
  const int* map;
  u32 min_key, span, stride;
  __device__ __forceinline__ int rank(u64 row) const {
    const u32 off = fk[row] - min_key;
    return off < span ? map[off] : -1;
  }
};

// The aggregate's value of lineorder row r.
template <Agg A>
__device__ __forceinline__ i64 agg_value(const u32* a, const u32* b, u64 r) {
  if constexpr (A == Agg::DiscountedPrice)
    return static_cast<i64>(a[r]) * b[r];  // extendedprice x discount
  else if constexpr (A == Agg::Revenue)
    return a[r];
  else
    return static_cast<i64>(a[r]) - static_cast<i64>(b[r]);  // revenue - supplycost
}

// ---- the dimension build (both variants) -----------------------------------------------------

struct BuildArgs {
  const u32* key;
  u64 rows;
  u32 min_key;
  int n_preds;
  RangePred preds[kMaxPreds];
  const u32* group;  // the group-by column, or null
  u32 group_min;
  int* map;
};

__global__ void build_dim(BuildArgs a) {
  const u64 r = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (r >= a.rows) return;
  for (int p = 0; p < a.n_preds; ++p)
    if (!a.preds[p].test(r)) return;
  a.map[a.key[r] - a.min_key] = a.group ? static_cast<int>(a.group[r] - a.group_min) : 0;
}

// ---- fused: one probe kernel over lineorder --------------------------------------------------

struct ProbeArgs {
  u64 rows;
  int n_preds;
  RangePred preds[kMaxPreds];  // lineorder's own
  int n_dims;
  DimProbe dims[kMaxDims];  // most selective first
  const u32* a;             // the aggregate's columns (agg_value)
  const u32* b;
  ull* sums;  // Q1.x: one; else one per group
  u32* seen;  // per group: whether a row reached it (grouped only)
  u32 groups;
};

// A group's seen flag: every writer stores the same 1, so a plain store does (no atomic per row);
// under host execution a relaxed atomic store, so ThreadSanitizer sees no race among the writers.
__device__ __forceinline__ void mark_seen(u32* p) {
#ifdef HDB_CUDA_HOST
  __atomic_store_n(p, 1u, __ATOMIC_RELAXED);
#else
  *static_cast<volatile u32*>(p) = 1u;
#endif
}

// A tile of kThreads x kItems rows, item `it` of thread t being row tile + it x kThreads + t (the
// block's loads of a column are coalesced, as Crystal's BlockLoad of a striped tile): lineorder's
// predicates on the whole tile first, then each dimension's probe for the rows still alive, then
// the aggregate, by Sums:
//  - OneSum (Q1.x): a block reduction in shared memory and one 64-bit atomicAdd per block;
//  - Global: a 64-bit atomicAdd per row into the dense group array, the seen flag a plain store;
//  - Shared (at most kSharedGroups groups): shared-memory atomics per row, then one global atomicAdd
//    per group the block reached.
enum class Sums { OneSum, Global, Shared };
template <Agg A, Sums S>
struct ProbeKind {
  static constexpr Agg agg = A;
  static constexpr Sums sums = S;
};

template <class Kind>
__global__ void __launch_bounds__(kThreads) fused_probe(ProbeArgs a) {
  constexpr Agg A = Kind::agg;
  constexpr Sums S = Kind::sums;
  const u64 tile = blockIdx.x * static_cast<u64>(kTile);
  __shared__ ull block_sum[S == Sums::Shared ? kSharedGroups : 1];
  __shared__ u32 block_hit[S == Sums::Shared ? kSharedGroups : 1];
  if constexpr (S == Sums::Shared) {
    for (u32 g = threadIdx.x; g < a.groups; g += kThreads) block_sum[g] = 0, block_hit[g] = 0;
    __syncthreads();
  }
  bool keep[kItems];
  u32 group[kItems];
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    keep[it] = tile + it * kThreads + threadIdx.x < a.rows;
    group[it] = 0;
  }
  for (int p = 0; p < a.n_preds; ++p)
#pragma unroll
    for (int it = 0; it < kItems; ++it)
      if (keep[it]) keep[it] = a.preds[p].test(tile + it * kThreads + threadIdx.x);
  for (int d = 0; d < a.n_dims; ++d)
#pragma unroll
    for (int it = 0; it < kItems; ++it)
      if (keep[it]) {
        const int rank = a.dims[d].rank(tile + it * kThreads + threadIdx.x);
        keep[it] = rank >= 0;
        group[it] += static_cast<u32>(rank) * a.dims[d].stride;
      }
  i64 sum = 0;
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    if (!keep[it]) continue;
    const i64 v = agg_value<A>(a.a, a.b, tile + it * kThreads + threadIdx.x);
    if constexpr (S == Sums::Global) {
      atomicAdd(&a.sums[group[it]], static_cast<ull>(v));
      mark_seen(&a.seen[group[it]]);
    } else if constexpr (S == Sums::Shared) {
      atomicAdd(&block_sum[group[it]], static_cast<ull>(v));
      atomicOr(&block_hit[group[it]], 1u);
    } else {
      sum += v;
    }
  }
  if constexpr (S == Sums::Shared) {
    __syncthreads();
    for (u32 g = threadIdx.x; g < a.groups; g += kThreads)
      if (block_hit[g]) {
        atomicAdd(&a.sums[g], block_sum[g]);
        mark_seen(&a.seen[g]);
      }
  }
  if constexpr (S == Sums::OneSum) {
    __shared__ i64 part[kThreads];
    part[threadIdx.x] = sum;
    __syncthreads();
    for (int s = kThreads / 2; s > 0; s /= 2) {
      if (static_cast<int>(threadIdx.x) < s) part[threadIdx.x] += part[threadIdx.x + s];
      __syncthreads();
    }
    if (threadIdx.x == 0 && part[0] != 0) atomicAdd(a.sums, static_cast<ull>(part[0]));
  }
}

// The non-empty groups of the dense array as (group index, sum) rows, in no order: the answer.
__global__ void compact_groups(const ull* sums, const u32* seen, u64 groups, u32* out_group, i64* out_sum, u32* count) {
  const u64 g = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (g >= groups || !seen[g]) return;
  const u32 at = atomicAdd(count, 1u);
  out_group[at] = static_cast<u32>(g);
  out_sum[at] = static_cast<i64>(sums[g]);
}

// ---- operators: one row per thread, every output materialised --------------------------------

__device__ __forceinline__ u64 row_of(const u32* rows, u64 i) { return rows ? rows[i] : i; }

// flag[i] = whether row rows[i] (row i without a list) passes `p`.
__global__ void select_flags(RangePred p, const u32* rows, u64 m, u32* flag) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < m) flag[i] = p.test(row_of(rows, i)) ? 1u : 0u;
}

// The join as a lookup: the row's foreign key gathered, looked up in the dense array; flag and the
// group index with this dimension's share.
__global__ void join_lookup(DimProbe d, const u32* rows, const u32* group, u64 m, u32* flag, u32* group_out) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  const int rank = d.rank(row_of(rows, i));
  flag[i] = rank >= 0 ? 1u : 0u;
  group_out[i] = (group ? group[i] : 0u) + static_cast<u32>(rank) * d.stride;
}

// The kept rows (and their group indices, when `group` is given) at their scanned positions.
__global__ void scatter_kept(const u32* flag, const u32* pos, const u32* rows, const u32* group, u64 m, u32* rows_out,
                             u32* group_out) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= m || !flag[i]) return;
  rows_out[pos[i]] = static_cast<u32>(row_of(rows, i));
  if (group) group_out[pos[i]] = group[i];
}

template <Agg A>
__global__ void gather_values(const u32* a, const u32* b, const u32* rows, u64 m, i64* out) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < m) out[i] = agg_value<A>(a, b, row_of(rows, i));
}

// heads[i] = 1 where a run of equal sorted group indices starts.
__global__ void run_heads(const u32* key, u64 m, u32* heads) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < m) heads[i] = i == 0 || key[i] != key[i - 1] ? 1u : 0u;
}

// At the last row of each run (run number id[i] - 1: id is the inclusive scan of the heads): the
// run's end and its group.
__global__ void run_ends(const u32* key, const u32* id, u64 m, u32* ends, u32* out_group) {
  const u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= m || (i + 1 < m && key[i + 1] == key[i])) return;
  ends[id[i] - 1] = static_cast<u32>(i);
  out_group[id[i] - 1] = key[i];
}

// A run's sum: the difference of the values' prefix sums at its end and the previous run's end.
__global__ void run_sums(const i64* prefix, const u32* ends, u64 runs, i64* out_sum) {
  const u64 r = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (r < runs) out_sum[r] = prefix[ends[r]] - (r ? prefix[ends[r - 1]] : 0);
}

struct Sum {
  __host__ __device__ i64 operator()(i64 x, i64 y) const { return x + y; }
};

// ---- host side -------------------------------------------------------------------------------

RangePred range_pred(const u32* col, const Pred& p) {
  if (p.ranges.size() > static_cast<std::size_t>(kMaxRanges)) throw SkipCase("a predicate of more than 2 ranges");
  RangePred r{};
  r.col = col;
  r.n = static_cast<int>(p.ranges.size());
  for (std::size_t k = 0; k < p.ranges.size(); ++k) {
    r.lo[k] = p.ranges[k].first;
    r.width[k] = p.ranges[k].second - p.ranges[k].first;
  }
  return r;
}

std::pair<u32, u32> min_max(const ssb::Column& c) {
  if (c.empty()) return {1, 0};
  auto [lo, hi] = std::minmax_element(c.begin(), c.end());
  return {*lo, *hi};
}

// What a case plans of one joined dimension, from the host tables (the statistics a planner has:
// key and value ranges, the predicates' selectivity); the arrays themselves are built on the device.
struct DimPlan {
  Table table;
  u32 min_key = 0;
  u64 span = 0;   // keys: max - min + 1
  int slot = -1;  // its group-by column's position in the answer, or -1
  u32 group_min = 0;
  u64 group_span = 1;  // the group-by column's max - min + 1 (1 without one)
  u64 stride = 1;
  double selectivity = 1;
};

// The dimensions of `q` (most selective first, strides assigned) and the number of groups; throws
// SkipCase past the plan's limits.
std::vector<DimPlan> plan_dims(const Query& q, const Tables& t, u64& groups) {
  std::vector<DimPlan> dims;
  for (Table d : q.dims()) {
    DimPlan p;
    p.table = d;
    const ssb::Column& keys = t[ssb::key_of(d)];
    auto [lo, hi] = min_max(keys);
    p.min_key = lo;
    p.span = hi >= lo ? u64{hi} - lo + 1 : 0;
    if (p.span > kMaxSpan)
      throw SkipCase(std::string(ssb::table_name(d)) + " keys spread over " + std::to_string(p.span) +
                     " values: more than the cuda plan's dense arrays take (2^28)");
    for (std::size_t g = 0; g < q.group_by.size(); ++g)
      if (ssb::table_of(q.group_by[g]) == d) {
        if (p.slot >= 0) throw SkipCase("the cuda plan takes one group-by column per dimension");
        p.slot = static_cast<int>(g);
        auto [glo, ghi] = min_max(t[q.group_by[g]]);
        p.group_min = glo;
        p.group_span = ghi >= glo ? u64{ghi} - glo + 1 : 1;
      }
    u64 passing = 0;
    for (u64 r = 0; r < keys.size(); ++r) {
      bool ok = true;
      for (const Pred& pr : q.preds)
        if (ssb::table_of(pr.col) == d) ok = ok && pr.test(t[pr.col][r]);
      passing += ok;
    }
    p.selectivity = keys.empty() ? 0 : static_cast<double>(passing) / static_cast<double>(keys.size());
    dims.push_back(p);
  }
  if (dims.size() > static_cast<std::size_t>(kMaxDims)) throw SkipCase("more than 4 dimensions");
  std::stable_sort(dims.begin(), dims.end(),
                   [](const DimPlan& a, const DimPlan& b) { return a.selectivity < b.selectivity; });
  groups = 1;
  for (DimPlan& p : dims) {
    p.stride = groups;
    groups *= p.group_span;
    if (groups > kMaxGroups) throw SkipCase("more than 2^24 groups: more than the cuda plan's dense group arrays take");
  }
  return dims;
}

std::uint64_t dense_array_bytes(const std::vector<DimPlan>& dims) {
  u64 b = 0;
  for (const DimPlan& d : dims) b += d.span * sizeof(int);
  return b;
}

// The aggregate's lineorder columns.
std::pair<Col, Col> agg_columns(Agg a) {
  switch (a) {
    case Agg::DiscountedPrice: return {Col::lo_extendedprice, Col::lo_discount};
    case Agg::Revenue: return {Col::lo_revenue, Col::lo_revenue};
    case Agg::Profit: return {Col::lo_revenue, Col::lo_supplycost};
  }
  throw std::logic_error("unknown aggregate");
}

// CUB's temporary storage for the operators' calls on n rows (the size queries of the very calls).
std::size_t cub_temp_bytes(u64 n) {
  const int items = static_cast<int>(std::max<u64>(n, 1));
  std::size_t scan = 0, iscan = 0, vscan = 0, sort = 0, reduce = 0;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const u32*>(nullptr),
                                                static_cast<u32*>(nullptr), items));
  HDB_CUDA_CHECK(prim::DeviceScan::InclusiveSum(nullptr, iscan, static_cast<const u32*>(nullptr),
                                                static_cast<u32*>(nullptr), items));
  HDB_CUDA_CHECK(prim::DeviceScan::InclusiveSum(nullptr, vscan, static_cast<const i64*>(nullptr),
                                                static_cast<i64*>(nullptr), items));
  HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(nullptr, sort, static_cast<const u32*>(nullptr),
                                                  static_cast<u32*>(nullptr), static_cast<const i64*>(nullptr),
                                                  static_cast<i64*>(nullptr), items));
  HDB_CUDA_CHECK(prim::DeviceReduce::Reduce(nullptr, reduce, static_cast<const i64*>(nullptr),
                                            static_cast<i64*>(nullptr), items, Sum{}, i64{0}));
  return std::max({scan, iscan, vscan, sort, reduce});
}

enum class Plan { Fused, Operators };

class CudaSsbRun : public ssb::SsbRun {
 public:
  CudaSsbRun(const Query& q, const Tables& t, Plan plan, Transfer transfer, Residency residency)
      : q_(q), plan_(plan), residency_(residency), n_(t.rows(Table::Lineorder)) {
    if (n_ >= (u64{1} << 31)) throw SkipCase("lineorder of 2^31 rows or more is not supported");
    dims_ = plan_dims(q, t, groups_);
    grouped_ = !q.group_by.empty();
    const Transfer host_kind = transfer == Transfer::None ? Transfer::Pinned : transfer;
    // The columns the query reads: host copies in the case's kind of host memory, device buffers.
    for (Col c : q.columns()) {
      const ssb::Column& src = t[c];
      auto& h = host_[static_cast<std::size_t>(c)];
      h = HostBuffer<u32>(std::max<std::size_t>(1, src.size()), host_kind);
      std::copy(src.begin(), src.end(), h.get());
      dev_[static_cast<std::size_t>(c)] = DeviceBuffer<u32>(std::max<std::size_t>(1, src.size()));
      cols_.push_back(c);
    }
    if (residency_ == Residency::Device) {
      upload();
      stream_.sync();
    }
    maps_.resize(dims_.size());
    for (std::size_t d = 0; d < dims_.size(); ++d) maps_[d] = DeviceBuffer<int>(std::max<u64>(1, dims_[d].span));
    const u64 answer_rows = plan_ == Plan::Fused ? groups_ : std::min(groups_, std::max<u64>(n_, 1));
    host_group_ = HostBuffer<u32>(answer_rows, host_kind);
    host_sum_ = HostBuffer<i64>(answer_rows, host_kind);
    host_count_ = HostBuffer<u32>(2, Transfer::Pinned);
  }

  Breakdown pass() override {
    HostTimer wall;
    Breakdown b;
    cudaStream_t s = stream_.get();
    if (residency_ == Residency::Host) {
      xfer_.start(s);
      upload();
      b.h2d = xfer_.stop(s);
    }
    phases_.begin(s);
    phases_.phase("build");
    build();
    const u64 rows = plan_ == Plan::Fused ? run_fused() : run_operators();
    const Breakdown k = phases_.finish();
    b.kernel = k.kernel;
    for (const Phase& p : k.phases) b.add_phase(p.name, p.seconds);
    // The answer back: (group index, sum) rows, their count first when only the device knows it.
    xfer_.start(s);
    u64 answer = rows;
    if (answer == kUnknown) {
      HDB_CUDA_CHECK(cudaMemcpyAsync(host_count_.get(), count_.get(), sizeof(u32), cudaMemcpyDeviceToHost, s));
      stream_.sync();
      answer = host_count_[0];
    }
    if (answer) {
      if (grouped_)
        HDB_CUDA_CHECK(
            cudaMemcpyAsync(host_group_.get(), out_group_.get(), answer * sizeof(u32), cudaMemcpyDeviceToHost, s));
      HDB_CUDA_CHECK(cudaMemcpyAsync(host_sum_.get(), out_sum_.get(), answer * sizeof(i64), cudaMemcpyDeviceToHost, s));
    }
    b.d2h = xfer_.stop(s);
    answer_rows_ = answer;
    b.total = wall.seconds();
    return b;
  }

  ssb::Result result() override {
    ssb::Result r;
    for (u64 i = 0; i < answer_rows_; ++i) {
      ssb::ResultRow row;
      row.value = host_sum_[i];
      const u64 g = grouped_ ? host_group_[i] : 0;
      for (const DimPlan& d : dims_)
        if (d.slot >= 0)
          row.key[static_cast<std::size_t>(d.slot)] = d.group_min + static_cast<u32>((g / d.stride) % d.group_span);
      r.rows.push_back(row);
    }
    std::sort(r.rows.begin(), r.rows.end());
    return r;
  }

 private:
  static constexpr u64 kUnknown = ~u64{0};

  const u32* col(Col c) const { return dev_[static_cast<std::size_t>(c)].get(); }

  void upload() {
    for (Col c : cols_) {
      const auto i = static_cast<std::size_t>(c);
      HDB_CUDA_CHECK(
          cudaMemcpyAsync(dev_[i].get(), host_[i].get(), dev_[i].bytes(), cudaMemcpyHostToDevice, stream_.get()));
    }
  }

  void build() {
    cudaStream_t s = stream_.get();
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      const DimPlan& p = dims_[d];
      BuildArgs a{};
      a.key = col(ssb::key_of(p.table));
      a.rows = p.span ? dev_[static_cast<std::size_t>(ssb::key_of(p.table))].size() : 0;
      a.min_key = p.min_key;
      for (const Pred& pr : q_.preds)
        if (ssb::table_of(pr.col) == p.table) {
          if (a.n_preds == kMaxPreds) throw SkipCase("more than 3 predicates on one dimension");
          a.preds[a.n_preds++] = range_pred(col(pr.col), pr);
        }
      a.group = p.slot >= 0 ? col(q_.group_by[static_cast<std::size_t>(p.slot)]) : nullptr;
      a.group_min = p.group_min;
      a.map = maps_[d].get();
      HDB_CUDA_CHECK(cudaMemsetAsync(a.map, 0xff, maps_[d].bytes(), s));
      if (a.rows) HDB_LAUNCH(build_dim, blocks(a.rows, kStreamThreads), kStreamThreads, 0, s)(a);
      HDB_CUDA_CHECK_LAUNCH("build_dim");
    }
  }

  DimProbe probe_of(std::size_t d) const {
    const DimPlan& p = dims_[d];
    return {col(ssb::foreign_key(p.table)), maps_[d].get(), p.min_key, static_cast<u32>(p.span),
            static_cast<u32>(p.stride)};
  }

  std::vector<RangePred> fact_preds() const {
    std::vector<RangePred> out;
    for (const Pred& pr : q_.preds)
      if (ssb::table_of(pr.col) == Table::Lineorder) out.push_back(range_pred(col(pr.col), pr));
    if (out.size() > static_cast<std::size_t>(kMaxPreds)) throw SkipCase("more than 3 predicates on lineorder");
    return out;
  }

  // Returns the answer's row count, or kUnknown when only the device's count_ has it.
  u64 run_fused() {
    cudaStream_t s = stream_.get();
    phases_.phase("probe");
    ProbeArgs a{};
    a.rows = n_;
    const std::vector<RangePred> preds = fact_preds();
    a.n_preds = static_cast<int>(preds.size());
    std::copy(preds.begin(), preds.end(), a.preds);
    a.n_dims = static_cast<int>(dims_.size());
    for (std::size_t d = 0; d < dims_.size(); ++d) a.dims[d] = probe_of(d);
    const auto [ca, cb] = agg_columns(q_.agg);
    a.a = col(ca);
    a.b = col(cb);
    a.groups = static_cast<u32>(groups_);
    a.sums = reinterpret_cast<ull*>(grow(sums_, groups_));
    HDB_CUDA_CHECK(cudaMemsetAsync(a.sums, 0, groups_ * sizeof(ull), s));
    if (grouped_) {
      a.seen = grow(seen_, groups_);
      HDB_CUDA_CHECK(cudaMemsetAsync(a.seen, 0, groups_ * sizeof(u32), s));
    }
    if (n_) launch_probe(a);
    if (!grouped_) {  // Q1.x: the one sum is the answer
      grow(out_sum_, 1);
      HDB_CUDA_CHECK(cudaMemcpyAsync(out_sum_.get(), a.sums, sizeof(i64), cudaMemcpyDeviceToDevice, s));
      return 1;
    }
    phases_.phase("compact");
    u32* count = grow(count_, 1);
    HDB_CUDA_CHECK(cudaMemsetAsync(count, 0, sizeof(u32), s));
    HDB_LAUNCH(compact_groups, blocks(groups_, kStreamThreads), kStreamThreads, 0, s)
    (a.sums, a.seen, groups_, grow(out_group_, groups_), grow(out_sum_, groups_), count);
    HDB_CUDA_CHECK_LAUNCH("compact_groups");
    return kUnknown;
  }

  void launch_probe(const ProbeArgs& a) {
    const unsigned grid = blocks(a.rows, kTile);
    cudaStream_t s = stream_.get();
    auto go = [&](auto agg) {
      constexpr Agg A = decltype(agg)::value;
      using GlobalSums = ProbeKind<A, Sums::Global>;
      using SharedSums = ProbeKind<A, Sums::Shared>;
      using OneSum = ProbeKind<A, Sums::OneSum>;
      if (!grouped_)
        HDB_LAUNCH(fused_probe<OneSum>, grid, kThreads, 0, s)(a);
      else if (a.groups <= kSharedGroups)
        HDB_LAUNCH(fused_probe<SharedSums>, grid, kThreads, 0, s)(a);
      else
        HDB_LAUNCH(fused_probe<GlobalSums>, grid, kThreads, 0, s)(a);
    };
    switch (q_.agg) {
      case Agg::DiscountedPrice: go(std::integral_constant<Agg, Agg::DiscountedPrice>{}); break;
      case Agg::Revenue: go(std::integral_constant<Agg, Agg::Revenue>{}); break;
      case Agg::Profit: go(std::integral_constant<Agg, Agg::Profit>{}); break;
    }
    HDB_CUDA_CHECK_LAUNCH("fused_probe");
  }

  // The count a scan gives: its last position plus the last flag (a host round trip).
  u64 read_count(const u32* pos, const u32* flag, u64 m) {
    if (!m) return 0;
    cudaStream_t s = stream_.get();
    HDB_CUDA_CHECK(cudaMemcpyAsync(host_count_.get(), pos + m - 1, sizeof(u32), cudaMemcpyDeviceToHost, s));
    if (flag)
      HDB_CUDA_CHECK(cudaMemcpyAsync(host_count_.get() + 1, flag + m - 1, sizeof(u32), cudaMemcpyDeviceToHost, s));
    stream_.sync();
    return u64{host_count_[0]} + (flag ? host_count_[1] : 0);
  }

  template <class Call>
  void cub(Call call) {
    std::size_t bytes = 0;
    HDB_CUDA_CHECK(call(static_cast<void*>(nullptr), bytes));
    HDB_CUDA_CHECK(call(static_cast<void*>(grow(cub_tmp_, bytes)), bytes));
  }

  // Flags -> positions (CUB scan) -> kept rows (and group indices) in rows_[next]; returns the count.
  u64 compact(u64 m, const u32* rows, const u32* group, bool with_group) {
    cudaStream_t s = stream_.get();
    u32* flag = flag_.get();
    u32* pos = grow(pos_, m);
    cub([&](void* tmp, std::size_t& bytes) {
      return prim::DeviceScan::ExclusiveSum(tmp, bytes, flag, pos, static_cast<int>(m), s);
    });
    const u64 kept = read_count(pos, flag, m);
    const int next = 1 - cur_;
    u32* rows_out = grow(rows_[next], kept);
    u32* group_out = with_group ? grow(group_[next], kept) : nullptr;
    HDB_LAUNCH(scatter_kept, blocks(m, kStreamThreads), kStreamThreads, 0, s)
    (flag, pos, rows, group, m, rows_out, group_out);
    HDB_CUDA_CHECK_LAUNCH("scatter_kept");
    cur_ = next;
    return kept;
  }

  u64 run_operators() {
    cudaStream_t s = stream_.get();
    const unsigned tb = kStreamThreads;
    u64 m = n_;
    const u32* rows = nullptr;   // null: every row, in order
    const u32* group = nullptr;  // null: group index 0
    cur_ = 0;
    for (const RangePred& p : fact_preds()) {
      phases_.phase("select");
      if (m) {
        HDB_LAUNCH(select_flags, blocks(m, tb), tb, 0, s)(p, rows, m, grow(flag_, m));
        HDB_CUDA_CHECK_LAUNCH("select_flags");
        m = compact(m, rows, nullptr, false);
      }
      rows = rows_[cur_].get();
    }
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      phases_.phase(std::string("join_") + ssb::table_name(dims_[d].table));
      if (!m) break;
      u32* lookup_group = grow(group_tmp_, m);
      HDB_LAUNCH(join_lookup, blocks(m, tb), tb, 0, s)(probe_of(d), rows, group, m, grow(flag_, m), lookup_group);
      HDB_CUDA_CHECK_LAUNCH("join_lookup");
      m = compact(m, rows, lookup_group, true);
      rows = rows_[cur_].get();
      group = group_[cur_].get();
    }
    phases_.phase("gather");
    const std::pair<Col, Col> agg_cols = agg_columns(q_.agg);
    const u32* va = col(agg_cols.first);
    const u32* vb = col(agg_cols.second);
    i64* vals = grow(vals_, m);
    if (m) {
      auto go = [&](auto agg) {
        constexpr Agg A = decltype(agg)::value;
        HDB_LAUNCH(gather_values<A>, blocks(m, tb), tb, 0, s)(va, vb, rows, m, vals);
      };
      switch (q_.agg) {
        case Agg::DiscountedPrice: go(std::integral_constant<Agg, Agg::DiscountedPrice>{}); break;
        case Agg::Revenue: go(std::integral_constant<Agg, Agg::Revenue>{}); break;
        case Agg::Profit: go(std::integral_constant<Agg, Agg::Profit>{}); break;
      }
      HDB_CUDA_CHECK_LAUNCH("gather_values");
    }
    if (!grouped_) {
      phases_.phase("reduce");
      i64* out = grow(out_sum_, 1);
      if (m)
        cub([&](void* tmp, std::size_t& bytes) {
          return prim::DeviceReduce::Reduce(tmp, bytes, vals, out, static_cast<int>(m), Sum{}, i64{0}, s);
        });
      else
        HDB_CUDA_CHECK(cudaMemsetAsync(out, 0, sizeof(i64), s));
      return 1;
    }
    phases_.phase("group_by");
    if (!m) return 0;
    // Sort (group, value) by group over the group index's bits, then one row per run of equal groups.
    int bits = 1;
    while ((u64{1} << bits) < groups_) ++bits;
    u32* keys = grow(sorted_group_, m);
    i64* sorted = grow(sorted_vals_, m);
    cub([&](void* tmp, std::size_t& bytes) {
      return prim::DeviceRadixSort::SortPairs(tmp, bytes, group, keys, vals, sorted, static_cast<int>(m), 0, bits, s);
    });
    i64* prefix = grow(prefix_, m);
    cub([&](void* tmp, std::size_t& bytes) {
      return prim::DeviceScan::InclusiveSum(tmp, bytes, sorted, prefix, static_cast<int>(m), s);
    });
    u32* heads = grow(flag_, m);
    HDB_LAUNCH(run_heads, blocks(m, tb), tb, 0, s)(keys, m, heads);
    HDB_CUDA_CHECK_LAUNCH("run_heads");
    u32* id = grow(pos_, m);
    cub([&](void* tmp, std::size_t& bytes) {
      return prim::DeviceScan::InclusiveSum(tmp, bytes, heads, id, static_cast<int>(m), s);
    });
    const u64 runs = read_count(id, nullptr, m);
    u32* ends = grow(group_tmp_, runs);
    HDB_LAUNCH(run_ends, blocks(m, tb), tb, 0, s)(keys, id, m, ends, grow(out_group_, runs));
    HDB_CUDA_CHECK_LAUNCH("run_ends");
    HDB_LAUNCH(run_sums, blocks(runs, tb), tb, 0, s)(prefix, ends, runs, grow(out_sum_, runs));
    HDB_CUDA_CHECK_LAUNCH("run_sums");
    return runs;
  }

  const Query& q_;
  Plan plan_;
  Residency residency_;
  u64 n_;
  std::vector<DimPlan> dims_;
  u64 groups_ = 1;
  bool grouped_ = false;
  Stream stream_;
  PhaseTimer xfer_, phases_;
  std::vector<Col> cols_;
  std::array<HostBuffer<u32>, ssb::kCols> host_;
  std::array<DeviceBuffer<u32>, ssb::kCols> dev_;
  std::vector<DeviceBuffer<int>> maps_;
  // fused
  DeviceBuffer<i64> sums_;
  DeviceBuffer<u32> seen_, count_;
  // operators (rows_ and group_ ping-pong between operators)
  DeviceBuffer<u32> flag_, pos_, group_tmp_, sorted_group_;
  std::array<DeviceBuffer<u32>, 2> rows_, group_;
  int cur_ = 0;
  DeviceBuffer<i64> vals_, sorted_vals_, prefix_;
  DeviceBuffer<char> cub_tmp_;
  // the answer
  DeviceBuffer<u32> out_group_;
  DeviceBuffer<i64> out_sum_;
  HostBuffer<u32> host_group_, host_count_;
  HostBuffer<i64> host_sum_;
  u64 answer_rows_ = 0;
};

const VariantTable<Plan>& table() {
  static const VariantTable<Plan> t("the cuda ssb backend", {{Plan::Fused, {"fused", ssb::tests(), ""}},
                                                             {Plan::Operators, {"operators", ssb::tests(), ""}}});
  return t;
}

}  // namespace

const VariantList& CudaSsb::variant_table() const { return table(); }

std::unique_ptr<ssb::SsbRun> CudaSsb::prepare(const Query& q, const Tables& t, const std::string& variant,
                                              Transfer transfer, Residency residency) {
  return std::make_unique<CudaSsbRun>(q, t, table().id(variant), transfer, residency);
}

void CudaSsb::plan_scratch(const Query& q, const Tables& t, const std::string& variant, MemoryPlan& memory) const {
  u64 groups = 1;
  const std::vector<DimPlan> dims = plan_dims(q, t, groups);
  const u64 n = t.rows(Table::Lineorder);
  memory.add("dimension arrays (4 bytes per key between the smallest and largest)", dense_array_bytes(dims));
  const bool grouped = !q.group_by.empty();
  switch (table().id(variant)) {
    case Plan::Fused:
      if (!grouped) {
        memory.add("the sum", 2 * 8);
        return;
      }
      memory.add("dense group sums and seen flags (12 bytes a group)", groups * 12)
          .add("the answer: (group, sum) rows and their count", groups * 12 + 4);
      return;
    case Plan::Operators: {
      const u64 answer = std::min(groups, std::max<u64>(n, 1));
      memory.add("flags and scan positions (4 + 4 bytes a row)", n * 8)
          .add("row lists and group indices, two of each and one looked up (20 bytes a row)", n * 20)
          .add("values, sorted groups and values, prefix sums (28 bytes a row)", n * 28)
          .add("the answer: (group, sum) rows", answer * 12)
          .add("CUB temporary storage", cub_temp_bytes(n));
      return;
    }
  }
}

}  // namespace hdb::cuda
