// Corpus loaders, normalization, query drawing/mutation and the index definition.
#include <gtest/gtest.h>
#if defined(HDB_HAVE_ZLIB)
#include <zlib.h>
#endif

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <stdlib.h>

#include "bench/ngram.hpp"
#include "algorithms/ngram_index.hpp"
#include "algorithms/ngram_search.hpp"
#include "harness/errors.hpp"
#include "reference/ngram_reference.hpp"
#include "workloads/text_corpus.hpp"
#include "workloads/text_queries.hpp"

namespace hdb {
namespace {

// A new directory of this test's own under TMPDIR (mkdtemp: no other run can share it).
std::filesystem::path temp_dir(const std::string& name) {
  std::string pattern = (std::filesystem::temp_directory_path() / ("hdb-ngram-test-" + name + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  return pattern;
}

void write_file(const std::filesystem::path& p, const std::string& s) { std::ofstream(p, std::ios::binary) << s; }

#if defined(HDB_HAVE_ZLIB)
void write_gz(const std::filesystem::path& p, const std::string& s) {
  gzFile gz = gzopen(p.string().c_str(), "wb");
  gzwrite(gz, s.data(), static_cast<unsigned>(s.size()));
  gzclose(gz);
}
// dictd's base64 of a number (most significant digit first).
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

TEST(NgramText, NormalizeFoldsCaseAndCollapsesSeparators) {
  EXPECT_EQ(normalize_text("Hello,  World!42"), "hello world 42");
  EXPECT_EQ(normalize_text("  a--b  "), " a b ");
  EXPECT_EQ(normalize_text("\xc3\xa9t\xc3\xa9"), " t ");
  EXPECT_EQ(normalize_text(""), "");
}

TEST(NgramText, CorpusPadsDocumentsAndDropsEmptyOnes) {
  TextCorpus c;
  EXPECT_TRUE(c.add("The cat."));
  EXPECT_FALSE(c.add("?!"));
  EXPECT_TRUE(c.add("Dog"));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.doc(0), " the cat ");
  EXPECT_EQ(c.doc(1), " dog ");
  EXPECT_EQ(c.raw_bytes, 11u);
  TextCorpus p = c.prefix(9);
  EXPECT_EQ(p.size(), 1u);
  EXPECT_TRUE(p.truncated);
}

TEST(NgramText, DictBase64) {
  EXPECT_EQ(decode_dict_base64("A"), 0u);
  EXPECT_EQ(decode_dict_base64("Fz"), 5u * 64 + 51);
  EXPECT_EQ(decode_dict_base64("+/"), 62u * 64 + 63);
  EXPECT_THROW(decode_dict_base64("a*"), UsageError);
}

TEST(NgramText, LoadsLinesAndGcide) {
  auto d = temp_dir("load");
  {
    std::ofstream f(d / "docs.txt");
    f << "first document\n\nsecond one\nthird\n";
  }
  TextCorpus lines = load_text_lines((d / "docs.txt").string(), 1 << 20);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines.doc(1), " second one ");
  EXPECT_THROW(load_text_lines((d / "missing.txt").string(), 1 << 20), UsageError);

#if defined(HDB_HAVE_ZLIB)
  // A tiny dictd database: two headwords share the first article; metadata entries are skipped.
  std::string dict = "Apple\nA fruit.\nBanana\nAnother fruit.\n";
  gzFile gz = gzopen((d / "gcide.dict.dz").string().c_str(), "wb");
  gzwrite(gz, dict.data(), static_cast<unsigned>(dict.size()));
  gzclose(gz);
  {
    std::ofstream f(d / "gcide.index");
    f << "00-database-info\tA\tC\napple\tA\tO\napples\tA\tO\nbanana\tP\tW\n";  // O = 14, P = 15, W = 22
  }
  ASSERT_TRUE(gcide_present(d.string()));
  TextCorpus g = load_gcide(d.string(), 1 << 20);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.doc(0), " apple a fruit ");
  EXPECT_EQ(g.doc(1), " banana another fruit ");
#else
  EXPECT_FALSE(gcide_present(d.string()));
  EXPECT_THROW(load_gcide(d.string(), 1 << 20), UsageError);
#endif
  std::filesystem::remove_all(d);
}

// docs/ngram.md, "Data and queries": each rule of the loaders, one test each.

TEST(NgramLoaders, GcideArticlesAreOrderedByOffsetOneperOffset) {
#if defined(HDB_HAVE_ZLIB)
  auto d = temp_dir("gcide-order");
  const std::string a = "Apple\nA fruit.\n", b = "Banana\nAnother fruit.\n", c = "Cherry\nA red fruit.\n";
  write_gz(d / "gcide.dict.dz", a + b + c);
  const std::uint64_t oa = 0, ob = a.size(), oc = a.size() + b.size();
  // Index lines in headword order, not offset order: cherry's article comes last in the .dict file.
  // Two headwords share banana's offset with different lengths: the longest is kept.
  write_file(d / "gcide.index", "aardvark\t" + b64(oc) + "\t" + b64(c.size()) + "\n" +   //
                                    "apple\t" + b64(oa) + "\t" + b64(a.size()) + "\n" +  //
                                    "banana\t" + b64(ob) + "\t" + b64(7) + "\n" +        //
                                    "bananas\t" + b64(ob) + "\t" + b64(b.size()) + "\n");
  TextCorpus g = load_gcide(d.string(), 1 << 20);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_EQ(g.doc(0), " apple a fruit ");
  EXPECT_EQ(g.doc(1), " banana another fruit ");  // the longer of the two lengths at that offset
  EXPECT_EQ(g.doc(2), " cherry a red fruit ");
  EXPECT_EQ(g.raw_bytes, a.size() + b.size() + c.size());
  std::filesystem::remove_all(d);
#else
  GTEST_SKIP() << "no zlib";
#endif
}

TEST(NgramLoaders, GcideSkipsEveryInformationEntry) {
#if defined(HDB_HAVE_ZLIB)
  auto d = temp_dir("gcide-info");
  const std::string info = "This file was converted from the original database\n", url = "http://gcide\n",
                    word = "Zebra\nA striped horse.\n", bond = "007\nA spy.\n";
  write_gz(d / "gcide.dict.dz", info + url + word + bond);
  const std::uint64_t oi = 0, ou = info.size(), ow = ou + url.size(), ob = ow + word.size();
  // As GCIDE's index: 00-gcide-* and 00-web1913-info point at the same texts as 00-database-*.
  write_file(d / "gcide.index", "00-database-info\t" + b64(oi) + "\t" + b64(info.size()) + "\n" + "00-database-url\t" +
                                    b64(ou) + "\t" + b64(url.size()) + "\n" + "00-gcide-long\t" + b64(oi) + "\t" +
                                    b64(info.size()) + "\n" + "00-gcide-url\t" + b64(ou) + "\t" + b64(url.size()) +
                                    "\n" + "00-web1913-info\t" + b64(oi) + "\t" + b64(info.size()) + "\n" +
                                    "00databasealphabet\t" + b64(ou) + "\t" + b64(url.size()) + "\n" + "007\t" +
                                    b64(ob) + "\t" + b64(bond.size()) + "\n" +  // a headword, not an entry
                                    "zebra\t" + b64(ow) + "\t" + b64(word.size()) + "\n");
  TextCorpus g = load_gcide(d.string(), 1 << 20);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g.doc(0), " zebra a striped horse ");
  EXPECT_EQ(g.doc(1), " 007 a spy ");
  std::filesystem::remove_all(d);
#else
  GTEST_SKIP() << "no zlib";
#endif
}

