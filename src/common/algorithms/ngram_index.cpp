#include "algorithms/ngram_index.hpp"

#include <algorithm>

#include "harness/errors.hpp"
#include "harness/parallel.hpp"

namespace hdb::ngram {

std::uint64_t NgramIndex::bytes() const {
  return 4 * (list_offsets.size() + post_article.size() + post_map.size() + dir_offsets.size() + dir_bin.size() +
              dir_start.size());
}

void NgramIndex::bin_range(std::uint32_t t, std::uint32_t b, std::uint32_t& begin, std::uint32_t& end) const {
  auto first = dir_bin.begin() + dir_offsets[t], last = dir_bin.begin() + dir_offsets[t + 1];
  auto it = std::lower_bound(first, last, b);
  if (it == last || *it != b) {
    begin = end = 0;
    return;
  }
  auto e = static_cast<std::size_t>(it - dir_bin.begin());
  begin = dir_start[e];
  end = e + 1 < dir_offsets[t + 1] ? dir_start[e + 1] : list_offsets[t + 1];
}

std::vector<std::pair<std::uint32_t, std::uint32_t>> document_trigrams(std::string_view doc, int words_per_segment) {
  std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
  if (doc.size() < 3) return out;
  // word_of[i]: the word a character belongs to; a space belongs to the word before it.
  std::vector<std::uint32_t> word_of(doc.size());
  std::uint32_t words = 0;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    if (doc[i] != ' ' && (i == 0 || doc[i - 1] == ' ')) ++words;
    word_of[i] = words ? words - 1 : 0;
  }
  // 32 segments of at least W words each: ceil(words / 32) words per segment once that exceeds W.
  std::uint32_t per = std::max<std::uint32_t>(static_cast<std::uint32_t>(words_per_segment), (words + 31) / 32);
  out.reserve(doc.size());
  for (std::size_t p = 0; p + 3 <= doc.size(); ++p) {
    std::uint32_t seg = std::min<std::uint32_t>(31, word_of[p + 1] / per);
    out.emplace_back(trigram_id(doc.data() + p), 1u << seg);
  }
  std::sort(out.begin(), out.end());
  std::size_t w = 0;
  for (std::size_t r = 0; r < out.size(); ++r) {
    if (w && out[w - 1].first == out[r].first)
      out[w - 1].second |= out[r].second;
    else
      out[w++] = out[r];
  }
  out.resize(w);
  return out;
}

NgramIndex build_ngram_index(const TextCorpus& corpus, int words_per_segment, int threads) {
  NgramIndex ix;
  ix.words_per_segment = words_per_segment;
  std::size_t n = corpus.size();
  if (n >= (1ull << 32) - kBinSize) throw SkipCase("more than 2^32 articles");
  ix.articles = static_cast<std::uint32_t>(n);
  std::size_t chunks = static_cast<std::size_t>(std::max(1, std::min<int>(threads, static_cast<int>(n / 64) + 1)));
  // Each chunk of articles: its pairs (3-gram, map), the number of pairs per article, and per-3-gram counts.
  struct Chunk {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<std::uint32_t> per_article;
    std::vector<std::uint64_t> counts;
  };
  std::vector<Chunk> ch(chunks);
  auto work = [&](std::size_t c) {
    std::size_t a0 = n * c / chunks, a1 = n * (c + 1) / chunks;
    Chunk& k = ch[c];
    k.counts.assign(kTrigrams, 0);
    for (std::size_t a = a0; a < a1; ++a) {
      auto pr = document_trigrams(corpus.doc(a), words_per_segment);
      k.per_article.push_back(static_cast<std::uint32_t>(pr.size()));
      for (auto& p : pr) ++k.counts[p.first];
      k.pairs.insert(k.pairs.end(), pr.begin(), pr.end());
    }
  };
  run_tasks(static_cast<int>(chunks), [&](int c) { work(static_cast<std::size_t>(c)); });
  // Chunk c writes list t from base[c][t]: chunks in article order keep every list sorted.
  std::vector<std::uint64_t> total(kTrigrams + 1, 0);
  for (std::uint32_t t = 0; t < kTrigrams; ++t) {
    std::uint64_t s = 0;
    for (auto& k : ch) s += k.counts[t];
    total[t + 1] = total[t] + s;
  }
  if (total[kTrigrams] >= (1ull << 32)) throw SkipCase("index has 2^32 or more postings");
  ix.list_offsets.assign(total.begin(), total.end());
  ix.post_article.resize(total[kTrigrams]);
  ix.post_map.resize(total[kTrigrams]);
  std::vector<std::vector<std::uint64_t>> base(chunks, std::vector<std::uint64_t>(kTrigrams));
  for (std::uint32_t t = 0; t < kTrigrams; ++t) {
    std::uint64_t pos = total[t];
    for (std::size_t c = 0; c < chunks; ++c) {
      base[c][t] = pos;
      pos += ch[c].counts[t];
    }
  }
  auto fill = [&](std::size_t c) {
    std::uint32_t a = static_cast<std::uint32_t>(n * c / chunks);
    std::size_t p = 0;
    auto& b = base[c];
    for (std::uint32_t cnt : ch[c].per_article) {
      for (std::uint32_t j = 0; j < cnt; ++j, ++p) {
        auto [t, map] = ch[c].pairs[p];
        std::uint64_t at = b[t]++;
        ix.post_article[at] = a;
        ix.post_map[at] = map;
      }
      ++a;
    }
    ch[c].pairs = {};
  };
  run_tasks(static_cast<int>(chunks), [&](int c) { fill(static_cast<std::size_t>(c)); });
  ix.dir_offsets.assign(kTrigrams + 1, 0);
  for (std::uint32_t t = 0; t < kTrigrams; ++t) {
    std::uint32_t prev = ~0u;
    for (std::uint32_t p = ix.list_offsets[t]; p < ix.list_offsets[t + 1]; ++p) {
      std::uint32_t b = ix.post_article[p] / kBinSize;
      if (b != prev) {
        ix.dir_bin.push_back(b);
        ix.dir_start.push_back(p);
        prev = b;
      }
    }
    ix.dir_offsets[t + 1] = static_cast<std::uint32_t>(ix.dir_bin.size());
  }
  return ix;
}

QueryPlan plan_query(const NgramIndex& index, std::string_view query, int k) {
  std::string q = normalize_text(query);
  QueryPlan plan;
  for (std::size_t p = 0; p + 3 <= q.size(); ++p) plan.lists.push_back(trigram_id(q.data() + p));
  std::sort(plan.lists.begin(), plan.lists.end());
  plan.lists.erase(std::unique(plan.lists.begin(), plan.lists.end()), plan.lists.end());
  if (plan.lists.size() > static_cast<std::size_t>(kMaxQueryTrigrams))
    throw UsageError("query '" + std::string(query.substr(0, 40)) + "...' has " + std::to_string(plan.lists.size()) +
                     " distinct 3-grams; at most " + std::to_string(kMaxQueryTrigrams) + " are supported");
  std::stable_sort(plan.lists.begin(), plan.lists.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return index.list_size(a) < index.list_size(b); });
  plan.n = static_cast<int>(plan.lists.size());
  plan.m = std::max(1, plan.n - k);
  plan.g = plan.n - plan.m + 1;
  for (std::uint32_t t : plan.lists) plan.posting_bytes += 8ull * index.list_size(t);
  return plan;
}

}  // namespace hdb::ngram
