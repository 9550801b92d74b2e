// The SSB queries on OpenCL (docs/ssb.md, "OpenCL"). One program per query shape, built with
//   -DWG=<work-group size> -DITEMS=<rows per work-item of the fused kernel>
//   -DNDIMS=<0..4 dimensions joined> -DNFACT=<0..2 lineorder predicates> -DAGG=<0|1|2>
//   -DGROUPS=<groups> [-DLOCAL_AGG] [-DINT64_ATOMICS]
// AGG: 0 sum(lo_extendedprice * lo_discount), 1 sum(lo_revenue), 2 sum(lo_revenue - lo_supplycost).
// Dimension arrays are dense, indexed by key - smallest key, holding the row's group-by value minus
// that column's smallest value (0 without a group-by column), or MISS when the row fails the
// dimension's predicates or no row has that key. A group index is sum(value_d * stride_d).
// Sums are 64-bit two's complement: with cl_khr_int64_base_atomics an atom_add on ulong; without
// it (and always in local memory), two 32-bit halves: an atomic_add of the low half whose carry
// (the old value plus the addend wrapping) is added to the high half. The total is exact modulo
// 2^64 in any order of the additions.
#ifdef INT64_ATOMICS
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#endif

#define MISS 0xffffffffu

#define DEFINE_ADD_HALVES(NAME, SPACE)                                  \
  inline void NAME(SPACE uint* lo, SPACE uint* hi, ulong u) {           \
    const uint a = (uint)u;                                             \
    uint h = (uint)(u >> 32);                                           \
    const uint old = atomic_add(lo, a);                                 \
    if (old + a < old) h += 1u;                                         \
    if (h) atomic_add(hi, h);                                           \
  }
DEFINE_ADD_HALVES(add_halves_local, __local)
DEFINE_ADD_HALVES(add_halves_global, __global)

// sums: GROUPS ulongs (64-bit atomics) or GROUPS (lo, hi) uint pairs.
inline void add_global(__global uint* sums, uint g, ulong u) {
#ifdef INT64_ATOMICS
  atom_add((__global ulong*)sums + g, u);
#else
  add_halves_global(sums + 2 * g, sums + 2 * g + 1, u);
#endif
}

// A value in [lo, lo + width] as one unsigned comparison.
#define IN_RANGE(v, lo, width) ((uint)((v) - (lo)) <= (width))
// In a range of r (x..y or z..w; an empty one has lo > hi).
#define IN_RANGES(v, r) (((v) >= (r).x && (v) <= (r).y) || ((v) >= (r).z && (v) <= (r).w))

// One dimension row a work-item: its entry of the dense array (filled with MISS beforehand).
__kernel void ssb_dim_build(uint n, __global const uint* keys, uint min_key, __global const uint* group_col,
                            uint group_min, uint has_group, uint npred, __global const uint* p0, uint4 r0,
                            __global const uint* p1, uint4 r1, __global uint* map) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  bool ok = true;
  if (npred > 0) ok = IN_RANGES(p0[i], r0);
  if (npred > 1) ok = ok && IN_RANGES(p1[i], r1);
  map[keys[i] - min_key] = ok ? (has_group ? group_col[i] - group_min : 0u) : MISS;
}

#if AGG == 0
#define VALUE(a0, a1) ((ulong)a0 * (ulong)a1)
#elif AGG == 1
#define VALUE(a0, a1) ((ulong)a0)
#else
#define VALUE(a0, a1) ((ulong)((long)a0 - (long)a1))
#endif

#define DIM_ARGS(d) \
  __global const uint *fk##d, __global const uint *map##d, uint min##d, uint span##d, uint stride##d