TEST(NgramLoaders, DroppedDocumentsTakeNothingFromTheBudget) {
  auto d = temp_dir("budget");
  // Lines without a letter or digit are dropped: they count neither in raw_bytes nor towards the
  // size budget, and one longer than the budget does not end the loading.
  write_file(d / "docs.txt", "--- !!! ---\nab cd\n" + std::string(5000, '*') + "\nef gh\n" + "ij kl mn\nop\n");
  TextCorpus c = load_text_lines((d / "docs.txt").string(), 12);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c.doc(0), " ab cd ");
  EXPECT_EQ(c.doc(1), " ef gh ");
  EXPECT_EQ(c.raw_bytes, 10u);
  // The first kept line that does not fit ends the loading, even if a later one would fit.
  EXPECT_TRUE(c.truncated);
  TextCorpus all = load_text_lines((d / "docs.txt").string(), 1000);
  EXPECT_EQ(all.size(), 4u);
  EXPECT_FALSE(all.truncated);
  EXPECT_EQ(all.raw_bytes, 5u + 5 + 8 + 2);
  // prefix() follows the same rule on a loaded corpus.
  TextCorpus p = all.prefix(12);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_EQ(p.raw_bytes, 10u);
  EXPECT_TRUE(p.truncated);
  // A huge line with letters beyond the budget ends the loading without being held whole.
  write_file(d / "long.txt", "ab cd\n" + std::string(8u << 20, 'x') + "\nef\n");
  TextCorpus l = load_text_lines((d / "long.txt").string(), 1000);
  EXPECT_EQ(l.size(), 1u);
  EXPECT_TRUE(l.truncated);
  std::filesystem::remove_all(d);
}

