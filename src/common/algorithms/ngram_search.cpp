#include "algorithms/ngram_search.hpp"

#include <algorithm>
#include <cstring>
#include <memory>

#include "harness/timing.hpp"

namespace hdb::ngram {

namespace {
struct Candidate {
  std::uint32_t article;
  std::uint32_t planes[kPlanes];
};

// First element of the ascending range [p, end) that is >= key (galloping: cheap when the key is
// near, logarithmic when far).
inline const std::uint32_t* seek_sorted(const std::uint32_t* p, const std::uint32_t* end, std::uint32_t key) {
  if (p >= end || *p >= key) return p;
  std::size_t lo = 0, step = 1, n = static_cast<std::size_t>(end - p);
  while (lo + step < n && p[lo + step] < key) {
    lo += step;
    step *= 2;
  }
  return std::lower_bound(p + lo + 1, p + std::min(n, lo + step), key);
}

// First directory entry of list t at or after `from` whose bin is >= bin.
std::uint32_t seek_bin(const NgramIndex& ix, std::uint32_t t, std::uint32_t from, std::uint32_t bin) {
  const std::uint32_t* d = ix.dir_bin.data();
  return static_cast<std::uint32_t>(seek_sorted(d + from, d + ix.dir_offsets[t + 1], bin) - d);
}
}  // namespace

std::vector<std::uint32_t> search_baseline(const NgramIndex& ix, const QueryPlan& plan) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  std::vector<Candidate> cand, next;
  const std::uint32_t* art = ix.post_article.data();
  const std::uint32_t* map = ix.post_map.data();
  for (int i = 0; i < plan.g; ++i) {
    std::uint32_t t = plan.lists[static_cast<std::size_t>(i)];
    std::uint32_t p = ix.list_offsets[t], end = ix.list_offsets[t + 1];
    next.clear();
    next.reserve(cand.size() + (end - p));
    std::size_t c = 0;
    while (c < cand.size() || p < end) {
      if (p == end || (c < cand.size() && cand[c].article < art[p])) {
        next.push_back(cand[c++]);
      } else {
        Candidate x{};
        if (c < cand.size() && cand[c].article == art[p])
          x = cand[c++];
        else
          x.article = art[p];
        add_lanes(x.planes, window_lanes(map[p]));
        next.push_back(x);
        ++p;
      }
    }
    cand.swap(next);
  }
  for (int i = plan.g; i < plan.n && !cand.empty(); ++i) {
    std::uint32_t t = plan.lists[static_cast<std::size_t>(i)];
    std::uint32_t p = ix.list_offsets[t], end = ix.list_offsets[t + 1];
    int need = needed_after(plan.m, plan.n, i + 1);
    std::size_t w = 0;
    for (std::size_t c = 0; c < cand.size(); ++c) {
      Candidate x = cand[c];
      while (p < end && art[p] < x.article) ++p;
      if (p < end && art[p] == x.article) add_lanes(x.planes, window_lanes(map[p]));
      if (lanes_at_least(x.planes, need)) cand[w++] = x;
    }
    cand.resize(w);
  }
  for (const Candidate& x : cand)
    if (lanes_at_least(x.planes, plan.m)) hits.push_back(x.article);
  return hits;
}

std::vector<std::uint32_t> gathering_bins(const NgramIndex& ix, const QueryPlan& plan) {
  // A bitmap of the bins (one bit each, 62 words for GCIDE) instead of sorting the directories.
  std::vector<std::uint64_t> mark((ix.bins() + 63) / 64, 0);
  for (int i = 0; i < plan.g; ++i) {
    std::uint32_t t = plan.lists[static_cast<std::size_t>(i)];
    for (std::uint32_t d = ix.dir_offsets[t]; d < ix.dir_offsets[t + 1]; ++d)
      mark[ix.dir_bin[d] / 64] |= 1ull << (ix.dir_bin[d] % 64);
  }
  std::vector<std::uint32_t> bins;
  for (std::size_t w = 0; w < mark.size(); ++w)
    for (std::uint64_t bits = mark[w]; bits; bits &= bits - 1)
      bins.push_back(static_cast<std::uint32_t>(w * 64 + static_cast<std::size_t>(__builtin_ctzll(bits))));
  return bins;
}

std::vector<std::uint32_t> start_cursors(const NgramIndex& ix, const QueryPlan& plan) {
  std::vector<std::uint32_t> cur(plan.lists.size());
  for (std::size_t i = 0; i < cur.size(); ++i) cur[i] = ix.dir_offsets[plan.lists[i]];
  return cur;
}

