// hdb-export-ngram: writes the n-gram benchmark's data for one corpus size exactly as hdb-ngram-*
// makes it (same options, same seeds: docs/ngram.md), so a peer (PostgreSQL pg_trgm,
// scripts/hdb/peers/pg_trgm.py) runs on the same documents and queries and compares its hits with
// nsearch's. Output: JSON lines (docs/peers.md, "pg_trgm"):
//   {"format": "hdb-ngram-export/1", "size_bytes", "seed", "corpus", "articles", "text_bytes",
//    "truncated", "words_per_segment", "errors": [k...], "queries"}             one header line
//   {"doc": id, "text": "..."}                                                     one per article
//   {"k": k, "query": j, "text": "...", "normalized": "...", "trigrams": n, "hits": [ids]}
// Documents are the stored, normalized text (lower-case ASCII letters, digits, single spaces, one
// space at each end): what nsearch indexes. "hits" are the serial brute-force reference's
// (ngram_reference), which every nsearch algorithm must equal. Exit 0 ok, 2 usage, 77 a size the
// benchmark skips (no document fits), 1 other errors.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "algorithms/ngram_index.hpp"
#include "bench/ngram.hpp"
#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "harness/session.hpp"
#include "harness/sizes.hpp"
#include "reference/ngram_reference.hpp"
#include "workloads/text_corpus.hpp"
#include "workloads/text_queries.hpp"

namespace {

using hdb::UsageError;

struct ExportOptions {
  std::string size = "1M", seed = "42", errors = "0", out = "-";
  std::string corpus = "auto", gcide_dir = "/usr/share/dictd", queries_file;
  std::size_t query_count = 100, query_min = 7, query_max = 110;
  int words_per_segment = 9;
  std::uint64_t vocabulary = 50000;
  double zipf_s = 1.0;
};

// Non-UTF-8 bytes of a query file become U+FFFD in "text"; "normalized" is always ASCII.
std::string line(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

hdb::TextCorpus make_corpus(const ExportOptions& o, std::uint64_t size, std::uint64_t seed) {
  std::string kind = o.corpus;
  if (kind == "auto") kind = hdb::gcide_present(o.gcide_dir) ? "gcide" : "synthetic";
  if (kind == "synthetic") {
    hdb::SyntheticTextSpec spec;
    spec.vocabulary = o.vocabulary;
    spec.zipf_s = o.zipf_s;
    return hdb::synthetic_corpus(size, hdb::derive_seed(seed, "ngram-corpus", size), spec);
  }
  hdb::TextCorpus full = kind == "gcide" ? hdb::load_gcide(o.gcide_dir, size) : hdb::load_text_lines(o.corpus, size);
  return full.prefix(size);
}

int run(const ExportOptions& o) {
  const std::uint64_t size = hdb::parse_size(o.size, "--size");
  const std::uint64_t seed = hdb::parse_seed(o.seed);
  const std::vector<int> levels = hdb::parse_error_levels(o.errors);
  if (o.query_count == 0 || o.query_count > hdb::kMaxQueries)
    throw UsageError("--query-count: 1.." + std::to_string(hdb::kMaxQueries));
  if (o.query_min < 3 || o.query_max < o.query_min || o.query_max > 250)
    throw UsageError("--query-min/--query-max: 3 <= min <= max <= 250");
  if (o.words_per_segment < 1) throw UsageError("--words-per-segment: must be at least 1");

  hdb::TextCorpus corpus = make_corpus(o, size, seed);
  if (corpus.size() == 0) throw hdb::SkipCase("no document fits in " + std::to_string(size) + " bytes");
  hdb::ngram::NgramIndex index = hdb::ngram::build_ngram_index(corpus, o.words_per_segment, 1);
  std::vector<std::string> base =
      o.queries_file.empty() ? hdb::draw_queries(corpus, o.query_count, hdb::derive_seed(seed, "ngram-queries", size),
                                                 o.query_min, o.query_max)
                             : hdb::load_queries(o.queries_file);

  std::ofstream file;
  if (o.out != "-") {
    file.open(o.out, std::ios::trunc | std::ios::binary);
    if (!file) throw UsageError("--out: cannot write '" + o.out + "'");
  }
  std::ostream& out = o.out == "-" ? std::cout : file;
  out << line({{"format", "hdb-ngram-export/1"},
               {"size_bytes", size},
               {"seed", seed},
               {"corpus", corpus.source},
               {"articles", corpus.size()},
               {"text_bytes", corpus.raw_bytes},
               {"truncated", corpus.truncated},
               {"words_per_segment", o.words_per_segment},
               {"errors", levels},
               {"queries", base.size()}});
  for (std::size_t d = 0; d < corpus.size(); ++d) out << line({{"doc", d}, {"text", std::string(corpus.doc(d))}});
  for (int k : levels) {
    for (std::size_t j = 0; j < base.size(); ++j) {
      // As bench/ngram.cpp: drawn queries are mutated per level, a query file is used as it is.
      std::string q =
          o.queries_file.empty()
              ? hdb::mutate_query(base[j], k,
                                  hdb::derive_seed(seed, "ngram-mutate", j * 256 + static_cast<std::uint64_t>(k)))
              : base[j];
      hdb::ngram::QueryPlan plan = hdb::ngram::plan_query(index, q, k);
      out << line({{"k", k},
                   {"query", j},
                   {"text", q},
                   {"normalized", hdb::normalize_text(q)},
                   {"trigrams", plan.n},
                   {"hits", hdb::ngram::reference_search(index, plan)}});
    }
  }
  out.flush();
  if (!out) throw std::runtime_error("cannot write '" + o.out + "'");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  ExportOptions o;
  CLI::App app{"hdb-export-ngram: the n-gram benchmark's corpus, queries and nsearch hits for one size, as JSON lines"};
  app.add_option("--size", o.size, "corpus size (bytes of source text, as hdb-ngram-* --sizes: 32K, 1M, ...)");
  app.add_option("--seed", o.seed, "run seed (as --seed of the executables)");
  app.add_option("--errors", o.errors, "error levels k whose queries and hits to write: list and ranges");
  app.add_option("--out", o.out, "output file ('-': stdout)");
  app.add_option("--corpus", o.corpus, "auto, gcide, synthetic, or a text file (as hdb-ngram-*)");
  app.add_option("--gcide-dir", o.gcide_dir, "folder with gcide.index and gcide.dict.dz");
  app.add_option("--queries", o.queries_file, "query file, one per line (used unmutated at every level)");
  app.add_option("--query-count", o.query_count, "queries drawn from the corpus");
  app.add_option("--query-min", o.query_min, "shortest drawn query in characters");
  app.add_option("--query-max", o.query_max, "longest drawn query in characters");
  app.add_option("--words-per-segment", o.words_per_segment, "W: minimum words per segment");
  app.add_option("--vocabulary", o.vocabulary, "synthetic corpus: distinct words");
  app.add_option("--zipf", o.zipf_s, "synthetic corpus: Zipf exponent");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  try {
    return run(o);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "hdb-export-ngram: error: %s\n", e.what());
    return 2;
  } catch (const hdb::SkipCase& e) {  // what hdb-ngram-* records as a skipped size
    std::fprintf(stderr, "hdb-export-ngram: skipped: %s\n", e.what());
    return 77;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hdb-export-ngram: error: %s\n", e.what());
    return 1;
  }
}
