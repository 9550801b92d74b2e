// Delta merge kernels. VKIND picks the value type: 1 uint, 2 ulong, 3 ulong2 as (hi, lo) 128-bit.
#if VKIND == 1
typedef uint val_t;
#define LT(a, b) ((a) < (b))
#elif VKIND == 2
typedef ulong val_t;
#define LT(a, b) ((a) < (b))
#else
typedef ulong2 val_t;
#define LT(a, b) ((a).x < (b).x || ((a).x == (b).x && (a).y < (b).y))
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
