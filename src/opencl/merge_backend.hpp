#pragma once
// The OpenCL merge backend: 1a `radix` (radix sort of the delta with its row
// indices, run heads scanned, U_D and ids scattered), 1b `slice` (the paper's dictionary slice
// merge, gap closing on the device) and `merge_path` (balanced merge-path partitions, per-work-item
// serial merges), 2b `lookup` (X_M/X_D, whole 64-bit words per work-item), and the whole merge
// `inorder` (1a + 1b merge path + 2a + 2b on one queue, each step a phase). Strings (offsets + bytes)
// take every step: 1a by rounds of radix sorts over 7-byte chunks, 1b by merge path only.
#include "bench/merge.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::opencl {

enum class OpenClMergeVariant { Radix, Slice, MergePath, Lookup, InOrder };

class OpenClMerge : public MergeBackendFor<OpenClMerge> {
 public:
  explicit OpenClMerge(OpenClPlatform& p);
  const VariantList& variant_table() const override { return table_; }
  bool supports(const MergeVariant& v, ValueType t) const override;
  template <class T>
  void plan(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const;
  template <class T>
  std::unique_ptr<MergeCase<T>> make(const MergeVariant& v, const MergeWork<T>& w);

 private:
  OpenClPlatform& p_;
  VariantTable<OpenClMergeVariant> table_;
};

}  // namespace hdb::opencl
