// The OpenCL kernels (on PoCL here) against the reference, on edge cases.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/errors.hpp"
#include "ra_backend.hpp"
#include "reference/ra.hpp"
#include "common/device_suite.hpp"
#include "ra_conformance.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::ra {
namespace {

class RaOpenCl : public ::hdb::test::DeviceSuite<hdb::opencl::OpenClPlatform> {};

TEST_F(RaOpenCl, PaperKernelsMatchReference) {
  opencl::ClRa b(*platform_);
  test::check_backend(b, "paper");
  test::check_output_reuse(b, "paper");
}

TEST_F(RaOpenCl, TunedSelectAndUniqueMatchReference) {
  opencl::ClRa b(*platform_);
  test::check_backend(b, "tuned");
  test::check_output_reuse(b, "tuned");
}

TEST_F(RaOpenCl, SixtyFourBitKeysMatchReference) {
  // Every variant with keys above 2^32 sharing their high word, and at the 64-bit maximum.
  for (const char* v : {"paper", "tuned", "radix"}) {
    SCOPED_TRACE(v);
    opencl::ClRa b(*platform_);
    test::check_backend(b, v, 2);
  }
}

TEST_F(RaOpenCl, PinnedHostRelationsRoundTrip) {
  opencl::ClRa b(*platform_);
  Relation h = b.host_relation(1000, 2, Transfer::Pinned);
  EXPECT_EQ(h.memory_kind(), Transfer::Pinned);
  for (std::uint64_t i = 0; i < h.words(); ++i) h.data()[i] = static_cast<std::uint32_t>(i * 2654435761u);
  DeviceRel d;
  b.upload(h, d);
  Relation back = b.host_relation(1000, 2, Transfer::Pinned);
  b.download(*d, back);
  EXPECT_TRUE(same_tuples(h, back));
}

TEST_F(RaOpenCl, ScanCrossesSeveralLevels) {
  // 300k tuples: more than 256 * 256 work-groups' counts, so the scan recurses twice.
  opencl::ClRa b(*platform_);
  RelationSpec s;
  s.rows = 300000;
  s.values = 1;
  s.keys.distinct = 100000;
  Relation a = make_relation(s, 8, 2);
  DeviceRel d, o;
  b.upload(a, d);
  b.unique(*d, "paper", o);
  Relation got(0, 1);
  b.download(*o, got);
  Relation want = ref::unique(a);
  EXPECT_TRUE(same_tuples(got, want)) << first_difference(got, want);
}

}  // namespace
}  // namespace hdb::ra
