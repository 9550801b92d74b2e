// LSD radix sort of keys with a 32-bit payload, RADIX_BITS bits per pass. Each pass is three steps:
// radix_count (a local-memory histogram of one tile per work-group), an exclusive scan of the
// digit-major histogram (scan.cl's scan_blocks/scan_add), and radix_scatter (each tile ranks its
// elements stably and writes them to their digit's offsets). Comes after scan.cl, whose
// wg_exclusive_scan ranks the elements. Built with -DWG=<work-group size>, -DITEMS=<keys per
// work-item> and -DKKIND=1 (uint), 2 (ulong) or 3 (ulong2 as (hi, lo), the suite's 128-bit values).
#define RADIX_BITS 4
#define RADIX (1u << RADIX_BITS)

#if KKIND == 1
typedef uint skey_t;
uint digit_of(skey_t k, uint shift) { return (k >> shift) & (RADIX - 1); }
#elif KKIND == 2
typedef ulong skey_t;
uint digit_of(skey_t k, uint shift) { return (uint)(k >> shift) & (RADIX - 1); }
#else
typedef ulong2 skey_t;
uint digit_of(skey_t k, uint shift) { return (uint)(shift < 64 ? k.y >> shift : k.x >> (shift - 64)) & (RADIX - 1); }
#endif

// Each work-group sorts a tile of WG * ITEMS keys per pass; work-item t owns the ITEMS consecutive
// keys [t * ITEMS, (t + 1) * ITEMS) of its group's tile.
#define TILE ((ulong)WG * ITEMS)

// hist[digit * groups + group] = how many keys of the group's tile have that digit. Digit-major, so
// one exclusive scan gives every (digit, group) its first output position. Private counters per
// work-item, summed per digit through local memory (no atomics).
__kernel void radix_count(__global const skey_t* keys, uint n, uint shift, __global uint* hist) {
  __local uint cnt[RADIX * WG];
  const uint lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
  const ulong first = g * TILE + (ulong)lid * ITEMS;
  const uint mine = first < n ? (uint)min((ulong)ITEMS, n - first) : 0u;
  uint c[RADIX];
  for (uint d = 0; d < RADIX; ++d) c[d] = 0;
  for (uint j = 0; j < ITEMS; ++j)
    if (j < mine) ++c[digit_of(keys[first + j], shift)];
  for (uint d = 0; d < RADIX; ++d) cnt[d * WG + lid] = c[d];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = lid; d < RADIX; d += WG) {
    uint sum = 0;
    for (uint t = 0; t < WG; ++t) sum += cnt[d * WG + t];
    hist[d * groups + g] = sum;
  }
}

// Moves the group's tile to the offsets of the scanned histogram, stably. Every work-item counts
// the digits of its keys (private counters) into a digit-major table rank[digit][item]; an
// exclusive scan of that table in local memory (RADIX entries per work-item serially, then
// wg_exclusive_scan over the work-items) gives each work-item, per digit, where its keys rank
// within the tile; each then writes its keys in order. Few barriers per tile, which is what a CPU
// device (PoCL runs the work-items between two barriers as a loop) needs.
// iota != 0: the payload is the element's index (vin is not read).
__kernel void radix_scatter(__global const skey_t* kin, __global const uint* vin, uint iota, uint n, uint shift,
                            __global const uint* offsets, __global skey_t* kout, __global uint* vout) {
  __local uint rank[RADIX * WG];
  __local uint scan_tmp[2 * WG];
  __local uint base[RADIX];  // the group's first output position per digit, less the digit's start in the tile
  const uint lid = get_local_id(0), g = get_group_id(0), groups = get_num_groups(0);
  const ulong first = g * TILE + (ulong)lid * ITEMS;
  const uint mine = first < n ? (uint)min((ulong)ITEMS, n - first) : 0u;
  skey_t key[ITEMS];
  uint next[RADIX];
  for (uint d = 0; d < RADIX; ++d) next[d] = 0;
  for (uint j = 0; j < ITEMS; ++j)
    if (j < mine) {
      key[j] = kin[first + j];
      ++next[digit_of(key[j], shift)];
    }
  for (uint d = 0; d < RADIX; ++d) rank[d * WG + lid] = next[d];
  barrier(CLK_LOCAL_MEM_FENCE);
  uint sum = 0;
  for (uint j = 0; j < RADIX; ++j) sum += rank[lid * RADIX + j];
  uint tile_total;
  uint run = wg_exclusive_scan(sum, scan_tmp, &tile_total);
  for (uint j = 0; j < RADIX; ++j) {
    const uint c = rank[lid * RADIX + j];
    rank[lid * RADIX + j] = run;
    run += c;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = lid; d < RADIX; d += WG) base[d] = offsets[d * groups + g] - rank[d * WG];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 0; d < RADIX; ++d) next[d] = base[d] + rank[d * WG + lid];
  for (uint j = 0; j < ITEMS; ++j)
    if (j < mine) {
      const uint dst = next[digit_of(key[j], shift)]++;
      kout[dst] = key[j];
      vout[dst] = iota ? (uint)(first + j) : vin[first + j];
    }
}

