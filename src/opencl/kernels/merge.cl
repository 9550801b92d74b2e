// Delta merge kernels. VKIND picks the value type: 1 uint, 2 ulong, 3 ulong2 as (hi, lo) 128-bit.
#if VKIND == 1
typedef uint val_t;
#define LT(a, b) ((a) < (b))
#define NE(a, b) ((a) != (b))
#elif VKIND == 2
typedef ulong val_t;
#define LT(a, b) ((a) < (b))
#define NE(a, b) ((a) != (b))
#else
typedef ulong2 val_t;
#define LT(a, b) ((a).x < (b).x || ((a).x == (b).x && (a).y < (b).y))
#define NE(a, b) ((a).x != (b).x || (a).y != (b).y)
#endif

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
  const uint g = get_group_id(0), item = get_global_id(0);
  const ulong n = (ulong)na + nb, d0 = (ulong)item * items;
  if (d0 >= n) return;
  const uint d1 = (uint)min(n, d0 + items), gd0 = g * tile, gd1 = (uint)min(n, (ulong)gd0 + tile);
  const uint a0 = split[g], a1 = split[g + 1], b0 = gd0 - a0, b1 = gd1 - a1, d = (uint)d0;
  uint i = mp_split(a, b, d, max(a0, d > b1 ? d - b1 : 0u), min(a1, d - b0)), k = d - i;
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
