// The hash variant: unique, reduce-by-key, join and set operations on input in any order, with
// one open-addressing table in device memory filled by global atomics, as GPU hash aggregation and
// hash joins are written (no partitioning pass: the device's memory system takes the random
// accesses that a CPU's caches could not).
//
// A table slot holds a row index, never a key, so every key (0xffffffff and 2^64 - 1 included)
// is a key, and kEmpty marks a free slot (rows32 keeps row indices below it):
//  - unique, reduce_by_key: a thread per row claims the key's slot by compare-and-swap or finds the
//    row already there; atomicMin keeps the smallest row of the key, its first tuple in input order
//    (only keys are compared, so replacing one row of a key by another is safe); reduce_by_key folds
//    its values into the slot's aggregates with atomics;
//  - join: chained table on the left side (atomicExch pushes row i on its slot's list), probed by a
//    thread per right row: the count pass walks the chain and keeps the first match, the write pass
//    starts there and stops at the last match, so no chain is walked twice;
//  - set operations: a's and b's rows in one index space, a slot per distinct tuple with its
//    counts in a and in b; each slot writes its tuple as often as the operation keeps it.
// Every output is sized by an exclusive 64-bit scan of per-slot (per-right-row) counts, read back.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ra_device.cuh"
#include "runtime/launch.cuh"

namespace hdb::ra::cuda {
namespace {

constexpr std::uint32_t kEmpty = 0xffffffffu;
constexpr std::uint64_t kMinSlots = 16;

// A slot other threads claim with atomics, read once without a copy kept in a register: volatile
// on a GPU; under host execution a relaxed atomic load, so ThreadSanitizer sees no plain read
// racing with the compare-and-swap.
__host__ __device__ inline std::uint32_t load_slot(const std::uint32_t* p) {
#ifdef HDB_CUDA_HOST
  return __atomic_load_n(p, __ATOMIC_RELAXED);
#else
  return *static_cast<const volatile std::uint32_t*>(p);
#endif
}

// SplitMix64's finaliser: every key bit moves every slot bit.
__host__ __device__ inline std::uint64_t mix(std::uint64_t h) {
  h += 0x9E3779B97F4A7C15ull;
  h = (h ^ (h >> 30)) * 0xBF58476D1CE4E5B9ull;
  h = (h ^ (h >> 27)) * 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}
template <int KW>
__host__ __device__ inline std::uint64_t key_hash(const std::uint32_t* t) {
  return mix(KW == 2 ? (std::uint64_t{t[0]} << 32) | t[1] : t[0]);
}
__host__ __device__ inline std::uint64_t tuple_hash(const std::uint32_t* t, std::uint32_t w) {
  std::uint64_t h = 0;
  for (std::uint32_t k = 0; k < w; ++k) h = (h ^ t[k]) * 0x9E3779B97F4A7C15ull;
  return mix(h);
}

// Copies of a distinct tuple the set operation keeps, from its counts in a and in b.
__host__ __device__ inline std::uint32_t copies(std::uint32_t op, std::uint32_t ca, std::uint32_t cb) {
  if (op == static_cast<std::uint32_t>(SetOp::Union)) return ca > cb ? ca : cb;
  if (op == static_cast<std::uint32_t>(SetOp::Intersection)) return ca < cb ? ca : cb;
  return ca > cb ? ca - cb : 0;
}

// ---- kernels ----------------------------------------------------------------------------------------

// Row i claims or finds its key's slot; with `agg`, folds its values into the slot's aggregates.
template <int KW>
__global__ void hash_group(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t* table,
                           std::uint64_t mask, std::uint32_t* agg, std::uint32_t op) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const std::uint32_t* row = in + static_cast<std::uint64_t>(i) * w;
  std::uint64_t slot = key_hash<KW>(row) & mask;
  for (;; slot = (slot + 1) & mask) {
    std::uint32_t e = load_slot(&table[slot]);
    if (e == kEmpty) {
      e = atomicCAS(&table[slot], kEmpty, i);
      if (e == kEmpty) break;
    }
    // A slot, once claimed, only ever holds rows of one key: e's key is the slot's.
    if (same_key<KW>(in + static_cast<std::uint64_t>(e) * w, row)) {
      if (i < e) atomicMin(&table[slot], i);
      break;
    }
  }
  if (!agg) return;
  const std::uint32_t values = w - KW;
  std::uint32_t* a = agg + slot * values;
  for (std::uint32_t v = 0; v < values; ++v) {
    const std::uint32_t x = row[KW + v];
    if (op == static_cast<std::uint32_t>(ReduceOp::Sum))
      atomicAdd(&a[v], x);  // modulo 2^32
    else if (op == static_cast<std::uint32_t>(ReduceOp::Min))
      atomicMin(&a[v], x);
    else
      atomicMax(&a[v], x);
  }
}

// Per slot (and 0 at slot `slots`, so the scan's last offset is the total): 1 for a group, or the
// set operation's copies of the slot's tuple (`ab`: its counts in a and b).
__global__ void slot_counts(const std::uint32_t* table, std::uint64_t slots, const std::uint32_t* ab, std::uint32_t op,
                            std::uint32_t* counts) {
  const std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s > slots) return;
  if (s == slots || table[s] == kEmpty)
    counts[s] = 0;
  else
    counts[s] = ab ? copies(op, ab[2 * s], ab[2 * s + 1]) : 1;
}