// ---------------------------------------------------------------------------------------------
// Whole-tuple LSD radix sort, 8 bits of the 32-bit key (word 0 of a tuple of `w` uints) a pass:
// 4 passes, each tuple_count + a scan of the digit-major histogram + tuple_scatter. Work-item b
// owns the chunk [b * chunk, (b + 1) * chunk) of tuples and walks it in order (no barriers, no
// local memory): its 256 digit counters are private, so a stable scatter needs no ranking inside a
// work-group. The chunk (and so how many work-items there are) is chosen on the host from the
// device. This is the shape of the CPU backend's radix sort; on a CPU device (PoCL runs a
// work-group's work-items as a loop) it is one thread's loop over a long chunk; on a GPU it is
// correct but uncoalesced. Tuples move whole, so no key extraction and no final gather.
#ifndef TR_BITS
#define TR_BITS 8
#endif
#define TR_RADIX (1u << TR_BITS)

uint tr_digit(uint k, uint shift) { return (k >> shift) & (TR_RADIX - 1u); }

// The digit at `shift` of word `kw` of each tuple (a 64-bit key's low word is word 1, its high
// word word 0, so LSD passes take word 1 first).
// hist[d * blocks + b] = tuples of chunk b whose digit is d.
__kernel void tuple_count(__global const uint* in, uint n, uint w, uint kw, uint shift, uint chunk, uint blocks,
                          __global uint* hist) {
  const uint b = get_global_id(0);
  if (b >= blocks) return;
  uint c[TR_RADIX];
  for (uint d = 0; d < TR_RADIX; ++d) c[d] = 0;
  const ulong begin = (ulong)b * chunk, end = min((ulong)n, begin + chunk);
  for (ulong i = begin; i < end; ++i) ++c[tr_digit(in[i * w + kw], shift)];
  for (uint d = 0; d < TR_RADIX; ++d) hist[(ulong)d * blocks + b] = c[d];
}

// Moves chunk b's tuples, in order, to the scanned histogram's offsets (stable).
__kernel void tuple_scatter(__global const uint* in, uint n, uint w, uint kw, uint shift, uint chunk, uint blocks,
                            __global const uint* offsets, __global uint* out) {
  const uint b = get_global_id(0);
  if (b >= blocks) return;
  uint o[TR_RADIX];
  for (uint d = 0; d < TR_RADIX; ++d) o[d] = offsets[(ulong)d * blocks + b];
  const ulong begin = (ulong)b * chunk, end = min((ulong)n, begin + chunk);
  if (w == 2) {
    __global const uint2* in2 = (__global const uint2*)in;
    __global uint2* out2 = (__global uint2*)out;
    for (ulong i = begin; i < end; ++i) {
      const uint2 t = in2[i];
      out2[o[tr_digit(kw ? t.y : t.x, shift)]++] = t;
    }
  } else if (w == 1) {
    for (ulong i = begin; i < end; ++i) {
      const uint k = in[i];
      out[o[tr_digit(k, shift)]++] = k;
    }
  } else {
    for (ulong i = begin; i < end; ++i) {
      __global const uint* src = in + i * w;
      __global uint* dst = out + (ulong)o[tr_digit(src[kw], shift)]++ * w;
      for (uint k = 0; k < w; ++k) dst[k] = src[k];
    }
  }
}
