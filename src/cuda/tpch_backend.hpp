#pragma once
// The tpch kernels on CUDA. `operator`: operator at a time as the paper, every intermediate
// materialised in device memory (selects as flag / CUB scan / scatter, joins as CUB radix sort of
// the right side + binary searches + scan + expand + gathers). `fused`: Crystal-style, no
// intermediates: a hash table per join is built from the (selected) build relation, then one
// tile-based kernel scans the probe relation once, applies its selects, follows the joins through
// the tables and writes only the result rows (block-wide scan, one atomic per tile).
// The composition over the CUDA RA primitives (ra-*) lives in bench/tpch_ra.hpp.
#include <memory>
#include <string>
#include <vector>

#include "bench/tpch.hpp"

namespace hdb::cuda {

class CudaTpch : public tpch::TpchBackend {
 public:
  const VariantList& variant_table() const override;
  std::unique_ptr<tpch::TpchRun> prepare(const tpch::Plan& plan, const std::string& variant,
                                         Transfer transfer) override;
  void plan_scratch(const tpch::Plan& plan, const std::string& variant, std::uint64_t join_rows,
                    MemoryPlan& memory) const override;
};

}  // namespace hdb::cuda
