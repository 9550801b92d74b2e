// nsearch n-gram search, segment-wise (docs/ngram.md): one work-group of 256 work-items per
// (bin of 256 articles, query); work-item t owns article 256 b + t and keeps its 32 window counters
// bit-sliced in 8 private words. For each query 3-gram the bin's postings are unpacked into local
// memory (the paper's "newmap", but for one database segment instead of the whole database), and
// the group stops as soon as none of its articles can still reach the required score.
#define NG_BIN 256
#define NG_PLANES 8

inline uint ng_window_lanes(uint map) { return map | (map >> 1); }

inline void ng_add_lanes(uint* p, uint lanes) {
  uint carry = lanes;
  for (int i = 0; i < NG_PLANES; ++i) {
    uint t = p[i] & carry;
    p[i] ^= carry;
    carry = t;
  }
}

inline uint ng_lanes_at_least(const uint* p, int v) {
  if (v <= 0) return 0xffffffffu;
  if (v > 255) return 0u;
  uint gt = 0, eq = 0xffffffffu;
  for (int i = NG_PLANES - 1; i >= 0; --i) {
    uint vb = ((v >> i) & 1) ? 0xffffffffu : 0u;
    gt |= eq & p[i] & ~vb;
    eq &= ~(p[i] ^ vb);
  }
  return gt | eq;
}

__kernel __attribute__((reqd_work_group_size(NG_BIN, 1, 1)))
void ngram_segmented(__global const uint* post_article, __global const uint* post_map,
                     __global const uint* list_offsets, __global const uint* dir_offsets,
                     __global const uint* dir_bin, __global const uint* dir_start,
                     __global const uint* q_lists, __global const uint* q_off, __global const int* q_m,
                     uint query_base, uint nbins, __global uint* hit_words) {
  __local uint newmap[NG_BIN];
  __local uint range[2];
  __local int anyflag;
  __local uint words[NG_BIN / 32];
  const uint t = get_local_id(0);
  const uint b = get_group_id(0);
  const uint q = query_base + get_group_id(1);
  const uint qb = q_off[q];
  const int n = (int)(q_off[q + 1] - qb);
  const int m = q_m[q];
  const int g = n - m + 1;
  uint p[NG_PLANES] = {0, 0, 0, 0, 0, 0, 0, 0};
  int alive = 0;
  if (t < NG_BIN / 32) words[t] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int i = 0; i < n; ++i) {
    if (t == 0) {
      const uint L = q_lists[qb + i];
      uint lo = dir_offsets[L], hi = dir_offsets[L + 1];
      const uint end = hi;
      while (lo < hi) {
        uint mid = (lo + hi) / 2;
        if (dir_bin[mid] < b) lo = mid + 1;
        else hi = mid;
      }
      if (lo < end && dir_bin[lo] == b) {
        range[0] = dir_start[lo];
        range[1] = lo + 1 < end ? dir_start[lo + 1] : list_offsets[L + 1];
      } else {
        range[0] = range[1] = 0;
      }
      anyflag = 0;
    }
    newmap[t] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint j = range[0] + t; j < range[1]; j += NG_BIN) newmap[post_article[j] & (NG_BIN - 1)] = post_map[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    const uint w = newmap[t];
    if (w != 0 && (i < g || alive)) {
      ng_add_lanes(p, ng_window_lanes(w));
      alive = 1;
    }
    if (i + 1 >= g) {
      // m - (remaining lists): the score still needed to reach m.
      alive = alive && ng_lanes_at_least(p, m - (n - (i + 1))) != 0;
      if (alive) anyflag = 1;
    } else {
      anyflag = 1;  // gathering: new articles may still join
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const int any = anyflag;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (!any) break;
  }
  if (alive) atomic_or(&words[t / 32], 1u << (t % 32));
  barrier(CLK_LOCAL_MEM_FENCE);
  if (t < NG_BIN / 32) hit_words[(size_t)get_group_id(1) * nbins * (NG_BIN / 32) + (size_t)b * (NG_BIN / 32) + t] = words[t];
}

// ---- the paper's Figure 1: dense arrays over all articles, two kernels per query 3-gram ----

// Unpacks one posting list: newmap[article] = map.
__kernel void ngram_scatter(__global const uint* post_article, __global const uint* post_map, uint begin, uint end,
                            __global uint* newmap) {
  const uint j = begin + (uint)get_global_id(0);
  if (j < end) newmap[post_article[j]] = post_map[j];
}

// One query 3-gram for every article (planes: plane k of article a at planes[k * n + a]).
__kernel void ngram_update(__global const uint* newmap, __global uint* planes, __global uchar* alive, uint n, int i,
                           int g, int need) {
  const uint a = (uint)get_global_id(0);
  if (a >= n) return;
  int al = alive[a] != 0;
  if (!(i < g || al)) return;
  const uint w = newmap[a];
  const int prune = i + 1 >= g;
  if (!w && !(prune && al)) return;
  uint p[NG_PLANES];
  for (int k = 0; k < NG_PLANES; ++k) p[k] = planes[(size_t)k * n + a];
  if (w) {
    ng_add_lanes(p, ng_window_lanes(w));
    al = 1;
    for (int k = 0; k < NG_PLANES; ++k) planes[(size_t)k * n + a] = p[k];
  }
  if (prune) al = ng_lanes_at_least(p, need) != 0;
  alive[a] = al ? 1 : 0;
}

// One bit per article from the alive flags.
__kernel void ngram_bitmap(__global const uchar* alive, uint n, __global uint* words, uint nwords) {
  const uint w = (uint)get_global_id(0);
  if (w >= nwords) return;
  uint bits = 0;
  for (uint k = 0; k < 32; ++k) {
    const uint a = w * 32 + k;
    if (a < n && alive[a]) bits |= 1u << k;
  }
  words[w] = bits;
}
