#include "ngram_backend.hpp"

#include <algorithm>

#include "bench/ngram_search.hpp"
#include "harness/errors.hpp"
#include "harness/parallel.hpp"

namespace hdb::cpu {

using ngram::NgramIndex;
using ngram::QueryPlan;

std::vector<std::uint32_t> search_parallel_bins(const NgramIndex& ix, const QueryPlan& plan, int threads) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  std::vector<std::uint32_t> bins = ngram::gathering_bins(ix, plan);
  // Several chunks per thread balance bins that die early against bins that survive to the end.
  std::size_t chunks = std::min<std::size_t>(bins.size(), static_cast<std::size_t>(std::max(1, threads)) * 8);
  // Few candidate bins: a fork/join costs more than the search itself.
  constexpr std::size_t kMinBinsPerThread = 16;
  if (threads <= 1 || bins.size() < kMinBinsPerThread * static_cast<std::size_t>(threads)) {
    ngram::search_binned_range(ix, plan, bins, 0, bins.size(), hits);
    return hits;
  }
  std::vector<std::vector<std::uint32_t>> part(chunks);
  auto one = [&](std::size_t c) {
    ngram::search_binned_range(ix, plan, bins, bins.size() * c / chunks, bins.size() * (c + 1) / chunks, part[c]);
  };
#if defined(HDB_HAVE_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads)
  for (std::size_t c = 0; c < chunks; ++c) one(c);
#else
  parallel_for(chunks, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t c = b; c < e; ++c) one(c);
  });
#endif
  for (auto& p : part) hits.insert(hits.end(), p.begin(), p.end());
  return hits;
}

std::vector<NgramVariant> CpuNgram::variants() const {
  return {{"binned", false, false}, {"parallel", false, false}, {"parallel", true, false}};
}

nlohmann::json CpuNgram::load_index(const NgramIndex& index) {
  index_ = &index;
  return {{"host_index_bytes", index.bytes()}};
}

Breakdown CpuNgram::search(const NgramVariant& variant, const std::vector<QueryPlan>& plans, NgramSearchOut& out) {
  if (!index_) throw DeviceError("ngram: search before load_index");
  const NgramIndex& ix = *index_;
  if (variant.name == "binned")
    return time_each_query(plans.size(), out, [&](std::size_t q) { out.hits[q] = ngram::search_binned(ix, plans[q]); });
  if (variant.name == "parallel" && !variant.batch)
    return time_each_query(plans.size(), out,
                           [&](std::size_t q) { out.hits[q] = search_parallel_bins(ix, plans[q], platform_.threads()); });
  if (variant.name == "parallel" && variant.batch) {
    out.hits.assign(plans.size(), {});
    out.seconds.clear();
    HostTimer t;
    auto n = static_cast<std::int64_t>(plans.size());
#if defined(HDB_HAVE_OPENMP)
#pragma omp parallel for schedule(dynamic, 1) num_threads(platform_.threads())
    for (std::int64_t q = 0; q < n; ++q) out.hits[static_cast<std::size_t>(q)] = ngram::search_binned(ix, plans[static_cast<std::size_t>(q)]);
#else
    parallel_for(static_cast<std::uint64_t>(n), platform_.threads(), [&](std::uint64_t b, std::uint64_t e) {
      for (std::uint64_t q = b; q < e; ++q) out.hits[q] = ngram::search_binned(ix, plans[q]);
    });
#endif
    return Breakdown::compute_only(t.seconds());
  }
  throw DeviceError("ngram: unknown cpu variant '" + variant.name + "'");
}

}  // namespace hdb::cpu
