#pragma once
// CPU relational-algebra backend: `serial` (one core, single-pass loops: the papers' baseline) and
// `parallel` (all cores, OpenMP where available: count / scan / write passes over chunks; joins and
// set operations split by merge path over both inputs, ra_merge.hpp; sort, algorithms/tuple_sort.hpp).
#include <cstdint>
#include <vector>

#include "bench/ra.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::ra::cpu {

class CpuRa : public RaBackend {
 public:
  // `parallel` runs on the platform's threads.
  explicit CpuRa(const hdb::cpu::CpuPlatform& platform) : platform_(platform) {}

  std::vector<std::string> variants(Op op) const override;
  Breakdown upload(const Relation& host, DeviceRel& out) override;
  Breakdown download(const DeviceRelation& dev, Relation& host) override;
  Breakdown project(const DeviceRelation& in, const std::vector<int>& columns, const std::string& variant,
                    DeviceRel& out) override;
  Breakdown select(const DeviceRelation& in, const Predicate& pred, const std::string& variant, DeviceRel& out) override;
  Breakdown unique(const DeviceRelation& in, const std::string& variant, DeviceRel& out) override;
  Timed<Aggregate> reduce(const DeviceRelation& in, ReduceOp op, const std::string& variant) override;
  Breakdown reduce_by_key(const DeviceRelation& in, ReduceOp op, const std::string& variant, DeviceRel& out) override;
  Breakdown join(const DeviceRelation& left, const DeviceRelation& right, const std::string& variant,
                 DeviceRel& out) override;
  Breakdown set_op(const DeviceRelation& a, const DeviceRelation& b, SetOp op, const std::string& variant,
                   DeviceRel& out) override;
  Breakdown product(const DeviceRelation& a, const DeviceRelation& b, const std::string& variant, DeviceRel& out) override;
  Breakdown arith(const DeviceRelation& a, const DeviceRelation& b, ArithOp op, const std::string& variant,
                  DeviceRel& out) override;
  Breakdown sort(const DeviceRelation& in, const std::string& variant, DeviceRel& out) override;

 private:
  int threads_for(const std::string& variant) const;
  const hdb::cpu::CpuPlatform& platform_;
  std::vector<std::uint32_t> sort_scratch_;  // grows in a case's first pass only
};

}  // namespace hdb::ra::cpu
