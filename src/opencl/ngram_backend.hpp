#pragma once
// OpenCL n-gram search, the same algorithms as CUDA's (docs/ngram.md): the paper's Figure 1
// ("search/gpu": dense per-article arrays, scatter + update kernels per query 3-gram) and the
// segment-wise algorithm (one work-group per bin of 256 articles), one query per launch
// ("search/gpu-segmented") or all queries in one launch ("batch/gpu-segmented").
#include <CL/opencl.hpp>

#include <optional>

#include "bench/ngram.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::opencl {

enum class OpenClNgramVariant { Gpu, GpuSegmented };

class OpenClNgram : public NgramBackend {
 public:
  explicit OpenClNgram(OpenClPlatform& p);
  const VariantList& variant_table() const override { return table_; }
  bool on_device() const override { return true; }
  nlohmann::json load_index(const ngram::NgramIndex& index) override;
  void release_index() override;
  void plan_memory(MemoryPlan& plan, const ngram::NgramIndex& index, const NgramVariant& variant,
                   const std::vector<ngram::QueryPlan>& plans) const override;
  Breakdown search(const NgramVariant& variant, const std::vector<ngram::QueryPlan>& plans,
                   NgramSearchOut& out) override;

 private:
  OpenClPlatform& p_;
  VariantTable<OpenClNgramVariant> table_;
  Breakdown search_segmented(const NgramVariant& variant, const std::vector<ngram::QueryPlan>& plans,
                             NgramSearchOut& out);
  std::vector<std::uint32_t> figure1(const ngram::QueryPlan& plan, Breakdown& b);

  const ngram::NgramIndex* host_ = nullptr;
  cl::Kernel kernel_, scatter_, update_, bitmap_;
  cl::Buffer article_, map_, list_off_, dir_off_, dir_bin_, dir_start_;
  cl::Buffer newmap_, planes_, alive_, words_;
  // Per-search buffers (packed queries, hit bitmaps), grown in the warm-up; made anew with each index.
  std::optional<Scratch> scratch_;
  std::vector<std::uint32_t> host_words_;
  std::uint32_t bins_ = 0;
};

}  // namespace hdb::opencl
