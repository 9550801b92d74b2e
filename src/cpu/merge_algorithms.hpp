#pragma once
// The CPU delta merge, serial (the papers' single-core STL baseline) and parallel (all cores), for
// any value type with < and ==. Parallel regions run through runtime/chunks.hpp (the pool of blocking workers).
#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "merge_pack.hpp"
#include "runtime/chunks.hpp"
#include "workloads/columns.hpp"

namespace hdb::cpu {

// Below this many elements per thread a parallel step uses fewer threads (tests pass 1 to force
// every thread to work on tiny inputs).
inline constexpr std::uint64_t kGrain = 4096;

// Runs fn(t) for t in [0, threads) concurrently: one chunk per thread (runtime/chunks.hpp).
template <class F>
void run_threads(int threads, F&& fn) {
  for_chunks(std::max(threads, 1), threads, fn);
}

inline std::uint64_t share(std::uint64_t n, int t, int threads) {
  return n * static_cast<std::uint64_t>(t) / static_cast<std::uint64_t>(threads);
}

// ---- 1a: U_D = sort + unique of the delta; ids of the delta rows by binary search in U_D.

template <class T>
void delta_dict_serial(const std::vector<T>& delta, std::vector<T>& ud) {
  ud.assign(delta.begin(), delta.end());
  std::sort(ud.begin(), ud.end());
  ud.erase(std::unique(ud.begin(), ud.end()), ud.end());
}

// LSD radix sort of unsigned integers, 8 bits a pass (all histograms from one read; a pass whose
// digit is the same for every key is skipped), through `tmp` of n entries.
template <class T>
void radix_sort(T* a, std::uint64_t n, T* tmp) {
  constexpr unsigned kPasses = sizeof(T);
  std::vector<std::uint64_t> count(kPasses * 256, 0);
  for (std::uint64_t i = 0; i < n; ++i)
    for (unsigned p = 0; p < kPasses; ++p) ++count[p * 256 + ((a[i] >> (8 * p)) & 255)];
  T *src = a, *dst = tmp;
  for (unsigned p = 0; p < kPasses; ++p) {
    std::uint64_t* c = count.data() + p * 256;
    if (std::find(c, c + 256, n) != c + 256) continue;
    std::uint64_t sum = 0;
    for (unsigned d = 0; d < 256; ++d) {
      std::uint64_t k = c[d];
      c[d] = sum;
      sum += k;
    }
    for (std::uint64_t i = 0; i < n; ++i) dst[c[(src[i] >> (8 * p)) & 255]++] = src[i];
    std::swap(src, dst);
  }
  if (src != a) std::copy(src, src + n, a);
}

// Sorts [b, e): radix for unsigned integers, std::sort otherwise; tmp has e - b entries.
template <class T>
void sort_piece(T* b, T* e, T* tmp) {
  if constexpr (std::is_integral_v<T> && std::is_unsigned_v<T>)
    radix_sort(b, static_cast<std::uint64_t>(e - b), tmp);
  else
    std::sort(b, e);
}

// Each thread sorts (sort_piece) and de-duplicates a chunk; then rounds of pairwise set_union
// (distinct inputs give a distinct union) halve the number of runs.
template <class T>
void delta_dict_parallel(const std::vector<T>& delta, std::vector<T>& ud, std::vector<T>& tmp, int threads,
                         std::uint64_t grain = kGrain) {
  std::uint64_t n = delta.size();
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, n / grain + 1)));
  ud.resize(n);
  tmp.resize(n);
  std::vector<std::uint64_t> lo(threads), len(threads);
  run_threads(threads, [&](int t) {
    std::uint64_t b = share(n, t, threads), e = share(n, t + 1, threads);
    std::copy(delta.begin() + b, delta.begin() + e, ud.begin() + b);
    sort_piece(ud.data() + b, ud.data() + e, tmp.data() + b);
    lo[t] = b;
    len[t] = std::unique(ud.begin() + b, ud.begin() + e) - (ud.begin() + b);
  });
  for (int runs = threads; runs > 1; runs = (runs + 1) / 2) {
    int pairs = runs / 2;
    run_threads(std::max(pairs, 1), [&](int p) {
      int a = 2 * p, b = a + 1;
      auto end = std::set_union(ud.begin() + lo[a], ud.begin() + lo[a] + len[a], ud.begin() + lo[b],
                                ud.begin() + lo[b] + len[b], tmp.begin() + lo[a]);
      len[a] = end - (tmp.begin() + lo[a]);
    });
    if (runs % 2)
      std::copy(ud.begin() + lo[runs - 1], ud.begin() + lo[runs - 1] + len[runs - 1], tmp.begin() + lo[runs - 1]);
    for (int p = 0; p < (runs + 1) / 2; ++p) {
      lo[p] = lo[2 * p];
      len[p] = len[2 * p];
    }
    ud.swap(tmp);
  }
  ud.resize(n ? len[0] : 0);
}

