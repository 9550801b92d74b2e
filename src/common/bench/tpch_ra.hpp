#pragma once
// The tpch kernels composed from a backend's RA primitives (bench/ra.hpp), operator at a time as
// the paper runs them: inputs uploaded once, every select / join / project a primitive on
// device-resident relations, the answer downloaded once.
//
// The RA join needs both inputs sorted by key. The TPC-H tables (and the random relations,
// generated in key order as the paper's) are sorted on the key of the first join, but the second
// join of B and C is on another attribute (o_custkey, r2_value). There the left input is re-keyed
// with project() and sorted with the backend's sort() on the device (phase "<step>.sort", no
// transfers): every step of the composition is an RA primitive.
#include <memory>
#include <string>
#include <vector>

#include "bench/ra.hpp"
#include "bench/tpch.hpp"

namespace hdb::tpch {

class RaComposed : public TpchBackend {
 public:
  // Offers "ra-<v>" for every variant v that the backend has for select, join and project (and
  // skips its cases with v's reason where v cannot run).
  explicit RaComposed(ra::RaBackend& backend);
  const VariantList& variant_table() const override { return table_; }
  std::unique_ptr<TpchRun> prepare(const Plan& plan, const std::string& variant, Transfer transfer) override;
  // The RA backend's own scratch for the composition's largest sort and join.
  void plan_scratch(const Plan& plan, const std::string& variant, std::uint64_t join_rows,
                    MemoryPlan& memory) const override;

 private:
  ra::RaBackend& b_;
  VariantTable<std::string> table_;  // "ra-<v>" -> v
};

// Dispatches each variant to the backend that offers it (several implementations in one
// executable, e.g. the RA composition and a columnar engine).
class MultiBackend : public TpchBackend {
 public:
  explicit MultiBackend(std::vector<TpchBackend*> backends);
  const VariantList& variant_table() const override { return table_; }
  std::unique_ptr<TpchRun> prepare(const Plan& plan, const std::string& variant, Transfer transfer) override;
  void plan_scratch(const Plan& plan, const std::string& variant, std::uint64_t join_rows,
                    MemoryPlan& memory) const override;

 private:
  // The backend that registered `variant`; std::invalid_argument when none did.
  TpchBackend& owner(const std::string& variant) const { return *backends_[table_.id(variant)]; }
  std::vector<TpchBackend*> backends_;
  VariantTable<std::size_t> table_;  // every backend's variants -> its index in backends_
};

}  // namespace hdb::tpch
