#pragma once
// The opencl ra backend's relation handle and the helpers its operator files share (ra_backend.cpp,
// ra_hash.cpp): one device buffer of tuples, 32-bit row counts, outputs grown in place.
#include <cstdint>

#include "model/ra.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::ra::opencl {

class ClRelation : public DeviceRelation {
 public:
  ClRelation(cl::Buffer b, std::uint64_t words) : buf(std::move(b)), words_(words) {}
  std::uint64_t capacity_words() const override { return words_; }
  void shape(std::uint64_t rows, int values, int key_words) {
    rows_ = rows;
    values_ = values;
    key_words_ = key_words;
  }
  cl::Buffer buf;

 private:
  std::uint64_t words_;
};

// The handle as this backend's; std::invalid_argument for another backend's.
const ClRelation& as_cl(const DeviceRelation& r);

// Row counts are 32-bit on the device (indices, counts and offsets are uint): SkipCase beyond.
std::uint32_t rows32(std::uint64_t rows);

// `out` shaped as rows x (key_words + values), reallocated only where it is too small or shared;
// SkipCase where the buffer exceeds the device's largest allocation.
ClRelation& ensure(hdb::opencl::OpenClPlatform& p, DeviceRel& out, std::uint64_t rows, int values, int key_words);

inline std::uint32_t u32(std::int64_t x) { return static_cast<std::uint32_t>(x); }

// The kernels' `op` of a reduction: 0 sum, 1 min, 2 max.
inline std::uint32_t reduce_code(ReduceOp op) { return op == ReduceOp::Sum ? 0 : op == ReduceOp::Min ? 1 : 2; }

}  // namespace hdb::ra::opencl