// A group's output tuple: its first row (unique), or its key and aggregates (reduce_by_key).
template <int KW>
__global__ void hash_group_write(const std::uint32_t* in, std::uint32_t w, const std::uint32_t* table,
                                 std::uint64_t slots, const JoinCount* offsets, const std::uint32_t* agg,
                                 std::uint32_t* out) {
  const std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= slots || table[s] == kEmpty) return;
  const std::uint32_t* row = in + static_cast<std::uint64_t>(table[s]) * w;
  std::uint32_t* o = out + offsets[s] * w;
  if (!agg) {
    for (std::uint32_t k = 0; k < w; ++k) o[k] = row[k];
    return;
  }
  for (int k = 0; k < KW; ++k) o[k] = row[k];
  for (std::uint32_t v = 0; v < w - KW; ++v) o[KW + v] = agg[s * (w - KW) + v];
}

template <int KW>
__global__ void hash_build(const std::uint32_t* l, std::uint32_t nl, std::uint32_t wl, std::uint32_t* head,
                           std::uint32_t* next, std::uint64_t mask) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < nl) next[i] = atomicExch(&head[key_hash<KW>(l + static_cast<std::uint64_t>(i) * wl) & mask], i);
}

// The left rows whose key equals right row j's: each(j, f) calls f(left row) for every one.
template <int KW>
struct HashProbe {
  const std::uint32_t* l;
  std::uint32_t wl;
  const std::uint32_t* r;
  std::uint32_t wr;
  const std::uint32_t* head;
  const std::uint32_t* next;
  std::uint64_t mask;
  template <class F>
  __device__ void each(std::uint32_t j, F&& f) const {
    const std::uint32_t* row = r + static_cast<std::uint64_t>(j) * wr;
    for (std::uint32_t e = head[key_hash<KW>(row) & mask]; e != kEmpty; e = next[e])
      if (same_key<KW>(l + static_cast<std::uint64_t>(e) * wl, row)) f(e);
  }
};

// Right row j's matches, and its first match in its chain (kEmpty: none) for the write pass.
template <int KW>
__global__ void hash_probe_count(HashProbe<KW> p, std::uint32_t nr, std::uint32_t* counts, std::uint32_t* first) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j > nr) return;
  std::uint32_t c = 0, f = kEmpty;  // one right row matches fewer than 2^31 left rows (rows32)
  if (j < nr) {
    p.each(j, [&](std::uint32_t e) {
      if (c++ == 0) f = e;
    });
    first[j] = f;
  }
  counts[j] = c;
}

// Output tuple: the key and the left values (the left tuple), then the right values. The chain is
// walked from right row j's first match until its last (counts[j] of them): with one match a row
// reads no chain link and compares no key.
template <int KW>
__global__ void hash_probe_write(HashProbe<KW> p, std::uint32_t nr, const std::uint32_t* counts,
                                 const std::uint32_t* first, const JoinCount* offsets, std::uint32_t* out) {
  const std::uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= nr) return;
  const std::uint32_t ow = p.wl + p.wr - KW;
  const std::uint32_t* rrow = p.r + static_cast<std::uint64_t>(j) * p.wr;
  std::uint32_t* o = out + offsets[j] * ow;
  std::uint32_t e = first[j];
  for (std::uint32_t left = counts[j]; left > 0; e = p.next[e]) {
    const std::uint32_t* lrow = p.l + static_cast<std::uint64_t>(e) * p.wl;
    if (left != counts[j] && !same_key<KW>(lrow, rrow)) continue;  // the first is a match
    for (std::uint32_t k = 0; k < p.wl; ++k) o[k] = lrow[k];
    for (std::uint32_t k = KW; k < p.wr; ++k) o[p.wl + k - KW] = rrow[k];
    o += ow;
    if (--left == 0) break;
  }
}

