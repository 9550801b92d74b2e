// Work-group prefix sums in local memory (the paper's Algorithm 3) and the multi-level scan of
// per-partition counts (the paper's second and third kernels). Built with -DWG=<work-group size>.

// Exclusive scan of one value per work-item; *total receives the work-group's sum. Hillis-Steele
// steps on two local buffers (tmp holds 2 * WG values) so no step reads what it overwrites. For
// uint (counts of kept tuples) and ulong (join output counts, which may pass 2^32).
#define DEFINE_WG_EXCLUSIVE_SCAN(NAME, T)              \
  T NAME(T x, __local T* tmp, T* total) {              \
    const uint lid = get_local_id(0);                  \
    __local T* src = tmp;                              \
    __local T* dst = tmp + WG;                         \
    src[lid] = x;                                      \
    barrier(CLK_LOCAL_MEM_FENCE);                      \
    for (uint off = 1; off < WG; off <<= 1) {          \
      T v = src[lid];                                  \
      if (lid >= off) v += src[lid - off];             \
      dst[lid] = v;                                    \
      barrier(CLK_LOCAL_MEM_FENCE);                    \
      __local T* t = src;                              \
      src = dst;                                       \
      dst = t;                                         \
    }                                                  \
    const T inclusive = src[lid];                      \
    *total = src[WG - 1];                              \
    barrier(CLK_LOCAL_MEM_FENCE);                      \
    return inclusive - x;                              \
  }
DEFINE_WG_EXCLUSIVE_SCAN(wg_exclusive_scan, uint)
DEFINE_WG_EXCLUSIVE_SCAN(wg_exclusive_scan_ulong, ulong)

// The multi-level scan's element: uint, or ulong when built with -DSCAN_WIDE.
#ifdef SCAN_WIDE
typedef ulong scan_t;
#define WG_SCAN wg_exclusive_scan_ulong
#else
typedef uint scan_t;
#define WG_SCAN wg_exclusive_scan
#endif

// out[i] = exclusive prefix of in[] within each block of WG; block_sums[block] = the block's sum.
__kernel void scan_blocks(__global const scan_t* in, uint n, __global scan_t* out, __global scan_t* block_sums) {
  __local scan_t tmp[2 * WG];
  const uint gid = get_global_id(0);
  scan_t total;
  const scan_t ex = WG_SCAN(gid < n ? in[gid] : (scan_t)0, tmp, &total);
  if (gid < n) out[gid] = ex;
  if (get_local_id(0) == 0) block_sums[get_group_id(0)] = total;
}

// Adds the scanned block sums: turns block-local prefixes into global ones.
__kernel void scan_add(__global scan_t* out, uint n, __global const scan_t* block_offsets) {
  const uint gid = get_global_id(0);
  if (gid < n) out[gid] += block_offsets[get_group_id(0)];
}
