// Work-group prefix sums in local memory (the paper's Algorithm 3) and the multi-level scan of
// per-partition counts (the paper's second and third kernels). Built with -DWG=<work-group size>.

// Exclusive scan of one uint per work-item; *total receives the work-group's sum. Hillis-Steele
// steps on two local buffers (tmp holds 2 * WG uints) so no step reads what it overwrites.
uint wg_exclusive_scan(uint x, __local uint* tmp, uint* total) {
  const uint lid = get_local_id(0);
  __local uint* src = tmp;
  __local uint* dst = tmp + WG;
  src[lid] = x;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint off = 1; off < WG; off <<= 1) {
    uint v = src[lid];
    if (lid >= off) v += src[lid - off];
    dst[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local uint* t = src;
    src = dst;
    dst = t;
  }
  const uint inclusive = src[lid];
  *total = src[WG - 1];
  barrier(CLK_LOCAL_MEM_FENCE);
  return inclusive - x;
}

// out[i] = exclusive prefix of in[] within each block of WG; block_sums[block] = the block's sum.
__kernel void scan_blocks(__global const uint* in, uint n, __global uint* out, __global uint* block_sums) {
  __local uint tmp[2 * WG];
  const uint gid = get_global_id(0);
  uint total;
  const uint ex = wg_exclusive_scan(gid < n ? in[gid] : 0u, tmp, &total);
  if (gid < n) out[gid] = ex;
  if (get_local_id(0) == 0) block_sums[get_group_id(0)] = total;
}

// Adds the scanned block sums: turns block-local prefixes into global ones.
__kernel void scan_add(__global uint* out, uint n, __global const uint* block_offsets) {
  const uint gid = get_global_id(0);
  if (gid < n) out[gid] += block_offsets[get_group_id(0)];
}
