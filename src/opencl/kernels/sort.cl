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
