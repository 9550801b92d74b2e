#pragma once
// Internals shared by the CUDA ra translation units: device relations, scratch buffers, phase
// timing with events, tuple comparison and the keep-flag of every compaction.
//
// Keys are 1 or 2 words (key_words, KW): a 64-bit key is two words, high word first, so comparing
// whole tuples word by word needs no special case (set operations, union's merge); key-based
// operators compare the first KW words and find values from word KW on. Kernels whose inner loop
// touches the key are templates on KW (join, tuned unique/select/reduce), so the 32-bit code is the
// one it was; the others take key_words as an argument.
#include <cuda_runtime.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/scratch.hpp"

// runtime/prim.cuh is included where CUB is called, not here: it would add CUB's EmptyKernel to the
// PTX of every translation unit.
namespace hdb::cuda::prim {}

namespace hdb::ra::cuda {

namespace prim = hdb::cuda::prim;  // CUB on a GPU, its host stand-in under host execution

using hdb::cuda::DeviceBuffer;
using hdb::cuda::Event;
using hdb::cuda::PhaseTimer;

inline constexpr int kBlock = 256;  // the paper's work-group size
inline constexpr int kMaxWidth = kMaxValues + 1;

class CudaRelation : public DeviceRelation {
 public:
  explicit CudaRelation(std::uint64_t words) : buf(words) {}
  std::uint64_t capacity_words() const override { return buf.size(); }
  void shape(std::uint64_t rows, int values, int key_words) {
    rows_ = rows;
    values_ = values;
    key_words_ = key_words;
  }
  std::uint32_t* data() const { return buf.get(); }
  DeviceBuffer<std::uint32_t> buf;
};

const CudaRelation& as_cuda(const DeviceRelation& r);
// Reuses `out` when it is ours, unshared and large enough; else allocates (the warm-up pass).
CudaRelation& ensure(DeviceRel& out, std::uint64_t rows, int values, int key_words);
// Row counts of inputs are 32-bit on the device (below 2^31 - 1: CUB's int num_items); larger
// relations are skipped with that reason before anything runs. Outputs whose size is a sum of
// counts (join, product) are 64-bit: JoinCount.
std::uint32_t rows32(std::uint64_t rows);

// Join result counts, offsets and totals: 64-bit end to end. One left tuple matches fewer than 2^31
// right tuples (rows32), but a partition's sum, the offsets and the total exceed 2^32.
using JoinCount = std::uint64_t;

struct CudaRa::State {
  hdb::cuda::CudaPlatform& platform;
  hdb::cuda::Stream stream;
  PhaseTimer timer;            // the running operator's phases (begin_op)
  hdb::cuda::Scratch scratch;  // s.scratch.get<T>(name, count): grow-only, kept across passes
  hdb::cuda::HostBuffer<std::uint64_t> count_host{1, Transfer::Pinned};            // target of read_count(64)
  hdb::cuda::HostBuffer<std::uint64_t> result_host{kMaxValues, Transfer::Pinned};  // target of read_results
  std::map<const void*, int> resident_blocks;  // per kernel: blocks of kBlock threads one SM holds
  std::uint32_t max_grid = 0;  // tests: at most this many blocks for the tuned grid-stride kernels (0: none)
  explicit State(hdb::cuda::CudaPlatform& p) : platform(p) {}

