#include "reference/ngram_reference.hpp"

#include <algorithm>

namespace hdb::ngram {

std::vector<std::uint32_t> reference_search(const NgramIndex& index, const QueryPlan& plan) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  // 32 byte counters per article (counts <= n <= 255), plus the articles touched. The counters
  // are kept between calls and only the touched ones are cleared: verification runs thousands of
  // queries, and a fresh 32-bytes-per-article array each time cost more than the search.
  thread_local std::vector<std::uint8_t> counts;
  counts.resize(static_cast<std::size_t>(index.articles) * 32, 0);
  std::vector<std::uint32_t> touched;
  for (std::uint32_t t : plan.lists) {
    for (std::uint32_t p = index.list_offsets[t]; p < index.list_offsets[t + 1]; ++p) {
      std::uint32_t a = index.post_article[p], map = index.post_map[p];
      std::uint8_t* c = &counts[static_cast<std::size_t>(a) * 32];
      bool fresh = true;
      for (int s = 0; s < 32; ++s) fresh = fresh && c[s] == 0;
      if (fresh) touched.push_back(a);
      for (int s = 0; s < 32; ++s) {
        bool here = (map >> s) & 1u;
        bool next = s < 31 && ((map >> (s + 1)) & 1u);
        if (here || next) ++c[s];
      }
    }
  }
  for (std::uint32_t a : touched) {
    std::uint8_t* c = &counts[static_cast<std::size_t>(a) * 32];
    if (*std::max_element(c, c + 32) >= plan.m) hits.push_back(a);
    std::fill(c, c + 32, std::uint8_t{0});
  }
  std::sort(hits.begin(), hits.end());
  return hits;
}

}  // namespace hdb::ngram
