#include "tpch_backend.hpp"

#include "harness/variants.hpp"

#include <algorithm>
#include "runtime/prim.cuh"

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
constexpr u32 kNoRow = ~0u;  // an empty entry of a dense table (build rows are < 2^31)
// A build key whose span (largest - smallest + 1) is at most this many times the build rows is
// looked up in a dense array indexed by key - smallest: 4 bytes an entry, so at most the hash
// table's 16 bytes a row, and one load a lookup instead of a probe sequence.
constexpr u64 kDenseSpanPerRow = 4;
constexpr int kMaxIn = 4, kMaxCols = 8, kMaxJoins = 3, kMaxPreds = 4;
constexpr int kMaxOut = 2 * kMaxCols;  // output words

unsigned blocks(u64 n, u64 per_block = kThreads) {
  return static_cast<unsigned>(std::max<u64>(1, (n + per_block - 1) / per_block));
}

__device__ __forceinline__ bool in_range(u64 x, u64 lo, u64 hi) { return x >= lo && x <= hi; }

// A column's value: 32-bit (hi == nullptr) or 64-bit from its low and high word columns.
struct Words {
  const u32* lo = nullptr;
  const u32* hi = nullptr;
  __device__ __forceinline__ u64 operator[](u64 i) const { return hi ? (u64{hi[i]} << 32) | lo[i] : lo[i]; }
};

// ---- operator-at-a-time kernels -------------------------------------------------------------

__global__ void flag_range(Words x, u64 n, u64 lo, u64 hi, u32* flag) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < n) flag[i] = in_range(x[i], lo, hi) ? 1u : 0u;
}

// The join keys of a column as K (u32, or u64 for a 64-bit column), for the radix sort.
template <class K>
__global__ void load_keys(Words x, u64 n, K* keys) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i < n) keys[i] = static_cast<K>(x[i]);
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
template <class K>
__global__ void match_range(Words lk, u64 nl, const K* rk, u64 nr, u32* first, u64* count) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= nl) return;
  const K k = static_cast<K>(lk[i]);
  u64 a = 0, b = nr;
  while (a < b) {  // lower bound
    u64 m = (a + b) / 2;
    if (rk[m] < k)
      a = m + 1;
    else
      b = m;
  }
  u64 lo = a;
  b = nr;
  while (a < b) {  // upper bound
    u64 m = (a + b) / 2;
    if (rk[m] <= k)
      a = m + 1;
    else
      b = m;
  }
  first[i] = static_cast<u32>(lo);
  count[i] = a - lo;
}

__global__ void expand(const u32* first, const u64* count, const u64* offset, u64 nl, const u32* rrow, u32* li,
                       u32* ri) {
  u64 i = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (i >= nl) return;
  u64 o = offset[i];
  for (u64 k = 0; k < count[i]; ++k) {
    li[o + k] = static_cast<u32>(i);
    ri[o + k] = rrow[first[i] + k];
  }
}

// ---- fused (Crystal-style) kernels -----------------------------------------------------------

// A predicate or a key on word columns: the low word's column, and the high word's for a 64-bit
// column (-1 for a 32-bit one).
struct DPred {
  int lo_word, hi_word;
  u64 lo, hi;
};

struct BuildArgs {
  const u32* cols[kMaxCols];  // word columns
  u64 rows;
  int key_lo, key_hi;  // the key's words (key_hi -1: a 32-bit key)
  int n_preds;
  DPred preds[kMaxPreds];
  unsigned long long* table;
  u64 mask;
  u32* dense;  // non-null: a dense table, entry key - dense_min holds the row
  u64 dense_min;
};