// Lower bounds of values[0, count) in dict[0, n) by binary search, kLanes searches at a time in
// lockstep: the search is branch-free (the comparison picks the next base, no misprediction), and
// the lanes' loads are independent, so a dictionary beyond L1 is read with kLanes misses in flight
// instead of one dependent chain per search.
template <class T>
void lower_bounds(const T* dict, std::uint64_t n, const T* values, std::uint64_t count, std::uint32_t* out) {
  constexpr unsigned kLanes = 16;
  if (n == 0) {
    std::fill(out, out + count, 0u);
    return;
  }
  for (std::uint64_t i = 0; i < count; i += kLanes) {
    unsigned m = static_cast<unsigned>(std::min<std::uint64_t>(kLanes, count - i));
    std::uint64_t base[kLanes] = {};
    for (std::uint64_t len = n; len > 1;) {
      std::uint64_t half = len / 2;
      for (unsigned j = 0; j < m; ++j) base[j] += (dict[base[j] + half] < values[i + j]) ? half : 0;
      len -= half;
    }
    for (unsigned j = 0; j < m; ++j) out[i + j] = static_cast<std::uint32_t>(base[j] + (dict[base[j]] < values[i + j]));
  }
}

template <class T>
void ids_of(const std::vector<T>& dict, const std::vector<T>& values, std::vector<std::uint32_t>& ids, int threads,
            std::uint64_t grain = kGrain) {
  ids.resize(values.size());
  int th = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, values.size() / grain + 1)));
  run_threads(th, [&](int t) {
    std::uint64_t b = share(values.size(), t, th), e = share(values.size(), t + 1, th);
    lower_bounds(dict.data(), dict.size(), values.data() + b, e - b, ids.data() + b);
  });
}

// ---- 1b: merge U_M and U_D into U'_M, writing X_M and X_D.

// Two-pointer merge of a[ab, ae) and b[bb, be) from output position w; returns the end position.
// With out == nullptr it only counts (phase 1 of the parallel merge).
template <class T>
std::uint64_t merge_range(const T* a, std::uint64_t ab, std::uint64_t ae, const T* b, std::uint64_t bb,
                          std::uint64_t be, std::uint64_t w, T* out, std::uint32_t* xa, std::uint32_t* xb) {
  std::uint64_t i = ab, k = bb;
  while (i < ae && k < be) {
    if (a[i] < b[k]) {
      if (out) out[w] = a[i], xa[i] = static_cast<std::uint32_t>(w);
      ++i;
    } else if (b[k] < a[i]) {
      if (out) out[w] = b[k], xb[k] = static_cast<std::uint32_t>(w);
      ++k;
    } else {
      if (out) out[w] = a[i], xa[i] = xb[k] = static_cast<std::uint32_t>(w);
      ++i, ++k;
    }
    ++w;
  }
  for (; i < ae; ++i, ++w)
    if (out) out[w] = a[i], xa[i] = static_cast<std::uint32_t>(w);
  for (; k < be; ++k, ++w)
    if (out) out[w] = b[k], xb[k] = static_cast<std::uint32_t>(w);
  return w;
}

template <class T>
void dict_merge_serial(const std::vector<T>& um, const std::vector<T>& ud, std::vector<T>& dict,
                       std::vector<std::uint32_t>& xm, std::vector<std::uint32_t>& xd) {
  dict.resize(um.size() + ud.size());
  xm.resize(um.size());
  xd.resize(ud.size());
  dict.resize(merge_range(um.data(), 0, um.size(), ud.data(), 0, ud.size(), 0, dict.data(), xm.data(), xd.data()));
}

// Split of the merged sequence at diagonal `diag` (merge path, ties take a first), moved so that an
// equal pair a[i-1] == b[k] stays on one side.
template <class T>
void merge_path_split(const T* a, std::uint64_t na, const T* b, std::uint64_t nb, std::uint64_t diag, std::uint64_t& i,
                      std::uint64_t& k) {
  std::uint64_t lo = diag > nb ? diag - nb : 0, hi = std::min(diag, na);
  while (lo < hi) {  // smallest i with a[i] > b[diag - i - 1]... i.e. the merge-path crossing
    std::uint64_t mid = (lo + hi) / 2;
    if (!(b[diag - mid - 1] < a[mid]))
      lo = mid + 1;
    else
      hi = mid;
  }
  i = lo;
  k = diag - lo;
  if (i > 0 && k < nb && !(a[i - 1] < b[k]) && !(b[k] < a[i - 1])) ++k;
}

