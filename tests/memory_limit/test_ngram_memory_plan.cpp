// The device n-gram backends' memory plans (NgramBackend::plan_memory, issue 18) count what they
// allocate: the index copy, the work arrays load_index makes, and the segmented and tuned searches'
// scratch (packed queries, one hit-bitmap row per query in a batch, the tuned search's bin ranges),
// byte for byte. Built once per backend (HDB_TEST_CUDA: CUDA, else OpenCL); skipped where the
// machine has no such device.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/device_suite.hpp"
#include "ngram_backend.hpp"
#include "workloads/text_queries.hpp"

namespace hdb::ngram {
namespace {

#ifdef HDB_TEST_CUDA
using Backend = cuda::CudaNgram;
using PlatformT = cuda::CudaPlatform;
constexpr std::uint64_t kWorkCopies = 2;  // Figure 1's dense arrays and the hybrid's candidate arrays
#define HDB_SUITE NgramMemoryPlanCuda
#else
using Backend = opencl::OpenClNgram;
using PlatformT = opencl::OpenClPlatform;
constexpr std::uint64_t kWorkCopies = 1;
#define HDB_SUITE NgramMemoryPlanOpenCl
#endif

class HDB_SUITE : public test::DeviceSuite<PlatformT> {};

TEST_F(HDB_SUITE, CountsTheIndexWorkArraysAndSearchScratch) {
  Backend backend(*platform_);
  TextCorpus syn = synthetic_corpus(60000, 3, SyntheticTextSpec{500, 1.0, 40});
  NgramIndex ix = build_ngram_index(syn, 9, 2);
  std::vector<QueryPlan> plans;
  std::uint64_t lists = 0, most_lists = 0;
  for (const std::string& q : draw_queries(syn, 12, 4, 7, 60)) {
    plans.push_back(plan_query(ix, q, 2));
    lists += plans.back().lists.size();
    most_lists = std::max<std::uint64_t>(most_lists, plans.back().lists.size());
  }
  const std::uint64_t a = ix.articles, row_bytes = std::uint64_t{ix.bins()} * kBinSize / 8, nq = plans.size();
  // Per article: a 3-gram map, kPlanes counter words and an alive flag; one hit-bitmap row.
  const std::uint64_t work = kWorkCopies * a * (4 + 4 * kPlanes + 1) + row_bytes;
  nlohmann::json figures = backend.load_index(ix);
  EXPECT_EQ(figures["device_index_bytes"].get<std::uint64_t>(), ix.bytes());
  EXPECT_EQ(figures["device_work_bytes"].get<std::uint64_t>(), work);
  for (const NgramVariant& v : ngram_variants(backend)) {
    MemoryPlan plan;
    backend.plan_memory(plan, ix, v, plans);
    std::uint64_t scratch = 0;
    if (v.name == "gpu-segmented" || v.name == "gpu-tuned") {
      scratch = 4 * lists + 4 * (nq + 1) + 4 * nq;
#ifdef HDB_TEST_CUDA
      if (v.batch) scratch += row_bytes * nq;  // per search the one-query row is a work array
      // The tuned search's bin ranges, 8 bytes per list and bin: a batch's lists (one chunk here),
      // or the longest query's.
      if (v.name == "gpu-tuned") scratch += 8 * (v.batch ? lists : most_lists) * ix.bins();
#else
      scratch += row_bytes * (v.batch ? nq : 1);
#endif
    }
    EXPECT_EQ(plan.total(), ix.bytes() + work + scratch)
        << v.name << (v.batch ? " (batch)" : "") << ": " << plan.describe(0);
    NgramSearchOut out;
    backend.search(v, plans, out);
    EXPECT_EQ(out.hits.size(), plans.size());
  }
}

}  // namespace
}  // namespace hdb::ngram