namespace {
using Bytes16 = BinState::Bytes16;
typedef std::uint64_t Words2 __attribute__((vector_size(16)));

// kSpread[b]: the 8 bits of b spread to 8 bytes of 0 or 1 (a lane mask as byte increments).
struct SpreadTable {
  std::uint64_t v[256];
  constexpr SpreadTable() : v() {
    for (unsigned b = 0; b < 256; ++b)
      for (unsigned i = 0; i < 8; ++i)
        if ((b >> i) & 1u) v[b] |= 1ull << (8 * i);
  }
};
constexpr SpreadTable kSpread;

// Adds one 3-gram's map to an article's window counters; returns 1 when a window now exceeds
// `score`, the previous maximum (then it equals score + 1: a list adds at most one), else 0.
inline std::uint8_t add_map(Bytes16* c, std::uint32_t map, std::uint8_t score) {
  std::uint32_t lanes = window_lanes(map);
  Words2 lo = {kSpread.v[lanes & 255u], kSpread.v[(lanes >> 8) & 255u]};
  Words2 hi = {kSpread.v[(lanes >> 16) & 255u], kSpread.v[lanes >> 24]};
  Bytes16 a = c[0] + reinterpret_cast<Bytes16&>(lo), b = c[1] + reinterpret_cast<Bytes16&>(hi);
  c[0] = a;
  c[1] = b;
  Bytes16 s = Bytes16{} + static_cast<std::uint8_t>(score + 1);
  Bytes16 eq = reinterpret_cast<Bytes16>((a == s) | (b == s));
  Words2 w = reinterpret_cast<Words2&>(eq);
  return (w[0] | w[1]) != 0;
}

// A pruning list is scanned in full for its bin (every posting added, branch-free: a dead slot's
// counters are never read again) unless the candidates are this many times fewer than its
// postings; then each candidate's posting is sought (galloping), reading a few postings each.
constexpr std::uint32_t kSeekRatio = 8;
}  // namespace

BinState::BinState() { std::memset(static_cast<void*>(this), 0, sizeof *this); }

bool search_bin(const NgramIndex& ix, const QueryPlan& plan, std::uint32_t bin, int from, int to, BinState& st,
                std::vector<std::uint32_t>& cursor) {
  if (from == 0) {
    std::memset(st.seen, 0, sizeof st.seen);
    st.alive = 0;
  }
  const std::uint32_t* art = ix.post_article.data();
  const std::uint32_t* map = ix.post_map.data();
  const std::uint32_t base = bin * kBinSize;
  // m = 1: every article with one of the query's 3-grams is a hit: presence is all that counts.
  const bool presence_only = plan.m == 1;
  for (int i = from; i < to; ++i) {
    auto li = static_cast<std::size_t>(i);
    std::uint32_t t = plan.lists[li];
    std::uint32_t d = cursor[li] = seek_bin(ix, t, cursor[li], bin);
    std::uint32_t dend = ix.dir_offsets[t + 1];
    std::uint32_t p = 0, end = 0;
    std::uint32_t later = d;  // the list's next bin, likely visited next: its postings are fetched ahead
    if (d < dend && ix.dir_bin[d] == bin) {
      p = ix.dir_start[d];
      end = d + 1 < dend ? ix.dir_start[d + 1] : ix.list_offsets[t + 1];
      ++later;
    }
    if (later < dend) {
      __builtin_prefetch(art + ix.dir_start[later]);
      __builtin_prefetch(map + ix.dir_start[later]);
    }
    if (i < plan.g) {
      // Gathering: every posting's article becomes a candidate (counters zeroed on first sight).
      for (; p < end; ++p) {
        std::uint32_t s = art[p] % kBinSize;
        std::uint64_t bit = 1ull << (s % 64);
        if (presence_only) {
          st.seen[s / 64] |= bit;
          continue;
        }
        if (!(st.seen[s / 64] & bit)) {
          st.seen[s / 64] |= bit;
          st.counts[s][0] = st.counts[s][1] = Bytes16{};
          st.score[s] = 0;
        }
        st.score[s] += add_map(st.counts[s], map[p], st.score[s]);
      }
      if (i + 1 < plan.g) continue;
      // After the last gathering list every seen article has a window with one 3-gram, the
      // minimum score there (m - (n - g) = 1): all are candidates.
      int a = 0;
      for (int w = 0; w < 4; ++w)
        for (std::uint64_t bits = st.seen[w]; bits; bits &= bits - 1)
          st.cand[a++] = static_cast<std::uint8_t>(w * 64 + __builtin_ctzll(bits));
      st.alive = a;
    } else {
      int a = st.alive;
      if (end - p > kSeekRatio * static_cast<std::uint32_t>(a)) {
        for (int j = 0; j < a && p < end; ++j) {
          std::uint32_t s = st.cand[j];
          p = static_cast<std::uint32_t>(seek_sorted(art + p, art + end, base + s) - art);
          if (p < end && art[p] == base + s) st.score[s] += add_map(st.counts[s], map[p++], st.score[s]);
        }
      } else {
        for (; p < end; ++p) {
          std::uint32_t s = art[p] % kBinSize;
          st.score[s] += add_map(st.counts[s], map[p], st.score[s]);
        }
      }
      // Pruning: keep the candidates whose best window can still reach m.
      auto need = static_cast<unsigned>(needed_after(plan.m, plan.n, i + 1));
      int w = 0;
      for (int j = 0; j < a; ++j) {
        std::uint8_t s = st.cand[j];
        st.cand[w] = s;
        w += st.score[s] >= need;
      }
      st.alive = w;
    }
    if (st.alive == 0 && i + 1 >= plan.g) return false;
  }
  return st.alive > 0;
}