// The probe of dimension d for `row`: drops the row (continue) on a miss, else adds to g.
#define PROBE(d)                                   \
  {                                                \
    const uint off = fk##d[row] - min##d;          \
    if (off >= span##d) continue;                  \
    const uint r = map##d[off];                    \
    if (r == MISS) continue;                       \
    g += r * stride##d;                            \
  }

// The fused query: a work-group takes a tile of WG * ITEMS lineorder rows (work-item lid takes
// rows tile + k * WG + lid), tests lineorder's own predicates first, probes the dimensions in the
// order given (most selective first), and adds the row's value to its group: in local memory when
// built with LOCAL_AGG (flushed once per work-group), else straight to the global sums.
__kernel void ssb_fused(uint n, __global const uint* f0, uint f0lo, uint f0w, __global const uint* f1, uint f1lo,
                        uint f1w, DIM_ARGS(0), DIM_ARGS(1), DIM_ARGS(2), DIM_ARGS(3), __global const uint* a0,
                        __global const uint* a1, __global uint* sums, __global uint* seen) {
  const uint lid = get_local_id(0);
#ifdef LOCAL_AGG
  __local uint llo[GROUPS], lhi[GROUPS], lseen[GROUPS];
  for (uint g = lid; g < GROUPS; g += WG) {
    llo[g] = 0;
    lhi[g] = 0;
    lseen[g] = 0;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
#endif
  const ulong tile = (ulong)get_group_id(0) * (WG * ITEMS);
  for (uint k = 0; k < ITEMS; ++k) {
    const ulong row = tile + (ulong)k * WG + lid;
    if (row >= n) break;
#if NFACT > 0
    if (!IN_RANGE(f0[row], f0lo, f0w)) continue;
#endif
#if NFACT > 1
    if (!IN_RANGE(f1[row], f1lo, f1w)) continue;
#endif
    uint g = 0;
#if NDIMS > 0
    PROBE(0)
#endif
#if NDIMS > 1
    PROBE(1)
#endif
#if NDIMS > 2
    PROBE(2)
#endif
#if NDIMS > 3
    PROBE(3)
#endif
    const ulong v = VALUE(a0[row], a1[row]);
#ifdef LOCAL_AGG
    add_halves_local(llo + g, lhi + g, v);
    lseen[g] = 1u;
#else
    add_global(sums, g, v);
    seen[g] = 1u;
#endif
  }
#ifdef LOCAL_AGG
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint g = lid; g < GROUPS; g += WG)
    if (lseen[g]) {
      add_global(sums, g, ((ulong)lhi[g] << 32) | llo[g]);
      seen[g] = 1u;
    }
#endif
}

// --- operator at a time: every intermediate in global memory ---------------------------------

// select: flags[i] = row i passes lineorder's own predicates.
__kernel void ssb_op_select(uint n, __global const uint* f0, uint f0lo, uint f0w, __global const uint* f1, uint f1lo,
                            uint f1w, uint nfact, __global uint* flags) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  bool ok = true;
  if (nfact > 0) ok = IN_RANGE(f0[i], f0lo, f0w);
  if (nfact > 1) ok = ok && IN_RANGE(f1[i], f1lo, f1w);
  flags[i] = ok ? 1u : 0u;
}

// gather: out[i] = col[rows[i]].
__kernel void ssb_op_gather(uint m, __global const uint* col, __global const uint* rows, __global uint* out) {
  const uint i = get_global_id(0);
  if (i < m) out[i] = col[rows[i]];
}

// dimension lookup: val[i] = the dense array's entry of key fk[i]; flags[i] = it is no miss.
__kernel void ssb_op_probe(uint m, __global const uint* fk, __global const uint* map, uint min_key, uint span,
                           __global uint* val, __global uint* flags) {
  const uint i = get_global_id(0);
  if (i >= m) return;
  const uint off = fk[i] - min_key;
  const uint r = off < span ? map[off] : MISS;
  val[i] = r;
  flags[i] = r != MISS ? 1u : 0u;
}

// compaction's scatter (after the scan of flags into offs): the kept rows' ids (i itself when
// `identity`) and group indices (grp_in[i] when has_grp, plus val[i] * stride when has_val).
__kernel void ssb_op_compact(uint m, __global const uint* flags, __global const uint* offs, uint identity,
                             __global const uint* rows_in, uint has_grp, __global const uint* grp_in, uint has_val,
                             __global const uint* val, uint stride, __global uint* rows_out, __global uint* grp_out) {
  const uint i = get_global_id(0);
  if (i >= m || !flags[i]) return;
  const uint o = offs[i];
  rows_out[o] = identity ? i : rows_in[i];
  grp_out[o] = (has_grp ? grp_in[i] : 0u) + (has_val ? val[i] * stride : 0u);
}

// the aggregate's operand per kept row (64-bit), from the gathered columns.
__kernel void ssb_op_value(uint m, __global const uint* a0, __global const uint* a1, __global ulong* v) {
  const uint i = get_global_id(0);
  if (i < m) v[i] = VALUE(a0[i], a1[i]);
}

// group-by: each row's value into its group's global sum.
__kernel void ssb_op_group(uint m, __global const uint* grp, __global const ulong* v, __global uint* sums,
                           __global uint* seen) {
  const uint i = get_global_id(0);
  if (i >= m) return;
  const uint g = grp[i];
  add_global(sums, g, v[i]);
  seen[g] = 1u;
}
