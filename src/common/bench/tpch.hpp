#pragma once
// tpch: the paper's micro-kernels A (a chain of selects), B (two dependent joins) and C (selects,
// then joins, then a project), on random key/value relations (sizes per input, as the paper) and
// on TPC-H tables (built-in generator at a scale factor, or dbgen .tbl files). A backend executes a
// Plan (model/tpch_plan.hpp): operator at a time, and where it can, fused.
#include <memory>
#include <string>
#include <vector>

#include "model/tpch_plan.hpp"
#include "harness/main.hpp"
#include "harness/memory_plan.hpp"
#include "harness/session.hpp"

namespace hdb::tpch {

// The kernels (the tests), in the order a run takes them; a backend's variants implement all three.
inline const std::vector<std::string> kKernels{"A", "B", "C"};

// One prepared plan on one backend (harness CaseRun); the inputs live (on the device) as long as
// the object. A pass is one execution: inputs to the device (h2d), every step (one phase per step,
// named after the step), the answer back (d2h).
class TpchRun : public CaseRun {
 public:
  // The answer of the last pass on the host (untimed).
  virtual Relation result() = 0;
};

class TpchBackend {
 public:
  virtual ~TpchBackend() = default;
  // The backend's variants; each implements every kernel (kKernels).
  virtual const VariantList& variant_table() const = 0;
  // Their names, in registration order.
  std::vector<std::string> variants() const { return variant_table().names(kKernels.front()); }
  // Throws SkipCase when the plan does not fit or the variant cannot run a plan of this shape.
  virtual std::unique_ptr<TpchRun> prepare(const Plan& plan, const std::string& variant, Transfer transfer) = 0;
  // Adds to `memory` the buffers `variant` allocates for `plan` beyond its inputs, intermediate
  // relations and answer (which the benchmark counts): join sort buffers and indices, hash tables,
  // a library's temporary storage. `join_rows`: the most rows a join of the plan outputs. Called
  // before prepare(). Default: none.
  virtual void plan_scratch(const Plan& plan, const std::string& variant, std::uint64_t join_rows,
                            MemoryPlan& memory) const;
};

// What the backends' scratch plans read of a plan: the most rows of any input, its join steps, and
// whether any of its relations has a 64-bit column.
std::uint64_t max_input_rows(const Plan& plan);
std::uint64_t join_steps(const Plan& plan);
bool has_wide_columns(const Plan& plan);

// Same columns, same row count and same order-independent checksum as the reference.
Verification compare_result(const Relation& got, const Relation& want, std::uint64_t want_checksum, int threads);

// "out.tbl" -> "out.C.tbl" (the kernel letter before the extension).
std::string output_path(const std::string& path, const std::string& kernel);

int tpch_main(int argc, char** argv, Platform& platform, TpchBackend& backend);

}  // namespace hdb::tpch
