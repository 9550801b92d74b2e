// Every host algorithm returns exactly the brute-force hits, at every error level, on every corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <random>

#include "algorithms/ngram_bits.hpp"
#include "algorithms/ngram_search.hpp"
#include "harness/errors.hpp"
#include "harness/scratch.hpp"
#include "ngram_backend.hpp"
#include "ngram_test_data.hpp"
#include "reference/ngram_reference.hpp"

namespace hdb::ngram {
namespace {

TEST(NgramBits, BitSlicedCountersMatchPlainCounts) {
  std::mt19937 rng(1);
  for (int trial = 0; trial < 200; ++trial) {
    std::uint32_t planes[kPlanes] = {};
    int counts[32] = {};
    int adds = static_cast<int>(rng() % 255);
    for (int a = 0; a < adds; ++a) {
      std::uint32_t map = rng() & rng();
      std::uint32_t lanes = window_lanes(map);
      add_lanes(planes, lanes);
      for (int s = 0; s < 32; ++s) counts[s] += ((map >> s) & 1u) || (s < 31 && ((map >> (s + 1)) & 1u));
    }
    for (int v : {-3, 0, 1, 2, adds / 2, adds, adds + 1, 255, 256}) {
      std::uint32_t want = 0;
      for (int s = 0; s < 32; ++s)
        if (counts[s] >= v) want |= 1u << s;
      ASSERT_EQ(lanes_at_least(planes, v), want) << "v=" << v;
    }
  }
}

// The CUDA kernel's 32-way directory search, with the warp ballot emulated lane by lane.
std::uint32_t lower_bound_32way(const std::vector<std::uint32_t>& a, std::uint32_t lo, std::uint32_t hi,
                                std::uint32_t key) {
  while (hi - lo > 32) {
    std::uint32_t step = probe_step(lo, hi);
    int c = 0;
    for (std::uint32_t lane = 0; lane < 32; ++lane) {
      std::uint32_t idx = lo + lane * step;
      c += idx < hi && a[idx] < key;
    }
    narrow(lo, hi, step, c);
  }
  std::uint32_t below = 0;
  for (std::uint32_t lane = 0; lane < 32; ++lane) below += lo + lane < hi && a[lo + lane] < key;
  return lo + below;
}

TEST(NgramBits, WarpSearchFindsTheLowerBound) {
  std::mt19937 rng(5);
  for (std::uint32_t n : {0u, 1u, 2u, 31u, 32u, 33u, 64u, 65u, 1000u, 1024u, 1025u, 40000u}) {
    std::vector<std::uint32_t> a;
    std::uint32_t v = 0;
    for (std::uint32_t i = 0; i < n; ++i) a.push_back(v += 1 + rng() % 3);
    for (int trial = 0; trial < 300; ++trial) {
      std::uint32_t key = rng() % (v + 3);
      std::uint32_t lo = n ? static_cast<std::uint32_t>(rng() % n) : 0, hi = n;
      auto want = static_cast<std::uint32_t>(std::lower_bound(a.begin() + lo, a.begin() + hi, key) - a.begin());
      ASSERT_EQ(lower_bound_32way(a, lo, hi, key), want) << "n=" << n << " lo=" << lo << " key=" << key;
    }
  }
}

class HostAlgorithms : public ::testing::Test {
 protected:
  void SetUp() override {
    Options o;
    o.threads = 2;
    platform_.init(o);
  }
  cpu::CpuPlatform platform_;
};

TEST_F(HostAlgorithms, EqualBruteForceAtEveryErrorLevel) {
  cpu::CpuNgram backend(platform_);
  cpu::WorkerPool pool(3);
  int device_stages = 0;
  testing::expect_exact(
      backend, {1, 9}, {0, 1, 3, 6, 12, 40},
      [&pool, &device_stages](const NgramIndex& ix, const QueryPlan& plan, const std::vector<std::uint32_t>& ref) {
        EXPECT_EQ(search_baseline(ix, plan), ref);
        EXPECT_EQ(search_binned(ix, plan), ref);
        EXPECT_EQ(cpu::search_parallel_bins(ix, plan, pool), ref);
        // The hybrid's host stages, with its device stage modelled on the host.
        HybridTimes times;
        auto on_host = [&](int from, int to, const std::vector<std::uint32_t>& cand, std::vector<std::uint32_t>& planes,
                           std::vector<std::uint8_t>& alive) {
          EXPECT_LT(from, to);
          ++device_stages;
          prune_candidates_host(ix, plan, from, to, cand, planes, alive);
        };
        EXPECT_EQ(search_hybrid(ix, plan, on_host, times), ref);
      });
  EXPECT_GT(device_stages, 100);  // the split really sends lists to the (modelled) device
}

// The device searches' chunks (chunk_queries): in order, every query once, each chunk within its
// query and list caps, a query with more lists than the cap alone, and the largest chunk's figures.
TEST(NgramChunks, ConsecutiveQueriesWithinBothCaps) {
  auto plans_of = [](std::vector<std::size_t> lists) {
    std::vector<QueryPlan> plans;
    for (std::size_t n : lists) plans.push_back({std::vector<std::uint32_t>(n, 7), static_cast<int>(n), 1, 1, 0});
    return plans;
  };
  auto shape = [](const std::vector<QueryChunk>& chunks) {
    std::vector<std::vector<std::uint64_t>> out;
    for (const QueryChunk& c : chunks) out.push_back({c.q0, c.count, c.first_list, c.lists});
    return out;
  };
  using Shape = std::vector<std::vector<std::uint64_t>>;
  EXPECT_TRUE(chunk_queries({}, 4, 100).empty());
  const std::vector<QueryPlan> plans = plans_of({3, 0, 5, 2, 9, 1});
  EXPECT_EQ(shape(chunk_queries(plans, 1, UINT64_MAX)),
            (Shape{{0, 1, 0, 3}, {1, 1, 3, 0}, {2, 1, 3, 5}, {3, 1, 8, 2}, {4, 1, 10, 9}, {5, 1, 19, 1}}));
  EXPECT_EQ(shape(chunk_queries(plans, 4, UINT64_MAX)), (Shape{{0, 4, 0, 10}, {4, 2, 10, 10}}));
  // 8 lists a chunk: query 4's 9 lists make a chunk of their own.
  const std::vector<QueryChunk> capped = chunk_queries(plans, 4, 8);
  EXPECT_EQ(shape(capped), (Shape{{0, 3, 0, 8}, {3, 1, 8, 2}, {4, 1, 10, 9}, {5, 1, 19, 1}}));
  EXPECT_EQ(largest_chunk(capped).count, 3u);
  EXPECT_EQ(largest_chunk(capped).lists, 9u);
}

TEST(NgramPool, RunsEveryItemOnceAndIsReusable) {
  cpu::WorkerPool pool(3);
  for (std::size_t n : {0u, 1u, 7u, 1000u}) {
    std::vector<int> seen(n, 0);
    pool.run(n, [&](std::size_t i) { ++seen[i]; });
    EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(n));
  }
}

TEST_F(HostAlgorithms, HitSemanticsOnHandMadeText) {
  // W = 1: one word per segment. "alpha beta" lies in segments 0-1 of article 0; article 1 holds
  // the same words 3 segments apart, so only article 0 has all 3-grams within two adjacent segments.
  TextCorpus c = testing::corpus_of({"alpha beta gamma", "alpha gamma delta beta"});
  NgramIndex ix = build_ngram_index(c, 1, 1);
  QueryPlan exact = plan_query(ix, "alpha beta", 0);
  EXPECT_EQ(reference_search(ix, exact), (std::vector<std::uint32_t>{0}));
  EXPECT_EQ(search_binned(ix, exact), (std::vector<std::uint32_t>{0}));
  // Allowing as many errors as the query has 3-grams in one of the words finds both.
  QueryPlan loose = plan_query(ix, "alpha beta", 5);
  EXPECT_EQ(search_baseline(ix, loose), (std::vector<std::uint32_t>{0, 1}));
  // No 3-gram: no hit at any error level.
  EXPECT_TRUE(search_baseline(ix, plan_query(ix, "a", 12)).empty());
  EXPECT_EQ(plan_query(ix, "", 3).n, 0);
}

// The bin engine's paths on a corpus made for them: 3 bins and a partial fourth. Bin 1 has no
// article with the rare words (an empty bin for the gathering lists); bins 0 and 3 hold three
// each among 250 articles of common words, so a common list has far more postings there than the
// bin has candidates (each candidate's posting is sought); bin 2 has the rare words everywhere
// (every posting scanned). Queries: absent 3-grams, every article a hit, k = 0, m = 1.
TEST_F(HostAlgorithms, BinnedEnginePathsEqualBruteForce) {
  std::vector<std::string> docs;
  for (int a = 0; a < 3 * 256 + 40; ++a) {
    bool rare = (a / 256 == 2) || (a / 256 != 1 && a % 256 < 3);
    docs.push_back(std::string("the cat sat on the mat ") + (rare ? "zebra quagga okapi " : "") + "and went home " +
                   std::to_string(a % 7));
  }
  TextCorpus c = testing::corpus_of(docs);
  NgramIndex ix = build_ngram_index(c, 9, 2);
  ASSERT_EQ(ix.bins(), 4u);
  cpu::WorkerPool pool(3);
  std::size_t all = docs.size();
  for (const char* q : {"zebra quagga", "zebra the cat", "the cat sat on", "okapi and went home", "xylophone",
                        "zebra xylophone", "", "q"}) {
    for (int k : {0, 1, 2, 3, 5, 12, 40}) {
      SCOPED_TRACE(std::string("query '") + q + "' k=" + std::to_string(k));
      QueryPlan plan = plan_query(ix, q, k);
      auto ref = reference_search(ix, plan);
      EXPECT_EQ(search_binned(ix, plan), ref);
      EXPECT_EQ(cpu::search_parallel_bins(ix, plan, pool), ref);
      EXPECT_EQ(search_baseline(ix, plan), ref);
      HybridTimes times;
      auto on_host = [&](int from, int to, const std::vector<std::uint32_t>& cand, std::vector<std::uint32_t>& planes,
                         std::vector<std::uint8_t>& alive) {
        prune_candidates_host(ix, plan, from, to, cand, planes, alive);
      };
      EXPECT_EQ(search_hybrid(ix, plan, on_host, times), ref);
    }
  }
  // Every article holds "the cat sat on": all are hits at k = 0, whichever path a bin takes.
  EXPECT_EQ(search_binned(ix, plan_query(ix, "the cat sat on", 0)).size(), all);
  // The rare words: bins 0, 2 and 3 only (bin 1 is never visited).
  auto rare = search_binned(ix, plan_query(ix, "zebra quagga", 0));
  EXPECT_EQ(rare.size(), 3u + 256u + 3u);
  EXPECT_TRUE(std::none_of(rare.begin(), rare.end(), [](std::uint32_t a) { return a / 256 == 1; }));
  EXPECT_EQ(gathering_bins(ix, plan_query(ix, "zebra quagga", 0)), (std::vector<std::uint32_t>{0, 2, 3}));
  // Absent 3-grams: no hit at k = 0; with one error allowed per absent 3-gram the rest decide.
  EXPECT_TRUE(search_binned(ix, plan_query(ix, "xylophone", 0)).empty());
  EXPECT_TRUE(search_binned(ix, plan_query(ix, "", 3)).empty());
}

TEST_F(HostAlgorithms, IndexBuildIsIndependentOfThreads) {
  TextCorpus c = synthetic_corpus(60000, 2);
  NgramIndex a = build_ngram_index(c, 9, 1), b = build_ngram_index(c, 9, 3);
  EXPECT_EQ(a.post_article, b.post_article);
  EXPECT_EQ(a.post_map, b.post_map);
  EXPECT_EQ(a.dir_start, b.dir_start);
  for (std::uint32_t t = 0; t < kTrigrams; ++t)
    for (std::uint32_t p = a.list_offsets[t] + 1; p < a.list_offsets[t + 1]; ++p)
      ASSERT_LT(a.post_article[p - 1], a.post_article[p]);
}

// The memory-fit checks of the device variants on a platform that reports free memory, as CUDA
// does: a device whose index copy (600 MiB here, whatever the corpus) fits its 1 GiB once but not
// twice. Without releasing the index it holds, the next size's checks (and a later variant's at the
// same size) would count it twice and skip every case but the first.
class FreeMemoryDevice : public Platform {
 public:
  static constexpr std::uint64_t kCapacity = 1ull << 30;
  explicit FreeMemoryDevice(const std::uint64_t& held) : held_(held) {}
  std::string name() const override { return "fakegpu"; }
  void init(const Options&) override {}
  nlohmann::json context() const override { return {{"name", "free-memory device (test)"}}; }
  bool has_transfers() const override { return true; }
  double measure_copy_ceiling() override { return 100.0; }

