#pragma once
// CPU n-gram search: the paper's binned engine on one core, the same with bins spread over all
// cores (one query at a time: latency), and a batch mode with queries spread over the cores
// (throughput).
#include <memory>

#include "bench/ngram.hpp"
#include "runtime/worker_pool.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::cpu {

enum class CpuNgramVariant { Binned, Parallel };

class CpuNgram : public NgramBackend {
 public:
  explicit CpuNgram(const CpuPlatform& platform);
  const VariantList& variant_table() const override { return table_; }
  bool on_device() const override { return false; }
  nlohmann::json load_index(const ngram::NgramIndex& index) override;
  void release_index() override { index_ = nullptr; }
  // Nothing: the variants search the host index the common code built (and counts on this platform).
  void plan_memory(MemoryPlan&, const ngram::NgramIndex&, const NgramVariant&,
                   const std::vector<ngram::QueryPlan>&) const override {}
  Breakdown search(const NgramVariant& variant, const std::vector<ngram::QueryPlan>& plans,
                   NgramSearchOut& out) override;

 private:
  WorkerPool& pool();
  const ngram::NgramIndex* index_ = nullptr;
  const CpuPlatform& platform_;
  std::unique_ptr<WorkerPool> pool_;
  VariantTable<CpuNgramVariant> table_;
};

// Bins of one query spread over the pool's threads; hits ascending.
std::vector<std::uint32_t> search_parallel_bins(const ngram::NgramIndex& index, const ngram::QueryPlan& plan,
                                                WorkerPool& pool);

}  // namespace hdb::cpu
