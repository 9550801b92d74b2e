#pragma once
// CPU relational-algebra backend: `serial` (one core, single-pass loops: the papers' baseline) and
// `parallel` (all cores, pieces handed out by a pool of blocking workers, runtime/chunks.hpp;
// compactions and merges read their input once and place each piece's output by ra_staged.hpp;
// joins and set operations split by merge path over both inputs, ra_merge.hpp; sort,
// algorithms/tuple_sort.hpp) and `hash` (all cores: unique, reduce_by_key, join and the set
// operations on input in any order, ra_hash.hpp).
#include <cstdint>
#include <vector>

#include "bench/ra.hpp"
#include "ra_hash.hpp"
#include "ra_library.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::ra::cpu {

class CpuRa : public RaBackend {
 public:
  // `parallel` runs on the platform's threads.
  explicit CpuRa(const hdb::cpu::CpuPlatform& platform) : platform_(platform) {}

  const VariantList& variant_table() const override;
  Breakdown upload(const Relation& host, DeviceRel& out) override;
  Breakdown download(const DeviceRelation& dev, Relation& host) override;
  Breakdown run_project(const DeviceRelation& in, const ProjectLayout& layout, const std::string& variant,
                        DeviceRel& out) override;
  Breakdown run_select(const DeviceRelation& in, const Predicate& pred, const std::string& variant,
                       DeviceRel& out) override;
  Breakdown run_unique(const DeviceRelation& in, const std::string& variant, DeviceRel& out) override;
  Timed<Aggregate> run_reduce(const DeviceRelation& in, ReduceOp op, const std::string& variant) override;
  Breakdown run_reduce_by_key(const DeviceRelation& in, ReduceOp op, const std::string& variant,
                              DeviceRel& out) override;
  Breakdown run_join(const DeviceRelation& left, const DeviceRelation& right, const std::string& variant,
                     DeviceRel& out) override;
  Breakdown run_set_op(const DeviceRelation& a, const DeviceRelation& b, SetOp op, const std::string& variant,
                       DeviceRel& out) override;
  Breakdown run_product(const DeviceRelation& a, const DeviceRelation& b, const std::string& variant,
                        DeviceRel& out) override;
  Breakdown run_arith(const DeviceRelation& a, const DeviceRelation& b, ArithOp op, const std::string& variant,
                      DeviceRel& out) override;
  Breakdown run_sort(const DeviceRelation& in, const std::string& variant, DeviceRel& out) override;
  void plan_scratch(const OpShape& shape, MemoryPlan& plan) const override;
  void release_scratch() override;

 private:
  int threads_for(const std::string& variant) const;
  // Whether `variant` is one of the library variants (ra_library.hpp), and which.
  bool is_library(const std::string& variant) const;
  library::Library library_of(const std::string& variant) const;
  const hdb::cpu::CpuPlatform& platform_;
  std::vector<std::uint32_t> sort_scratch_;             // grows in a case's first pass only
  std::vector<std::vector<std::uint32_t>> join_stage_;  // the join's piece buffers, likewise
  std::vector<std::uint64_t> sort_keys_;                // the tbb sort's (key, row) words, likewise
  hash::Scratch hash_;                                  // the hash variant's partitions and tables, likewise
};

}  // namespace hdb::ra::cpu