// The three-phase parallel merge: (1) each thread counts the distinct values of its merge-path
// partition, (2) a prefix sum gives its output offset, (3) each thread merges again and writes.
// Phase 1 repeats phase 3's comparisons: the 2x overhead the multi-core paper reports.
template <class T>
void dict_merge_parallel(const std::vector<T>& um, const std::vector<T>& ud, std::vector<T>& dict,
                         std::vector<std::uint32_t>& xm, std::vector<std::uint32_t>& xd, int threads,
                         std::uint64_t grain = kGrain) {
  std::uint64_t na = um.size(), nb = ud.size(), n = na + nb;
  threads = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, n / grain + 1)));
  std::vector<std::uint64_t> si(threads + 1), sk(threads + 1), off(threads + 1, 0);
  si[threads] = na;
  sk[threads] = nb;
  dict.resize(n);
  xm.resize(na);
  xd.resize(nb);
  run_threads(threads, [&](int t) {
    if (t > 0) merge_path_split(um.data(), na, ud.data(), nb, share(n, t, threads), si[t], sk[t]);
  });
  run_threads(threads, [&](int t) {
    off[t + 1] = merge_range<T>(um.data(), si[t], si[t + 1], ud.data(), sk[t], sk[t + 1], 0, nullptr, nullptr, nullptr);
  });
  for (int t = 0; t < threads; ++t) off[t + 1] += off[t];
  run_threads(threads, [&](int t) {
    merge_range(um.data(), si[t], si[t + 1], ud.data(), sk[t], sk[t + 1], off[t], dict.data(), xm.data(), xd.data());
  });
  dict.resize(off[threads]);
}

// ---- 2b: new main = X_M[old id] for main rows, X_D[delta id] for delta rows, packed at `width`.
//
// Rows go through in blocks of kBlockRows (a multiple of 64, ids in a 4 KB buffer that stays in
// L1): `fill` writes the new ids of the block's rows into the buffer, then the packer of the new
// width (merge_pack.hpp) turns each group of 64 ids into `width` whole words with streaming
// stores. Every piece of rows a thread takes starts on a 64-row mark, so threads never share an
// output word; only the column's last group may be ragged, and it is packed id by id.

inline constexpr std::uint64_t kBlockRows = 1024;

template <unsigned W>
struct PackGroups {
  static void run(const std::uint32_t* in, std::uint64_t* out, std::size_t groups) { pack_groups<W>(in, out, groups); }
};

// Rows [r0, r1) of a column of `rows` rows; r0 is a multiple of 64 and r1 is too unless r1 == rows.
// fused(r0, r1, words) may write a first part of the rows itself and returns where it stopped (a
// 64-row mark); fill and the packer do the rest.
template <class Fill, class Fused>
void reencode_rows(std::uint64_t r0, std::uint64_t r1, std::uint64_t rows, unsigned width, std::uint64_t* words,
                   Fill& fill, Fused& fused) {
  if (width == 0 || r0 >= r1) return;
  auto pack = pick_width<PackGroups>(width);
  alignas(64) std::uint32_t buf[kBlockRows];
  for (std::uint64_t r = fused(r0, r1, words); r < r1;) {
    std::uint64_t n = std::min(kBlockRows, r1 - r);
    fill(r, n, buf);
    std::uint64_t full = n / 64;
    pack(buf, words + r / 64 * width, full);
    if (n % 64) {  // the column's ragged last group
      std::uint64_t first = (r / 64 + full) * width, end = BitPacked::words_for(rows, width);
      for (std::uint64_t k = first; k < end; ++k) words[k] = 0;
      for (std::uint64_t j = 0; j < n % 64; ++j) or_bits(words + first, width, j, buf[full * 64 + j]);
    }
    r += n;
  }
  stream_fence();  // streamed words are visible before the piece is reported done
}

// The new main of `rows` rows at `width`, in pieces starting on 64-row marks, handed out to the
// threads by runtime/chunks.hpp (several per thread, so a thread that loses its core leaves its
// pieces to the others). fill(r, n, buf) writes the new ids of rows [r, r + n) to buf; fused as
// in reencode_rows.
inline std::uint64_t no_fused(std::uint64_t r0, std::uint64_t, std::uint64_t*) { return r0; }

