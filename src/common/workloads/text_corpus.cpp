#include "workloads/text_corpus.hpp"

#if defined(HDB_HAVE_ZLIB)
#include <zlib.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sys/stat.h>

#include "harness/errors.hpp"
#include "workloads/random.hpp"

namespace hdb {

std::string normalize_text(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (unsigned char c : raw) {
    char n = ' ';
    if (c >= 'a' && c <= 'z')
      n = static_cast<char>(c);
    else if (c >= 'A' && c <= 'Z')
      n = static_cast<char>(c - 'A' + 'a');
    else if (c >= '0' && c <= '9')
      n = static_cast<char>(c);
    if (n == ' ' && !out.empty() && out.back() == ' ') continue;
    out.push_back(n);
  }
  return out;
}

bool TextCorpus::add(std::string_view raw) {
  std::string norm = normalize_text(raw);
  if (!norm.empty() && norm.back() == ' ') norm.pop_back();
  if (!norm.empty() && norm.front() == ' ') norm.erase(0, 1);
  if (norm.empty()) return false;
  text.push_back(' ');
  text += norm;
  text.push_back(' ');
  offsets.push_back(text.size());
  raw_sizes_.push_back(raw.size());
  raw_bytes += raw.size();
  return true;
}

TextCorpus TextCorpus::prefix(std::uint64_t bytes) const {
  TextCorpus out;
  out.source = source;
  std::uint64_t raw = 0;
  std::size_t n = 0;
  while (n < size() && raw + raw_sizes_[n] <= bytes) raw += raw_sizes_[n++];
  out.text = text.substr(0, offsets[n]);
  out.offsets.assign(offsets.begin(), offsets.begin() + static_cast<std::ptrdiff_t>(n) + 1);
  out.raw_sizes_.assign(raw_sizes_.begin(), raw_sizes_.begin() + static_cast<std::ptrdiff_t>(n));
  out.raw_bytes = raw;
  out.truncated = truncated || n < size();
  return out;
}

namespace {

// Pseudo-words alternate consonants and vowels so that their 3-grams look like a language's:
// a few very common, a long tail of rare ones.
std::string pseudo_word(std::uint64_t seed, std::uint64_t rank) {
  static const char* cons = "bcdfghjklmnprstvwz";
  static const char* vows = "aeiouy";
  std::uint64_t r = rand_at(seed, rank);
  std::size_t len = 2 + bounded(r, 9) + (rank > 1000 ? 1 : 0);
  std::string w;
  bool vowel = (r >> 20) & 1;
  for (std::size_t i = 0; i < len; ++i) {
    std::uint64_t x = rand_at(seed ^ 0x5bd1e995u, rank * 16 + i);
    w.push_back(vowel ? vows[bounded(x, 6)] : cons[bounded(x, 18)]);
    vowel = !vowel;
  }
  return w;
}

}  // namespace

TextCorpus synthetic_corpus(std::uint64_t bytes, std::uint64_t seed, const SyntheticTextSpec& spec) {
  if (spec.vocabulary == 0 || spec.mean_words == 0)
    throw UsageError("synthetic corpus: vocabulary and article length must be positive");
  TextCorpus c;
  c.source = "synthetic";
  std::vector<std::string> vocab(spec.vocabulary);
  for (std::uint64_t r = 0; r < spec.vocabulary; ++r) vocab[r] = pseudo_word(seed ^ 0x766f636162ull, r);
  ZipfSampler zipf(spec.vocabulary, spec.zipf_s);
  std::uint64_t article_seed = seed ^ 0x61727469636c65ull;
  std::string doc;
  for (std::uint64_t a = 0;; ++a) {
    // Article lengths: exponential around the mean, at least 3 words.
    double u = uniform01(rand_at(article_seed, a));
    auto words = static_cast<std::uint64_t>(3 + -std::log1p(-u) * static_cast<double>(spec.mean_words));
    doc.clear();
    std::uint64_t word_seed = rand_at(article_seed ^ 0x77, a);
    for (std::uint64_t w = 0; w < words; ++w) {
      if (w) doc.push_back(' ');
      doc += vocab[zipf.sample(word_seed, w) - 1];
    }
    if (c.raw_bytes + doc.size() > bytes) {
      c.truncated = true;
      break;
    }
    c.add(doc);
  }
  return c;
}

namespace {

bool is_alnum(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

}  // namespace

std::string quote_text(std::string_view s, std::size_t most) {
  std::string out;
  for (std::size_t i = 0; i < s.size() && i < most; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      static const char* hex = "0123456789ABCDEF";
      out += "\\x";
      out.push_back(hex[c >> 4]);
      out.push_back(hex[c & 15]);
    }
  }
  if (s.size() > most) out += "... (" + std::to_string(s.size()) + " bytes)";
  return out;
}

void read_lines(const std::string& path, const std::string& what, std::uint64_t limit, const LineSink& sink) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw UsageError(what + ": cannot open '" + path + "'");
  std::vector<char> buf(std::size_t{1} << 20);
  LineInfo line;
  line.limit = limit;
  std::uint64_t total = 0;  // bytes of the current line so far
  char last = 0;            // its last byte
  bool first = true, go_on = true;
  auto finish = [&] {
    ++line.number;
    line.bytes = total;
    if (total && last == '\r') {
      --line.bytes;
      if (line.text.size() > line.bytes) line.text.pop_back();
    }
    line.complete = line.text.size() == line.bytes;
    go_on = sink(line);
    line.text.clear();
    line.alnum = false;
    total = 0;
    last = 0;
  };
  while (go_on) {
    std::size_t got = std::fread(buf.data(), 1, buf.size(), f.get());
    if (got == 0) {
      if (std::ferror(f.get())) throw UsageError(what + ": error reading '" + path + "'");
      break;
    }
    std::size_t i = 0;
    if (first) {
      first = false;
      if (got >= 3 && std::memcmp(buf.data(), "\xEF\xBB\xBF", 3) == 0) i = 3;  // a UTF-8 byte order mark
    }
    while (i < got && go_on) {
      const char* b = buf.data() + i;
      const char* nl = static_cast<const char*>(std::memchr(b, '\n', got - i));
      const std::size_t n = nl ? static_cast<std::size_t>(nl - b) : got - i;
      // Keep at most limit bytes (+1 for a trailing CR) of the line; classify all of it.
      const std::uint64_t keep = line.limit >= UINT64_MAX - 1 ? UINT64_MAX : line.limit + 1;
      if (line.text.size() < keep)
        line.text.append(b, static_cast<std::size_t>(std::min<std::uint64_t>(n, keep - line.text.size())));
      for (std::size_t j = 0; j < n && !line.alnum; ++j) line.alnum = is_alnum(static_cast<unsigned char>(b[j]));
      if (n) last = b[n - 1];
      total += n;
      i += n;
      if (nl) {
        ++i;
        finish();
      }
    }
  }
  if (go_on && total) finish();  // a last line without '\n'
}