void append_alive(const BinState& st, std::uint32_t bin, std::vector<std::uint32_t>& hits) {
  for (int j = 0; j < st.alive; ++j) hits.push_back(bin * kBinSize + st.cand[j]);
}

void search_binned_range(const NgramIndex& ix, const QueryPlan& plan, const std::vector<std::uint32_t>& bins,
                         std::size_t lo, std::size_t hi, std::vector<std::uint32_t>& hits) {
  if (plan.n == 0 || lo >= hi) return;
  std::vector<std::uint32_t> cursor = start_cursors(ix, plan);
  thread_local std::unique_ptr<BinState> state;  // 8.5 KiB: not on the stack, not allocated per query
  if (!state) state = std::make_unique<BinState>();
  for (std::size_t b = lo; b < hi; ++b)
    if (search_bin(ix, plan, bins[b], 0, plan.n, *state, cursor)) append_alive(*state, bins[b], hits);
}

std::vector<std::uint32_t> search_binned(const NgramIndex& ix, const QueryPlan& plan) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  std::vector<std::uint32_t> bins = gathering_bins(ix, plan);
  search_binned_range(ix, plan, bins, 0, bins.size(), hits);
  return hits;
}

int hybrid_split(const NgramIndex& ix, const QueryPlan& plan) {
  int h = plan.g;
  while (h < plan.n && ix.list_size(plan.lists[static_cast<std::size_t>(h)]) <= ix.articles / 2) ++h;
  return h;
}

namespace {
// Between the bin engine's byte counters and the bit-sliced planes of the pruning stage (plane k
// of candidate x at planes[k * c + x]).
void counts_to_planes(const std::uint8_t* b, std::vector<std::uint32_t>& planes, std::size_t c, std::size_t x) {
  for (int k = 0; k < kPlanes; ++k) {
    std::uint32_t plane = 0;
    for (int l = 0; l < 32; ++l) plane |= static_cast<std::uint32_t>((b[l] >> k) & 1u) << l;
    planes[static_cast<std::size_t>(k) * c + x] = plane;
  }
}
void planes_to_counts(const std::vector<std::uint32_t>& planes, std::size_t c, std::size_t x, BinState& st,
                      std::uint32_t slot) {
  std::uint8_t b[32] = {}, top = 0;
  for (int k = 0; k < kPlanes; ++k) {
    std::uint32_t plane = planes[static_cast<std::size_t>(k) * c + x];
    for (int l = 0; l < 32; ++l) b[l] = static_cast<std::uint8_t>(b[l] | (((plane >> l) & 1u) << k));
  }
  for (std::uint8_t v : b) top = std::max(top, v);
  std::memcpy(st.counts[slot], b, sizeof b);
  st.score[slot] = top;
  st.cand[st.alive++] = static_cast<std::uint8_t>(slot);
}
}  // namespace

