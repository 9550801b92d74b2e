#pragma once
// The tpch kernels on the CPU, operator at a time: `serial` (one core, STL sort and binary
// search, the paper's baseline) and `parallel` (all cores: chunked count/offset/scatter selects,
// a parallel sort-merge join, parallel gathers). Both materialise every intermediate relation.
#include <memory>
#include <string>
#include <vector>

#include "bench/tpch.hpp"

namespace hdb::cpu {

class CpuTpch : public tpch::TpchBackend {
 public:
  explicit CpuTpch(int threads) : threads_(threads) {}
  std::vector<std::string> variants() const override { return {"serial", "parallel"}; }
  std::unique_ptr<tpch::TpchRun> prepare(const tpch::Plan& plan, const std::string& variant, Transfer transfer) override;
  void set_threads(int t) { threads_ = t; }

 private:
  int threads_;
};

}  // namespace hdb::cpu
