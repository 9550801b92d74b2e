// Relational-algebra primitives after "OpenCL RA primitives for TPC-H" (Algorithms 1-7):
// partition/compute kernels stage their results in local memory and write them in bulk to the
// partition's slot of an intermediate buffer, scan.cl turns partition counts into offsets, and the
// gather kernel (Algorithm 4) closes the gaps. Tuples are `w` consecutive uints: key, values.
// Built with -DWG=<work-group size> and -DKW=<key words>: 1 (32-bit keys) or 2 (64-bit keys, high
// word first, so whole-tuple word order is key order); MAXW is the widest tuple (8 words).
#define MAXW 8
#ifndef KW
#define KW 1
#endif
#if KW == 2
typedef ulong key_t;
#define KEY(p) (((ulong)(p)[0] << 32) | (ulong)(p)[1])
#else
typedef uint key_t;
#define KEY(p) ((p)[0])
#endif

#define MODE_SELECT 0u
#define MODE_UNIQUE 1u
#define MODE_INTERSECTION 2u
#define MODE_DIFFERENCE 3u
#define MODE_UNION_KEEP 4u

int compare_tuple(__global const uint* a, const uint* t, uint words) {
  for (uint k = 0; k < words; ++k)
    if (a[k] != t[k]) return a[k] < t[k] ? -1 : 1;
  return 0;
}