// Row g of a's and b's index space (b's rows follow a's).
struct TwoSides {
  const std::uint32_t* a;
  std::uint32_t na;
  const std::uint32_t* b;
  std::uint32_t w;
  __host__ __device__ const std::uint32_t* row(std::uint32_t g) const {
    return g < na ? a + static_cast<std::uint64_t>(g) * w : b + static_cast<std::uint64_t>(g - na) * w;
  }
};

// Row g claims or finds its tuple's slot and counts itself on its side (ab[2 slot] a, + 1 b).
__global__ void hash_count_tuples(TwoSides t, std::uint32_t n, std::uint32_t* table, std::uint64_t mask,
                                  std::uint32_t* ab) {
  const std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= n) return;
  const std::uint32_t* row = t.row(g);
  for (std::uint64_t slot = tuple_hash(row, t.w) & mask;; slot = (slot + 1) & mask) {
    std::uint32_t e = load_slot(&table[slot]);
    if (e == kEmpty) e = atomicCAS(&table[slot], kEmpty, g);
    if (e == kEmpty || compare_tuple(t.row(e), row, t.w) == 0) {
      atomicAdd(&ab[2 * slot + (g < t.na ? 0 : 1)], 1u);
      return;
    }
  }
}

__global__ void hash_set_write(TwoSides t, const std::uint32_t* table, std::uint64_t slots, const std::uint32_t* ab,
                               std::uint32_t op, const JoinCount* offsets, std::uint32_t* out) {
  const std::uint64_t s = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (s >= slots || table[s] == kEmpty) return;
  const std::uint32_t* row = t.row(table[s]);
  std::uint32_t* o = out + offsets[s] * t.w;
  for (std::uint32_t c = copies(op, ab[2 * s], ab[2 * s + 1]); c > 0; --c, o += t.w)
    for (std::uint32_t k = 0; k < t.w; ++k) o[k] = row[k];
}

// ---- host side --------------------------------------------------------------------------------------

// A table of at least `per_row` slots a row (a power of two): linear probing stays short at a load
// of one half, and chains at one. Its count array has slots + 1 items for CUB's int num_items.
std::uint64_t table_slots(std::uint64_t rows, std::uint64_t per_row) {
  std::uint64_t slots = kMinSlots;
  while (slots < per_row * rows) slots <<= 1;
  return slots;
}
std::uint64_t checked_slots(std::uint64_t rows, std::uint64_t per_row) {
  const std::uint64_t slots = table_slots(rows, per_row);
  if (slots + 1 > 0x7ffffffeull)
    throw SkipCase("hash variant: a table of " + std::to_string(slots) + " slots exceeds CUB's int item count");
  return slots;
}

std::uint32_t blocks_for(std::uint64_t items) { return static_cast<std::uint32_t>((items + kBlock - 1) / kBlock); }

// The exclusive scan of `items` counts into 64-bit offsets; returns the total (offsets[items - 1]
// with a last count of 0), read back in its own phase: it sizes the output.
JoinCount scan_total(CudaRa::State& s, PhaseTimer& t, const std::uint32_t* counts, std::uint64_t items) {
  JoinCount* offsets = s.scratch.get<JoinCount>("hash.offsets", items);
  t.phase("scan");
  scan_counts(s, counts, offsets, items);
  t.phase("readback");
  return read_count64(s, offsets + items - 1);
}