TEST(NgramLoaders, LineEndsAreTheSameForCorpusAndQueries) {
  auto d = temp_dir("crlf");
  // One trailing CR is removed from every line of both files, a UTF-8 BOM at the start is skipped,
  // empty lines are skipped, and the last line needs no newline.
  write_file(d / "lf.txt", "ab cd\n\nef gh\nij");
  write_file(d / "crlf.txt",
             "\xEF\xBB\xBF"
             "ab cd\r\n\r\nef gh\r\nij");
  TextCorpus lf = load_text_lines((d / "lf.txt").string(), 1000),
             crlf = load_text_lines((d / "crlf.txt").string(), 1000);
  EXPECT_EQ(lf.text, crlf.text);
  EXPECT_EQ(lf.raw_bytes, 12u);
  EXPECT_EQ(crlf.raw_bytes, 12u);  // neither the CRs nor the BOM count
  auto q_lf = load_queries((d / "lf.txt").string()), q_crlf = load_queries((d / "crlf.txt").string());
  EXPECT_EQ(q_lf, (std::vector<std::string>{"ab cd", "ef gh", "ij"}));
  EXPECT_EQ(q_crlf, q_lf);
  // A query line without a 3-gram is still a query (it has no hits); a corpus line without a
  // letter or digit is dropped.
  write_file(d / "punct.txt", "?!\nab\n");
  EXPECT_EQ(load_queries((d / "punct.txt").string()).size(), 2u);
  EXPECT_EQ(load_text_lines((d / "punct.txt").string(), 1000).size(), 1u);
  std::filesystem::remove_all(d);
}

