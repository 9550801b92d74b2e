#pragma once
// The CUDA merge backend: 1a with Thrust sort + unique; 1b as the paper's dictionary slice merge
// (custom kernels, device-side gap closing), Thrust CSUM and MUM, and a merge-path variant over
// Thrust; 2b with X_M/X_D or by binary search; `tuned` for each step (issue 45: 1a by radix-sorted
// pairs, 1b by one tiled merge-path kernel, 2b a warp packing 64 rows' ids into whole words); the
// whole merge in order, and chunked with PCIe transfers overlapping compute on streams. Inputs come
// from pageable or pinned host memory. Strings (offsets + bytes, the OpenCL backend's algorithm): 1a
// `radix`, 1b merge path, 2b lookup and tuned, the whole merge in order.
#include "bench/merge.hpp"
#include "runtime/cuda_platform.hpp"

namespace hdb::cuda {

enum class CudaMergeVariant { Thrust, Radix, Slice, Csum, Mum, MergePath, Lookup, Binsearch, Tuned, InOrder, Overlap };

class CudaMerge : public MergeBackendFor<CudaMerge> {
 public:
  explicit CudaMerge(CudaPlatform& p);
  const VariantList& variant_table() const override { return table_; }
  bool supports(const MergeVariant& v, ValueType t) const override;
  template <class T>
  void plan(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const;
  template <class T>
  std::unique_ptr<MergeCase<T>> make(const MergeVariant& v, const MergeWork<T>& w);

 private:
  VariantTable<CudaMergeVariant> table_;
};

}  // namespace hdb::cuda