  // The timer of one operator's phases on the state's stream: t.phase(name) ...; t.finish().
  PhaseTimer& begin_op() {
    timer.begin(stream.get());
    return timer;
  }
};

// The reduce of an empty relation: 0 (sum, max) or 0xffffffff (min) for each of `values` attributes.
Aggregate identity_aggregate(int values, ReduceOp op);

// Copies one 4-byte count from the device (the counting pass that sizes an output) and waits for
// it: a host round trip. Where the count sizes a later step of the operator, the round trip is its
// own phase, "readback" (t.phase("readback") before the call); where the read-back ends the
// operator, the timer is closed before it (t.close()), so the kernel time does not include it.
std::uint32_t read_count(CudaRa::State& s, const std::uint32_t* d_count);
// The same for a 64-bit count (join totals).
JoinCount read_count64(CudaRa::State& s, const JoinCount* d_count);
// Copies `values` 64-bit reduce results from the device into result.value through the state's
// pinned result_host, and waits for them (after t.close(): the read-back ends the operator).
void read_results(CudaRa::State& s, const std::uint64_t* d_results, int values, Aggregate& result);

__host__ __device__ inline int compare_tuple(const std::uint32_t* a, const std::uint32_t* t, std::uint32_t words) {
  for (std::uint32_t k = 0; k < words; ++k)
    if (a[k] != t[k]) return a[k] < t[k] ? -1 : 1;
  return 0;
}

__host__ __device__ inline std::uint32_t lower_bound_rows(const std::uint32_t* r, std::uint32_t lo, std::uint32_t hi,
                                                          std::uint32_t w, const std::uint32_t* t,
                                                          std::uint32_t words) {
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    if (compare_tuple(r + static_cast<std::uint64_t>(mid) * w, t, words) < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

__host__ __device__ inline std::uint32_t upper_bound_rows(const std::uint32_t* r, std::uint32_t lo, std::uint32_t hi,
                                                          std::uint32_t w, const std::uint32_t* t,
                                                          std::uint32_t words) {
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    if (compare_tuple(r + static_cast<std::uint64_t>(mid) * w, t, words) <= 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

// The end of the run of rows equal to t that starts at f, its lower bound in [f, hi): a gallop from f
// (rows f, f + 1, f + 3, f + 7, ...), then a binary search within the last step. A key's matches
// are f's neighbours: about 2 log2(fan-out) probes, the first in f's own sectors, where
// upper_bound_rows takes log2(hi - f) probes scattered over the relation (issue 45, the join).
__host__ __device__ inline std::uint32_t upper_bound_gallop(const std::uint32_t* r, std::uint32_t f, std::uint32_t hi,
                                                            std::uint32_t w, const std::uint32_t* t,
                                                            std::uint32_t words) {
  std::uint32_t lo = f;
  for (std::uint64_t step = 1;; step *= 2) {
    const std::uint64_t probe = lo + step - 1;
    if (probe >= hi) break;
    if (compare_tuple(r + probe * w, t, words) > 0) {
      hi = static_cast<std::uint32_t>(probe);
      break;
    }
    lo = static_cast<std::uint32_t>(probe + 1);
  }
  return upper_bound_rows(r, lo, hi, w, t, words);
}

// Whether the first KW words (a key) of a and b are equal.
template <int KW>
__host__ __device__ inline bool same_key(const std::uint32_t* a, const std::uint32_t* b) {
  for (int k = 0; k < KW; ++k)
    if (a[k] != b[k]) return false;
  return true;
}

// Join helpers shared by the paper and cub variants. Left row i's key (KW words) and the range of
// right rows with that key: [first(i), first(i) + count(i)).
template <int KW>
struct JoinKeys {
  const std::uint32_t* l;
  std::uint32_t nl, wl;
  const std::uint32_t* r;
  std::uint32_t nr, wr;
  __host__ __device__ void key(std::uint32_t i, std::uint32_t* k) const {
    for (int w = 0; w < KW; ++w) k[w] = l[static_cast<std::uint64_t>(i) * wl + w];
  }
  __host__ __device__ std::uint32_t first(std::uint32_t i) const {
    std::uint32_t k[KW];
    key(i, k);
    return lower_bound_rows(r, 0, nr, wr, k, KW);
  }
  // Matches of left row i, 0 for i >= nl (so an exclusive scan over nl + 1 items ends in the
  // total). 64-bit, so that CUB's scan, whose accumulator is the input's value type, sums in 64 bits.
  __host__ __device__ JoinCount operator()(std::uint32_t i) const {
    if (i >= nl) return 0;
    std::uint32_t k[KW];
    key(i, k);
    const std::uint32_t f = lower_bound_rows(r, 0, nr, wr, k, KW);
    return upper_bound_rows(r, f, nr, wr, k, KW) - f;
  }
  // Matches of left row i whose first match f is known (the tuned join's sorted search): the run's
  // end galloped from f (upper_bound_gallop).
  __host__ __device__ JoinCount count_from(std::uint32_t i, std::uint32_t f) const {
    std::uint32_t k[KW];
    key(i, k);
    return upper_bound_gallop(r, f, nr, wr, k, KW) - f;
  }
  // Output tuple: key + left values + right values (those start at word KW of the right tuple).
  __host__ __device__ std::uint32_t out_width() const { return wl + wr - KW; }
  __host__ __device__ void write(std::uint32_t i, std::uint32_t j, std::uint32_t* dst) const {
    for (std::uint32_t k = 0; k < wl; ++k) dst[k] = l[static_cast<std::uint64_t>(i) * wl + k];
    for (std::uint32_t k = KW; k < wr; ++k) dst[wl + k - KW] = r[static_cast<std::uint64_t>(j) * wr + k];
  }
};

// The left row whose output range [offsets[i], offsets[i + 1]) holds output tuple o: the last i
// in [0, nl] with offsets[i] <= o (offsets: nl + 1 exclusive 64-bit offsets, offsets[0] == 0).
__host__ __device__ inline std::uint32_t left_row_of(const JoinCount* offsets, std::uint32_t nl, JoinCount o) {
  std::uint32_t lo = 0, hi = nl + 1;  // first index with offsets[idx] > o
  while (lo < hi) {
    const std::uint32_t mid = lo + (hi - lo) / 2;
    if (offsets[mid] <= o)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo - 1;
}

enum KeepMode : std::uint32_t { kSelect = 0, kUnique = 1, kIntersection = 2, kDifference = 3, kUnionKeep = 4 };

// Whether row i of `in` is kept (the same rules as the OpenCL compact_partition kernel). Select
// reads the attribute at word `attr`: one word, or with `wide` the 64-bit key (words attr and
// attr + 1, high first) against 64-bit bounds; unique compares the first kw key words; the set
// operations compare whole tuples.
struct KeepFlag {
  std::uint32_t mode;
  const std::uint32_t* in;
  std::uint32_t n, w;
  const std::uint32_t* other;
  std::uint32_t m;
  std::uint32_t kw, attr, wide;
  std::uint64_t lo, hi;
  __host__ __device__ bool operator()(std::uint32_t i) const {
    const std::uint32_t* t = in + static_cast<std::uint64_t>(i) * w;
    if (mode == kSelect) {
      const std::uint64_t x = wide ? (std::uint64_t{t[attr]} << 32) | t[attr + 1] : std::uint64_t{t[attr]};
      return x >= lo && x <= hi;
    }
    if (mode == kUnique) {
      if (i == 0) return true;
      const std::uint32_t* prev = in + static_cast<std::uint64_t>(i - 1) * w;
      return prev[0] != t[0] || (kw > 1 && prev[1] != t[1]);
    }
    std::uint32_t tup[kMaxWidth];
    for (std::uint32_t k = 0; k < w; ++k) tup[k] = t[k];
    std::uint32_t rank = i - lower_bound_rows(in, 0, i, w, tup, w);
    std::uint32_t first = lower_bound_rows(other, 0, m, w, tup, w);
    std::uint32_t count = upper_bound_rows(other, first, m, w, tup, w) - first;
    return mode == kIntersection ? rank < count : rank >= count;
  }
};

// The flag over raw tuples (n rows of `width` words, keys of key_words words; `other` with m rows
// or null); pred.key_words must be key_words. Host code (tests) builds it the same way.
inline KeepFlag make_keep_flag(std::uint32_t mode, const std::uint32_t* in, std::uint32_t n, int width, int key_words,
                               const std::uint32_t* other, std::uint32_t m, const Predicate& pred) {
  const bool wide = pred.wide();  // a 64-bit key, or a 64-bit value held as two values
  return KeepFlag{mode,
                  in,
                  n,
                  static_cast<std::uint32_t>(width),
                  other ? other : in,
                  other ? m : 0u,
                  static_cast<std::uint32_t>(key_words),
                  static_cast<std::uint32_t>(pred.word()),
                  wide ? 1u : 0u,
                  wide ? pred.lo : std::uint64_t{pred.lo32()},
                  wide ? pred.hi : std::uint64_t{pred.hi32()}};
}
KeepFlag keep_flag(std::uint32_t mode, const CudaRelation& in, const CudaRelation* other, const Predicate& pred);

// Kernels both the paper and the cub variants use (ra_common.cu); all launch on s.stream.
void launch_gather_rows(CudaRa::State& s, const std::uint32_t* in, std::uint32_t w, const std::uint32_t* rows,
                        std::uint32_t count, std::uint32_t* out);
void launch_reduce_runs(CudaRa::State& s, const CudaRelation& in, ReduceOp op, const std::uint32_t* heads,
                        std::uint32_t runs, std::uint32_t* out);
void launch_merge_scatter(CudaRa::State& s, const std::uint32_t* a, std::uint32_t n, const std::uint32_t* b,
                          std::uint32_t m, std::uint32_t w, std::uint32_t* out);
void launch_project(CudaRa::State& s, const CudaRelation& in, const std::vector<int>& columns, std::uint32_t* out);
void launch_product(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, std::uint32_t* out);
void launch_arith(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, ArithOp op, std::uint32_t* out);

// Join with an empty side: sets `out` to an empty relation of the joined shape and returns true.
bool empty_join(const CudaRelation& l, const CudaRelation& r, DeviceRel& out);

// The paper variant (ra_paper.cu): partition with a shared-memory prefix sum, scan of partition
// counts, gather.
Breakdown paper_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const CudaRelation* other,
                        const Predicate& pred, DeviceRel& out);
Breakdown paper_union(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, DeviceRel& out);
Breakdown paper_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result);
Breakdown paper_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out);
Breakdown paper_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out);

// The cub and tuned variants (ra_cub.cu). Each returns the operator's breakdown.
Breakdown cub_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const CudaRelation* other,
                      const Predicate& pred, DeviceRel& out);
Breakdown cub_union(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, DeviceRel& out);
Breakdown cub_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result);
Breakdown cub_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out);
Breakdown cub_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, bool tuned, DeviceRel& out);
// Stable sort by key: DeviceRadixSort::SortPairs of (key, row) pairs, then one gather of whole
// tuples (SortKeys straight into the output for key-only tuples). Phases "sort" and "gather".
Breakdown cub_sort(CudaRa::State& s, const CudaRelation& in, DeviceRel& out);
// Single-pass select/unique over whole tuples of a key and up to 3 values (1..4 words, 2..5 with a
// 64-bit key); SkipCase when there are more values.
Breakdown tuned_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const Predicate& pred,
                        DeviceRel& out);