 protected:
  std::uint64_t device_memory_bytes() const override { return kCapacity - held_; }

 private:
  const std::uint64_t& held_;
};

class HeldIndexBackend : public NgramBackend {
 public:
  static constexpr std::uint64_t kIndexCopy = 600ull << 20;
  const VariantList& variant_table() const override { return table_; }
  bool on_device() const override { return true; }
  nlohmann::json load_index(const NgramIndex& index) override {
    if (held + kIndexCopy > FreeMemoryDevice::kCapacity) ++loads_over_capacity;  // the old copy was not released
    index_ = &index;
    held = kIndexCopy;
    ++loads;
    return nlohmann::json::object();
  }
  void release_index() override {
    index_ = nullptr;
    held = 0;
  }
  void plan_memory(MemoryPlan& plan, const NgramIndex&, const NgramVariant&,
                   const std::vector<QueryPlan>&) const override {
    plan.add("index copy", kIndexCopy);
  }
  Breakdown search(const NgramVariant&, const std::vector<QueryPlan>& plans, NgramSearchOut& out) override {
    if (!index_) throw DeviceError("ngram: search before load_index");
    return time_each_query(plans.size(), out, [&](std::size_t q) { out.hits[q] = search_binned(*index_, plans[q]); });
  }
  std::uint64_t held = 0;
  int loads = 0, loads_over_capacity = 0;

