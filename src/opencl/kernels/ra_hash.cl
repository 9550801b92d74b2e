// The hash variant (ra_hash.cpp): unique, reduce-by-key, join and set operations on input in any
// order. Appended to ra.cl (KEY, key_t, KW). Tables are power-of-two arrays of uint slots holding
// ROW INDICES, never keys: every key, 0xffffffff and 2^64 - 1 included, is a legal key, while no
// row index reaches EMPTY (rows32() keeps rows below 2^32 - 1). Rows are compared through the
// input, which no kernel writes, so a slot's winner is usable the moment its index is seen: no
// work-item ever waits for another (PoCL runs a work-group's items one after another).
#define EMPTY 0xffffffffu

// SplitMix64's finaliser: every key bit moves the low bits the mask keeps.
inline ulong mix64(ulong z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  return z ^ (z >> 31);
}

inline uint key_slot(key_t key, uint mask) { return (uint)mix64((ulong)key) & mask; }

inline uint tuple_slot(__global const uint* t, uint w, uint mask) {
  ulong h = 0;
  for (uint k = 0; k < w; ++k) h = (h ^ t[k]) * 0x9E3779B97F4A7C15UL;
  return (uint)mix64(h) & mask;
}

inline bool same_tuple(__global const uint* a, __global const uint* b, uint w) {
  for (uint k = 0; k < w; ++k)
    if (a[k] != b[k]) return false;
  return true;
}

// The slot of row i's key (linear probing). A slot's key never changes once claimed, so every row
// of a key stops at the same slot. keep_first: the slot ends holding the key's lowest row (unique's
// contract); a smaller row of the same key may replace the one there at any time, since probes
// compare only keys. The plain read spares the atomics where the slot is already decided, as it
// is for every row of a heavy key but its first.
inline uint key_group(__global const uint* in, uint w, uint i, volatile __global uint* table, uint mask,
                      bool keep_first) {
  const key_t key = KEY(in + (ulong)i * w);
  for (uint s = key_slot(key, mask);; s = (s + 1) & mask) {
    uint e = table[s];
    if (e == EMPTY) {
      e = atomic_cmpxchg(&table[s], EMPTY, i);
      if (e == EMPTY) return s;
    }
    if (KEY(in + (ulong)e * w) == key) {
      if (keep_first && i < e) atomic_min(&table[s], i);
      return s;
    }
  }
}

// from_last (tests): rows are taken last first, so that where work-items run in order (PoCL) a
// key's later rows claim its slot first and the keep-first step has work to do in every test.
__kernel void hash_unique_insert(__global const uint* in, uint n, uint w, volatile __global uint* table, uint mask,
                                 uint from_last) {
  const uint g = get_global_id(0);
  if (g < n) key_group(in, w, from_last ? n - 1 - g : g, table, mask, true);
}

// Folds row i's values into its group's agg[slot * values + v] (op: 0 sum modulo 2^32, 1 min,
// 2 max; agg starts at the op's identity).
__kernel void hash_reduce_insert(__global const uint* in, uint n, uint w, uint op, volatile __global uint* table,
                                 uint mask, volatile __global uint* agg) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const uint values = w - KW;
  volatile __global uint* a = agg + (ulong)key_group(in, w, i, table, mask, false) * values;
  __global const uint* t = in + (ulong)i * w + KW;
  for (uint v = 0; v < values; ++v) {
    if (op == 0) atomic_add(a + v, t[v]);
    else if (op == 1) atomic_min(a + v, t[v]);
    else atomic_max(a + v, t[v]);
  }
}

// Compaction runs over chunks of `chunk` consecutive slots (or right rows), chunk c covering
// [c * chunk, min((c + 1) * chunk, n)): a count per chunk, their scan, and a writer per chunk that
// walks its slots in order. chunk = 1 on a GPU (a work-item per slot); long chunks on a CPU device,
// where a scan of one count per slot costs more than the whole operator (PoCL runs the scan's
// work-group barriers as loops over the work-items).
inline uint chunk_end(uint c, uint chunk, uint n) { return (uint)min((ulong)(c + 1) * chunk, (ulong)n); }

// counts[c]: the groups (occupied slots) of chunk c.
__kernel void hash_occupied(__global const uint* table, uint slots, uint chunk, __global uint* counts) {
  const uint c = get_global_id(0);
  if ((ulong)c * chunk >= slots) return;
  uint n = 0;
  for (uint s = c * chunk, e = chunk_end(c, chunk, slots); s < e; ++s) n += table[s] != EMPTY;
  counts[c] = n;
}

// A group's output row: its representative tuple (unique), or its key and agg's folded values.
__kernel void hash_group_write(__global const uint* in, uint w, __global const uint* table, uint slots, uint chunk,
                               __global const uint* offsets, uint reduce, __global const uint* agg,
                               __global uint* out) {
  const uint c = get_global_id(0);
  if ((ulong)c * chunk >= slots) return;
  const uint values = w - KW, from_row = reduce ? KW : w;
  __global uint* dst = out + (ulong)offsets[c] * w;
  for (uint s = c * chunk, e = chunk_end(c, chunk, slots); s < e; ++s) {
    const uint row = table[s];
    if (row == EMPTY) continue;
    __global const uint* src = in + (ulong)row * w;
    for (uint k = 0; k < from_row; ++k) dst[k] = src[k];
    for (uint k = from_row; k < w; ++k) dst[k] = agg[(ulong)s * values + k - KW];
    dst += w;
  }
}

