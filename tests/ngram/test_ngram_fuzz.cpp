// Fuzz pass over the n-gram loaders (issue 15): thousands of deterministic, seeded mutations of a
// corpus file, a query file and a tiny dictd database (index and compressed dictionary) —
// truncations, bit flips, inserted and deleted bytes, huge lines, line-break changes, random bytes.
// Every case must load (then the corpus is well formed, and an index built on it answers the
// loaded queries as the brute force does) or throw UsageError with a short message; anything else
// is a failure. Run by CTest as fault.ngram.fuzz (label "fault"); HDB_FUZZ_CASES changes the count.
#include <gtest/gtest.h>
#if defined(HDB_HAVE_ZLIB)
#include <zlib.h>
#endif

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include <stdlib.h>

#include "algorithms/ngram_index.hpp"
#include "algorithms/ngram_search.hpp"
#include "harness/errors.hpp"
#include "reference/ngram_reference.hpp"
#include "common/fuzz.hpp"
#include "workloads/random.hpp"
#include "workloads/text_corpus.hpp"
#include "workloads/text_queries.hpp"

namespace hdb {
namespace {

namespace fs = std::filesystem;

using test::make_temp_dir;
using test::write_file;

// The damage a corpus, query or dictd file takes: the shared kinds, plus separators moved and BOMs.
class Mutator : public test::Mutator {
 public:
  using test::Mutator::Mutator;

