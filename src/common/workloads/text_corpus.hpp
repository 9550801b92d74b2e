#pragma once
// Text corpora for the n-gram search benchmark: a synthetic Zipf-vocabulary generator, a loader for
// plain text (one document per line) and one for Debian's dict-gcide (dictd format). Every document
// is stored normalized (see normalize_text) because that is what the index and the queries see.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace hdb {

// Lower-case ASCII letters and digits are kept (upper case folded); every other byte becomes a
// space; runs of spaces collapse to one (a leading or trailing space is kept). No padding.
std::string normalize_text(std::string_view raw);

struct TextCorpus {
  std::string text;                       // normalized documents, back to back
  std::vector<std::uint64_t> offsets{0};  // document i is text[offsets[i], offsets[i + 1])
  std::uint64_t raw_bytes = 0;            // bytes of the source text the documents came from
  std::string source;                     // "synthetic", "gcide:<dir>", "file:<path>"
  bool truncated = false;                 // the source holds more documents than these

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
// One line of a text file as read_lines hands it over. Lines end at '\n'; one trailing '\r' is
// removed (CRLF files); a UTF-8 byte order mark at the start of the file is skipped.
struct LineInfo {
  std::uint64_t number = 0;  // 1-based
  std::uint64_t bytes = 0;   // the line's length (without '\n' and the trailing '\r')
  std::string text;          // the line, or its first limit + 1 bytes (at least) when longer
  bool complete = true;      // text is the whole line
  bool alnum = false;        // the line holds an ASCII letter or digit
  std::uint64_t limit = 0;   // bytes of a line kept in text; the sink may change it for later lines
};
// Returns false to stop reading.
using LineSink = std::function<bool(LineInfo&)>;
// Reads `path` line by line in chunks of 1 MiB, keeping at most `limit` bytes of each line (so a
// file without line breaks takes bounded memory). UsageError "<what>: cannot open ..." when
// unreadable.
void read_lines(const std::string& path, const std::string& what, std::uint64_t limit, const LineSink& sink);
// At most `most` bytes of `s` for a message: bytes other than printable ASCII as \xNN, and the
// length after "..." when cut.
std::string quote_text(std::string_view s, std::size_t most = 80);

// One document per line (see read_lines), up to `max_bytes` of raw text: lines with no letter or
// digit are dropped (they take nothing from the budget); the first other line that does not fit
// in what is left of the budget ends the loading (truncated). raw_bytes counts the kept lines'
// bytes without their line ends. UsageError when unreadable.
TextCorpus load_text_lines(const std::string& path, std::uint64_t max_bytes);
// dict-gcide: <dir>/gcide.index (headword TAB base64 offset TAB base64 length) into the
// gzip-compatible <dir>/gcide.dict.dz. One document per distinct offset (headwords that share an
// article share its offset; of different lengths at one offset the longest is kept), in the order
// of the offsets in the .dict file, whatever the order of the index lines. Entries whose headword
// starts with "00-" or "00database" are dictd's and GCIDE's information entries (00-database-info,
// 00-database-url, 00-gcide-..., 00-web1913-info, ...), not articles: skipped. UsageError when the
// files are missing or malformed.
TextCorpus load_gcide(const std::string& dir, std::uint64_t max_bytes);
// dictd's base64 number encoding (A-Z a-z 0-9 + /, most significant digit first).
std::uint64_t decode_dict_base64(std::string_view s);
bool gcide_present(const std::string& dir);

}  // namespace hdb