template <int KW>
Breakdown group(CudaRa::State& s, const CudaRelation& in, bool reduce, ReduceOp op, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) {
    ensure(out_handle, 0, in.values(), in.key_words());
    return t.finish();
  }
  const auto w = static_cast<std::uint32_t>(in.width());
  const std::uint64_t slots = checked_slots(n, 2);
  std::uint32_t* table = s.scratch.get<std::uint32_t>("hash.table", slots);
  std::uint32_t* agg = nullptr;
  t.phase("build");
  HDB_CUDA_CHECK(cudaMemsetAsync(table, 0xff, slots * 4, s.stream.get()));
  if (reduce) {
    const std::uint64_t words = slots * static_cast<std::uint64_t>(in.values());
    agg = s.scratch.get<std::uint32_t>("hash.aggregates", words);
    // The fold's identity: 0 for sum and max, 0xffffffff for min.
    HDB_CUDA_CHECK(cudaMemsetAsync(agg, op == ReduceOp::Min ? 0xff : 0, words * 4, s.stream.get()));
  }
  HDB_LAUNCH(hash_group<KW>, blocks_for(n), kBlock, 0, s.stream.get())
  (in.data(), n, w, table, slots - 1, agg, static_cast<std::uint32_t>(op));
  HDB_CUDA_CHECK_LAUNCH("hash_group");
  std::uint32_t* counts = s.scratch.get<std::uint32_t>("hash.counts", slots + 1);
  HDB_LAUNCH(slot_counts, blocks_for(slots + 1), kBlock, 0, s.stream.get())(table, slots, nullptr, 0u, counts);
  HDB_CUDA_CHECK_LAUNCH("slot_counts");
  const JoinCount groups = scan_total(s, t, counts, slots + 1);
  CudaRelation& out = ensure(out_handle, groups, in.values(), in.key_words());
  t.phase("gather");
  HDB_LAUNCH(hash_group_write<KW>, blocks_for(slots), kBlock, 0, s.stream.get())
  (in.data(), w, table, slots, s.scratch.get<JoinCount>("hash.offsets", 0), agg, out.data());
  HDB_CUDA_CHECK_LAUNCH("hash_group_write");
  return t.finish();
}

template <int KW>
Breakdown join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  if (empty_join(l, r, out_handle)) return t.finish();
  const std::uint64_t slots = checked_slots(nl, 1);
  std::uint32_t* head = s.scratch.get<std::uint32_t>("hash.table", slots);
  std::uint32_t* next = s.scratch.get<std::uint32_t>("hash.chains", nl);
  t.phase("build");
  HDB_CUDA_CHECK(cudaMemsetAsync(head, 0xff, slots * 4, s.stream.get()));
  HDB_LAUNCH(hash_build<KW>, blocks_for(nl), kBlock, 0, s.stream.get())
  (l.data(), nl, static_cast<std::uint32_t>(l.width()), head, next, slots - 1);
  HDB_CUDA_CHECK_LAUNCH("hash_build");
  const HashProbe<KW> p{
      l.data(), static_cast<std::uint32_t>(l.width()), r.data(), static_cast<std::uint32_t>(r.width()), head, next,
      slots - 1};
  std::uint32_t* counts = s.scratch.get<std::uint32_t>("hash.counts", std::uint64_t{nr} + 1);
  std::uint32_t* first = s.scratch.get<std::uint32_t>("hash.first", nr);
  t.phase("count");
  HDB_LAUNCH(hash_probe_count<KW>, blocks_for(std::uint64_t{nr} + 1), kBlock, 0, s.stream.get())
  (p, nr, counts, first);
  HDB_CUDA_CHECK_LAUNCH("hash_probe_count");
  const JoinCount total = scan_total(s, t, counts, std::uint64_t{nr} + 1);
  CudaRelation& out = ensure(out_handle, total, l.values() + r.values(), KW);
  if (total) {
    t.phase("write");
    HDB_LAUNCH(hash_probe_write<KW>, blocks_for(nr), kBlock, 0, s.stream.get())
    (p, nr, counts, first, s.scratch.get<JoinCount>("hash.offsets", 0), out.data());
    HDB_CUDA_CHECK_LAUNCH("hash_probe_write");
  }
  return t.finish();
}

}  // namespace

Breakdown hash_unique(CudaRa::State& s, const CudaRelation& in, DeviceRel& out) {
  return in.key_words() == 2 ? group<2>(s, in, false, ReduceOp::Sum, out) : group<1>(s, in, false, ReduceOp::Sum, out);
}