  std::string mutate(std::string s) {
    const int rounds = 1 + static_cast<int>(below(3));
    for (int r = 0; r < rounds; ++r) {
      const std::size_t pos = below(s.size() + 1);
      switch (below(10)) {
        case 0: truncate(s, pos); break;
        case 1: flip_bits(s); break;
        case 2: insert_random(s, pos); break;
        case 3: erase_range(s, pos); break;
        case 4: insert_run(s, pos, "aZ9 -\t\r\n\x00\xff+/", std::size_t{1} << 20); break;
        case 5: duplicate_range(s, pos); break;
        case 6:  // line breaks, tabs and CRs moved
          for (std::size_t k = 0, m = 1 + below(6); k < m && !s.empty(); ++k) {
            static const char seps[] = "\n\r\t";
            s[below(s.size())] = seps[below(3)];
          }
          break;
        case 7: s.insert(0, below(2) ? std::string("\xEF\xBB\xBF") : std::string("\xFF\xFE")); break;
        case 8: random_bytes(s); break;
        default: to_crlf(s); break;
      }
    }
    return s;
  }
};

// The corpus is well formed: documents " word word ... " of [a-z0-9 ], sizes within the budget.
void check_corpus(const TextCorpus& c, std::uint64_t budget, int i) {
  ASSERT_LE(c.raw_bytes, budget) << "case " << i;
  ASSERT_EQ(c.offsets.front(), 0u);
  ASSERT_EQ(c.offsets.back(), c.text.size());
  for (std::size_t d = 0; d < c.size(); ++d) {
    std::string_view doc = c.doc(d);
    ASSERT_GE(doc.size(), 3u) << "case " << i;
    ASSERT_EQ(doc.front(), ' ');
    ASSERT_EQ(doc.back(), ' ');
    for (char ch : doc) ASSERT_TRUE((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == ' ') << "case " << i;
  }
}

void expect_message(const UsageError& e, const std::string& dir, int i) {
  const std::string msg = e.what();
  ASSERT_FALSE(msg.empty()) << "case " << i;
  ASSERT_LT(msg.size(), 600u) << "case " << i << ": " << msg.substr(0, 300);
  ASSERT_NE(msg.find(dir), std::string::npos) << "case " << i << ": the message names no file: " << msg;
}

int fuzz_cases() {
  const char* n = std::getenv("HDB_FUZZ_CASES");
  return n ? std::atoi(n) : 2000;
}

TEST(NgramFuzz, CorpusAndQueryFilesLoadOrFailWithAMessage) {
  const fs::path dir = make_temp_dir("hdb-ngram-fuzz");
  std::string docs, queries;
  TextCorpus syn = synthetic_corpus(20000, 3, SyntheticTextSpec{300, 1.0, 20});
  for (std::size_t d = 0; d < syn.size(); ++d) docs += std::string(syn.doc(d).substr(1)) + (d % 5 ? "\n" : ".\r\n");
  for (const auto& q : draw_queries(syn, 20, 4, 7, 60)) queries += q + "\n";
  const std::uint64_t budgets[] = {0, 50, 1000, 8000, UINT64_MAX};
  const int cases = fuzz_cases();
  int corpus_loaded = 0, queries_loaded = 0, queries_refused = 0;
  for (int i = 0; i < cases; ++i) {
    Mutator m(splitmix64(0x6e6772616d667a7aull + static_cast<std::uint64_t>(i)));
    const std::string d = m.mutate(docs), q = m.mutate(queries);
    write_file(dir / "docs.txt", d);
    write_file(dir / "queries.txt", q);
    const std::uint64_t budget = budgets[m.below(5)];
    TextCorpus c;
    try {
      c = load_text_lines((dir / "docs.txt").string(), budget);
      ++corpus_loaded;
      check_corpus(c, budget, i);
    } catch (const UsageError& e) {
      expect_message(e, dir.string(), i);
    } catch (const std::exception& e) {
      FAIL() << "case " << i << ": corpus: " << typeid(e).name() << ": " << e.what();
    }
    std::vector<std::string> qs;
    try {
      qs = load_queries((dir / "queries.txt").string());
      ++queries_loaded;
    } catch (const UsageError& e) {
      ++queries_refused;
      expect_message(e, dir.string(), i);
    } catch (const std::exception& e) {
      FAIL() << "case " << i << ": queries: " << typeid(e).name() << ": " << e.what();
    }
    // Every 20th case: the index on the fuzzed corpus answers the fuzzed queries as the brute force.
    if (i % 20 == 0 && c.size() && !qs.empty()) {
      ngram::NgramIndex ix = ngram::build_ngram_index(c, 9, 1);
      for (std::size_t j = 0; j < qs.size() && j < 5; ++j) {
        ngram::QueryPlan p = ngram::plan_query(ix, qs[j], static_cast<int>(j));
        ASSERT_EQ(ngram::search_binned(ix, p), ngram::reference_search(ix, p)) << "case " << i << " query " << j;
      }
    }
  }
  std::printf("fuzz: %d cases; corpus loaded %d; queries loaded %d, refused %d\n", cases, corpus_loaded, queries_loaded,
              queries_refused);
  EXPECT_EQ(corpus_loaded, cases);  // a readable text file always loads: any bytes are text
  EXPECT_GT(queries_loaded, cases / 2);
  fs::remove_all(dir);
}

#if defined(HDB_HAVE_ZLIB)
std::string gzip(const std::string& s) {
  // gzopen/gzwrite through a file keeps this to the API the loader uses.
  const fs::path tmp = make_temp_dir("hdb-ngram-fuzz");
  gzFile gz = gzopen((tmp / "x.gz").string().c_str(), "wb");
  gzwrite(gz, s.data(), static_cast<unsigned>(s.size()));
  gzclose(gz);
  std::ifstream in(tmp / "x.gz", std::ios::binary);
  std::string out((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  fs::remove_all(tmp);
  return out;
}

std::string b64(std::uint64_t v) {
  static const char* d = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  do {
    out.insert(out.begin(), d[v % 64]);
    v /= 64;
  } while (v);
  return out;
}
#endif

TEST(NgramFuzz, GcideDatabaseLoadsOrFailsWithAMessage) {
#if !defined(HDB_HAVE_ZLIB)
  GTEST_SKIP() << "no zlib";
#else
  const fs::path dir = make_temp_dir("hdb-ngram-fuzz");
  TextCorpus syn = synthetic_corpus(6000, 9, SyntheticTextSpec{200, 1.0, 12});
  std::string dict, index = "00-database-info\tA\tK\n";
  for (std::size_t d = 0; d < syn.size(); ++d) {
    std::string article = "Headword" + std::to_string(d) + "\n" + std::string(syn.doc(d)) + "\n";
    index += "hw" + std::to_string(d) + "\t" + b64(dict.size()) + "\t" + b64(article.size()) + "\n";
    dict += article;
  }
  const std::string gz = gzip(dict);
  const int cases = fuzz_cases() / 2;
  int loaded = 0, refused = 0;
  for (int i = 0; i < cases; ++i) {
    Mutator m(splitmix64(0x6763696465667a7aull + static_cast<std::uint64_t>(i)));
    const int which = static_cast<int>(m.below(3));  // the index, the dictionary, or both
    write_file(dir / "gcide.index", which != 1 ? m.mutate(index) : index);
    write_file(dir / "gcide.dict.dz", which != 0 ? m.mutate(gz) : gz);
    const std::uint64_t budget = m.below(2) ? UINT64_MAX : 2000;
    try {
      TextCorpus c = load_gcide(dir.string(), budget);
      ++loaded;
      check_corpus(c, budget, i);
    } catch (const UsageError& e) {
      ++refused;
      expect_message(e, dir.string(), i);
    } catch (const std::exception& e) {
      FAIL() << "case " << i << ": " << typeid(e).name() << ": " << e.what();
    }
  }
  std::printf("fuzz: %d dictd cases, %d loaded, %d refused with a message\n", cases, loaded, refused);
  EXPECT_GT(loaded, 10);
  EXPECT_GT(refused, 10);
  fs::remove_all(dir);
#endif
}

}  // namespace
}  // namespace hdb
