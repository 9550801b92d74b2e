#pragma once
// Text corpora for the n-gram search benchmark: a synthetic Zipf-vocabulary generator, a loader for
// plain text (one document per line) and one for Debian's dict-gcide (dictd format). Every document
// is stored normalized (see normalize_text) because that is what the index and the queries see.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hdb {

// Lower-case ASCII letters and digits are kept (upper case folded); every other byte becomes a
// space; runs of spaces collapse to one (a leading or trailing space is kept). No padding.
std::string normalize_text(std::string_view raw);

struct TextCorpus {
  std::string text;                          // normalized documents, back to back
  std::vector<std::uint64_t> offsets{0};     // document i is text[offsets[i], offsets[i + 1])
  std::uint64_t raw_bytes = 0;               // bytes of the source text the documents came from
  std::string source;                        // "synthetic", "gcide:<dir>", "file:<path>"
  bool truncated = false;                    // the source holds more documents than these

  std::size_t size() const { return offsets.size() - 1; }
  std::string_view doc(std::size_t i) const {
    return std::string_view(text).substr(offsets[i], offsets[i + 1] - offsets[i]);
  }
  // Appends a raw document; it is stored as " " + normalize_text(raw) + " " so that words at the
  // ends have their boundary 3-grams. Documents with no letter or digit are dropped.
  bool add(std::string_view raw);
  // The leading documents whose raw bytes add up to at most `bytes` (a prefix of this corpus).
  TextCorpus prefix(std::uint64_t bytes) const;

 private:
  std::vector<std::uint64_t> raw_sizes_;
};

struct SyntheticTextSpec {
  std::uint64_t vocabulary = 50000;  // distinct pseudo-words
  double zipf_s = 1.0;               // word-frequency exponent
  std::uint64_t mean_words = 120;    // mean article length in words (geometric-like spread)
};

// Articles of Zipf-distributed pseudo-words until `bytes` of text are reached. Deterministic in seed.
TextCorpus synthetic_corpus(std::uint64_t bytes, std::uint64_t seed, const SyntheticTextSpec& spec = {});
// One document per non-empty line, up to `max_bytes` of raw text. UsageError when unreadable.
TextCorpus load_text_lines(const std::string& path, std::uint64_t max_bytes);
// dict-gcide: <dir>/gcide.index (headword TAB base64 offset TAB base64 length) into the
// gzip-compatible <dir>/gcide.dict.dz. One document per distinct article, in file order; the
// 00-database-* metadata entries are skipped. UsageError when the files are missing or malformed.
TextCorpus load_gcide(const std::string& dir, std::uint64_t max_bytes);
// dictd's base64 number encoding (A-Z a-z 0-9 + /, most significant digit first).
std::uint64_t decode_dict_base64(std::string_view s);
bool gcide_present(const std::string& dir);

}  // namespace hdb
