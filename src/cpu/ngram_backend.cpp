#include "ngram_backend.hpp"

#include <algorithm>

#include "algorithms/ngram_search.hpp"
#include "harness/errors.hpp"

namespace hdb::cpu {

using ngram::NgramIndex;
using ngram::QueryPlan;

std::vector<std::uint32_t> search_parallel_bins(const NgramIndex& ix, const QueryPlan& plan, WorkerPool& pool) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  std::vector<std::uint32_t> bins = ngram::gathering_bins(ix, plan);
  // Few candidate bins: a fork/join costs more than the search itself.
  constexpr std::size_t kMinBinsPerThread = 16;
  auto threads = static_cast<std::size_t>(pool.threads());
  if (threads <= 1 || bins.size() < kMinBinsPerThread * threads) {
    ngram::search_binned_range(ix, plan, bins, 0, bins.size(), hits);
    return hits;
  }
  // Several chunks per thread balance bins that die early against bins that survive to the end.
  std::size_t chunks = std::min(bins.size(), threads * 8);
  std::vector<std::vector<std::uint32_t>> part(chunks);
  pool.run(chunks, [&](std::size_t c) {
    ngram::search_binned_range(ix, plan, bins, bins.size() * c / chunks, bins.size() * (c + 1) / chunks, part[c]);
  });
  for (auto& p : part) hits.insert(hits.end(), p.begin(), p.end());
  return hits;
}

WorkerPool& CpuNgram::pool() {
  if (!pool_ || pool_->threads() != platform_.threads()) pool_ = std::make_unique<WorkerPool>(platform_.threads());
  return *pool_;
}

CpuNgram::CpuNgram(const CpuPlatform& platform)
    : platform_(platform),
      table_("CPU ngram", {{CpuNgramVariant::Binned, {"binned", {"search"}, ""}},
                           {CpuNgramVariant::Parallel, {"parallel", {"search", "batch"}, ""}}}) {}

nlohmann::json CpuNgram::load_index(const NgramIndex& index) {
  index_ = &index;
  return {{"host_index_bytes", index.bytes()}};
}

Breakdown CpuNgram::search(const NgramVariant& variant, const std::vector<QueryPlan>& plans, NgramSearchOut& out) {
  if (!index_) throw DeviceError("ngram: search before load_index");
  const NgramIndex& ix = *index_;
  switch (table_.id(variant.name)) {
    case CpuNgramVariant::Binned: break;
    case CpuNgramVariant::Parallel:
      if (!variant.batch)
        return time_each_query(plans.size(), out,
                               [&](std::size_t q) { out.hits[q] = search_parallel_bins(ix, plans[q], pool()); });
      out.hits.assign(plans.size(), {});
      out.seconds.clear();
      HostTimer t;
      pool().run(plans.size(), [&](std::size_t q) { out.hits[q] = ngram::search_binned(ix, plans[q]); });
      return Breakdown::compute_only(t.seconds());
  }
  return time_each_query(plans.size(), out, [&](std::size_t q) { out.hits[q] = ngram::search_binned(ix, plans[q]); });
}

}  // namespace hdb::cpu
