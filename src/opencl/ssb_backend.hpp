#pragma once
// The 13 SSB queries on OpenCL (docs/ssb.md, "OpenCL"; kernels/ssb.cl). Both variants share the
// dimension build: each joined dimension becomes a dense device array indexed by key - smallest key
// (the keys are dense in SSB: 1..n, dates yyyymmdd over 7 years), holding for a row that passes the
// query's predicates on that dimension its group-by value minus the column's smallest value, MISS
// otherwise; a group index is the sum of value x stride over the dimensions.
//   fused:     one kernel over lineorder, built per query shape: work-groups over tiles, lineorder's
//              own predicates first, probes most selective first, the aggregate in local memory
//              (32-bit halves) when the groups fit, else global atomics (64-bit where the device
//              has cl_khr_int64_base_atomics, 32-bit halves with carry where not).
//   operators: operator at a time, every intermediate in global memory: select flags on
//              lineorder, compaction into a row list (the RA backend's DeviceScan), then per
//              dimension a gather of the foreign key, a lookup, a compaction; gathers of the
//              aggregate's columns, their value, a group-by with global atomics.
// A pass: the columns the query reads to the device (h2d; none with --transfer none, where they
// were uploaded once), the kernels (phases from profiling events), the sums and seen flags back (d2h).
#include <memory>
#include <string>

#include "bench/ssb.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::ssb::opencl {

class OpenClSsb : public SsbBackend {
 public:
  explicit OpenClSsb(hdb::opencl::OpenClPlatform& platform) : p_(platform) {}
  const VariantList& variant_table() const override;
  std::unique_ptr<SsbRun> prepare(const Query& q, const Tables& t, const std::string& variant, Transfer transfer,
                                  Residency residency) override;
  void plan_scratch(const Query& q, const Tables& t, const std::string& variant, MemoryPlan& memory) const override;

  // Tests: whether 64-bit global atomics may be used where the device has them (false: the 32-bit
  // halves everywhere), and the most groups the fused kernel aggregates in local memory (0: never).
  void override_aggregation(bool int64_atomics, std::uint32_t local_groups) {
    allow_int64_ = int64_atomics;
    local_groups_ = local_groups;
  }
  // Whether the device has cl_khr_int64_base_atomics.
  bool device_has_int64_atomics() const;

 private:
  hdb::opencl::OpenClPlatform& p_;
  bool allow_int64_ = true;
  std::uint32_t local_groups_ = kLocalGroups;
  static constexpr std::uint32_t kLocalGroups = 2048;  // 24 KiB of local memory (12 bytes a group)
};

}  // namespace hdb::ssb::opencl
