#pragma once
// The tpch kernels on the CPU by a columnar engine of its own, operator at a time:
// `columnar-serial` (one core, STL sort and binary search) and `columnar-parallel` (all cores:
// chunked count/offset/scatter selects, a parallel sort-merge join, parallel gathers). Both
// materialise every intermediate relation, but only as columns: a select or join copies row ids
// and gathers the columns, instead of moving whole tuples as the RA composition (ra-serial,
// ra-parallel, bench/tpch_ra.hpp) does, and any column can be a join key without re-keying.
#include <memory>
#include <string>
#include <vector>

#include "bench/tpch.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::cpu {

class CpuTpch : public tpch::TpchBackend {
 public:
  // `columnar-parallel` runs on the platform's threads.
  explicit CpuTpch(const CpuPlatform& platform) : platform_(platform) {}
  const VariantList& variant_table() const override;
  std::unique_ptr<tpch::TpchRun> prepare(const tpch::Plan& plan, const std::string& variant,
                                         Transfer transfer) override;
  void plan_scratch(const tpch::Plan& plan, const std::string& variant, std::uint64_t join_rows,
                    MemoryPlan& memory) const override;

 private:
  const CpuPlatform& platform_;
};

}  // namespace hdb::cpu
