#pragma once
// Shared inputs of the n-gram search tests: small corpora with the edge cases every algorithm
// must get right, and query sets at several error levels.
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "bench/ngram.hpp"
#include "algorithms/ngram_index.hpp"
#include "reference/ngram_reference.hpp"
#include "workloads/text_corpus.hpp"
#include "workloads/text_queries.hpp"

namespace hdb::ngram::testing {

struct QueryCase {
  std::string name;
  TextCorpus corpus;
  std::vector<std::string> queries;
};

inline TextCorpus corpus_of(const std::vector<std::string>& docs) {
  TextCorpus c;
  for (const auto& d : docs) c.add(d);
  return c;
}

// Corpora: random (several bins, size not a multiple of 256), one article, all articles equal,
// long articles whose segments hold more than W words.
inline std::vector<QueryCase> query_cases() {
  std::vector<QueryCase> out;
  TextCorpus syn = synthetic_corpus(120000, 5, SyntheticTextSpec{800, 1.0, 60});
  auto drawn = draw_queries(syn, 30, 9, 7, 110);
  std::vector<std::string> qs = drawn;
  for (std::size_t j = 0; j < drawn.size(); ++j) qs.push_back(mutate_query(drawn[j], 6, j));
  qs.push_back("");                                      // no 3-gram
  qs.push_back("ab");                                    // no 3-gram either
  qs.push_back("qqqxxxzzz");                             // 3-grams absent from the index
  qs.push_back(std::string(syn.doc(0).substr(0, 110)));  // an article start
  out.push_back({"synthetic", syn, qs});

  out.push_back({"one article",
                 corpus_of({"the quick brown fox jumps over the lazy dog"}),
                 {"quick brown", "lazy cat", "the", "dog", "zzzz"}});

  std::vector<std::string> same(300, "all articles are equal here");
  out.push_back({"all equal", corpus_of(same), {"articles are", "equal here", "nothing like it", "are equal"}});

  std::vector<std::string> longdocs;
  for (int d = 0; d < 40; ++d) {
    std::string doc;
    for (int w = 0; w < 400; ++w) doc += "w" + std::to_string((w * 7 + d * 13) % 97) + " ";
    longdocs.push_back(doc);
  }
  out.push_back({"long articles", corpus_of(longdocs), {"w5 w12 w19", "w1 w8 w15 w22 w29", "w96 w6"}});
  return out;
}

// Every variant of `backend` on every query case, for each W and error level, must return the
// brute-force hits; `also` (optional) checks further algorithms query by query.
using ExtraCheck = std::function<void(const NgramIndex&, const QueryPlan&, const std::vector<std::uint32_t>&)>;
inline void expect_exact(NgramBackend& backend, std::initializer_list<int> widths, std::initializer_list<int> levels,
                         const ExtraCheck& also = {}) {
  for (const auto& c : query_cases()) {
    for (int w : widths) {
      NgramIndex ix = build_ngram_index(c.corpus, w, 2);
      backend.load_index(ix);
      for (int k : levels) {
        std::vector<QueryPlan> plans;
        for (const auto& q : c.queries) plans.push_back(plan_query(ix, q, k));
        std::vector<std::vector<std::uint32_t>> ref;
        for (const auto& p : plans) ref.push_back(reference_search(ix, p));
        std::string where = c.name + " W=" + std::to_string(w) + " k=" + std::to_string(k);
        for (std::size_t q = 0; also && q < plans.size(); ++q) {
          SCOPED_TRACE(where + " query '" + c.queries[q] + "'");
          also(ix, plans[q], ref[q]);
        }
        for (const NgramVariant& v : ngram_variants(backend)) {
          NgramSearchOut out;
          backend.search(v, plans, out);
          EXPECT_EQ(out.hits, ref) << where << " " << v.name << (v.batch ? " (batch)" : "");
          if (!v.batch) {
            EXPECT_EQ(out.seconds.size(), plans.size());
          }
        }
      }
    }
  }
}

}  // namespace hdb::ngram::testing
