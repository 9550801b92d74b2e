#include "workloads/text_corpus.hpp"

#if defined(HDB_HAVE_ZLIB)
#include <zlib.h>
#endif

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sys/stat.h>

#include "harness/errors.hpp"
#include "workloads/random.hpp"

namespace hdb {

std::string normalize_text(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (unsigned char c : raw) {
    char n = ' ';
    if (c >= 'a' && c <= 'z') n = static_cast<char>(c);
    else if (c >= 'A' && c <= 'Z') n = static_cast<char>(c - 'A' + 'a');
    else if (c >= '0' && c <= '9') n = static_cast<char>(c);
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
  if (spec.vocabulary == 0 || spec.mean_words == 0) throw UsageError("synthetic corpus: vocabulary and article length must be positive");
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

TextCorpus load_text_lines(const std::string& path, std::uint64_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--corpus: cannot open '" + path + "'");
  TextCorpus c;
  c.source = "file:" + path;
  std::string line;
  while (std::getline(in, line)) {
    if (c.raw_bytes + line.size() > max_bytes) {
      c.truncated = true;
      break;
    }
    c.add(line);
  }
  if (in.bad()) throw UsageError("--corpus: error reading '" + path + "'");
  return c;
}

std::uint64_t decode_dict_base64(std::string_view s) {
  std::uint64_t v = 0;
  for (char ch : s) {
    int d;
    if (ch >= 'A' && ch <= 'Z') d = ch - 'A';
    else if (ch >= 'a' && ch <= 'z') d = ch - 'a' + 26;
    else if (ch >= '0' && ch <= '9') d = ch - '0' + 52;
    else if (ch == '+') d = 62;
    else if (ch == '/') d = 63;
    else throw UsageError(std::string("gcide.index: '") + ch + "' is not a dictd base64 digit");
    if (v >> 58) throw UsageError("gcide.index: offset '" + std::string(s) + "' is too large");
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
  std::ifstream idx(index_path);
  if (!idx) throw UsageError("gcide: cannot open '" + index_path + "'");
  // Several headwords may share one article: keep each (offset, length) once, in file order.
  std::map<std::uint64_t, std::uint64_t> articles;
  std::string line;
  std::uint64_t lineno = 0;
  while (std::getline(idx, line)) {
    ++lineno;
    if (line.rfind("00-database", 0) == 0 || line.rfind("00database", 0) == 0) continue;
    std::size_t t1 = line.find('\t'), t2 = t1 == std::string::npos ? t1 : line.find('\t', t1 + 1);
    if (t2 == std::string::npos) throw UsageError(index_path + ":" + std::to_string(lineno) + ": expected 3 tab-separated fields");
    std::uint64_t off = decode_dict_base64(std::string_view(line).substr(t1 + 1, t2 - t1 - 1));
    std::uint64_t len = decode_dict_base64(std::string_view(line).substr(t2 + 1));
    auto it = articles.find(off);
    if (it == articles.end() || it->second < len) articles[off] = len;
  }
  gzFile gz = gzopen(dict_path.c_str(), "rb");
  if (!gz) throw UsageError("gcide: cannot open '" + dict_path + "'");
  std::string dict;
  std::uint64_t need = 0;
  for (auto& [off, len] : articles) need = std::max(need, off + len);
  std::vector<char> buf(1 << 20);
  while (dict.size() < need) {
    int got = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (got < 0) {
      gzclose(gz);
      throw UsageError("gcide: '" + dict_path + "' is not a readable gzip/dictzip file");
    }
    if (got == 0) break;
    dict.append(buf.data(), static_cast<std::size_t>(got));
  }
  gzclose(gz);
  TextCorpus c;
  c.source = "gcide:" + dir;
  for (auto& [off, len] : articles) {
    if (off + len > dict.size()) throw UsageError("gcide: article at " + std::to_string(off) + " lies beyond the end of the dictionary");
    if (c.raw_bytes + len > max_bytes) {
      c.truncated = true;
      break;
    }
    c.add(std::string_view(dict).substr(off, len));
  }
  return c;
#endif
}

}  // namespace hdb