struct FusedArgs {
  const u32* cols[kMaxIn][kMaxCols];  // word columns of every input
  u64 probe_rows;
  int n_probe_preds;
  DPred probe_preds[kMaxPreds];
  int n_joins;
  int probe_in[kMaxJoins], probe_lo[kMaxJoins], probe_hi[kMaxJoins];
  // The build side's key words, for 64-bit keys (the table then holds build rows, see build_table).
  int build_in[kMaxJoins], key_lo[kMaxJoins], key_hi[kMaxJoins];
  const unsigned long long* table[kMaxJoins];
  u64 mask[kMaxJoins];
  const u32* dense[kMaxJoins];  // non-null: join j's dense table (BuildArgs::dense), of dense_span entries
  u64 dense_min[kMaxJoins], dense_span[kMaxJoins];
  int join_of_input[kMaxIn];
  int n_out;  // output words
  int out_in[kMaxOut], out_col[kMaxOut];
  u32* out[kMaxOut];
  unsigned long long* count;
};

__device__ __forceinline__ u64 slot_of(u64 key, u64 mask) {
  u64 h = (key ^ (key >> 32)) * 0x9E3779B97F4A7C15ull;
  return (h ^ (h >> 29)) & mask;
}

// A value of word columns `cols` at row r: one word, or two (hi_word >= 0) as a 64-bit value.
__device__ __forceinline__ u64 word_value(const u32* const* cols, int lo_word, int hi_word, u64 r) {
  return hi_word < 0 ? cols[lo_word][r] : (u64{cols[hi_word][r]} << 32) | cols[lo_word][r];
}

// A dense table's entry key - dense_min holds the row. A hash slot holds (key << 32 | row) for a
// 32-bit key; for a 64-bit key, which does not fit beside the row, the row alone, and a lookup
// compares the build relation's key words at that row.
__global__ void build_table(BuildArgs a) {
  u64 r = blockIdx.x * static_cast<u64>(blockDim.x) + threadIdx.x;
  if (r >= a.rows) return;
  for (int p = 0; p < a.n_preds; ++p)
    if (!in_range(word_value(a.cols, a.preds[p].lo_word, a.preds[p].hi_word, r), a.preds[p].lo, a.preds[p].hi)) return;
  const u64 key = word_value(a.cols, a.key_lo, a.key_hi, r);
  if (a.dense) {  // unique keys: one row an entry, a plain store
    a.dense[key - a.dense_min] = static_cast<u32>(r);
    return;
  }
  unsigned long long packed = a.key_hi < 0 ? (key << 32) | r : r;  // r < 2^31: never kEmpty
  for (u64 s = slot_of(key, a.mask);; s = (s + 1) & a.mask)
    if (atomicCAS(&a.table[s], static_cast<unsigned long long>(kEmpty), packed) == kEmpty) return;
}

// A lookup in two steps, so that a tile issues the first loads of all its rows before it waits on
// one: first_entry loads the key's dense entry or its first hash slot, resolve finishes the lookup
// from it (a hash table may probe on).
__device__ __forceinline__ unsigned long long first_entry(const FusedArgs& a, int j, u64 key) {
  if (a.dense[j]) {
    const u64 d = key - a.dense_min[j];  // wraps below the smallest key: beyond the span too
    return d < a.dense_span[j] ? a.dense[j][d] : kNoRow;
  }
  return a.table[j][slot_of(key, a.mask[j])];
}

__device__ __forceinline__ bool resolve(const FusedArgs& a, int j, u64 key, unsigned long long e, u32& row) {
  if (a.dense[j]) {
    row = static_cast<u32>(e);
    return e != kNoRow;
  }
  const unsigned long long* t = a.table[j];
  const u32* const* build = a.cols[a.build_in[j]];
  for (u64 s = slot_of(key, a.mask[j]);; s = (s + 1) & a.mask[j], e = t[s]) {
    if (e == kEmpty) return false;
    const bool hit = a.key_hi[j] < 0 ? (e >> 32) == key : word_value(build, a.key_lo[j], a.key_hi[j], e) == key;
    if (hit) {
      row = static_cast<u32>(e);
      return true;
    }
  }
}

// A base word column's value for probe row r, given the build rows matched so far.
__device__ __forceinline__ u32 value(const FusedArgs& a, u64 r, const u32* m, int in, int col) {
  return in == 0 ? a.cols[0][col][r] : a.cols[in][col][m[a.join_of_input[in]]];
}

