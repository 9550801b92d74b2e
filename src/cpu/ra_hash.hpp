#pragma once
// The cpu backend's `hash` variant: hash-based unique, reduce-by-key, join and set operations that
// take their input in any order, as a database engine runs them on unsorted rows. Both inputs are
// radix-partitioned by a hash of the key (the set operations: of the whole tuple) into partitions
// whose table fits the core's L2, then every partition is processed on its own:
//   unique, reduce_by_key  one linear-probing table per partition, its groups gathered in place;
//   join                   a chained table built on the left partition, probed once by the right
//                          while both are in cache, writing into the partition's own staging
//                          buffer; then every buffer copied to its place (the output sized exactly);
//   set operations         the distinct tuples of both partitions with their counts in a and in b.
// Partitioning is stable, so unique keeps each key's first tuple in input order (what a stable sort
// followed by unique keeps); the output's order is partition order, which the contract leaves open.
#include <cstdint>
#include <functional>
#include <vector>

#include "harness/memory_plan.hpp"
#include "harness/timing.hpp"
#include "model/ra.hpp"

namespace hdb::ra::cpu::hash {

// Tuples of `width` words, the first key_words of them the key, `rows` of them at `data`.
struct Rows {
  const std::uint32_t* data = nullptr;
  std::uint64_t rows = 0;
  int width = 2;
  int key_words = 1;
};

// Scratch kept between calls: it grows in a case's first pass only.
struct Scratch {
  std::vector<std::uint32_t> part_a, part_b;       // the inputs, grouped by partition
  std::vector<std::uint64_t> begin_a, begin_b;     // partition p's rows: [begin[p], begin[p + 1])
  std::vector<std::uint64_t> hist;                 // per chunk and partition
  std::vector<std::uint32_t> table, next;          // hash tables (and the join's chains)
  std::vector<std::uint64_t> table_begin;          // partition p's table: [table_begin[p], table_begin[p + 1])
  std::vector<std::uint64_t> count, out_begin;     // per partition: output rows, and where they go
  std::vector<std::uint64_t> groups;               // set operations: per partition, its distinct tuples
  std::vector<std::uint32_t> group_count;          // set operations: per group, its count in a then in b
  std::vector<const std::uint32_t*> group_row;     // set operations: per group, one of its tuples
  std::vector<std::vector<std::uint32_t>> stages;  // join: per partition, its output before the copy
  void release();
};

// Each returns the output's rows; `out` holds at least in.rows tuples (set_op: the operation's
// bound); join asks `alloc` for its counted output. The Breakdown's phases: partition, then
// aggregate / deduplicate / build_probe / count, then gather / copy.
std::uint64_t unique(const Rows& in, std::uint32_t* out, int threads, Scratch& s, Breakdown& b);
std::uint64_t reduce_by_key(const Rows& in, ReduceOp op, std::uint32_t* out, int threads, Scratch& s, Breakdown& b);
std::uint64_t join(const Rows& l, const Rows& r, const std::function<std::uint32_t*(std::uint64_t)>& alloc, int threads,
                   Scratch& s, Breakdown& b);
std::uint64_t set_op(const Rows& a, const Rows& b, SetOp op, std::uint32_t* out, int threads, Scratch& s,
                     Breakdown& bd);

// The scratch an operator of `shape` grows on `threads` threads, for the case's memory plan.
void plan(const OpShape& shape, int threads, MemoryPlan& plan);

}  // namespace hdb::ra::cpu::hash
