#pragma once
// The host n-gram search algorithms (docs/ngram.md), shared by the benchmark and the backends:
// every executable runs the baseline (speed-ups are relative to it), the CPU backend runs the
// binned engine and the CUDA hybrid reuses the binned pruning.
#include <cstdint>
#include <functional>
#include <vector>

#include "algorithms/ngram_index.hpp"

namespace hdb::ngram {

// The paper's baseline: one sorted candidate list for the whole database. Gathering merges the
// first g posting lists into it; pruning walks each further list in full against the candidates
// and drops those that can no longer reach m.
std::vector<std::uint32_t> search_baseline(const NgramIndex& index, const QueryPlan& plan);

// Bins touched by the gathering lists (ascending): the only bins that can hold hits.
std::vector<std::uint32_t> gathering_bins(const NgramIndex& index, const QueryPlan& plan);

// State of one bin of 256 articles for the CPU engine: the bin's candidates (ascending slots), each
// with one byte counter per window (32 bytes: two 16-byte SIMD registers) and its score, the
// largest of its window counts. Each list adds at most one to a window, so a score rises by at most
// one per list and is kept exactly with one compare per posting; the pruning test after a list is
// then a byte compare of the score, and dead articles need no cleaning (their counters are never
// read again). Counters and scores are meaningful for candidates only.
struct BinState {
  typedef std::uint8_t Bytes16 __attribute__((vector_size(16)));
  Bytes16 counts[kBinSize][2];
  std::uint8_t score[kBinSize];
  std::uint8_t cand[kBinSize];        // candidate slots, ascending
  int alive = 0;                      // number of candidates in cand
  std::uint64_t seen[kBinSize / 64];  // gathering: slots that have a posting so far
  BinState();
};

// Processes lists [from, to) of the plan for bin `bin`; from 0 starts the bin afresh, a later
// `from` continues from the candidates in `st` (set by the caller). Stops early when the bin has no
// candidate left; returns whether any is left. `cursor` holds one directory position per plan
// list, advanced monotonically as bins ascend.
bool search_bin(const NgramIndex& index, const QueryPlan& plan, std::uint32_t bin, int from, int to, BinState& st,
                std::vector<std::uint32_t>& cursor);
// Appends the candidates of a bin (article ids, ascending) to `hits`.
void append_alive(const BinState& st, std::uint32_t bin, std::vector<std::uint32_t>& hits);
// Fresh directory cursors for a plan (at the start of each list's directory).
std::vector<std::uint32_t> start_cursors(const NgramIndex& index, const QueryPlan& plan);

// The paper's optimized CPU engine: bins of 256 articles processed separately; a bin leaves the
// search as soon as its candidate list is empty, so most of the large lists is never read.
std::vector<std::uint32_t> search_binned(const NgramIndex& index, const QueryPlan& plan);
// The same on bins [bins[lo], bins[hi]) only (for parallel callers).
void search_binned_range(const NgramIndex& index, const QueryPlan& plan, const std::vector<std::uint32_t>& bins,
                         std::size_t lo, std::size_t hi, std::vector<std::uint32_t>& hits);

// The hybrid CPU/GPU algorithm's host side (the paper's five stages): 1. gathering on the CPU,
// binned; 2. the candidates (ascending ids, counters as structure-of-arrays: plane k of candidate x
// at planes[k * c + x], alive flags all 1) go to `prune`, which is 3. the initial pruning with the
// intermediate lists [g, h) (on the GPU in the CUDA backend) and updates counters and flags;
// 4. final pruning on the CPU, binned, with the lists [h, n); 5. the hit list. The intermediate
// lists end before the first list present in more than half the articles: the least
// discriminative lists are left to the CPU, whose bins have mostly emptied by then. When there is
// no intermediate list the query runs binned on the CPU and `prune` is not called.
using CandidatePrune = std::function<void(int from, int to, const std::vector<std::uint32_t>& cand,
                                          std::vector<std::uint32_t>& planes, std::vector<std::uint8_t>& alive)>;
struct HybridTimes {
  double gather_s = 0, final_s = 0;
};
int hybrid_split(const NgramIndex& index, const QueryPlan& plan);
std::vector<std::uint32_t> search_hybrid(const NgramIndex& index, const QueryPlan& plan, const CandidatePrune& prune,
                                         HybridTimes& times);
// Stage 3 on the host (a model of the device stage, used by the tests).
void prune_candidates_host(const NgramIndex& index, const QueryPlan& plan, int from, int to,
                           const std::vector<std::uint32_t>& cand, std::vector<std::uint32_t>& planes,
                           std::vector<std::uint8_t>& alive);

// Queries packed for a device: query q's lists are lists[off[q], off[q + 1]), its m is m[q].
struct PackedQueries {
  std::vector<std::uint32_t> lists, off{0};
  std::vector<std::int32_t> m;
};
PackedQueries pack_queries(const std::vector<QueryPlan>& plans);

// Consecutive queries a device searches in one launch: queries [q0, q0 + count), whose lists are
// the packed lists [first_list, first_list + lists).
struct QueryChunk {
  std::size_t q0 = 0, count = 0;
  std::uint64_t first_list = 0, lists = 0;
};
// The chunks of `plans`, in order: at most max_queries queries and at most max_lists lists each,
// except that a query is a chunk of its own whatever its lists.
std::vector<QueryChunk> chunk_queries(const std::vector<QueryPlan>& plans, std::size_t max_queries,
                                      std::uint64_t max_lists);
// The most queries and the most lists of any one chunk.
QueryChunk largest_chunk(const std::vector<QueryChunk>& chunks);

// Device algorithms return one bit per article (word w, bit i: article 32 w + i); the ids of the
// set bits, ascending.
std::vector<std::uint32_t> bitmap_hits(const std::uint32_t* words, std::size_t count);

}  // namespace hdb::ngram
