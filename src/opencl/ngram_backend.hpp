#pragma once
// OpenCL n-gram search: the segment-wise GPU algorithm (one work-group per bin of 256 articles),
// one query per launch ("search/gpu-segmented") or all queries in one launch ("batch/gpu-segmented").
#include <CL/opencl.hpp>

#include "bench/ngram.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::opencl {

class OpenClNgram : public NgramBackend {
 public:
  explicit OpenClNgram(OpenClPlatform& p) : p_(p) {}
  std::vector<NgramVariant> variants() const override;
  nlohmann::json load_index(const ngram::NgramIndex& index) override;
  Breakdown search(const NgramVariant& variant, const std::vector<ngram::QueryPlan>& plans, NgramSearchOut& out) override;

 private:
  OpenClPlatform& p_;
  cl::Kernel kernel_;
  cl::Buffer article_, map_, list_off_, dir_off_, dir_bin_, dir_start_;
  std::uint32_t bins_ = 0;
};

}  // namespace hdb::opencl