TextCorpus load_text_lines(const std::string& path, std::uint64_t max_bytes) {
  TextCorpus c;
  c.source = "file:" + path;
  // Only what still fits the budget is kept of a line: a longer line with a letter or digit ends
  // the loading; one without is dropped (it takes nothing from the budget) and loading goes on.
  read_lines(path, "--corpus", max_bytes, [&](LineInfo& line) {
    if (line.alnum) {
      if (c.raw_bytes + line.bytes > max_bytes) {
        c.truncated = true;
        return false;
      }
      c.add(line.text);
    }
    line.limit = max_bytes - c.raw_bytes;
    return true;
  });
  return c;
}

std::uint64_t decode_dict_base64(std::string_view s) {
  std::uint64_t v = 0;
  for (char ch : s) {
    int d;
    if (ch >= 'A' && ch <= 'Z')
      d = ch - 'A';
    else if (ch >= 'a' && ch <= 'z')
      d = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9')
      d = ch - '0' + 52;
    else if (ch == '+')
      d = 62;
    else if (ch == '/')
      d = 63;
    else
      throw UsageError("gcide.index: '" + quote_text(std::string_view(&ch, 1)) + "' in '" + quote_text(s) +
                       "' is not a dictd base64 digit");
    if (v >> 58) throw UsageError("gcide.index: number '" + quote_text(s) + "' is too large");
    v = v * 64 + static_cast<std::uint64_t>(d);
  }
  return v;
}

