#pragma once
// Brute-force n-gram search on the same index: every article's 32 window counts are computed from
// all the query's posting lists with plain byte counters (no phases, no pruning, no bit slicing),
// and the hits are the articles with a window count >= m. Every algorithm must return exactly this.
#include <cstdint>
#include <vector>

#include "algorithms/ngram_index.hpp"

namespace hdb::ngram {

// Sorted article ids.
std::vector<std::uint32_t> reference_search(const NgramIndex& index, const QueryPlan& plan);

}  // namespace hdb::ngram
