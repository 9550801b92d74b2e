#pragma once
// CUDA relational-algebra backend. Variants:
//   paper  the OpenCL paper's multi-kernel structure (partition with a shared-memory prefix sum,
//          scan of partition counts, gather), every primitive
//   cub    library compositions: DeviceSelect / DeviceScan / DeviceReduce over index and transform
//          iterators plus a gather, for the primitives with a data-dependent output or a reduction
//   cub    also sort: DeviceRadixSort::SortPairs of (key, row index), stable, then a gather
//   tuned  select / unique: one single-pass DeviceSelect (decoupled look-back) over whole tuples, no
//          intermediate; join: count and scan fused (no count array) and a load-balanced writer;
//          project, reduce, add/subtract/multiply: grid-stride kernels with 16-byte accesses
//   hash   unique, reduce_by_key, join, set operations on input in any order: one table in device
//          memory filled by atomics (ra_hash.cu); output in no fixed order
// Keys of 32 or 64 bits (key_words 1 or 2) in every operator and variant; join output counts and
// offsets are 64-bit. Inputs come from pageable or pinned host memory (host_relation); times from
// CUDA events.
#include <memory>

#include "bench/ra.hpp"
#include "runtime/cuda_platform.hpp"

namespace hdb::ra::cuda {

class CudaRa : public RaBackend {
 public:
  explicit CudaRa(hdb::cuda::CudaPlatform& platform);
  ~CudaRa() override;

  const VariantList& variant_table() const override;
  // Every buffer an operator allocates besides inputs and output; CUB's temporary storage as CUB
  // reports it for the call the operator makes (without a device, an upper bound: ra_cub.cu).
  void plan_scratch(const OpShape& shape, MemoryPlan& plan) const override;
  Relation host_relation(std::uint64_t rows, int values, Transfer kind, int key_words = 1) override;
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
  void release_scratch() override;

  struct State;  // stream, events and scratch buffers (ra_device.cuh)
  State& state();

 private:
  hdb::cuda::CudaPlatform& platform_;
  std::unique_ptr<State> s_;
};

}  // namespace hdb::ra::cuda
