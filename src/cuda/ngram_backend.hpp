#pragma once
// CUDA n-gram search (docs/ngram.md):
//   search/gpu            the paper's Figure 1: the whole query on the device over dense per-article
//                         arrays, one unpack (scatter) and one update kernel per query 3-gram;
//   search/gpu-segmented  the segment-wise variant the paper proposes: one block per bin of 256
//                         articles keeps its counters in registers and its unpacked maps in shared
//                         memory, and leaves as soon as its bin has no candidate;
//   batch/gpu-segmented   the same for all queries in one launch;
//   search/gpu-tuned      the segmented search with every list's bin ranges resolved by one launch
//   batch/gpu-tuned       before it (not searched by each block) and 8 lists unpacked at once: a
//                         chunk of queries in two launches and a memset;
//   search/hybrid         the paper's five stages: gathering on the CPU (binned), initial pruning of
//                         the intermediate lists on the GPU, final pruning of the largest lists on
//                         the CPU (binned), then the candidate list.
// CUDA types stay in the .cu file so that host-only code (tests, main) includes this header.
#include <memory>

#include "bench/ngram.hpp"
#include "runtime/cuda_platform.hpp"

namespace hdb::cuda {

enum class CudaNgramVariant { Gpu, GpuSegmented, GpuTuned, Hybrid };

class CudaNgram : public NgramBackend {
 public:
  explicit CudaNgram(CudaPlatform& p);
  ~CudaNgram() override;
  const VariantList& variant_table() const override { return table_; }
  bool on_device() const override { return true; }
  nlohmann::json load_index(const ngram::NgramIndex& index) override;
  void release_index() override;
  void plan_memory(MemoryPlan& plan, const ngram::NgramIndex& index, const NgramVariant& variant,
                   const std::vector<ngram::QueryPlan>& plans) const override;
  Breakdown search(const NgramVariant& variant, const std::vector<ngram::QueryPlan>& plans,
                   NgramSearchOut& out) override;
  struct State;  // device copies of the index and work arrays (defined in the .cu file)

 private:
  VariantTable<CudaNgramVariant> table_;
  std::unique_ptr<State> s_;
};

}  // namespace hdb::cuda
