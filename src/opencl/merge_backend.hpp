#pragma once
// The OpenCL merge backend: the paper's dictionary slice merge (step 1b) with the gap closing done
// on the device, and the step 2b re-encode (one work-item per output word). Integer types only.
#include "bench/merge.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::opencl {

class OpenClMerge : public MergeBackendFor<OpenClMerge> {
 public:
  explicit OpenClMerge(OpenClPlatform& p) : p_(p) {}
  std::vector<MergeVariant> variants(const std::vector<Transfer>& transfers) const override;
  bool supports(const MergeVariant&, ValueType t) const override { return t != ValueType::Str; }
  template <class T>
  std::unique_ptr<MergeCase<T>> make(const MergeVariant& v, const MergeWork<T>& w);

 private:
  OpenClPlatform& p_;
};

}  // namespace hdb::opencl