// The tuned streaming kernels (ra_tuned.cu): grid-stride over a GPU-sized grid, 16-byte accesses
// where the tuple layout allows, scalar tails; reduce ends in one atomic per block and attribute.
// The tuned project and arithmetic return the code path they took: "vec16" (16-byte accesses, where
// every pointer is 16-byte aligned and the width has a vector kernel) or "scalar".
const char* launch_tuned_project(CudaRa::State& s, const CudaRelation& in, const std::vector<int>& columns,
                                 std::uint32_t* out);
const char* launch_tuned_arith(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, ArithOp op,
                               std::uint32_t* out);
Breakdown tuned_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result);

// The hash variant (ra_hash.cu): one table in device memory filled by atomics, input in any order.
Breakdown hash_unique(CudaRa::State& s, const CudaRelation& in, DeviceRel& out);
Breakdown hash_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out);
Breakdown hash_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out);
Breakdown hash_set_op(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, SetOp op, DeviceRel& out);
void hash_plan(const OpShape& shape, MemoryPlan& plan);

// Exclusive scan of `items` (below 2^31 - 1) 32-bit counts into 64-bit offsets on s.stream
// (ra_cub.cu: CUB's DeviceScan), and the temporary storage it takes, for the plans.
void scan_counts(CudaRa::State& s, const std::uint32_t* counts, JoinCount* offsets, std::uint64_t items);
std::uint64_t scan_counts_temp_bytes(std::uint64_t items);

// CudaRa::plan_scratch's parts: every buffer an operator of the variant allocates besides its
// inputs and output, by the names and sizes the code above asks the scratch for (shape.width_* and
// out_width in words, key_words of the inputs). CUB's temporary storage is CUB's own answer to the
// size query of the very call the operator makes (d_temp_storage == nullptr: no kernel runs).
void paper_plan(const OpShape& shape, MemoryPlan& plan);
// The cub and tuned variants (tuned: the tuned join's plan, which has no count array).
void cub_plan(const OpShape& shape, bool tuned, MemoryPlan& plan);

}  // namespace hdb::ra::cuda
