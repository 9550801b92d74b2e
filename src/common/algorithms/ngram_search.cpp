#include "algorithms/ngram_search.hpp"

#include <algorithm>
#include <cstring>

#include "harness/timing.hpp"

namespace hdb::ngram {

namespace {
struct Candidate {
  std::uint32_t article;
  std::uint32_t planes[kPlanes];
};

// First directory entry of list t at or after `from` whose bin is >= bin (galloping: cheap when
// bins are close, logarithmic when far).
std::uint32_t seek_bin(const NgramIndex& ix, std::uint32_t t, std::uint32_t from, std::uint32_t bin) {
  std::uint32_t end = ix.dir_offsets[t + 1];
  if (from >= end || ix.dir_bin[from] >= bin) return from;
  std::uint32_t lo = from, step = 1;
  while (lo + step < end && ix.dir_bin[lo + step] < bin) {
    lo += step;
    step *= 2;
  }
  std::uint32_t hi = std::min(end, lo + step + 1);
  return static_cast<std::uint32_t>(std::lower_bound(ix.dir_bin.begin() + lo, ix.dir_bin.begin() + hi, bin) -
                                    ix.dir_bin.begin());
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
        if (c < cand.size() && cand[c].article == art[p]) x = cand[c++];
        else x.article = art[p];
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
  std::vector<std::uint32_t> bins;
  for (int i = 0; i < plan.g; ++i) {
    std::uint32_t t = plan.lists[static_cast<std::size_t>(i)];
    bins.insert(bins.end(), ix.dir_bin.begin() + ix.dir_offsets[t], ix.dir_bin.begin() + ix.dir_offsets[t + 1]);
  }
  std::sort(bins.begin(), bins.end());
  bins.erase(std::unique(bins.begin(), bins.end()), bins.end());
  return bins;
}

std::vector<std::uint32_t> start_cursors(const NgramIndex& ix, const QueryPlan& plan) {
  std::vector<std::uint32_t> cur(plan.lists.size());
  for (std::size_t i = 0; i < cur.size(); ++i) cur[i] = ix.dir_offsets[plan.lists[i]];
  return cur;
}

bool search_bin(const NgramIndex& ix, const QueryPlan& plan, std::uint32_t bin, int from, int to, BinState& st,
                std::vector<std::uint32_t>& cursor) {
  // Counters are valid only for alive slots: a slot is zeroed when it first turns alive, so a
  // bin costs nothing for the articles it never sees (no 8 KiB clear per bin).
  if (from == 0) std::memset(st.alive, 0, sizeof st.alive);
  const std::uint32_t* art = ix.post_article.data();
  const std::uint32_t* map = ix.post_map.data();
  for (int i = from; i < to; ++i) {
    auto li = static_cast<std::size_t>(i);
    std::uint32_t t = plan.lists[li];
    std::uint32_t d = cursor[li] = seek_bin(ix, t, cursor[li], bin);
    std::uint32_t dend = ix.dir_offsets[t + 1];
    if (d < dend && ix.dir_bin[d] == bin) {
      std::uint32_t p = ix.dir_start[d], end = d + 1 < dend ? ix.dir_start[d + 1] : ix.list_offsets[t + 1];
      if (i < plan.g) {
        for (; p < end; ++p) {
          std::uint32_t s = art[p] % kBinSize;
          std::uint64_t bit = 1ull << (s % 64);
          if (!(st.alive[s / 64] & bit)) {
            std::memset(st.planes[s], 0, sizeof st.planes[s]);
            st.alive[s / 64] |= bit;
          }
          add_lanes(st.planes[s], window_lanes(map[p]));
        }
      } else {
        for (; p < end; ++p) {
          std::uint32_t s = art[p] % kBinSize;
          if ((st.alive[s / 64] >> (s % 64)) & 1u) add_lanes(st.planes[s], window_lanes(map[p]));
        }
      }
    }
    if (i + 1 >= plan.g) {
      int need = needed_after(plan.m, plan.n, i + 1);
      for (int w = 0; w < 4; ++w) {
        std::uint64_t bits = st.alive[w];
        while (bits) {
          int b = __builtin_ctzll(bits);
          bits &= bits - 1;
          if (!lanes_at_least(st.planes[w * 64 + b], need)) st.alive[w] &= ~(1ull << b);
        }
      }
      if (!st.any()) return false;
    }
  }
  return st.any();
}

void append_alive(const BinState& st, std::uint32_t bin, std::vector<std::uint32_t>& hits) {
  for (int w = 0; w < 4; ++w) {
    std::uint64_t bits = st.alive[w];
    while (bits) {
      hits.push_back(bin * kBinSize + static_cast<std::uint32_t>(w * 64 + __builtin_ctzll(bits)));
      bits &= bits - 1;
    }
  }
}

void search_binned_range(const NgramIndex& ix, const QueryPlan& plan, const std::vector<std::uint32_t>& bins,
                         std::size_t lo, std::size_t hi, std::vector<std::uint32_t>& hits) {
  if (plan.n == 0) return;
  std::vector<std::uint32_t> cursor = start_cursors(ix, plan);
  BinState st;
  for (std::size_t b = lo; b < hi; ++b)
    if (search_bin(ix, plan, bins[b], 0, plan.n, st, cursor)) append_alive(st, bins[b], hits);
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

std::vector<std::uint32_t> search_hybrid(const NgramIndex& ix, const QueryPlan& plan, const CandidatePrune& prune,
                                         HybridTimes& times) {
  std::vector<std::uint32_t> hits;
  if (plan.n == 0) return hits;
  int h = hybrid_split(ix, plan);
  std::vector<std::uint32_t> bins = gathering_bins(ix, plan);
  std::vector<std::uint32_t> cursor = start_cursors(ix, plan);
  BinState bs;
  HostTimer t;
  if (h == plan.g) {
    for (std::uint32_t bin : bins)
      if (search_bin(ix, plan, bin, 0, plan.n, bs, cursor)) append_alive(bs, bin, hits);
    times.final_s += t.seconds();
    return hits;
  }
  // 1. gathering, keeping each candidate's counters.
  std::vector<std::uint32_t> cand, rows;
  for (std::uint32_t bin : bins) {
    if (!search_bin(ix, plan, bin, 0, plan.g, bs, cursor)) continue;
    std::size_t first = cand.size();
    append_alive(bs, bin, cand);
    for (std::size_t x = first; x < cand.size(); ++x) {
      const std::uint32_t* p = bs.planes[cand[x] % kBinSize];
      rows.insert(rows.end(), p, p + kPlanes);
    }
  }
  times.gather_s += t.seconds();
  if (cand.empty()) return hits;
  // 2-3. structure-of-arrays for the pruning stage.
  std::size_t c = cand.size();
  std::vector<std::uint32_t> planes(c * kPlanes);
  for (std::size_t x = 0; x < c; ++x)
    for (int k = 0; k < kPlanes; ++k) planes[static_cast<std::size_t>(k) * c + x] = rows[x * kPlanes + static_cast<std::size_t>(k)];
  std::vector<std::uint8_t> alive(c, 1);
  prune(plan.g, h, cand, planes, alive);
  // 4-5. final pruning bin by bin with the least discriminative lists.
  t.reset();
  for (std::size_t x = 0; x < c;) {
    std::uint32_t bin = cand[x] / kBinSize;
    std::memset(bs.alive, 0, sizeof bs.alive);
    for (; x < c && cand[x] / kBinSize == bin; ++x) {
      if (!alive[x]) continue;
      std::uint32_t slot = cand[x] % kBinSize;
      for (int k = 0; k < kPlanes; ++k) bs.planes[slot][k] = planes[static_cast<std::size_t>(k) * c + x];
      bs.alive[slot / 64] |= 1ull << (slot % 64);
    }
    if (bs.any() && search_bin(ix, plan, bin, h, plan.n, bs, cursor)) append_alive(bs, bin, hits);
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
      if (at != last && *at == cand[x]) add_lanes(p, window_lanes(ix.post_map[static_cast<std::size_t>(at - ix.post_article.data())]));
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

std::vector<std::uint32_t> bitmap_hits(const std::uint32_t* words, std::size_t count) {
  std::vector<std::uint32_t> hits;
  for (std::size_t w = 0; w < count; ++w)
    for (std::uint32_t bits = words[w]; bits; bits &= bits - 1)
      hits.push_back(static_cast<std::uint32_t>(w * 32 + static_cast<std::size_t>(__builtin_ctz(bits))));
  return hits;
}

}  // namespace hdb::ngram
