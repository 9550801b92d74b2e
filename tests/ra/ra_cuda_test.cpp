// The CUDA variants (paper, cub, tuned) against the reference on the edge cases; skipped where
// there is no CUDA device (this runs on a GPU machine, e.g. under scripts/gpu-check).
#include <gtest/gtest.h>

#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "common/device_suite.hpp"
#include "ra_conformance.hpp"
#include "runtime/cuda_platform.hpp"

namespace hdb::ra {
namespace {

class RaCuda : public ::hdb::test::DeviceSuite<hdb::cuda::CudaPlatform> {};

TEST_F(RaCuda, EveryVariantMatchesReference) {
  cuda::CudaRa b(*platform_);
  for (const char* variant : {"paper", "cub", "tuned"}) {
    SCOPED_TRACE(variant);
    test::check_backend(b, variant);
    test::check_output_reuse(b, variant);
  }
}

TEST_F(RaCuda, PinnedHostRelationsRoundTrip) {
  cuda::CudaRa b(*platform_);
  Relation h = b.host_relation(1000, 3, Transfer::Pinned);
  EXPECT_EQ(h.memory_kind(), Transfer::Pinned);
  for (std::uint64_t i = 0; i < h.words(); ++i) h.data()[i] = static_cast<std::uint32_t>(i * 2654435761u);
  DeviceRel d;
  b.upload(h, d);
  Relation back = b.host_relation(1000, 3, Transfer::Pinned);
  b.download(*d, back);
  EXPECT_TRUE(same_tuples(h, back));
}

}  // namespace
}  // namespace hdb::ra
