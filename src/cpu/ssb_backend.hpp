#pragma once
// The 13 SSB queries on the CPU, one plan for all of them (docs/ssb.md, "The CPU plan"): each
// joined dimension becomes a dense array indexed by its key (key - smallest key) that holds, for a
// row passing the query's predicates on that dimension, the rank of its group-by value, and -1
// otherwise; lineorder is processed in vectors of 1,024 rows: its own predicates first (Q1.x), then
// one probe per dimension, most selective first, each compacting a selection vector and adding
// rank x stride to the row's group index; the aggregate goes into a dense per-chunk array of
// 64-bit sums, merged at the end. `serial` runs it on one core, `parallel` on the platform's
// threads (chunks of lineorder handed out by the CPU worker pool).
#include <memory>
#include <string>

#include "bench/ssb.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::cpu {

class CpuSsb : public ssb::SsbBackend {
 public:
  explicit CpuSsb(const CpuPlatform& platform) : platform_(platform) {}
  const VariantList& variant_table() const override;
  std::unique_ptr<ssb::SsbRun> prepare(const ssb::Query& q, const ssb::Tables& t, const std::string& variant,
                                       Transfer transfer, ssb::Residency residency) override;
  void plan_scratch(const ssb::Query& q, const ssb::Tables& t, const std::string& variant,
                    MemoryPlan& memory) const override;

 private:
  const CpuPlatform& platform_;
};

}  // namespace hdb::cpu