// A base column (its words lo, hi) for probe row r.
__device__ __forceinline__ u64 wide_value(const FusedArgs& a, u64 r, const u32* m, int in, int lo, int hi) {
  const u64 low = value(a, r, m, in, lo);
  return hi < 0 ? low : (u64{value(a, r, m, in, hi)} << 32) | low;
}

__device__ bool probe_selected(const FusedArgs& a, u64 r) {
  for (int p = 0; p < a.n_probe_preds; ++p)
    if (!in_range(word_value(a.cols[0], a.probe_preds[p].lo_word, a.probe_preds[p].hi_word, r), a.probe_preds[p].lo,
                  a.probe_preds[p].hi))
      return false;
  return true;
}

// One tile of kThreads x kItems probe rows, stage by stage as Crystal probes: the selects, then
// each join for the rows still kept (a join's first loads for all of a thread's rows issued before
// any is used), a block-wide scan of the survivors, one atomic per tile for the output position,
// then only result rows written. A missing key also covers build rows the selects removed.
__global__ void __launch_bounds__(kThreads) fused_probe(FusedArgs a) {
  using Scan = prim::BlockScan<u32, kThreads>;
  __shared__ typename Scan::TempStorage scan_tmp;
  __shared__ unsigned long long base;
  const u64 tile = blockIdx.x * static_cast<u64>(kThreads * kItems);
  u32 m[kItems][kMaxJoins];
  bool keep[kItems];
#pragma unroll
  for (int it = 0; it < kItems; ++it) {
    const u64 r = tile + it * kThreads + threadIdx.x;
    keep[it] = r < a.probe_rows && probe_selected(a, r);
  }
  for (int j = 0; j < a.n_joins; ++j) {
    u64 key[kItems] = {};
    unsigned long long first[kItems] = {};
#pragma unroll
    for (int it = 0; it < kItems; ++it) {
      if (!keep[it]) continue;
      key[it] = wide_value(a, tile + it * kThreads + threadIdx.x, m[it], a.probe_in[j], a.probe_lo[j], a.probe_hi[j]);
      first[it] = first_entry(a, j, key[it]);
    }
#pragma unroll
    for (int it = 0; it < kItems; ++it)
      if (keep[it]) keep[it] = resolve(a, j, key[it], first[it], m[it][j]);
  }
  u32 mine = 0;
#pragma unroll
  for (int it = 0; it < kItems; ++it) mine += keep[it] ? 1u : 0u;
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

// A relation on the device as word columns: a 32-bit plan column is one, a wide (64-bit) one two,
// low words then high words (as the cpu columnar engine). Selects, gathers and projects move
// words; a select on a wide column and a join on wide keys read both words as one 64-bit value.
struct DevRel : tpch::WordLayout {
  std::vector<DeviceBuffer<u32>> cols;  // word columns
  u64 rows = 0;
  void shape(const std::vector<tpch::ColumnInfo>& schema) {
    static_cast<tpch::WordLayout&>(*this) = tpch::word_layout(schema);
    cols.resize(static_cast<std::size_t>(total));
  }
  Words words_of(int col) const {
    const int h = hi_word(col);
    return {cols[static_cast<std::size_t>(lo_word(col))].get(),
            h < 0 ? nullptr : cols[static_cast<std::size_t>(h)].get()};
  }
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
    for (std::size_t r = 0; r < rel_.size(); ++r) rel_[r].shape(schemas_[r]);
    fused_out_.shape(schemas_.back());
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i) {
      const Relation& in = *plan_.inputs[i];
      DevRel& d = rel_[i];
      d.rows = in.rows();
      std::size_t w = 0;
      for (const auto& c : in.cols)
        for (const std::vector<u32>* words : {&c.v, &c.hi}) {
          if (words == &c.hi && !c.info.wide) continue;
          HostBuffer<u32> h(std::max<u64>(1, words->size()), host_kind);
          std::copy(words->begin(), words->end(), h.get());
          host_in_.push_back(std::move(h));
          d.cols[w++] = DeviceBuffer<u32>(std::max<u64>(1, words->size()));
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
        HDB_CUDA_CHECK(
            cudaMemcpyAsync(c.get(), host_in_[h].get(), rel_[i].rows * sizeof(u32), cudaMemcpyHostToDevice, s));
        ++h;
      }
    b.h2d = t.stop(s);
    const DevRel& out = fused_ ? run_fused(b) : run_operators(b);
    // The answer back to the host, word column by word column.
    const std::size_t width = out.cols.size();
    host_rows_ = out.rows;
    // Host buffers for the answer grow before the d2h events: allocation is never timed.
    if (host_out_.size() < width) host_out_.resize(width);
    for (std::size_t c = 0; c < width; ++c)
      if (host_out_[c].size() < std::max<u64>(1, out.rows))
        host_out_[c] =
            HostBuffer<u32>(std::max<u64>(1, out.rows), transfer_ == Transfer::None ? Transfer::Pinned : transfer_);
    t.start(s);
    for (std::size_t c = 0; c < width; ++c) {
      HDB_CUDA_CHECK(
          cudaMemcpyAsync(host_out_[c].get(), out.cols[c].get(), out.rows * sizeof(u32), cudaMemcpyDeviceToHost, s));
    }
    b.d2h = t.stop(s);
    b.total = wall.seconds();
    return b;
  }

  Relation result() override {
    Relation r;
    r.name = plan_.kernel;
    const DevRel& shape = rel_.back();  // the answer's word layout (the fused output has the same)
    for (std::size_t c = 0; c < schemas_.back().size(); ++c) {
      auto words = [&](int w) {
        return std::vector<u32>(host_out_[static_cast<std::size_t>(w)].get(),
                                host_out_[static_cast<std::size_t>(w)].get() + host_rows_);
      };
      const int col = static_cast<int>(c);
      r.cols.push_back({schemas_.back()[c], words(shape.lo_word(col)),
                        shape.hi_word(col) < 0 ? std::vector<u32>{} : words(shape.hi_word(col))});
    }
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
    HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(nullptr, bytes, in, out, static_cast<int>(n), stream_.get()));
    char* tmp = grow(cub_tmp_, bytes);
    HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(tmp, bytes, in, out, static_cast<int>(n), stream_.get()));
  }

  // out.cols[o + k] = in.cols[k][idx] for every word column of `in` except plan column `skip`'s.
  void gather_cols(const DevRel& in, const u32* idx, u64 n, DevRel& out, std::size_t o, int skip) {
    for (std::size_t k = 0; k < in.cols.size(); ++k) {
      if (skip >= 0 && (static_cast<int>(k) == in.lo_word(skip) || static_cast<int>(k) == in.hi_word(skip))) continue;
      u32* dst = grow(out.cols[o++], n);
      if (n) HDB_LAUNCH(gather, blocks(n), kThreads, 0, stream_.get())(in.cols[k].get(), idx, n, dst);
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
      HDB_LAUNCH(flag_range, blocks(n), kThreads, 0, st)(in.words_of(s.col), n, s.lo, s.hi, flag);
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
      HDB_LAUNCH(scatter_index, blocks(n), kThreads, 0, st)(flag, pos, n, idx);
      HDB_CUDA_CHECK_LAUNCH("scatter_index");
    }
    gather_cols(in, idx, kept, out, 0, -1);
  }

  void join(const Step& s, const DevRel& left, const DevRel& right, DevRel& out) {
    if (left.hi_word(s.col) >= 0) return join_on<u64>(s, left, right, out, rkey64_sorted_);
    return join_on<u32>(s, left, right, out, rkey_sorted_);
  }

  // K: the key type (u32, or u64 for 64-bit keys: the radix sort then runs over 64 bits).
  template <class K>
  void join_on(const Step& s, const DevRel& left, const DevRel& right, DevRel& out, DeviceBuffer<K>& sorted_buf) {
    cudaStream_t st = stream_.get();
    const u64 nl = left.rows, nr = right.rows;
    // Sort the right side's (key, row) pairs (CUB radix sort).
    u32* rows_in = grow(rrow_in_, nr);
    K* keys_out = grow(sorted_buf, nr);
    u32* rows_out = grow(rrow_sorted_, nr);
    if (nr) {
      HDB_LAUNCH(iota, blocks(nr), kThreads, 0, st)(rows_in, nr);
      HDB_CUDA_CHECK_LAUNCH("iota");
      // 32-bit keys are sorted from their column; 64-bit keys are first put together from their words.
      const K* keys_in = nullptr;
      if constexpr (sizeof(K) == 4) {
        keys_in = right.cols[static_cast<std::size_t>(right.lo_word(s.right_col))].get();
      } else {
        u64* keys = grow(rkey64_in_, nr);
        HDB_LAUNCH(load_keys<K>, blocks(nr), kThreads, 0, st)(right.words_of(s.right_col), nr, keys);
        HDB_CUDA_CHECK_LAUNCH("load_keys");
        keys_in = keys;
      }
      std::size_t bytes = 0;
      constexpr int bits = 8 * sizeof(K);
      HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(nullptr, bytes, keys_in, keys_out, rows_in, rows_out,
                                                      static_cast<int>(nr), 0, bits, st));
      char* tmp = grow(cub_tmp_, bytes);
      HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(tmp, bytes, keys_in, keys_out, rows_in, rows_out,
                                                      static_cast<int>(nr), 0, bits, st));
    }
    // Count matches per left row, place them (scan), expand into row-id pairs, gather.
    u32* first = grow(first_, nl);
    u64* count = grow(count_, nl + 1);
    u64* offset = grow(offset_, nl + 1);
    u64 total = 0;
    if (nl) {
      HDB_LAUNCH(match_range<K>, blocks(nl), kThreads, 0, st)(left.words_of(s.col), nl, keys_out, nr, first, count);
      HDB_CUDA_CHECK_LAUNCH("match_range");
      exclusive_sum(count, offset, nl);
      total = read_total(offset + nl - 1, count + nl - 1);
    }
    if (total >= (u64{1} << 31)) throw SkipCase("join result of " + std::to_string(total) + " rows exceeds 2^31");
    u32* li = grow(idx_a_, total);
    u32* ri = grow(idx_b_, total);
    if (nl) {
      HDB_LAUNCH(expand, blocks(nl), kThreads, 0, st)(first, count, offset, nl, rows_out, li, ri);
      HDB_CUDA_CHECK_LAUNCH("expand");
    }
    gather_cols(left, li, total, out, 0, -1);
    gather_cols(right, ri, total, out, left.cols.size(), s.right_col);
  }

  void project(const Step& s, const DevRel& in, DevRel& out) {
    std::size_t o = 0;
    for (int c : s.cols)
      for (int w : {in.lo_word(c), in.hi_word(c)}) {
        if (w < 0) continue;
        u32* dst = grow(out.cols[o++], in.rows);
        HDB_CUDA_CHECK(cudaMemcpyAsync(dst, in.cols[static_cast<std::size_t>(w)].get(), in.rows * sizeof(u32),
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
        case Op::Select: select(s, in, out); break;
        case Op::Join: join(s, in, rel_[static_cast<std::size_t>(s.right)], out); break;
        case Op::Project: project(s, in, out); break;
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
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i) ok = ok && tpch::word_layout(schemas_[i]).total <= kMaxCols;
    ok = ok && tpch::word_layout(schemas_.back()).total <= kMaxOut;
    for (const auto& j : f.joins) ok = ok && j.build_preds.size() <= kMaxPreds;
    if (!ok) throw SkipCase("the plan exceeds the fused kernel's fixed limits");
  }

  // A fused predicate on base relation `in`'s plan column, on its words.
  DPred dpred(int in, const tpch::FusedPredicate& p) const {
    const DevRel& r = rel_[static_cast<std::size_t>(in)];
    return {r.lo_word(p.col), r.hi_word(p.col), p.lo, p.hi};
  }

  const DevRel& run_fused(Breakdown& b) {
    cudaStream_t st = stream_.get();
    const FusedPlan& f = fused_plan_;
    FusedArgs a{};
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i)
      for (std::size_t c = 0; c < rel_[i].cols.size(); ++c) a.cols[i][c] = rel_[i].cols[c].get();
    a.probe_rows = rel_[0].rows;
    a.n_probe_preds = static_cast<int>(f.probe_preds.size());
    for (std::size_t p = 0; p < f.probe_preds.size(); ++p) a.probe_preds[p] = dpred(0, f.probe_preds[p]);
    a.n_joins = static_cast<int>(f.joins.size());
    tables_.resize(f.joins.size());
    dense_tables_.resize(f.joins.size());
    for (std::size_t j = 0; j < f.joins.size(); ++j) {
      const auto& fj = f.joins[j];
      const DevRel& build = rel_[static_cast<std::size_t>(fj.build_input)];
      // Dense where the key span allows (fj.key_min/key_max: the planner's statistics of the key).
      const u64 span = fj.key_max - fj.key_min + 1;
      const bool dense = build.rows > 0 && span != 0 && span <= kDenseSpanPerRow * build.rows;
      u64 cap = 16;
      while (cap < 2 * build.rows) cap *= 2;  // load factor <= 1/2: short probe sequences
      unsigned long long* table = dense ? nullptr : grow(tables_[j], cap);
      u32* dense_table = dense ? grow(dense_tables_[j], span) : nullptr;
      BuildArgs ba{};
      for (std::size_t c = 0; c < build.cols.size(); ++c) ba.cols[c] = build.cols[c].get();
      ba.rows = build.rows;
      ba.key_lo = build.lo_word(fj.build_key);
      ba.key_hi = build.hi_word(fj.build_key);
      ba.n_preds = static_cast<int>(fj.build_preds.size());
      for (std::size_t p = 0; p < fj.build_preds.size(); ++p) ba.preds[p] = dpred(fj.build_input, fj.build_preds[p]);
      ba.table = table;
      ba.mask = cap - 1;
      ba.dense = dense_table;
      ba.dense_min = fj.key_min;
      PhaseTimer t;
      t.start(st);
      if (dense)
        HDB_CUDA_CHECK(cudaMemsetAsync(dense_table, 0xff, span * sizeof(u32), st));
      else
        HDB_CUDA_CHECK(cudaMemsetAsync(table, 0xff, cap * sizeof(unsigned long long), st));
      if (build.rows) HDB_LAUNCH(build_table, blocks(build.rows), kThreads, 0, st)(ba);
      HDB_CUDA_CHECK_LAUNCH("build_table");
      double sec = t.stop(st);
      b.add_phase("build_" + plan_.inputs[static_cast<std::size_t>(fj.build_input)]->name, sec);
      b.kernel += sec;
      const DevRel& probe = rel_[static_cast<std::size_t>(fj.probe.input)];
      a.probe_in[j] = fj.probe.input;
      a.probe_lo[j] = probe.lo_word(fj.probe.col);
      a.probe_hi[j] = probe.hi_word(fj.probe.col);
      a.build_in[j] = fj.build_input;
      a.key_lo[j] = ba.key_lo;
      a.key_hi[j] = ba.key_hi;
      a.table[j] = table;
      a.mask[j] = cap - 1;
      a.dense[j] = dense_table;
      a.dense_min[j] = fj.key_min;
      a.dense_span[j] = dense ? span : 0;
      a.join_of_input[fj.build_input] = static_cast<int>(j);
    }
    // Each probe row yields at most one result row (unique build keys).
    // Output words in the answer's word layout: each output column's low word, then its high word.
    DevRel& out = fused_out_;
    a.n_out = 0;
    for (const auto& o : f.outputs) {
      const DevRel& base = rel_[static_cast<std::size_t>(o.input)];
      for (int w : {base.lo_word(o.col), base.hi_word(o.col)}) {
        if (w < 0) continue;
        a.out_in[a.n_out] = o.input;
        a.out_col[a.n_out] = w;
        a.out[a.n_out] = grow(out.cols[static_cast<std::size_t>(a.n_out)], a.probe_rows);
        ++a.n_out;
      }
    }
    a.count = reinterpret_cast<unsigned long long*>(grow(total_, 2));
    PhaseTimer t;
    t.start(st);
    HDB_CUDA_CHECK(cudaMemsetAsync(a.count, 0, sizeof(u64), st));
    if (a.probe_rows) HDB_LAUNCH(fused_probe, blocks(a.probe_rows, kThreads * kItems), kThreads, 0, st)(a);
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
  std::vector<DeviceBuffer<u32>> dense_tables_;
  DeviceBuffer<u32> flag_, pos_, idx_a_, idx_b_, first_, rrow_in_, rkey_sorted_, rrow_sorted_;
  DeviceBuffer<u64> rkey64_in_, rkey64_sorted_;  // 64-bit join keys
  DeviceBuffer<u64> count_, offset_, total_;
  DeviceBuffer<char> cub_tmp_;
  HostBuffer<u64> host_count_;  // pinned: the counts read back to size outputs
  std::vector<HostBuffer<u32>> host_out_;
  u64 host_rows_ = 0;
};

}  // namespace

