// Delta merge kernels. VKIND picks the value type: 1 uint, 2 ulong, 3 ulong2 as (hi, lo) 128-bit,
// 4 strings (offsets + bytes; the string kernels at the end). Re-encoding (2b) is the same for all.
#if VKIND == 1
typedef uint val_t;
#define LT(a, b) ((a) < (b))
#define NE(a, b) ((a) != (b))
#elif VKIND == 2
typedef ulong val_t;
#define LT(a, b) ((a) < (b))
#define NE(a, b) ((a) != (b))
#elif VKIND == 3
typedef ulong2 val_t;
#define LT(a, b) ((a).x < (b).x || ((a).x == (b).x && (a).y < (b).y))
#define NE(a, b) ((a).x != (b).x || (a).y != (b).y)
#endif

#if VKIND != 4

// First index in d[0, n) whose value is not less than v.
ulong lower_bound_v(global const val_t* d, ulong n, val_t v) {
  ulong lo = 0, hi = n;
  while (lo < hi) {
    ulong mid = (lo + hi) / 2;
    if (LT(d[mid], v)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// The slice of D2 that belongs with D1's slice [i0, i1): every D2 value below D1[i1] and not below
// D1[i0] (thread 0 also takes everything below D1[0]).
void slice_bounds(global const val_t* d1, ulong n1, global const val_t* d2, ulong n2, ulong t, ulong slice,
                  ulong* i0, ulong* i1, ulong* k0, ulong* k1) {
  *i0 = min(t * slice, n1);
  *i1 = min(*i0 + slice, n1);
  *k0 = t == 0 ? 0 : (*i0 < n1 ? lower_bound_v(d2, n2, d1[*i0]) : n2);
  *k1 = *i1 < n1 ? lower_bound_v(d2, n2, d1[*i1]) : n2;
}

// Paper §3.1, stage 2: each thread merges its slices into its own segment [i0 + k0, i1 + k1) of
// the intermediate dictionary (positions local to the segment), counting distinct values.
kernel void slice_merge(global const val_t* d1, ulong n1, global const val_t* d2, ulong n2, ulong slice,
                        ulong threads, global val_t* inter, global uint* x1, global uint* x2,
                        global ulong* counts) {
  ulong t = get_global_id(0);
  if (t >= threads) return;
  ulong i0, i1, k0, k1;
  slice_bounds(d1, n1, d2, n2, t, slice, &i0, &i1, &k0, &k1);
  ulong seg = i0 + k0, w = 0, i = i0, k = k0;
  while (i < i1 && k < k1) {
    val_t a = d1[i], b = d2[k];
    if (LT(a, b)) {
      inter[seg + w] = a;
      x1[i++] = (uint)w;
    } else if (LT(b, a)) {
      inter[seg + w] = b;
      x2[k++] = (uint)w;
    } else {
      inter[seg + w] = a;
      x1[i++] = (uint)w;
      x2[k++] = (uint)w;
    }
    ++w;
  }
  for (; i < i1; ++i, ++w) {
    inter[seg + w] = d1[i];
    x1[i] = (uint)w;
  }
  for (; k < k1; ++k, ++w) {
    inter[seg + w] = d2[k];
    x2[k] = (uint)w;
  }
  counts[t] = w;
}

// Exclusive prefix sum of c[0, n) in place, total in c[n]; one work-group.
kernel void scan_counts(global ulong* c, ulong n, local ulong* tmp) {
  uint l = get_local_id(0), L = get_local_size(0);
  ulong per = (n + L - 1) / L, b = min(n, l * per), e = min(n, b + per), s = 0;
  for (ulong i = b; i < e; ++i) s += c[i];
  tmp[l] = s;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < L; d <<= 1) {
    ulong v = l >= d ? tmp[l - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[l] += v;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  ulong run = l ? tmp[l - 1] : 0;
  for (ulong i = b; i < e; ++i) {
    ulong v = c[i];
    c[i] = run;
    run += v;
  }
  if (l == L - 1) c[n] = tmp[L - 1];
}

// Stage 3, on the device: close the gaps (move each segment to its offset) and turn the local
// positions in X_M, X_D into global ones.
kernel void close_gaps(global const val_t* d1, ulong n1, global const val_t* d2, ulong n2, ulong slice,
                       ulong threads, global const val_t* inter, global uint* x1, global uint* x2,
                       global const ulong* offsets, global val_t* dict) {
  ulong t = get_global_id(0);
  if (t >= threads) return;
  ulong i0, i1, k0, k1;
  slice_bounds(d1, n1, d2, n2, t, slice, &i0, &i1, &k0, &k1);
  ulong seg = i0 + k0, off = offsets[t], cnt = offsets[t + 1] - off;
  for (ulong j = 0; j < cnt; ++j) dict[off + j] = inter[seg + j];
  for (ulong i = i0; i < i1; ++i) x1[i] += (uint)off;
  for (ulong k = k0; k < k1; ++k) x2[k] += (uint)off;
}

#endif  // VKIND != 4

// Merge path (step 1b, all value types): work-item `item` merges the entries [*d, *d1) of the merged
// sequence; its split (how many come from a) lies in [*lo, *hi], between its work-group's tile
// splits. False when the item has no entries.
bool mp_item_range(uint na, uint nb, uint tile, uint items, global const uint* split, uint* d, uint* d1, uint* lo,
                   uint* hi) {
  const uint g = get_group_id(0), item = get_global_id(0);
  const ulong n = (ulong)na + nb, d0 = (ulong)item * items;
  if (d0 >= n) return false;
  const uint gd0 = g * tile, gd1 = (uint)min(n, (ulong)gd0 + tile);
  const uint a0 = split[g], a1 = split[g + 1], b0 = gd0 - a0, b1 = gd1 - a1;
  *d = (uint)d0;
  *d1 = (uint)min(n, d0 + items);
  *lo = max(a0, *d > b1 ? *d - b1 : 0u);
  *hi = min(a1, *d - b0);
  return true;
}

uint unpack_id(global const ulong* w, uint width, ulong i) {
  if (width == 0) return 0;
  ulong bit = i * width, word = bit >> 6;
  uint off = (uint)(bit & 63);
  ulong v = w[word] >> off;
  if (off + width > 64) v |= w[word + 1] << (64 - off);
  return (uint)(v & ((1ul << width) - 1));
}

// Step 2b: each work-item streams the ids of a block of rows into whole 64-bit words. Blocks are
// multiples of 64 rows (64 ids of w bits fill exactly w words), so no two work-items share a word.
kernel void reencode(global const ulong* old, uint old_width, ulong main_rows, global const uint* xm,
                     global const uint* delta_ids, global const uint* xd, ulong rows, uint width,
                     ulong rows_per_item, global ulong* out) {
  ulong r0 = get_global_id(0) * rows_per_item;
  if (r0 >= rows || width == 0) return;
  ulong r1 = min(rows, r0 + rows_per_item), acc = 0;
  global ulong* o = out + r0 * width / 64;
  uint fill = 0;
  for (ulong r = r0; r < r1; ++r) {
    ulong v = r < main_rows ? xm[unpack_id(old, old_width, r)] : xd[delta_ids[r - main_rows]];
    acc |= v << fill;
    fill += width;
    if (fill >= 64) {
      *o++ = acc;
      fill -= 64;
      acc = fill ? v >> (width - fill) : 0;
    }
  }
  if (fill) *o = acc;
}

#if VKIND != 4
// Step 1a, after the radix sort of the delta with its row indices: 1 where a sorted value starts a
// run of equal values. The exclusive scan of these flags numbers the runs.
kernel void run_heads(global const val_t* sorted, uint n, global uint* flag) {
  uint j = get_global_id(0);
  if (j < n) flag[j] = (j == 0 || NE(sorted[j - 1], sorted[j])) ? 1u : 0u;
}

// Step 1a: each run head writes its value to U_D, every element writes its run's number (its id in
// U_D) to its delta row. `pos` holds the exclusive scan of the run heads.
kernel void scatter_unique(global const val_t* sorted, global const uint* rows, global const uint* pos, uint n,
                           global val_t* ud, global uint* ids) {
  uint j = get_global_id(0);
  if (j >= n) return;
  bool head = j == 0 || NE(sorted[j - 1], sorted[j]);
  uint id = pos[j] + (head ? 0u : ~0u);  // pos[j] for a head, else the id of the run's head
  if (head) ud[id] = sorted[j];
  ids[rows[j]] = id;
}

// Merge path (step 1b) of two sorted dictionaries a, b; on equal values a's comes first, so a value
// in both gives two adjacent entries of the merged sequence, a's first. mp_split returns how many
// of the first d merged entries come from a, searching a in [lo, hi], which must bracket the answer
// with d - hi >= 0 and d - lo <= nb.
uint mp_split(global const val_t* a, global const val_t* b, uint d, uint lo, uint hi) {
  while (lo < hi) {
    uint mid = lo + (hi - lo) / 2;
    if (!LT(b[d - mid - 1], a[mid])) lo = mid + 1;  // a[mid] <= b[d - mid - 1]: a[mid] is among the first d
    else hi = mid;
  }
  return lo;
}

// The diagonal at the start of each work-group's tile of `tile` merged entries: split[g] for
// g = 0..groups (the last is the end of the merge).
kernel void mp_partition(global const val_t* a, uint na, global const val_t* b, uint nb, uint tile, uint groups,
                         global uint* split) {
  uint g = get_global_id(0);
  if (g > groups) return;
  uint d = (uint)min((ulong)g * tile, (ulong)na + nb);
  split[g] = mp_split(a, b, d, d > nb ? d - nb : 0, min(d, na));
}

// One work-item merges `items` consecutive entries of the merged sequence (its work-group's tile is
// cut into WG such ranges; the item's own diagonal is searched only between the tile's splits) and
// counts the distinct values that start there (count pass), or writes them to U'_M at the item's
// offset and every entry's id to X_M or X_D (write pass). `counts` holds one count per work-item,
// scanned in place between the passes.
kernel void mp_merge(global const val_t* a, uint na, global const val_t* b, uint nb, uint tile, uint items,
                     global const uint* split, uint write, global uint* counts, global val_t* dict,
                     global uint* xm, global uint* xd) {
  const uint item = get_global_id(0);
  uint d, d1, lo, hi;
  if (!mp_item_range(na, nb, tile, items, split, &d, &d1, &lo, &hi)) return;
  uint i = mp_split(a, b, d, lo, hi), k = d - i;
  // The entry before the range: the larger of the last ones taken from a and b.
  val_t prev = (val_t)0;
  if (i > 0) prev = a[i - 1];
  if (k > 0 && (i == 0 || LT(prev, b[k - 1]))) prev = b[k - 1];
  bool first = d == 0;
  uint id = write ? counts[item] - 1 : 0, heads = 0;
  for (uint j = d; j < d1; ++j) {
    const bool from_a = k >= nb || (i < na && !LT(b[k], a[i]));
    const val_t v = from_a ? a[i] : b[k];
    if (first || LT(prev, v)) {
      ++heads;
      if (write) dict[++id] = v;
    }
    if (write) {
      if (from_a) xm[i] = id;
      else xd[k] = id;
    }
    if (from_a) ++i;
    else ++k;
    prev = v;
    first = false;
  }
  if (!write) counts[item] = heads;
}
#endif  // VKIND != 4

#if VKIND == 4
// ---- strings: a column of n strings is offs[0..n] (uint byte offsets, string i = bytes[offs[i],
// offs[i+1])) and one byte array. Sorting and comparing go through 64-bit keys: chunk k of a string
// is its bytes [7k, 7k+7) big-endian in the high 56 bits (zero padded) and, in the low 8 bits, the
// bytes left from 7k capped at 8. Two strings' chunks compare as their bytes do (a string that ends
// inside the chunk, or a zero byte where the other string has ended, is told apart by the count),
// and equal chunks with a count below 8 mean equal strings: the count is 8 only when more bytes
// follow, the one case where chunk k+1 must decide. ----

#define KEY_MORE 8u  // the count of a chunk with bytes after it
#define KEY_COUNT(k) ((uint)((k) & 0xffu))

ulong str_key(global const uchar* bytes, uint b, uint e, uint chunk) {
  const uint s = b + 7u * chunk, left = s < e ? e - s : 0u;
  ulong key = 0;
  for (uint i = 0; i < 7u; ++i) key = (key << 8) | (i < left ? (ulong)bytes[s + i] : 0ul);
  return (key << 8) | (ulong)min(left, KEY_MORE);
}

// -1, 0, 1 as string x (bytes [x0, x1) of xb) is below, equal to or above y, from byte `from` on
// (the bytes before it are known equal).
int str_cmp_from(global const uchar* xb, uint x0, uint x1, global const uchar* yb, uint y0, uint y1, uint from) {
  const uint lx = x1 - x0, ly = y1 - y0, n = min(lx, ly);
  for (uint i = from; i < n; ++i) {
    const uchar a = xb[x0 + i], c = yb[y0 + i];
    if (a != c) return a < c ? -1 : 1;
  }
  return lx < ly ? -1 : (lx > ly ? 1 : 0);
}

// Strings i of column x and j of column y, through their chunk-0 keys first.
int str_cmp(global const ulong* xk, global const uint* xo, global const uchar* xb, uint i, global const ulong* yk,
            global const uint* yo, global const uchar* yb, uint j) {
  const ulong a = xk[i], c = yk[j];
  if (a != c) return a < c ? -1 : 1;
  if (KEY_COUNT(a) < KEY_MORE) return 0;
  return str_cmp_from(xb, xo[i], xo[i + 1], yb, yo[j], yo[j + 1], 7u);
}

// Chunk-0 keys of strings [0, n).
kernel void str_keys(global const uint* offs, global const uchar* bytes, uint n, global ulong* keys) {
  const uint i = get_global_id(0);
  if (i < n) keys[i] = str_key(bytes, offs[i], offs[i + 1], 0u);
}

// ---- step 1a: the delta sorted by rounds over its chunks. perm[p] is the string at sorted position
// p, head[p] is 1 where the string at p differs from the one at p - 1. Round k sorts the `a` active
// positions act[0, a) (whole groups of strings equal in their first 7k bytes, ascending), stably by
// chunk k and then by their group number grp, so each group stays on its positions. ----

// Round set-up: every position active, in one group, perm the identity, only position 0 a head.
kernel void str_init(uint n, global uint* act, global uint* grp, global uint* perm, global uint* head) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  act[i] = i;
  grp[i] = 0;
  perm[i] = i;
  head[i] = i == 0 ? 1u : 0u;
}

kernel void str_round_keys(global const uint* offs, global const uchar* bytes, global const uint* perm,
                           global const uint* act, uint a, uint chunk, global ulong* keys) {
  const uint i = get_global_id(0);
  if (i >= a) return;
  const uint s = perm[act[i]];
  keys[i] = str_key(bytes, offs[s], offs[s + 1], chunk);
}

// g[i] = grp[order[i]]: the group numbers in the order of the chunk sort.
kernel void str_gather_groups(global const uint* grp, global const uint* order, uint a, global uint* g) {
  const uint i = get_global_id(0);
  if (i < a) g[i] = grp[order[i]];
}

// After both sorts order[i] is the active entry now i-th: its key, and the string it moves to
// position act[i] (read here, written by str_round_place, so no work-item reads a moved entry).
kernel void str_round_gather(global const ulong* keys, global const uint* order, global const uint* perm,
                             global const uint* act, uint a, global ulong* sorted_keys, global uint* moved) {
  const uint i = get_global_id(0);
  if (i >= a) return;
  const uint o = order[i];
  sorted_keys[i] = keys[o];
  moved[i] = perm[act[o]];
}

// Places the moved strings and marks where a group splits: hd[i] is 1 where entry i starts a group
// of strings equal through this chunk (a new group or a different key), head[] gains the splits.
kernel void str_round_place(global const ulong* sorted_keys, global const uint* g, global const uint* moved,
                            global const uint* act, uint a, global uint* perm, global uint* head, global uint* hd) {
  const uint i = get_global_id(0);
  if (i >= a) return;
  perm[act[i]] = moved[i];
  const bool new_group = i == 0 || g[i] != g[i - 1];
  const bool split = !new_group && sorted_keys[i] != sorted_keys[i - 1];
  if (split) head[act[i]] = 1u;
  hd[i] = (new_group || split) ? 1u : 0u;
}

// An entry stays active when its group (the entries from its hd up to the next) has another entry
// and its chunk says more bytes follow (equal keys: the whole group says so).
kernel void str_round_keep(global const ulong* sorted_keys, global const uint* hd, uint a, global uint* keep) {
  const uint i = get_global_id(0);
  if (i >= a) return;
  const bool single = hd[i] && (i + 1 == a || hd[i + 1]);
  keep[i] = (!single && KEY_COUNT(sorted_keys[i]) == KEY_MORE) ? 1u : 0u;
}

// The next round's active positions and group numbers (hpos: exclusive scan of hd, kpos of keep).
kernel void str_round_compact(global const uint* act, global const uint* keep, global const uint* kpos,
                              global const uint* hd, global const uint* hpos, uint a, global uint* act_next,
                              global uint* grp_next) {
  const uint i = get_global_id(0);
  if (i >= a || !keep[i]) return;
  act_next[kpos[i]] = act[i];
  grp_next[kpos[i]] = hpos[i] + hd[i];
}

// U_D from the sorted delta: upos is the exclusive scan of head, so the string at p has id
// upos[p] + head[p] - 1. Each head names its string as the source of U_D entry id and its length;
// every row gets its id. len[m] = 0 so a scan of len[0, m] ends in the byte total.
kernel void str_unique(global const uint* offs, global const uint* perm, global const uint* head,
                       global const uint* upos, uint n, uint m, global uint* ids, global uint* src, global uint* len) {
  const uint p = get_global_id(0);
  if (p >= n) return;
  const uint s = perm[p], id = upos[p] + head[p] - 1u;
  ids[s] = id;
  if (head[p]) {
    src[id] = s;
    len[id] = offs[s + 1] - offs[s];
  }
  if (p == 0) len[m] = 0u;
}

// out string i = string src[i] of column a (src < na) or src - na of column b, at out_offs[i].
kernel void str_gather(global const uint* ao, global const uchar* ab, uint na, global const uint* bo,
                       global const uchar* bb, global const uint* src, uint m, global const uint* out_offs,
                       global uchar* out) {
  const uint i = get_global_id(0);
  if (i >= m) return;
  const uint s = src[i];
  const bool from_a = s < na;
  global const uint* o = from_a ? ao : bo;
  global const uchar* b = from_a ? ab : bb;
  const uint j = from_a ? s : s - na, b0 = o[j], len = o[j + 1] - b0, d = out_offs[i];
  for (uint c = 0; c < len; ++c) out[d + c] = b[b0 + c];
}

// ---- step 1b: merge path over two sorted distinct string dictionaries, as mp_* above with the
// comparisons on strings (keys first, bytes where the keys are equal and say more follows). ----
#define SA ak, ao, abytes
#define SB bk, bo, bbytes
#define STR_ARGS(x) global const ulong *x##k, global const uint *x##o, global const uchar *x##bytes

uint smp_split(STR_ARGS(a), STR_ARGS(b), uint d, uint lo, uint hi) {
  while (lo < hi) {
    uint mid = lo + (hi - lo) / 2;
    if (str_cmp(SB, d - mid - 1, SA, mid) >= 0) lo = mid + 1;  // a[mid] <= b[d - mid - 1]
    else hi = mid;
  }
  return lo;
}

kernel void smp_partition(STR_ARGS(a), uint na, STR_ARGS(b), uint nb, uint tile, uint groups, global uint* split) {
  uint g = get_global_id(0);
  if (g > groups) return;
  uint d = (uint)min((ulong)g * tile, (ulong)na + nb);
  split[g] = smp_split(SA, SB, d, d > nb ? d - nb : 0, min(d, na));
}

// As mp_merge; the write pass names each U'_M entry's source (index in a, or na + index in b) and
// length instead of writing the value, and sets len[m] = 0 for the scan of the byte offsets.
kernel void smp_merge(STR_ARGS(a), uint na, STR_ARGS(b), uint nb, uint tile, uint items, global const uint* split,
                      uint write, uint m, global uint* counts, global uint* src, global uint* len, global uint* xm,
                      global uint* xd) {
  const uint item = get_global_id(0);
  if (write && item == 0) len[m] = 0u;
  uint d, d1, lo, hi;
  if (!mp_item_range(na, nb, tile, items, split, &d, &d1, &lo, &hi)) return;
  uint i = smp_split(SA, SB, d, lo, hi), k = d - i;
  // The entry before the range: the larger of the last ones taken from a and b.
  bool prev_a = true;
  uint prev = 0;
  if (i > 0) prev = i - 1;
  if (k > 0 && (i == 0 || str_cmp(SA, i - 1, SB, k - 1) < 0)) {
    prev_a = false;
    prev = k - 1;
  }
  bool first = d == 0;
  uint id = write ? counts[item] - 1 : 0, heads = 0;
  for (uint j = d; j < d1; ++j) {
    const bool from_a = k >= nb || (i < na && str_cmp(SB, k, SA, i) >= 0);
    const uint v = from_a ? i : k;
    bool head = first;
    if (!first) {
      if (prev_a && from_a) head = str_cmp(SA, prev, SA, v) < 0;
      else if (prev_a) head = str_cmp(SA, prev, SB, v) < 0;
      else if (from_a) head = str_cmp(SB, prev, SA, v) < 0;
      else head = str_cmp(SB, prev, SB, v) < 0;
    }
    if (head) {
      ++heads;
      if (write) {
        ++id;
        src[id] = from_a ? v : na + v;
        len[id] = from_a ? ao[v + 1] - ao[v] : bo[v + 1] - bo[v];
      }
    }
    if (write) {
      if (from_a) xm[i] = id;
      else xd[k] = id;
    }
    if (from_a) ++i;
    else ++k;
    prev = v;
    prev_a = from_a;
    first = false;
  }
  if (!write) counts[item] = heads;
}
#endif  // VKIND == 4
