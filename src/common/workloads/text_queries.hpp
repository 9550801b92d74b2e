#pragma once
// Queries for the n-gram search: substrings drawn from a corpus (as the paper: random pieces of
// the database, 7 to 110 characters) and mutated to an error level, or read from a file.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/text_corpus.hpp"

namespace hdb {

// `count` substrings of lengths uniform in [min_len, max_len] from random documents long enough
// to hold min_len characters. SkipCase when no document is that long.
std::vector<std::string> draw_queries(const TextCorpus& corpus, std::size_t count, std::uint64_t seed,
                                      std::size_t min_len, std::size_t max_len);

// Random character substitutions, deletions and insertions applied to `query` while the number of
// distinct 3-grams of the result that the original does not contain stays <= k, stopping when it
// reaches k (or after a bounded number of tries). So the source of the query still has all but at
// most k of the mutated query's 3-grams: with allowed error k the source text is findable.
std::string mutate_query(const std::string& query, int k, std::uint64_t seed);
// Distinct 3-grams of normalize_text(mutated) absent from normalize_text(original).
int new_trigrams(const std::string& original, const std::string& mutated);

// The most queries a run takes (--query-count, lines of --queries): every query's hit list is
// kept for every error level (on GCIDE about 20 KB per query and level at k = 12), so a larger
// count would only exhaust the memory.
constexpr std::size_t kMaxQueries = 10000;
// The longest line of a query file.
constexpr std::size_t kMaxQueryBytes = 65536;

// One query per line (read_lines: a trailing CR removed, a UTF-8 byte order mark skipped); empty
// lines are skipped, every other line is a query as it is (one without a 3-gram has no hits).
// UsageError naming file and line when unreadable, empty, with more than kMaxQueries queries, a
// line over kMaxQueryBytes, or a query with more than 255 distinct 3-grams.
std::vector<std::string> load_queries(const std::string& path);
// Distinct 3-grams of normalize_text(query) (what the search counts).
int distinct_trigrams(std::string_view query);

}  // namespace hdb
