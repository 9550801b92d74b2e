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

class OpenClMerge : public MergeBackendFor<OpenClMerge> {
 public:
  explicit OpenClMerge(OpenClPlatform& p) : p_(p) {}
  std::vector<MergeVariant> variants(const std::vector<Transfer>& transfers) const override;
  bool supports(const MergeVariant& v, ValueType t) const override;
  template <class T>
  std::unique_ptr<MergeCase<T>> make(const MergeVariant& v, const MergeWork<T>& w);

 private:
  OpenClPlatform& p_;
};

}  // namespace hdb::opencl