// Join: chains over the left rows, next[i] the row pushed before i on its head.
__kernel void hash_join_build(__global const uint* l, uint nl, uint wl, volatile __global uint* head, uint mask,
                              __global uint* next) {
  const uint i = get_global_id(0);
  if (i < nl) next[i] = atomic_xchg(&head[key_slot(KEY(l + (ulong)i * wl), mask)], i);
}

// The first left row with `key` from chain link e on (EMPTY: none). A right row's matches:
// for (e = match_from(head[slot]); e != EMPTY; e = match_from(next[e])).
inline uint match_from(__global const uint* l, uint wl, __global const uint* next, uint e, key_t key) {
  while (e != EMPTY && KEY(l + (ulong)e * wl) != key) e = next[e];
  return e;
}

// counts[c]: the matches of chunk c's right rows (64-bit: a join's output may pass 2^32 rows).
__kernel void hash_join_count(__global const uint* l, uint wl, __global const uint* r, uint nr, uint wr,
                              __global const uint* head, uint mask, __global const uint* next, uint chunk,
                              __global ulong* counts) {
  const uint c = get_global_id(0);
  if ((ulong)c * chunk >= nr) return;
  ulong n = 0;
  for (uint j = c * chunk, end = chunk_end(c, chunk, nr); j < end; ++j) {
    const key_t key = KEY(r + (ulong)j * wr);
    for (uint e = match_from(l, wl, next, head[key_slot(key, mask)], key); e != EMPTY;
         e = match_from(l, wl, next, next[e], key))
      ++n;
  }
  counts[c] = n;
}

// (key, left values, right values) for each match of chunk c's right rows, from offsets[c] on.
__kernel void hash_join_write(__global const uint* l, uint wl, __global const uint* r, uint nr, uint wr,
                              __global const uint* head, uint mask, __global const uint* next, uint chunk,
                              __global const ulong* offsets, __global uint* out) {
  const uint c = get_global_id(0);
  if ((ulong)c * chunk >= nr) return;
  const uint ow = wl + wr - KW;
  __global uint* dst = out + offsets[c] * ow;
  for (uint j = c * chunk, end = chunk_end(c, chunk, nr); j < end; ++j) {
    __global const uint* rt = r + (ulong)j * wr;
    const key_t key = KEY(rt);
    for (uint e = match_from(l, wl, next, head[key_slot(key, mask)], key); e != EMPTY;
         e = match_from(l, wl, next, next[e], key), dst += ow) {
      for (uint k = 0; k < wl; ++k) dst[k] = l[(ulong)e * wl + k];
      for (uint k = KW; k < wr; ++k) dst[wl + k - KW] = rt[k];
    }
  }
}

// Set operations: a's rows and then b's in one index space g (b's row g - na), whole tuples.
inline __global const uint* set_row(__global const uint* a, uint na, __global const uint* b, uint g, uint w) {
  return g < na ? a + (ulong)g * w : b + (ulong)(g - na) * w;
}

// Copies of a distinct tuple in the output by its counts in a and b (bag semantics):
// op 0 union max, 1 intersection min, 2 difference a - b where positive.
inline uint set_copies(uint op, uint ca, uint cb) {
  return op == 0 ? max(ca, cb) : op == 1 ? min(ca, cb) : ca > cb ? ca - cb : 0u;
}

// Counts each tuple in a (counts[2 * slot]) and in b (counts[2 * slot + 1]) at its distinct tuple's slot.
__kernel void hash_set_insert(__global const uint* a, uint na, __global const uint* b, uint nb, uint w,
                              volatile __global uint* table, uint mask, volatile __global uint* counts) {
  const uint g = get_global_id(0);
  if (g >= na + nb) return;
  __global const uint* t = set_row(a, na, b, g, w);
  for (uint s = tuple_slot(t, w, mask);; s = (s + 1) & mask) {
    uint e = table[s];
    if (e == EMPTY) e = atomic_cmpxchg(&table[s], EMPTY, g);
    if (e == EMPTY || same_tuple(set_row(a, na, b, e, w), t, w)) {
      atomic_inc(&counts[2 * (ulong)s + (g >= na)]);
      return;
    }
  }
}

inline uint slot_copies(__global const uint* counts, uint s, uint op) {
  return set_copies(op, counts[2 * (ulong)s], counts[2 * (ulong)s + 1]);
}

// copies[c]: the output rows of chunk c's slots.
__kernel void hash_set_copies(__global const uint* counts, uint slots, uint chunk, uint op, __global uint* copies) {
  const uint c = get_global_id(0);
  if ((ulong)c * chunk >= slots) return;
  uint n = 0;
  for (uint s = c * chunk, e = chunk_end(c, chunk, slots); s < e; ++s) n += slot_copies(counts, s, op);
  copies[c] = n;
}

__kernel void hash_set_write(__global const uint* a, uint na, __global const uint* b, uint w,
                             __global const uint* table, uint slots, __global const uint* counts, uint op, uint chunk,
                             __global const uint* offsets, __global uint* out) {
  const uint c = get_global_id(0);
  if ((ulong)c * chunk >= slots) return;
  __global uint* dst = out + (ulong)offsets[c] * w;
  for (uint s = c * chunk, e = chunk_end(c, chunk, slots); s < e; ++s) {
    const uint n = slot_copies(counts, s, op);
    if (n == 0) continue;
    __global const uint* t = set_row(a, na, b, table[s], w);
    for (uint i = 0; i < n; ++i, dst += w)
      for (uint k = 0; k < w; ++k) dst[k] = t[k];
  }
}