bool gcide_present(const std::string& dir) {
#if !defined(HDB_HAVE_ZLIB)
  (void)dir;
  return false;  // unreadable without zlib
#else
  struct stat st {};
  return stat((dir + "/gcide.index").c_str(), &st) == 0 && stat((dir + "/gcide.dict.dz").c_str(), &st) == 0;
#endif
}

TextCorpus load_gcide(const std::string& dir, std::uint64_t max_bytes) {
#if !defined(HDB_HAVE_ZLIB)
  (void)max_bytes;
  throw UsageError("gcide: this build has no zlib to read '" + dir + "/gcide.dict.dz'");
#else
  std::string index_path = dir + "/gcide.index", dict_path = dir + "/gcide.dict.dz";
  // Several headwords may share one article: one per offset (the longest length), by offset.
  std::map<std::uint64_t, std::uint64_t> articles;
  read_lines(index_path, "gcide", 4096, [&](LineInfo& line) {
    const std::string where = index_path + ":" + std::to_string(line.number);
    if (line.bytes > 4096) throw UsageError(where + ": a line longer than 4096 bytes is no dictd index entry");
    const std::string& l = line.text;
    if (l.empty()) return true;
    if (l.rfind("00-", 0) == 0 || l.rfind("00database", 0) == 0) return true;  // information entries
    std::size_t t1 = l.find('\t'), t2 = t1 == std::string::npos ? t1 : l.find('\t', t1 + 1);
    if (t2 == std::string::npos)
      throw UsageError(where + ": expected 3 tab-separated fields (headword, offset, length) in '" + quote_text(l) +
                       "'");
    std::size_t t3 = l.find('\t', t2 + 1);  // a 4th field (dictfmt --index-keep-orig) is ignored
    std::uint64_t off = 0, len = 0;
    try {
      off = decode_dict_base64(std::string_view(l).substr(t1 + 1, t2 - t1 - 1));
      len = decode_dict_base64(std::string_view(l).substr(t2 + 1, t3 == std::string::npos ? t3 : t3 - t2 - 1));
    } catch (const UsageError& e) {
      throw UsageError(where + ": " + e.what());
    }
    if (len > (std::uint64_t{1} << 40) || off > (std::uint64_t{1} << 40))
      throw UsageError(where + ": offset or length beyond 1 TiB in '" + quote_text(l) + "'");
    auto it = articles.find(off);
    if (it == articles.end() || it->second < len) articles[off] = len;
    return true;
  });
  gzFile gz = gzopen(dict_path.c_str(), "rb");
  if (!gz) throw UsageError("gcide: cannot open '" + dict_path + "'");
  std::unique_ptr<gzFile_s, int (*)(gzFile)> closer(gz, &gzclose);
  // The dictionary is decompressed only as far as the articles taken need.
  std::string dict;
  std::vector<char> buf(1 << 20);
  bool at_end = false;
  auto extend_to = [&](std::uint64_t need) {
    while (dict.size() < need && !at_end) {
      int got = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
      if (got < 0) throw UsageError("gcide: '" + dict_path + "' is not a readable gzip/dictzip file");
      if (got == 0) at_end = true;
      dict.append(buf.data(), static_cast<std::size_t>(got));
    }
  };
  TextCorpus c;
  c.source = "gcide:" + dir;
  for (auto& [off, len] : articles) {
    extend_to(off + len);
    if (off + len > dict.size())
      throw UsageError("gcide: article at " + std::to_string(off) + " (" + std::to_string(len) +
                       " bytes) lies beyond the end of '" + dict_path + "' (" + std::to_string(dict.size()) +
                       " bytes)");
    std::string_view article = std::string_view(dict).substr(off, len);
    // As for text files: an article with no letter or digit is dropped and takes nothing from the
    // budget; the first other one that does not fit ends the loading.
    if (std::none_of(article.begin(), article.end(), [](char ch) { return is_alnum(static_cast<unsigned char>(ch)); }))
      continue;
    if (c.raw_bytes + len > max_bytes) {
      c.truncated = true;
      break;
    }
    c.add(article);
  }
  return c;
#endif
}

}  // namespace hdb