Breakdown hash_reduce_by_key(CudaRa::State& s, const CudaRelation& in, ReduceOp op, DeviceRel& out) {
  return in.key_words() == 2 ? group<2>(s, in, true, op, out) : group<1>(s, in, true, op, out);
}

Breakdown hash_join(CudaRa::State& s, const CudaRelation& l, const CudaRelation& r, DeviceRel& out) {
  return l.key_words() == 2 ? join<2>(s, l, r, out) : join<1>(s, l, r, out);
}

Breakdown hash_set_op(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, SetOp op, DeviceRel& out_handle) {
  PhaseTimer& t = s.begin_op();
  const std::uint32_t na = rows32(a.rows()), nb = rows32(b.rows());
  const std::uint32_t n = rows32(std::uint64_t{na} + nb);
  if (n == 0) {
    ensure(out_handle, 0, a.values(), a.key_words());
    return t.finish();
  }
  const TwoSides sides{a.data(), na, b.data(), static_cast<std::uint32_t>(a.width())};
  const std::uint64_t slots = checked_slots(n, 2);
  std::uint32_t* table = s.scratch.get<std::uint32_t>("hash.table", slots);
  std::uint32_t* ab = s.scratch.get<std::uint32_t>("hash.side_counts", 2 * slots);
  t.phase("build");
  HDB_CUDA_CHECK(cudaMemsetAsync(table, 0xff, slots * 4, s.stream.get()));
  HDB_CUDA_CHECK(cudaMemsetAsync(ab, 0, slots * 8, s.stream.get()));
  HDB_LAUNCH(hash_count_tuples, blocks_for(n), kBlock, 0, s.stream.get())(sides, n, table, slots - 1, ab);
  HDB_CUDA_CHECK_LAUNCH("hash_count_tuples");
  std::uint32_t* counts = s.scratch.get<std::uint32_t>("hash.counts", slots + 1);
  const auto op32 = static_cast<std::uint32_t>(op);
  HDB_LAUNCH(slot_counts, blocks_for(slots + 1), kBlock, 0, s.stream.get())(table, slots, ab, op32, counts);
  HDB_CUDA_CHECK_LAUNCH("slot_counts");
  const JoinCount total = scan_total(s, t, counts, slots + 1);
  CudaRelation& out = ensure(out_handle, total, a.values(), a.key_words());
  t.phase("gather");
  HDB_LAUNCH(hash_set_write, blocks_for(slots), kBlock, 0, s.stream.get())
  (sides, table, slots, ab, op32, s.scratch.get<JoinCount>("hash.offsets", 0), out.data());
  HDB_CUDA_CHECK_LAUNCH("hash_set_write");
  return t.finish();
}

void hash_plan(const OpShape& shape, MemoryPlan& plan) {
  auto tables = [&](std::uint64_t rows, std::uint64_t per_row, std::uint64_t words_per_slot) {
    const std::uint64_t slots = table_slots(rows, per_row);
    plan.add("hash table", slots * 4);
    if (words_per_slot)
      plan.add(shape.op == Op::ReduceByKey ? "hash aggregates" : "hash counts in a and b", slots * words_per_slot * 4);
    return slots;
  };
  // The per-slot (or per-right-row) counts, their 64-bit offsets and CUB's scan storage.
  auto scan = [&](std::uint64_t items) {
    plan.add("hash output counts", items * 4).add("hash output offsets (64-bit)", items * 8);
    plan.add("cub scan temporary storage", scan_counts_temp_bytes(items));
  };
  const std::uint64_t na = shape.rows_a, nb = shape.rows_b;
  switch (shape.op) {
    case Op::Unique:
    case Op::ReduceByKey: {
      if (!na) break;
      const auto values = static_cast<std::uint64_t>(shape.width_a - shape.key_words);
      scan(tables(na, 2, shape.op == Op::ReduceByKey ? values : 0) + 1);
      break;
    }
    case Op::Join:
      if (!na || !nb) break;
      tables(na, 1, 0);
      plan.add("hash chains", na * 4);
      plan.add("hash first matches", nb * 4);
      scan(nb + 1);
      break;
    case Op::SetUnion:
    case Op::SetIntersection:
    case Op::SetDifference:
      if (na + nb) scan(tables(na + nb, 2, 2) + 1);
      break;
    default: break;
  }
}

}  // namespace hdb::ra::cuda