// First row in [lo, hi) of r not less than t (over the first `words` words).
uint lower_bound_rows(__global const uint* r, uint lo, uint hi, uint w, const uint* t, uint words) {
  while (lo < hi) {
    uint mid = lo + (hi - lo) / 2;
    if (compare_tuple(r + (ulong)mid * w, t, words) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// First row in [lo, hi) of r greater than t.
uint upper_bound_rows(__global const uint* r, uint lo, uint hi, uint w, const uint* t, uint words) {
  while (lo < hi) {
    uint mid = lo + (hi - lo) / 2;
    if (compare_tuple(r + (ulong)mid * w, t, words) <= 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Partition + compute (Algorithms 2 and 7): one work-item per tuple decides whether the tuple is
// kept, the work-group scans the flags in local memory, stages kept tuples in local memory and
// copies them in bulk to its partition slot part[group * WG * out_w ...]; counts[group] = kept.
//   select        attr in [lo, hi]
//   unique        first of a run of equal keys (the neighbour is read from global memory, so runs
//                 across partition edges need no separate fix-up kernel)
//   intersection  / difference: multiset semantics on whole tuples, in = a, other = b: the tuple's
//                 rank among its equals in a is compared with its count in b
//   union_keep    in = b, other = a: b's copies beyond a's count (b minus a, merged with a later)
// emit_index: write the row index (one uint) instead of the tuple (reduce-by-key heads).
// The mode is a constant in each kernel below, so the compiler drops the other modes' code (the
// binary searches of the set operations would otherwise keep PoCL from vectorising select).
// select's attribute value at word attr: one word, or two (wide: a 64-bit key or value, high word
// first).
inline ulong attr_value(__global const uint* g, uint attr, uint wide) {
  return wide ? ((ulong)g[attr] << 32) | (ulong)g[attr + 1] : (ulong)g[attr];
}

inline void compact_partition(const uint mode, __global const uint* in, uint n, uint w, __global const uint* other,
                              uint m, uint attr, uint wide, ulong lo, ulong hi, uint emit_index, __global uint* part,
                              __global uint* counts, __local uint* scan_tmp, __local uint* stage) {
  const uint gid = get_global_id(0), lid = get_local_id(0);
  uint flag = 0;
  // Nothing private lives across the scan's barriers (PoCL saves such state per work-item): the
  // kept tuple is read again from global memory when it is staged.
  if (gid < n) {
    __global const uint* g = in + (ulong)gid * w;
    if (mode == MODE_SELECT) {
      const ulong x = attr_value(g, attr, wide);
      flag = x >= lo && x <= hi;
    } else if (mode == MODE_UNIQUE) {
      flag = gid == 0 || KEY(in + (ulong)(gid - 1) * w) != KEY(g);
    } else {
      uint t[MAXW];
      for (uint k = 0; k < w; ++k) t[k] = g[k];
      uint rank = gid - lower_bound_rows(in, 0, gid, w, t, w);
      uint first = lower_bound_rows(other, 0, m, w, t, w);
      uint count = upper_bound_rows(other, first, m, w, t, w) - first;
      flag = mode == MODE_INTERSECTION ? rank < count : rank >= count;
    }
  }
  uint total;
  const uint idx = wg_exclusive_scan(flag, scan_tmp, &total);
  const uint ow = emit_index ? 1u : w;
  if (flag) {
    if (emit_index) stage[idx] = gid;
    else
      for (uint k = 0; k < w; ++k) stage[idx * w + k] = in[(ulong)gid * w + k];
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  __global uint* slot = part + (ulong)get_group_id(0) * WG * ow;
  for (uint k = lid; k < total * ow; k += WG) slot[k] = stage[k];
  if (lid == 0) counts[get_group_id(0)] = total;
}

#define COMPACT_KERNEL(name, MODE)                                                                          \
  __kernel void name(__global const uint* in, uint n, uint w, __global const uint* other, uint m, uint attr, uint wide, \
                     ulong lo, ulong hi, uint emit_index, __global uint* part, __global uint* counts) {             \
    __local uint scan_tmp[2 * WG];                                                                                     \
    __local uint stage[WG * MAXW];                                                                                     \
    compact_partition(MODE, in, n, w, other, m, attr, wide, lo, hi, emit_index, part, counts, scan_tmp, stage);       \
  }
COMPACT_KERNEL(compact_select, MODE_SELECT)
COMPACT_KERNEL(compact_unique, MODE_UNIQUE)
COMPACT_KERNEL(compact_intersection, MODE_INTERSECTION)
COMPACT_KERNEL(compact_difference, MODE_DIFFERENCE)
COMPACT_KERNEL(compact_union_keep, MODE_UNION_KEEP)

// Gather (Algorithm 4): partition p's tuples move from its slot to offsets[p] in the output.
// slot_rows: tuples per partition slot (WG for the paper's kernels, WG * ITEMS for the tuned ones).
__kernel void gather(__global const uint* part, __global const uint* counts, __global const uint* offsets, uint w,
                     uint slot_rows, __global uint* out) {
  const uint p = get_group_id(0), lid = get_local_id(0);
  const uint words = counts[p] * w;
  __global const uint* src = part + (ulong)p * slot_rows * w;
  __global uint* dst = out + (ulong)offsets[p] * w;
  for (uint k = lid; k < words; k += WG) dst[k] = src[k];
}

// Tuned partition for select and unique: each work-item flags ITEMS consecutive tuples, so a
// work-group covers WG * ITEMS tuples with one prefix sum, and writes its kept tuples straight to
// the partition slot (no local staging). Fewer, fuller work-groups: on CPU devices (PoCL) the
// per-work-group and per-barrier costs dominate the paper's one-tuple-per-work-item kernel.
#define ITEMS 8
#define COARSE_KEEP(i, g) \
  (unique_mode ? (i == 0 || KEY(in + (i - 1) * w) != KEY(g))         \
               : (attr_value(g, attr, wide) >= lo && attr_value(g, attr, wide) <= hi))
__kernel void compact_coarse(uint unique_mode, __global const uint* in, uint n, uint w, uint attr, uint wide, ulong lo,
                             ulong hi, __global uint* part, __global uint* counts) {
  __local uint scan_tmp[2 * WG];
  const ulong first = ((ulong)get_group_id(0) * WG + get_local_id(0)) * ITEMS;
  uint kept = 0;
  for (uint j = 0; j < ITEMS; ++j) {
    const ulong i = first + j;
    if (i < n) {
      __global const uint* g = in + i * w;
      kept += COARSE_KEEP(i, g);
    }
  }
  uint total;
  uint o = wg_exclusive_scan(kept, scan_tmp, &total);
  __global uint* slot = part + (ulong)get_group_id(0) * WG * ITEMS * w;
  for (uint j = 0; j < ITEMS; ++j) {
    const ulong i = first + j;
    if (i < n) {
      __global const uint* g = in + i * w;
      if (COARSE_KEEP(i, g)) {
        for (uint k = 0; k < w; ++k) slot[(ulong)o * w + k] = g[k];
        ++o;
      }
    }
  }
  if (get_local_id(0) == 0) counts[get_group_id(0)] = total;
}

// Project (Algorithm 1): one work-item per tuple; columns packed 4 bits each, first = new key.
__kernel void project(__global const uint* in, uint n, uint w, uint ncols, uint packed_cols, __global uint* out) {
  const uint gid = get_global_id(0);
  if (gid >= n) return;
  for (uint c = 0; c < ncols; ++c) out[(ulong)gid * ncols + c] = in[(ulong)gid * w + ((packed_cols >> (4 * c)) & 15u)];
}

// Join partition kernel: left is cut into partitions of WG tuples; every left tuple finds its
// matching right range by binary search, and the work-group's prefix sum of the match counts gives
// each tuple its place in the partition's output: counts are exact, so the output is sized by this
// counting pass and the compute kernel writes straight to the final positions.
// Counts and offsets are 64-bit: a work-group's matches (and the join's) may pass 2^32.
__kernel void join_partition(__global const uint* l, uint nl, uint wl, __global const uint* r, uint nr, uint wr,
                             __global uint* first_match, __global ulong* local_offset, __global ulong* counts) {
  __local ulong scan_tmp[2 * WG];
  const uint gid = get_global_id(0);
  uint cnt = 0, first = 0;
  if (gid < nl) {
    uint key[KW];
    for (uint k = 0; k < KW; ++k) key[k] = l[(ulong)gid * wl + k];
    first = lower_bound_rows(r, 0, nr, wr, key, KW);
    cnt = upper_bound_rows(r, first, nr, wr, key, KW) - first;
  }
  ulong total;
  const ulong ex = wg_exclusive_scan_ulong(cnt, scan_tmp, &total);
  if (gid < nl) {
    first_match[gid] = first;
    local_offset[gid] = ex;
  }
  if (get_local_id(0) == 0) counts[get_group_id(0)] = total;
}

// Join compute kernel (Algorithms 5/6): writes (key, left values, right values) for every match.
__kernel void join_compute(__global const uint* l, uint nl, uint wl, __global const uint* r, uint nr, uint wr,
                           __global const uint* first_match, __global const ulong* local_offset,
                           __global const ulong* offsets, __global uint* out) {
  const uint gid = get_global_id(0);
  if (gid >= nl) return;
  const key_t key = KEY(l + (ulong)gid * wl);
  const uint ow = wl + wr - KW;
  ulong o = offsets[get_group_id(0)] + local_offset[gid];
  for (uint j = first_match[gid]; j < nr && KEY(r + (ulong)j * wr) == key; ++j, ++o) {
    __global uint* dst = out + o * ow;
    for (uint k = 0; k < wl; ++k) dst[k] = l[(ulong)gid * wl + k];
    for (uint k = KW; k < wr; ++k) dst[wl + k - KW] = r[(ulong)j * wr + k];
  }
}

// Union's merge: a and b' (b's copies beyond a's counts, compacted) are both sorted; a[i] goes
// after the b' tuples smaller than it, b'[j] after the a tuples not greater than it.
__kernel void merge_scatter(__global const uint* a, uint n, __global const uint* b, uint m, uint w, __global uint* out) {
  const uint gid = get_global_id(0);
  if (gid >= n + m) return;
  uint t[MAXW];
  ulong pos;
  if (gid < n) {
    for (uint k = 0; k < w; ++k) t[k] = a[(ulong)gid * w + k];
    pos = (ulong)gid + lower_bound_rows(b, 0, m, w, t, w);
  } else {
    const uint j = gid - n;
    for (uint k = 0; k < w; ++k) t[k] = b[(ulong)j * w + k];
    pos = (ulong)j + upper_bound_rows(a, 0, n, w, t, w);
  }
  for (uint k = 0; k < w; ++k) out[pos * w + k] = t[k];
}

// Reduce: each work-group folds a grid-strided share of the tuples per value attribute in local
// memory; partials[group * values + v]. op: 0 sum, 1 min, 2 max.
ulong fold(uint op, ulong a, ulong b) { return op == 0 ? a + b : op == 1 ? min(a, b) : max(a, b); }

__kernel void reduce_partial(__global const uint* in, uint n, uint w, uint op, __global ulong* partials) {
  __local ulong tmp[WG];
  const uint lid = get_local_id(0);
  const ulong identity = op == 1 ? 0xffffffffUL : 0UL;
  for (uint v = KW; v < w; ++v) {
    ulong acc = identity;
    for (uint i = get_global_id(0); i < n; i += get_global_size(0)) acc = fold(op, acc, in[(ulong)i * w + v]);
    tmp[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) tmp[lid] = fold(op, tmp[lid], tmp[lid + s]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) partials[get_group_id(0) * (w - KW) + v - KW] = tmp[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// One work-group folds the partials of every value attribute: result[v].
__kernel void reduce_final(__global const ulong* partials, uint groups, uint values, uint op, __global ulong* result) {
  __local ulong tmp[WG];
  const uint lid = get_local_id(0);
  const ulong identity = op == 1 ? 0xffffffffUL : 0UL;
  for (uint v = 0; v < values; ++v) {
    ulong acc = identity;
    for (uint g = lid; g < groups; g += WG) acc = fold(op, acc, partials[g * values + v]);
    tmp[lid] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
      if (lid < s) tmp[lid] = fold(op, tmp[lid], tmp[lid + s]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0) result[v] = tmp[0];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// Reduce-by-key compute: run r spans heads[r] .. heads[r + 1] (or n); sums wrap modulo 2^32.
__kernel void reduce_runs(__global const uint* in, uint n, uint w, uint op, __global const uint* heads, uint runs,
                          __global uint* out) {
  const uint r = get_global_id(0);
  if (r >= runs) return;
  const uint begin = heads[r], end = r + 1 < runs ? heads[r + 1] : n;
  uint acc[MAXW];
  for (uint k = 0; k < w; ++k) acc[k] = in[(ulong)begin * w + k];
  for (uint i = begin + 1; i < end; ++i)
    for (uint k = KW; k < w; ++k) {
      uint x = in[(ulong)i * w + k];
      acc[k] = op == 0 ? acc[k] + x : op == 1 ? min(acc[k], x) : max(acc[k], x);
    }
  for (uint k = 0; k < w; ++k) out[(ulong)r * w + k] = acc[k];
}

// Product: output row gid = i * nb + j is a[i] followed by b[j].
__kernel void product(__global const uint* a, uint wa, __global const uint* b, uint nb, uint wb, ulong rows,
                      __global uint* out) {
  const ulong gid = get_global_id(0);
  if (gid >= rows) return;
  const ulong i = gid / nb, j = gid % nb;
  __global uint* dst = out + gid * (wa + wb);
  for (uint k = 0; k < wa; ++k) dst[k] = a[i * wa + k];
  for (uint k = 0; k < wb; ++k) dst[wa + k] = b[j * wb + k];
}

// Add / subtract / multiply: key of a, values combined word by word. op: 0 add, 1 sub, 2 mul.
__kernel void arith(__global const uint* a, __global const uint* b, uint n, uint w, uint op, __global uint* out) {
  const uint gid = get_global_id(0);
  if (gid >= n) return;
  const ulong base = (ulong)gid * w;
  for (uint k = 0; k < KW; ++k) out[base + k] = a[base + k];
  for (uint k = KW; k < w; ++k) {
    uint x = a[base + k], y = b[base + k];
    out[base + k] = op == 0 ? x + y : op == 1 ? x - y : x * y;
  }
}

// Sort's keys (radix variant): one key_t per tuple, for the radix sort of 32- or 64-bit keys.
__kernel void sort_keys(__global const uint* in, uint n, uint w, __global key_t* keys) {
  const uint gid = get_global_id(0);
  if (gid < n) keys[gid] = KEY(in + (ulong)gid * w);
}

// Sort's gather: output row i is input row rows[i] (the radix sort's stable order of the keys).
__kernel void gather_rows(__global const uint* in, uint n, uint w, __global const uint* rows, __global uint* out) {
  const uint gid = get_global_id(0);
  if (gid >= n) return;
  __global const uint* src = in + (ulong)rows[gid] * w;
  for (uint c = 0; c < w; ++c) out[(ulong)gid * w + c] = src[c];
}

// Tuned join (variant `tuned`): the merged sequence of left and right (left first on equal keys)
// is cut into `chunks` pieces of equal length by merge path; piece c owns the left tuples
// [split_i[c], split_i[c + 1]) and reads the right input from split_j[c] on, where every right
// tuple before it has a smaller key than its first left tuple, so it finds all their partners
// (pieces are balanced whatever the keys: a sparse left side gives pieces few left tuples).
// join_path_count finds the piece's split and counts its output by a merge; a scan gives each piece
// its first output row; join_path_write repeats the merge and writes. One step per consumed tuple,
// written as arithmetic on 0/1 values (random keys make a compare branch a coin flip): the right
// tuple is consumed first on equal keys and its run of equal keys [rs, j) is remembered, so a left
// tuple meets exactly that run when its key is the run's. No barriers, no local memory; the number
// of pieces is chosen on the host from the device.

// The merge below is specialised for common widths by inlining it with constant widths: always on
// clang-based compilers (PoCL, AMD, Intel), a plain function elsewhere (still correct).
#if defined(__clang__)
#define MERGE_INLINE __attribute__((always_inline))
#else
#define MERGE_INLINE
#endif

// Left tuples among the first d of the merged sequence (left first on equal keys).
uint merge_path_split(__global const uint* l, uint nl, uint wl, __global const uint* r, uint nr, uint wr, ulong d) {
  uint lo = d > nr ? (uint)(d - nr) : 0u, hi = d < nl ? (uint)d : nl;
  while (lo < hi) {
    const uint mid = lo + (hi - lo) / 2;
    if (KEY(l + (ulong)mid * wl) <= KEY(r + (ulong)(d - 1 - mid) * wr)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

ulong piece_diagonal(uint c, uint chunks, ulong total) { return total * c / chunks; }

// Count (write == 0) or write the output of left [i, ie) from right row j on; returns the pairs
// (all of them: writes stop at `limit` rows, counting does not), as a 64-bit count.
MERGE_INLINE ulong join_merge_any(__global const uint* l, uint i, uint ie, uint wl, __global const uint* r, uint j,
                                  uint nr, uint wr, const uint write, __global uint* dst, ulong limit) {
  if (j >= nr || i >= ie) return 0;
  const uint ow = wl + wr - KW;
  uint rs = j;  // rs == j: no run yet
  ulong o = 0;
  key_t run_key = 0;
  while (i < ie) {
    const key_t a = KEY(l + (ulong)i * wl);
    const key_t b = KEY(r + (ulong)(j - (j >= nr ? 1u : 0u)) * wr);
    const uint take_r = (uint)(j < nr) & (uint)(b <= a);
    rs += (take_r & (uint)(b != run_key)) * (j - rs);
    run_key ^= (run_key ^ b) & ((key_t)0 - (key_t)take_r);
    const uint m = ((1u - take_r) & (uint)(a == run_key)) * (j - rs);
    if (write) {
      // The first pair is written whether or not there is one (a later one overwrites it), inside
      // the piece's own rows only.
      if (o < limit) {
        __global uint* d = dst + (ulong)o * ow;
        __global const uint* lt = l + (ulong)i * wl;
        __global const uint* rt = r + (ulong)rs * wr;
        for (uint q = 0; q < wl; ++q) d[q] = lt[q];
        for (uint q = KW; q < wr; ++q) d[wl + q - KW] = rt[q];
      }
      for (uint k = 1; k < m && o + k < limit; ++k) {
        __global uint* d = dst + (ulong)(o + k) * ow;
        __global const uint* lt = l + (ulong)i * wl;
        __global const uint* rt = r + (ulong)(rs + k) * wr;
        for (uint q = 0; q < wl; ++q) d[q] = lt[q];
        for (uint q = KW; q < wr; ++q) d[wl + q - KW] = rt[q];
      }
    }
    o += m;
    j += take_r;
    i += 1u - take_r;
  }
  return o;
}

// The common shapes with constant widths, so the copies unroll.
MERGE_INLINE ulong join_merge(__global const uint* l, uint i, uint ie, uint wl, __global const uint* r, uint j, uint nr,
                              uint wr, const uint write, __global uint* dst, ulong limit) {
  if (wl == 2 && wr == 2) return join_merge_any(l, i, ie, 2, r, j, nr, 2, write, dst, limit);
  if (wl == 3 && wr == 3) return join_merge_any(l, i, ie, 3, r, j, nr, 3, write, dst, limit);
  if (wl == 4 && wr == 4) return join_merge_any(l, i, ie, 4, r, j, nr, 4, write, dst, limit);
  return join_merge_any(l, i, ie, wl, r, j, nr, wr, write, dst, limit);
}

__kernel void join_path_write(__global const uint* l, uint nl, uint wl, __global const uint* r, uint nr, uint wr,
                              uint chunks, __global const uint* splits, __global const ulong* offsets, ulong total_out,
                              __global uint* out) {
  const uint c = get_global_id(0);
  if (c >= chunks) return;
  const ulong total = (ulong)nl + nr;
  const uint i0 = splits[c], i1 = splits[c + 1];
  const uint j0 = (uint)(piece_diagonal(c, chunks, total) - i0);
  const ulong first = offsets[c], last = c + 1 < chunks ? offsets[c + 1] : total_out;
  join_merge(l, i0, i1, wl, r, j0, nr, wr, 1, out + (ulong)first * (wl + wr - KW), last - first);
}

// The one-merge form of the tuned join: each piece merges once, writing its pairs into its own
// staging slot of `cap` rows while counting them all (join_path_stage); after the scan,
// join_path_emit copies each slot to the piece's output rows (a work-group a piece, the copy spread
// over its work-items), and a piece with more than `cap` pairs merges again straight into the
// output instead. With cap = 0 join_path_stage only counts (and `stage` is not written): the
// two-merge form, join_path_write after the scan.
// splits[c] = the left row piece c starts at (splits[chunks] = nl); counts[c] = its output rows.
__kernel void join_path_stage(__global const uint* l, uint nl, uint wl, __global const uint* r, uint nr, uint wr,
                              uint chunks, uint cap, __global uint* splits, __global ulong* counts,
                              __global uint* stage) {
  const uint c = get_global_id(0);
  if (c >= chunks) return;
  const ulong total = (ulong)nl + nr;
  const ulong d0 = piece_diagonal(c, chunks, total), d1 = piece_diagonal(c + 1, chunks, total);
  const uint i0 = merge_path_split(l, nl, wl, r, nr, wr, d0);
  const uint i1 = c + 1 == chunks ? nl : merge_path_split(l, nl, wl, r, nr, wr, d1);
  splits[c] = i0;
  if (c + 1 == chunks) splits[chunks] = nl;
  counts[c] = join_merge(l, i0, i1, wl, r, (uint)(d0 - i0), nr, wr, cap > 0, stage + (ulong)c * cap * (wl + wr - KW), cap);
}

__kernel void join_path_emit(__global const uint* l, uint nl, uint wl, __global const uint* r, uint nr, uint wr,
                             uint chunks, uint cap, __global const uint* splits, __global const ulong* counts,
                             __global const ulong* offsets, __global const uint* stage, __global uint* out) {
  const uint c = get_group_id(0), lid = get_local_id(0), ls = get_local_size(0);
  if (c >= chunks) return;
  const uint ow = wl + wr - KW;
  const ulong count = counts[c];
  __global uint* dst = out + offsets[c] * ow;
  if (count <= cap) {
    __global const uint* src = stage + (ulong)c * cap * ow;
    const ulong words = count * ow;
    for (ulong k = lid; k < words; k += ls) dst[k] = src[k];
  } else if (lid == 0) {
    const ulong total = (ulong)nl + nr;
    const uint i0 = splits[c];
    const uint j0 = (uint)(piece_diagonal(c, chunks, total) - i0);
    join_merge(l, i0, splits[c + 1], wl, r, j0, nr, wr, 1, dst, count);
  }
}