TEST(NgramLoaders, QueryFileLimits) {
  auto d = temp_dir("qlimits");
  auto error_of = [&](const std::string& text) {
    write_file(d / "q.txt", text);
    try {
      load_queries((d / "q.txt").string());
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string many;
  for (std::size_t i = 0; i <= kMaxQueries; ++i) many += "query " + std::to_string(i) + "\n";
  std::string e = error_of(many);
  EXPECT_NE(e.find("q.txt:" + std::to_string(kMaxQueries + 1) + ": more than 10000 queries"), std::string::npos) << e;
  e = error_of("ab\n" + std::string(kMaxQueryBytes + 1, 'a') + "\n");
  EXPECT_NE(e.find("q.txt:2: a query of 65537 bytes; at most 65536"), std::string::npos) << e.substr(0, 300);
  EXPECT_LT(e.size(), 400u);
  // More than 255 distinct 3-grams: refused when the file is read, naming the line.
  std::string wide;
  for (int i = 0; i < 300; ++i) wide += std::to_string(1000 + i) + " ";
  EXPECT_GT(distinct_trigrams(wide), 255);
  e = error_of("fine\n" + wide + "\n");
  EXPECT_NE(e.find("q.txt:2: the query '1000 1001"), std::string::npos) << e;
  EXPECT_NE(e.find("distinct 3-grams; at most 255"), std::string::npos) << e;
  EXPECT_EQ(error_of("\n\r\n"), "--queries: '" + (d / "q.txt").string() + "' holds no query (one per non-empty line)");
  std::filesystem::remove_all(d);
}

TEST(NgramSemantics, ExactQuotationsOverThreeSegmentsAreMissedAtKZero) {
  // 64 words, W = 9: segment s holds words 9s .. 9s+8. Words are "q000" .. "q063", so the digits'
  // 3-grams ("008", "018") occur in one word each.
  std::string doc;
  for (int w = 0; w < 64; ++w) doc += (w ? " q0" : "q0") + std::string(w < 10 ? "0" : "") + std::to_string(w);
  TextCorpus c;
  c.add(doc);
  ngram::NgramIndex ix = ngram::build_ngram_index(c, 9, 1);
  auto words = [&](int from, int to) {  // the exact quotation of words from..to
    std::string q;
    for (int w = from; w <= to; ++w)
      q += (w > from ? " q0" : "q0") + std::string(w < 10 ? "0" : "") + std::to_string(w);
    return q;
  };
  auto hits = [&](const std::string& q, int k) {
    ngram::QueryPlan p = ngram::plan_query(ix, q, k);
    auto ref = ngram::reference_search(ix, p);
    EXPECT_EQ(ngram::search_baseline(ix, p), ref) << q << " k=" << k;
    EXPECT_EQ(ngram::search_binned(ix, p), ref) << q << " k=" << k;
    return ref.size();
  };
  // Words 9..26: segments 1 and 2, one window: found at k = 0.
  EXPECT_EQ(hits(words(9, 26), 0), 1u);
  // Words 8..18: segments 0, 1, 2. Window {1,2} lacks the 3-grams only word 8 has ("008", "08 ");
  // window {0,1} lacks "018" (word 18 is in segment 2): no window holds them all, so the article
  // it was quoted from is no hit at k = 0 — the paper's two-segment rule, kept on purpose.
  EXPECT_EQ(hits(words(8, 18), 0), 0u);
  EXPECT_EQ(hits(words(8, 18), 1), 1u);  // found once one 3-gram may be missing
}

TEST(NgramText, SyntheticCorpusIsDeterministicAndSized) {
  TextCorpus a = synthetic_corpus(20000, 7), b = synthetic_corpus(20000, 7), c = synthetic_corpus(20000, 8);
  EXPECT_EQ(a.text, b.text);
  EXPECT_NE(a.text, c.text);
  EXPECT_LE(a.raw_bytes, 20000u);
  EXPECT_GT(a.raw_bytes, 15000u);
  EXPECT_GT(a.size(), 5u);
}

TEST(NgramText, QueriesComeFromTheCorpusAndMutationsStayWithinK) {
  TextCorpus c = synthetic_corpus(50000, 3);
  auto qs = draw_queries(c, 40, 11, 7, 110);
  ASSERT_EQ(qs.size(), 40u);
  for (const auto& q : qs) {
    EXPECT_GE(q.size(), 7u);
    EXPECT_LE(q.size(), 110u);
    EXPECT_NE(c.text.find(q), std::string::npos);
    EXPECT_EQ(mutate_query(q, 0, 1), q);
    for (int k : {1, 4, 12}) {
      std::string m = mutate_query(q, k, static_cast<std::uint64_t>(k));
      EXPECT_LE(new_trigrams(q, m), k);
    }
  }
  int changed = 0;
  for (std::size_t j = 0; j < qs.size(); ++j) changed += new_trigrams(qs[j], mutate_query(qs[j], 6, j)) > 0;
  EXPECT_GT(changed, 30);
}

TEST(NgramText, TrigramsCarrySegmentMaps) {
  // 3 words, W = 1: one word per segment. A space belongs to the word before it; a 3-gram's
  // segment is that of its middle character.
  auto tg = ngram::document_trigrams(" ab cd ef ", 1);
  auto map_of = [&](const char* s) {
    for (auto& [t, m] : tg)
      if (t == ngram::trigram_id(s)) return m;
    return 0u;
  };
  EXPECT_EQ(map_of(" ab"), 1u);
  EXPECT_EQ(map_of("b c"), 1u);  // middle is the space after "ab"
  EXPECT_EQ(map_of(" cd"), 2u);
  EXPECT_EQ(map_of("cd "), 2u);
  EXPECT_EQ(map_of("f  "), 0u);
  EXPECT_EQ(map_of("ef "), 4u);
  // Repeated 3-grams OR their segments: "ab ab ab" with W = 1.
  auto rep = ngram::document_trigrams(" ab ab ab ", 1);
  for (auto& [t, m] : rep)
    if (t == ngram::trigram_id(" ab")) {
      EXPECT_EQ(m, 7u);
    }
  // 64 words with W = 1: two words per segment, so word 63 lands in segment 31.
  std::string doc = " ";
  for (int w = 0; w < 64; ++w) doc += "w" + std::to_string(w) + " ";
  auto many = ngram::document_trigrams(doc, 1);
  std::uint32_t all = 0;
  for (auto& [t, m] : many) all |= m;
  EXPECT_EQ(all, 0xffffffffu);
  EXPECT_TRUE(ngram::document_trigrams(" a", 9).empty());
}

TEST(NgramText, ErrorLevelLists) {
  EXPECT_EQ(parse_error_levels("0-3"), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(parse_error_levels("12,0,3,3"), (std::vector<int>{0, 3, 12}));
  EXPECT_THROW(parse_error_levels("a"), UsageError);
  EXPECT_THROW(parse_error_levels("5-2"), UsageError);
  EXPECT_THROW(parse_error_levels("300"), UsageError);
  EXPECT_THROW(parse_error_levels(""), UsageError);
}

}  // namespace
}  // namespace hdb
