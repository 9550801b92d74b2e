#pragma once
// The 13 SSB queries on CUDA (docs/ssb.md, "The CUDA plans"). Both variants share the dimension
// build: per joined dimension a dense array indexed by key - smallest key (SSB's keys are dense:
// 1..n, and yyyymmdd dates span 61,130 values) holding, for a row that passes the query's predicates
// on it, its group-by value's offset from the column's smallest value (0 without a group-by
// column), and -1 otherwise. A group is the mixed-radix index of those offsets (Crystal's dense
// result array).
//  fused      Crystal's manner: one probe kernel over lineorder in tiles of 128 x 4 rows: the tile's
//             rows in registers, lineorder's own predicates first, then a probe per dimension (most
//             selective first) for the surviving rows, then the aggregate: Q1.x a block reduction and
//             one 64-bit atomicAdd per block, Q2-Q4 a 64-bit atomicAdd into the dense group array.
//  operators  operator at a time, every intermediate materialised in device memory: a select per
//             lineorder predicate (flags, CUB scan, scatter of row ids), a join per dimension (a
//             lookup of the gathered foreign key in the dense array: flags and group index, scan,
//             scatter of rows and group indices), a gather of the aggregate's values, then a sort
//             group-by (CUB radix sort of (group, value), CUB prefix sum, one row per run); Q1.x a
//             CUB reduction.
// The answer, the non-empty groups as (group index, sum), is compacted on the device and copied
// back (d2h); result() decodes and sorts it on the host (untimed, as the TPC-H backend builds its
// relation).
#include <memory>
#include <string>

#include "bench/ssb.hpp"

namespace hdb::cuda {

class CudaSsb : public ssb::SsbBackend {
 public:
  const VariantList& variant_table() const override;
  std::unique_ptr<ssb::SsbRun> prepare(const ssb::Query& q, const ssb::Tables& t, const std::string& variant,
                                       Transfer transfer, ssb::Residency residency) override;
  void plan_scratch(const ssb::Query& q, const ssb::Tables& t, const std::string& variant,
                    MemoryPlan& memory) const override;
};

}  // namespace hdb::cuda
