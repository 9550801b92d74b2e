#pragma once
// Internals shared by the CUDA ra translation units: device relations, scratch buffers, phase
// timing with events, tuple comparison and the keep-flag of every compaction.
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

namespace hdb::ra::cuda {

using hdb::cuda::DeviceBuffer;
using hdb::cuda::Event;
using hdb::cuda::PhaseTimer;

inline constexpr int kBlock = 256;  // the paper's work-group size
inline constexpr int kMaxWidth = kMaxValues + 1;

class CudaRelation : public DeviceRelation {
 public:
  explicit CudaRelation(std::uint64_t words) : buf(words) {}
  std::uint64_t capacity_words() const override { return buf.size(); }
  void shape(std::uint64_t rows, int values) {
    rows_ = rows;
    values_ = values;
  }
  std::uint32_t* data() const { return buf.get(); }
  DeviceBuffer<std::uint32_t> buf;
};

const CudaRelation& as_cuda(const DeviceRelation& r);
// Reuses `out` when it is ours, unshared and large enough; else allocates (the warm-up pass).
CudaRelation& ensure(DeviceRel& out, std::uint64_t rows, int values);
// Row counts are 32-bit on the device; larger relations are skipped.
std::uint32_t rows32(std::uint64_t rows);

struct CudaRa::State {
  hdb::cuda::CudaPlatform& platform;
  hdb::cuda::Stream stream;
  PhaseTimer timer;  // the running operator's phases (begin_op)
  hdb::cuda::Scratch scratch;  // s.scratch.get<T>(name, count): grow-only, kept across passes
  hdb::cuda::HostBuffer<std::uint32_t> count_host{1, Transfer::Pinned};  // target of read_count
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

// Copies one 4-byte count from the device (the counting pass that sizes an output).
std::uint32_t read_count(CudaRa::State& s, const std::uint32_t* d_count);

__host__ __device__ inline int compare_tuple(const std::uint32_t* a, const std::uint32_t* t, std::uint32_t words) {
  for (std::uint32_t k = 0; k < words; ++k)
    if (a[k] != t[k]) return a[k] < t[k] ? -1 : 1;
  return 0;
}

__host__ __device__ inline std::uint32_t lower_bound_rows(const std::uint32_t* r, std::uint32_t lo, std::uint32_t hi,
                                                 std::uint32_t w, const std::uint32_t* t, std::uint32_t words) {
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    if (compare_tuple(r + static_cast<std::uint64_t>(mid) * w, t, words) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

__host__ __device__ inline std::uint32_t upper_bound_rows(const std::uint32_t* r, std::uint32_t lo, std::uint32_t hi,
                                                 std::uint32_t w, const std::uint32_t* t, std::uint32_t words) {
  while (lo < hi) {
    std::uint32_t mid = lo + (hi - lo) / 2;
    if (compare_tuple(r + static_cast<std::uint64_t>(mid) * w, t, words) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

enum KeepMode : std::uint32_t { kSelect = 0, kUnique = 1, kIntersection = 2, kDifference = 3, kUnionKeep = 4 };

// Whether row i of `in` is kept (the same rules as the OpenCL compact_partition kernel).
struct KeepFlag {
  std::uint32_t mode;
  const std::uint32_t* in;
  std::uint32_t n, w;
  const std::uint32_t* other;
  std::uint32_t m;
  std::uint32_t attr, lo, hi;
  __host__ __device__ bool operator()(std::uint32_t i) const {
    const std::uint32_t* t = in + static_cast<std::uint64_t>(i) * w;
    if (mode == kSelect) return t[attr] >= lo && t[attr] <= hi;
    if (mode == kUnique) return i == 0 || in[static_cast<std::uint64_t>(i - 1) * w] != t[0];
    std::uint32_t tup[kMaxWidth];
    for (std::uint32_t k = 0; k < w; ++k) tup[k] = t[k];
    std::uint32_t rank = i - lower_bound_rows(in, 0, i, w, tup, w);
    std::uint32_t first = lower_bound_rows(other, 0, m, w, tup, w);
    std::uint32_t count = upper_bound_rows(other, first, m, w, tup, w) - first;
    return mode == kIntersection ? rank < count : rank >= count;
  }
};

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
// Single-pass select/unique over whole tuples of 1..4 words; SkipCase when the width is wider.
Breakdown tuned_compact(CudaRa::State& s, std::uint32_t mode, const CudaRelation& in, const Predicate& pred,
                        DeviceRel& out);

// The tuned streaming kernels (ra_tuned.cu): grid-stride over a GPU-sized grid, 16-byte accesses
// where the tuple layout allows, scalar tails; reduce ends in one atomic per block and attribute.
void launch_tuned_project(CudaRa::State& s, const CudaRelation& in, const std::vector<int>& columns, std::uint32_t* out);
void launch_tuned_arith(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, ArithOp op, std::uint32_t* out);
Breakdown tuned_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result);

}  // namespace hdb::ra::cuda
