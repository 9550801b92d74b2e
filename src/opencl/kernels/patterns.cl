// The access patterns of harness/patterns.hpp (runtime/cl_patterns.cpp) over 16-byte words, each
// kernel leaving a result its caller checks. A sum's partials: one per work-item (OpenCL 1.2 has no
// 64-bit atomics to count on), a few KB beside hundreds of MB read.
//
// The loop over a work-item's words: on a GPU a grid-stride loop, so that neighbouring work-items
// touch neighbouring words; on a CPU device (HDB_BLOCKED) a run of consecutive words per
// work-item: on this 2-core EPYC a grid-stride loop read 4.4 GB/s on PoCL and 2.9 on Intel's CPU
// runtime, a blocked one 33 and 10.8 (runtime/cl_patterns.cpp).
#ifdef HDB_BLOCKED
#define FOR_EACH_WORD(i, n)                                                    \
  const ulong per_ = (n + get_global_size(0) - 1) / get_global_size(0);      \
  const ulong end_ = min((ulong)(n), (get_global_id(0) + 1) * per_);         \
  for (ulong i = get_global_id(0) * per_; i < end_; ++i)
#else
#define FOR_EACH_WORD(i, n) for (ulong i = get_global_id(0); i < (n); i += get_global_size(0))
#endif

__kernel void pattern_read(__global const uint4* a, ulong n16, __global ulong* partial) {
  ulong s = 0;
  FOR_EACH_WORD(i, n16) {
    const uint4 v = a[i];
    s += (ulong)v.x + v.y + v.z + v.w;
  }
  partial[get_global_id(0)] = s;
}

__kernel void pattern_write(__global uint4* a, ulong n16, uint value) {
  FOR_EACH_WORD(i, n16) a[i] = (uint4)(value);
}

__kernel void pattern_add(__global const uint4* a, __global const uint4* b, __global uint4* c, ulong n16) {
  FOR_EACH_WORD(i, n16) c[i] = a[i] + b[i];
}

__kernel void pattern_triad(__global uint4* a, __global const uint4* b, __global const uint4* c, ulong n16) {
  FOR_EACH_WORD(i, n16) a[i] = b[i] + 3u * c[i];
}

ulong scatter(ulong i) {
  ulong z = i + 0x9e3779b97f4a7c15UL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9UL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebUL;
  return z ^ (z >> 31);
}

// items: a power of two; item_words 1 (one word) or 8 (two aligned 16-byte loads).
__kernel void pattern_gather(__global const uint* table, ulong items, ulong accesses, uint item_words,
                             __global ulong* partial) {
  const size_t gid = get_global_id(0), stride = get_global_size(0);
  ulong s = 0;
  for (ulong i = gid; i < accesses; i += stride) {
    const ulong at = (scatter(i) & (items - 1)) * item_words;
    if (item_words == 8) {
      const uint4 x = vload4(0, table + at), y = vload4(1, table + at);
      s += (ulong)x.x + x.y + x.z + x.w + y.x + y.y + y.z + y.w;
    } else {
      s += table[at];
    }
  }
  partial[gid] = s;
}
