#pragma once
// The nsearch 3-gram index (docs/ngram.md): for every 3-gram a posting list of (article id,
// 32-bit segment map), sorted by article id, plus a bin directory per list: one (bin, first
// posting) entry for each bin of 256 articles the list touches, so that binned algorithms find a
// bin's postings without reading the rest of the list.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "algorithms/ngram_bits.hpp"
#include "workloads/text_corpus.hpp"

namespace hdb::ngram {

constexpr std::uint32_t kAlphabet = 37;  // space, a-z, 0-9 (normalized text)
constexpr std::uint32_t kTrigrams = kAlphabet * kAlphabet * kAlphabet;

// Code of a normalized character (0 for space).
inline std::uint32_t char_code(char c) {
  if (c >= 'a' && c <= 'z') return static_cast<std::uint32_t>(c - 'a' + 1);
  if (c >= '0' && c <= '9') return static_cast<std::uint32_t>(c - '0' + 27);
  return 0;
}
inline std::uint32_t trigram_id(const char* p) {
  return (char_code(p[0]) * kAlphabet + char_code(p[1])) * kAlphabet + char_code(p[2]);
}

struct NgramIndex {
  std::uint32_t articles = 0;
  int words_per_segment = 9;
  std::vector<std::uint32_t> list_offsets;  // kTrigrams + 1: list t is postings [off[t], off[t+1])
  std::vector<std::uint32_t> post_article;  // sorted by article within each list
  std::vector<std::uint32_t> post_map;      // bit s: the 3-gram occurs in segment s
  std::vector<std::uint32_t> dir_offsets;   // kTrigrams + 1: directory entries of list t
  std::vector<std::uint32_t> dir_bin;       // bin (article / 256) of the entry, ascending
  std::vector<std::uint32_t> dir_start;     // absolute index of the bin's first posting

  std::uint32_t bins() const { return (articles + kBinSize - 1) / kBinSize; }
  std::uint32_t list_size(std::uint32_t t) const { return list_offsets[t + 1] - list_offsets[t]; }
  std::uint64_t postings() const { return post_article.size(); }
  std::uint64_t bytes() const;  // all arrays above
  // Postings [begin, end) of list t in bin b via the directory (empty when absent).
  void bin_range(std::uint32_t t, std::uint32_t b, std::uint32_t& begin, std::uint32_t& end) const;
};

// Builds the index; articles are the corpus documents in order (ids 0..n-1). `threads` > 1 builds
// in parallel with an identical result. Throws SkipCase when the postings exceed 2^32.
NgramIndex build_ngram_index(const TextCorpus& corpus, int words_per_segment, int threads);

// The (3-gram, segment map) pairs of one normalized document, sorted by 3-gram: the definition
// the index is built from, exposed so tests can check it on hand-made text.
std::vector<std::pair<std::uint32_t, std::uint32_t>> document_trigrams(std::string_view doc, int words_per_segment);

// A query ready to run: its distinct 3-grams ordered from the shortest posting list to the
// longest (ties by 3-gram id), n of them; an article is a hit when one window holds at least m of
// them, m = max(1, n - k). The first g = n - m + 1 lists are the gathering phase.
struct QueryPlan {
  std::vector<std::uint32_t> lists;
  int n = 0, m = 0, g = 0;
  std::uint64_t posting_bytes = 0;  // bytes of the query's posting lists (articles + maps)
};
// Throws UsageError when the normalized query has more than kMaxQueryTrigrams distinct 3-grams.
QueryPlan plan_query(const NgramIndex& index, std::string_view query, int k);

}  // namespace hdb::ngram
