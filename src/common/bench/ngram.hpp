#pragma once
// ngram: nsearch approximate text search (docs/ngram.md). A 3-gram index with 32-segment maps over
// a text corpus; queries with an allowed error k (missing 3-grams) from 0 to 12. The common code
// builds corpus, index and queries, runs the host baseline every speed-up is relative to, verifies
// every algorithm against a brute-force search on the same index and reports per-query statistics.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "algorithms/ngram_index.hpp"
#include "harness/main.hpp"
#include "harness/memory_plan.hpp"
#include "harness/session.hpp"

namespace hdb {

// One case's variant: a name of the backend's table (or the common code's "baseline"), and whether
// it is the "batch" test of that name (else "search").
struct NgramVariant {
  std::string name;
  bool batch = false;   // one call runs all queries together (no per-query times)
  bool device = false;  // runs on an accelerator: the index is copied there by load_index
  // Host memory the device variants copy queries and bitmaps through: they keep pinned staging
  // buffers, so a --transfer pageable case of a device variant is skipped with this reason.
  static constexpr const char* kPinnedOnly = "the n-gram device variants stage their copies in pinned memory only";
  // The host baseline of the paper that every speed-up is relative to: the common code's own variant.
  static constexpr const char* kBaseline = "baseline";
  bool baseline() const { return name == kBaseline; }
};

struct NgramSearchOut {
  std::vector<std::vector<std::uint32_t>> hits;  // per query, ascending article ids
  std::vector<double> seconds;                   // per query wall time (not filled in batch mode)
};

class NgramBackend {
 public:
  virtual ~NgramBackend() = default;
  // The backend's variants, each with the tests it implements: "search" (one query at a time, per
  // query times) and "batch" (all queries in one call).
  virtual const VariantList& variant_table() const = 0;
  // Whether the variants run on an accelerator (the index is copied there by load_index).
  virtual bool on_device() const = 0;
  // Once per corpus size, before its cases, untimed: copies the index to the device. Returns
  // figures for the results (device bytes, upload seconds). Throws SkipCase when it does not fit.
  virtual nlohmann::json load_index(const ngram::NgramIndex& index) = 0;
  // Frees what load_index and search keep (the device copy of the index, the work arrays, the
  // per-search buffers) and forgets the index, so that a memory-fit check sees the device without
  // them: the common code calls it before it moves to the next corpus size (whose host index
  // replaces the one loaded), and before it checks a case whose plan counts, a second time, the
  // index the backend holds (then loads it again). The cpu backend holds nothing but a pointer.
  virtual void release_index() = 0;
  // Adds to `plan`, by name, every buffer that load_index(index) and search(variant, plans) allocate
  // in the platform's memory (the device's). The common code checks the plan before either runs
  // and skips a case that does not fit with the list. The cpu backend adds nothing: its index is
  // the host's, which the common code counts on that platform.
  virtual void plan_memory(MemoryPlan& plan, const ngram::NgramIndex& index, const NgramVariant& variant,
                           const std::vector<ngram::QueryPlan>& plans) const = 0;
  // Runs every plan once; out.hits and (unless batch) out.seconds are sized to plans.size().
  virtual Breakdown search(const NgramVariant& variant, const std::vector<ngram::QueryPlan>& plans,
                           NgramSearchOut& out) = 0;
};

// A backend's cases' variants, from its table: its "search" variants, then its "batch" ones.
std::vector<NgramVariant> ngram_variants(const NgramBackend& backend);

// Per-query timing helper for host and device variants: runs fn(q) for each plan, timing each.
template <class F>
Breakdown time_each_query(std::size_t queries, NgramSearchOut& out, F&& fn) {
  out.hits.assign(queries, {});
  out.seconds.assign(queries, 0.0);
  Breakdown b;
  for (std::size_t q = 0; q < queries; ++q) {
    HostTimer t;
    fn(q);
    out.seconds[q] = t.seconds();
    b.total += out.seconds[q];
  }
  b.kernel = b.total;
  return b;
}

// Memory-plan items shared by the device backends: a copy of the index's six arrays, Figure 1's
// dense work arrays (per article a 3-gram map, kPlanes counter words and an alive flag) with the
// hit bitmap of one query, and the packed queries (ngram::pack_queries) a segmented search uploads.
void plan_index_copy(MemoryPlan& plan, const ngram::NgramIndex& index);
void plan_dense_work(MemoryPlan& plan, const ngram::NgramIndex& index);
void plan_packed_queries(MemoryPlan& plan, const std::vector<ngram::QueryPlan>& plans);

// Parses an error-level list: "0-12", "0,3,6,9,12", "2-4,8". UsageError on bad text or values
// outside 0..kMaxQueryTrigrams.
std::vector<int> parse_error_levels(const std::string& text);

int ngram_main(int argc, char** argv, Platform& platform, NgramBackend& backend);

}  // namespace hdb
