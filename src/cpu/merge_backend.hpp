#pragma once
// The CPU merge backend: serial and parallel variants of every step, on every value type.
#include "bench/merge.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::cpu {

// serial and parallel run every step; the *_binsearch variants re-encode (2b) by binary search of
// U'_M instead of the position maps.
enum class CpuMergeVariant { Serial, Parallel, SerialBinsearch, ParallelBinsearch };

class CpuMerge : public MergeBackendFor<CpuMerge> {
 public:
  explicit CpuMerge(const CpuPlatform& p);
  const VariantList& variant_table() const override { return table_; }
  bool supports(const MergeVariant&, ValueType) const override { return true; }
  template <class T>
  void plan(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const;
  template <class T>
  std::unique_ptr<MergeCase<T>> make(const MergeVariant& v, const MergeWork<T>& w);

 private:
  const CpuPlatform& platform_;
  VariantTable<CpuMergeVariant> table_;
};

}  // namespace hdb::cpu