template <class Fill, class Fused = decltype(&no_fused)>
void reencode_parallel(std::uint64_t rows, unsigned width, BitPacked& out, int threads, std::uint64_t grain, Fill fill,
                       Fused fused = &no_fused) {
  out.width = width;
  out.size = rows;
  out.words.resize(BitPacked::words_for(rows, width));
  if (width == 0 || rows == 0) return;
  std::uint64_t groups = (rows + 63) / 64;
  int th = static_cast<int>(std::max<std::uint64_t>(1, std::min<std::uint64_t>(threads, rows / grain + 1)));
  int chunks =
      th <= 1 ? 1
              : static_cast<int>(std::min<std::uint64_t>(groups, std::max<std::uint64_t>(th, chunk_count(rows, th))));
  std::uint64_t* words = out.words.data();
  for_chunks(chunks, th, [&](int c) {
    Fill f = fill;
    Fused u = fused;
    reencode_rows(std::min(rows, chunk_begin(groups, chunks, c) * 64),
                  std::min(rows, chunk_begin(groups, chunks, c + 1) * 64), rows, width, words, f, u);
  });
}

// X_M[id] of each of `groups` groups of 64 old ids of width W.
template <unsigned W>
struct UnpackThroughMap {
  static void run(const std::uint64_t* in, std::uint32_t* out, std::size_t groups, const std::uint32_t* xm) {
    unpack_groups<W>(in, out, groups, [xm](std::uint32_t id) { return xm[id]; });
  }
};

// The paper's step 2b: one lookup in X_M per main row, one in X_D per delta row.
struct LookupFill {
  const std::uint64_t* old;
  unsigned ow;
  std::uint64_t nm;
  const std::uint32_t *xm, *xd, *ids;
  decltype(pick_width<UnpackThroughMap>(0)) unpack;

  void operator()(std::uint64_t r, std::uint64_t n, std::uint32_t* buf) const {
    std::uint64_t m = r < nm ? std::min(n, nm - r) : 0, full = m / 64;
    if (full) unpack(old + r / 64 * ow, buf, full, xm);
    for (std::uint64_t j = full * 64; j < m; ++j) buf[j] = xm[unpack_bits(old, ow, r + j)];
    for (std::uint64_t j = m; j < n; ++j) buf[j] = xd[ids[r + j - nm]];
  }
};

template <unsigned WO, unsigned WN>
struct RepackThroughMap {
  static void run(const std::uint64_t* in, std::uint64_t* out, std::size_t groups, const std::uint32_t* xm) {
    repack_groups<WO, WN>(in, out, groups, [xm](std::uint32_t id) { return xm[id]; });
  }
};

// X_M[id] as id + shift[id]: X_M is strictly increasing, so X_M[i] - i never decreases and is at
// most the number of values the delta adds; where that fits 16 bits the map takes half the bytes
// (at 256M u32 unique=1: 0.67 MB instead of 1.3 MB, inside the 1 MB L2 instead of beyond it).
template <unsigned WO, unsigned WN>
struct RepackThroughShift {
  static void run(const std::uint64_t* in, std::uint64_t* out, std::size_t groups, const std::uint16_t* shift) {
    repack_groups<WO, WN>(in, out, groups, [shift](std::uint32_t id) { return id + shift[id]; });
  }
};

// The 16-bit form is used for maps of kShiftMapMin..kShiftMapMax entries (smaller ones sit in L1/L2
// as they are; larger ones are gathered from memory either way) whose last shift fits 16 bits.
inline constexpr std::uint64_t kShiftMapMin = std::uint64_t{1} << 16, kShiftMapMax = std::uint64_t{1} << 22;

// Fills `shift` with X_M[i] - i and returns true, or returns false when the map is outside the
// sizes above or a shift is not in [0, 2^16) (never, for a real X_M, when the last one is).
inline bool shift_map(const std::vector<std::uint32_t>& xm, std::vector<std::uint16_t>& shift) {
  std::uint64_t n = xm.size();
  if (n < kShiftMapMin || n > kShiftMapMax || xm.back() < n - 1 || xm.back() - (n - 1) > 0xffff) return false;
  shift.resize(n);
  std::uint64_t bad = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint64_t d = std::uint64_t{xm[i]} - i;  // wraps to a huge value when xm[i] < i
    bad |= d >> 16;
    shift[i] = static_cast<std::uint16_t>(d);
  }
  return bad == 0;
}

// Touches X_M[id] for each of `groups` groups of old ids (software prefetch; the ids go to scratch).
template <unsigned W>
struct PrefetchThroughMap {
  static void run(const std::uint64_t* in, std::uint32_t* scratch, std::size_t groups, const std::uint32_t* xm) {
    unpack_groups<W>(in, scratch, groups, [xm](std::uint32_t id) {
      __builtin_prefetch(xm + id);
      return id;
    });
  }
};