 private:
  const NgramIndex* index_ = nullptr;
  VariantTable<int> table_{"the fake ngram backend", {{0, {"first", {"search"}, ""}}, {1, {"second", {"search"}, ""}}}};
};

TEST(NgramMemoryFit, ChecksSeeTheDeviceWithoutTheIndexItHolds) {
  HeldIndexBackend backend;
  FreeMemoryDevice device(backend.held);
  const std::string path = test::scratch("ngram_fit.json");
  std::vector<std::string> args = {"hdb-ngram-fakegpu",
                                   "--corpus",
                                   "synthetic",
                                   "--sizes",
                                   "32K,64K",
                                   "--errors",
                                   "0,2",
                                   "--query-count",
                                   "5",
                                   "--passes",
                                   "1",
                                   "--warmup",
                                   "0",
                                   "--transfer",
                                   "pinned",
                                   "--json",
                                   path,
                                   "--quiet"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  ASSERT_EQ(ngram_main(static_cast<int>(argv.size()), argv.data(), device, backend), kExitOk);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  int device_cases = 0;
  for (const auto& r : j["results"]) {
    if (r["variant"] != "first" && r["variant"] != "second") continue;
    ++device_cases;
    EXPECT_EQ(r["status"], "ok") << r["id"] << ": " << r["reason"];
  }
  EXPECT_EQ(device_cases, 8);  // 2 variants x 2 error levels x 2 sizes
  EXPECT_GE(backend.loads, 2);
  EXPECT_EQ(backend.loads_over_capacity, 0);
}

}  // namespace
}  // namespace hdb::ngram
