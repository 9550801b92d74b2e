#include "workloads/text_queries.hpp"

#include <algorithm>

#include "algorithms/ngram_bits.hpp"
#include "harness/errors.hpp"
#include "workloads/random.hpp"

namespace hdb {

std::vector<std::string> draw_queries(const TextCorpus& corpus, std::size_t count, std::uint64_t seed,
                                      std::size_t min_len, std::size_t max_len) {
  std::vector<std::size_t> usable;
  for (std::size_t d = 0; d < corpus.size(); ++d)
    if (corpus.doc(d).size() >= min_len) usable.push_back(d);
  if (usable.empty()) throw SkipCase("no document of the corpus has " + std::to_string(min_len) + " characters");
  std::vector<std::string> out;
  out.reserve(count);
  for (std::size_t j = 0; j < count; ++j) {
    std::string_view doc = corpus.doc(usable[bounded(rand_at(seed, 3 * j), usable.size())]);
    std::size_t hi = std::min(max_len, doc.size());
    std::size_t len = min_len + bounded(rand_at(seed, 3 * j + 1), hi - min_len + 1);
    std::size_t start = bounded(rand_at(seed, 3 * j + 2), doc.size() - len + 1);
    out.emplace_back(doc.substr(start, len));
  }
  return out;
}

namespace {
std::vector<std::string> trigrams_of(const std::string& q) {
  std::string n = normalize_text(q);
  std::vector<std::string> t;
  for (std::size_t p = 0; p + 3 <= n.size(); ++p) t.push_back(n.substr(p, 3));
  std::sort(t.begin(), t.end());
  t.erase(std::unique(t.begin(), t.end()), t.end());
  return t;
}
}  // namespace

int new_trigrams(const std::string& original, const std::string& mutated) {
  auto a = trigrams_of(original), b = trigrams_of(mutated);
  int n = 0;
  for (const auto& t : b)
    if (!std::binary_search(a.begin(), a.end(), t)) ++n;
  return n;
}

std::string mutate_query(const std::string& query, int k, std::uint64_t seed) {
  std::string q = query;
  if (k <= 0) return q;
  int have = 0;
  const int tries = 8 * k + 16;
  for (int i = 0; i < tries && have < k; ++i) {
    std::uint64_t r = rand_at(seed, static_cast<std::uint64_t>(i));
    std::string c = q;
    std::size_t pos = bounded(r >> 8, c.size() + 1);
    char letter = static_cast<char>('a' + bounded(rand_at(seed ^ 0x6c, static_cast<std::uint64_t>(i)), 26));
    switch (r & 3) {
      case 0: c.insert(pos, 1, letter); break;
      case 1:
        if (c.size() <= 7 || pos == c.size()) continue;
        c.erase(pos, 1);
        break;
      default:
        if (pos == c.size()) continue;
        c[pos] = letter;
        break;
    }
    int n = new_trigrams(query, c);
    if (n <= k) {
      q = c;
      have = n;
    }
  }
  return q;
}

int distinct_trigrams(std::string_view query) {
  const std::string n = normalize_text(query);
  auto code = [](char ch) { return ch == ' ' ? 0 : ch <= '9' ? ch - '0' + 27 : ch - 'a' + 1; };
  std::vector<bool> seen(37 * 37 * 37);
  int count = 0;
  for (std::size_t p = 0; p + 3 <= n.size(); ++p) {
    std::size_t id = static_cast<std::size_t>(code(n[p]) * 37 * 37 + code(n[p + 1]) * 37 + code(n[p + 2]));
    if (!seen[id]) {
      seen[id] = true;
      ++count;
    }
  }
  return count;
}

std::vector<std::string> load_queries(const std::string& path) {
  std::vector<std::string> out;
  read_lines(path, "--queries", kMaxQueryBytes, [&](LineInfo& line) {
    const std::string where = "--queries: " + path + ":" + std::to_string(line.number);
    if (line.bytes > kMaxQueryBytes)
      throw UsageError(where + ": a query of " + std::to_string(line.bytes) + " bytes; at most " +
                       std::to_string(kMaxQueryBytes) + " ('" + quote_text(line.text) + "')");
    if (line.text.empty()) return true;
    int n = distinct_trigrams(line.text);
    if (n > ngram::kMaxQueryTrigrams)
      throw UsageError(where + ": the query '" + quote_text(line.text) + "' has " + std::to_string(n) +
                       " distinct 3-grams; at most " + std::to_string(ngram::kMaxQueryTrigrams) + " are supported");
    if (out.size() == kMaxQueries)
      throw UsageError(where + ": more than " + std::to_string(kMaxQueries) + " queries (the most a run takes)");
    out.push_back(std::move(line.text));
    return true;
  });
  if (out.empty()) throw UsageError("--queries: '" + path + "' holds no query (one per non-empty line)");
  return out;
}

}  // namespace hdb