std::vector<std::uint32_t> search_hybrid(const NgramIndex& ix, const QueryPlan& plan, const CandidatePrune& prune,
                                         HybridTimes& times) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  int h = hybrid_split(ix, plan);
  std::vector<std::uint32_t> bins = gathering_bins(ix, plan);
  std::vector<std::uint32_t> cursor = start_cursors(ix, plan);
  auto bs = std::make_unique<BinState>();
  HostTimer t;
  if (h == plan.g) {
    for (std::uint32_t bin : bins)
      if (search_bin(ix, plan, bin, 0, plan.n, *bs, cursor)) append_alive(*bs, bin, hits);
    times.final_s += t.seconds();
    return hits;
  }
  // 1. gathering, keeping each candidate's counters (bin by bin; converted below).
  std::vector<std::uint32_t> cand;
  std::vector<std::uint8_t> rows;  // 32 window counts per candidate
  for (std::uint32_t bin : bins) {
    if (!search_bin(ix, plan, bin, 0, plan.g, *bs, cursor)) continue;
    append_alive(*bs, bin, cand);
    for (int j = 0; j < bs->alive; ++j) {
      const auto* p = reinterpret_cast<const std::uint8_t*>(bs->counts[bs->cand[j]]);
      rows.insert(rows.end(), p, p + 32);
    }
  }
  times.gather_s += t.seconds();
  if (cand.empty()) return hits;
  // 2-3. bit-sliced structure-of-arrays for the pruning stage.
  std::size_t c = cand.size();
  std::vector<std::uint32_t> planes(c * kPlanes);
  for (std::size_t x = 0; x < c; ++x) counts_to_planes(rows.data() + 32 * x, planes, c, x);
  std::vector<std::uint8_t> alive(c, 1);
  prune(plan.g, h, cand, planes, alive);
  // 4-5. final pruning bin by bin with the least discriminative lists.
  t.reset();
  for (std::size_t x = 0; x < c;) {
    std::uint32_t bin = cand[x] / kBinSize;
    bs->alive = 0;
    for (; x < c && cand[x] / kBinSize == bin; ++x)
      if (alive[x]) planes_to_counts(planes, c, x, *bs, cand[x] % kBinSize);
    if (bs->alive > 0 && search_bin(ix, plan, bin, h, plan.n, *bs, cursor)) append_alive(*bs, bin, hits);
  }
  times.final_s += t.seconds();
  return hits;
}

void prune_candidates_host(const NgramIndex& ix, const QueryPlan& plan, int from, int to,
                           const std::vector<std::uint32_t>& cand, std::vector<std::uint32_t>& planes,
                           std::vector<std::uint8_t>& alive) {
  std::size_t c = cand.size();
  for (int i = from; i < to; ++i) {
    std::uint32_t t = plan.lists[static_cast<std::size_t>(i)];
    const std::uint32_t* first = ix.post_article.data() + ix.list_offsets[t];
    const std::uint32_t* last = ix.post_article.data() + ix.list_offsets[t + 1];
    int need = needed_after(plan.m, plan.n, i + 1);
    for (std::size_t x = 0; x < c; ++x) {
      if (!alive[x]) continue;
      std::uint32_t p[kPlanes];
      for (int k = 0; k < kPlanes; ++k) p[k] = planes[static_cast<std::size_t>(k) * c + x];
      const std::uint32_t* at = std::lower_bound(first, last, cand[x]);
      if (at != last && *at == cand[x])
        add_lanes(p, window_lanes(ix.post_map[static_cast<std::size_t>(at - ix.post_article.data())]));
      for (int k = 0; k < kPlanes; ++k) planes[static_cast<std::size_t>(k) * c + x] = p[k];
      alive[x] = lanes_at_least(p, need) != 0;
    }
  }
}

PackedQueries pack_queries(const std::vector<QueryPlan>& plans) {
  PackedQueries pq;
  for (const QueryPlan& p : plans) {
    pq.lists.insert(pq.lists.end(), p.lists.begin(), p.lists.end());
    pq.off.push_back(static_cast<std::uint32_t>(pq.lists.size()));
    pq.m.push_back(p.m);
  }
  return pq;
}

std::vector<QueryChunk> chunk_queries(const std::vector<QueryPlan>& plans, std::size_t max_queries,
                                      std::uint64_t max_lists) {
  std::vector<QueryChunk> out;
  std::uint64_t list = 0;
  for (std::size_t q = 0; q < plans.size(); ++q) {
    const std::uint64_t n = plans[q].lists.size();
    if (out.empty() || out.back().count >= max_queries || out.back().lists + n > max_lists)
      out.push_back({q, 0, list, 0});
    ++out.back().count;
    out.back().lists += n;
    list += n;
  }
  return out;
}

QueryChunk largest_chunk(const std::vector<QueryChunk>& chunks) {
  QueryChunk big;
  for (const QueryChunk& c : chunks) {
    big.count = std::max(big.count, c.count);
    big.lists = std::max(big.lists, c.lists);
  }
  return big;
}

std::vector<std::uint32_t> bitmap_hits(const std::uint32_t* words, std::size_t count) {
  std::vector<std::uint32_t> hits;
  for (std::size_t w = 0; w < count; ++w)
    for (std::uint32_t bits = words[w]; bits; bits &= bits - 1)
      hits.push_back(static_cast<std::uint32_t>(w * 32 + static_cast<std::size_t>(__builtin_ctz(bits))));
  return hits;
}

}  // namespace hdb::ngram
