#pragma once
// The CPU merge backend: serial and parallel variants of every step, on every value type.
#include "bench/merge.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::cpu {

class CpuMerge : public MergeBackendFor<CpuMerge> {
 public:
  explicit CpuMerge(const CpuPlatform& p) : platform_(p) {}
  std::vector<MergeVariant> variants(const std::vector<Transfer>& transfers) const override;
  bool supports(const MergeVariant&, ValueType) const override { return true; }
  template <class T>
  std::unique_ptr<MergeCase<T>> make(const MergeVariant& v, const MergeWork<T>& w);

 private:
  const CpuPlatform& platform_;
};

}  // namespace hdb::cpu
