// Corpus loaders, normalization, query drawing/mutation and the index definition.
#include <gtest/gtest.h>
#if defined(HDB_HAVE_ZLIB)
#include <zlib.h>
#endif

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench/ngram.hpp"
#include "algorithms/ngram_index.hpp"
#include "harness/errors.hpp"
#include "workloads/text_corpus.hpp"
#include "workloads/text_queries.hpp"

namespace hdb {
namespace {

std::filesystem::path temp_dir(const std::string& name) {
  auto d = std::filesystem::temp_directory_path() / ("hdb-ngram-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

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