namespace {

enum class Execution { Operator, Fused };

const VariantTable<Execution>& table() {
  static const VariantTable<Execution> t(
      "the cuda tpch backend",
      {{Execution::Operator, {"operator", tpch::kKernels, ""}}, {Execution::Fused, {"fused", tpch::kKernels, ""}}});
  return t;
}

}  // namespace

const VariantList& CudaTpch::variant_table() const { return table(); }

std::unique_ptr<tpch::TpchRun> CudaTpch::prepare(const Plan& plan, const std::string& variant, Transfer transfer) {
  return std::make_unique<CudaRun>(plan, table().id(variant) == Execution::Fused, transfer);
}

void CudaTpch::plan_scratch(const Plan& plan, const std::string& variant, std::uint64_t join_rows,
                            MemoryPlan& memory) const {
  const u64 joins = tpch::join_steps(plan), rows = tpch::max_input_rows(plan);
  const bool wide = tpch::has_wide_columns(plan);
  // Selects: a flag and a position per row, and CUB's scan temporary.
  memory.add("select flags and positions", 2 * (rows + 1) * 4);
  std::size_t scan = 0;
  HDB_CUDA_CHECK(prim::DeviceScan::ExclusiveSum(nullptr, scan, static_cast<const u32*>(nullptr),
                                                static_cast<u32*>(nullptr), static_cast<int>(rows + 1)));
  if (joins == 0) {
    memory.add("CUB temporary storage", scan);
    return;
  }
  if (table().id(variant) == Execution::Fused) {
    // A table per join: a hash table of the build side's rows at load factor 1/2 (a power of two,
    // 8 bytes a slot), or a dense one of at most kDenseSpanPerRow entries of 4 bytes a row, which
    // is never larger; and the answer's count.
    u64 cap = 16;
    while (cap < 2 * rows) cap *= 2;
    memory.add("join tables", joins * cap * 8).add("CUB temporary storage", scan);
    return;
  }
  // A join sorts the right side's (key, row) pairs with CUB (keys in and out, 64-bit keys put
  // together first; rows in and out), finds each left row's first match, counts and offsets, and
  // expands the pairs into row indices; the buffers are reused by every join of the plan.
  const u64 key = wide ? 8 : 4;
  std::size_t sort = 0;
  if (wide)
    HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(nullptr, sort, static_cast<const u64*>(nullptr),
                                                    static_cast<u64*>(nullptr), static_cast<const u32*>(nullptr),
                                                    static_cast<u32*>(nullptr), static_cast<int>(rows)));
  else
    HDB_CUDA_CHECK(prim::DeviceRadixSort::SortPairs(nullptr, sort, static_cast<const u32*>(nullptr),
                                                    static_cast<u32*>(nullptr), static_cast<const u32*>(nullptr),
                                                    static_cast<u32*>(nullptr), static_cast<int>(rows)));
  memory.add("join sort keys and rows", rows * ((wide ? 2 : 1) * key + 8))
      .add("join first matches, counts and offsets", rows * 4 + 2 * (rows + 1) * 8)
      .add("join row indices", join_rows * 8)
      .add("CUB temporary storage", std::max(scan, sort));
}

}  // namespace hdb::cuda