// X_M beyond this many bytes is gathered from memory rather than the caches: the fused pass then
// prefetches the X_M entries of the rows kPrefetchRows ahead (one more unpack of those ids, about 4
// instructions a row, which a cache-resident X_M would not repay).
inline constexpr std::uint64_t kPrefetchMapBytes = std::uint64_t{4} << 20;
inline constexpr std::uint64_t kPrefetchRows = 256;

// The whole groups of main rows in one fused pass, old width to new (when the pair has a kernel).
struct LookupFused {
  const std::uint64_t* old;
  unsigned ow, nw;
  std::uint64_t nm;
  const std::uint32_t* xm;
  decltype(pick_widths<RepackThroughMap>(0, 0)) repack;
  decltype(pick_width<PrefetchThroughMap>(0)) prefetch;  // null: no prefetch
  const std::uint16_t* shift;                            // the 16-bit form of X_M, or null
  decltype(pick_widths<RepackThroughShift>(0, 0)) repack_shift;

  std::uint64_t operator()(std::uint64_t r0, std::uint64_t r1, std::uint64_t* words) const {
    std::uint64_t e = std::min(r1, nm) / 64 * 64;
    if (!repack || e <= r0) return r0;
    if (shift) {
      for (std::uint64_t r = r0; r < e; r += kBlockRows)
        repack_shift(old + r / 64 * ow, words + r / 64 * nw, std::min(kBlockRows, e - r) / 64, shift);
      return e;
    }
    alignas(64) std::uint32_t scratch[kPrefetchRows];
    if (prefetch) prefetch(old + r0 / 64 * ow, scratch, std::min(kPrefetchRows, e - r0) / 64, xm);
    for (std::uint64_t r = r0; r < e;) {
      std::uint64_t n = std::min(kPrefetchRows, e - r), ahead = r + n;
      if (prefetch && ahead < e) prefetch(old + ahead / 64 * ow, scratch, std::min(kPrefetchRows, e - ahead) / 64, xm);
      repack(old + r / 64 * ow, words + r / 64 * nw, n / 64, xm);
      r += n;
    }
    return e;
  }
};

template <class T>
void reencode_lookup(const MergeInput<T>& in, const std::vector<std::uint32_t>& delta_ids,
                     const std::vector<std::uint32_t>& xm, const std::vector<std::uint32_t>& xd, unsigned width,
                     BitPacked& out, int threads, std::uint64_t grain = kGrain,
                     std::vector<std::uint16_t>* shift_scratch = nullptr) {
  unsigned ow = in.main_codes.width;
  LookupFill fill{in.main_codes.words.data(),      ow, in.main_rows(), xm.data(), xd.data(), delta_ids.data(),
                  pick_width<UnpackThroughMap>(ow)};
  auto repack = pick_widths<RepackThroughMap>(ow, width);
  std::vector<std::uint16_t> local;
  std::vector<std::uint16_t>& shift = shift_scratch ? *shift_scratch : local;
  bool shifted = repack && shift_map(xm, shift);
  LookupFused fused{in.main_codes.words.data(),
                    ow,
                    width,
                    in.main_rows(),
                    xm.data(),
                    repack,
                    xm.size() * 4 > kPrefetchMapBytes ? pick_width<PrefetchThroughMap>(ow) : nullptr,
                    shifted ? shift.data() : nullptr,
                    pick_widths<RepackThroughShift>(ow, width)};
  reencode_parallel(in.main_rows() + in.delta_rows(), width, out, threads, grain, fill, fused);
}

// The unoptimised step 2b: every row's value is searched in U'_M (decode main ids through U_M).
template <class T>
void reencode_binsearch(const MergeInput<T>& in, const std::vector<T>& dict, unsigned width, BitPacked& out,
                        int threads, std::uint64_t grain = kGrain) {
  std::uint64_t nm = in.main_rows();
  const std::uint64_t* old = in.main_codes.words.data();
  unsigned ow = in.main_codes.width;
  const T *um = in.main_dict.data(), *delta = in.delta.data();
  const T *db = dict.data(), *de = dict.data() + dict.size();
  reencode_parallel(nm + in.delta_rows(), width, out, threads, grain,
                    [=](std::uint64_t r, std::uint64_t n, std::uint32_t* buf) {
                      for (std::uint64_t j = 0; j < n; ++j) {
                        const T& v = r + j < nm ? um[unpack_bits(old, ow, r + j)] : delta[r + j - nm];
                        buf[j] = static_cast<std::uint32_t>(std::lower_bound(db, de, v) - db);
                      }
                    });
}

}  // namespace hdb::cpu
