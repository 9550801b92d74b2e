#pragma once
// Merge kernels of the CPU relational-algebra backend: the sorted join and the multiset set
// operations, on raw tuple arrays of a fixed width (a template constant where the caller has one,
// so tuple copies and comparisons compile to plain moves), plus the merge-path partitioning that
// splits both sorted inputs into pieces of equal merged length, whatever the key distribution.
//
// The join writes into a growable buffer; the set operations write at most a bound the caller
// knows (ra_staged.hpp places both outputs).
#include <cstdint>
#include <cstring>
#include <array>
#include <utility>
#include <vector>
#include <algorithm>
#include <type_traits>

#include "workloads/relations.hpp"

namespace hdb::ra::cpu {

// A sorted tuple array: `rows` tuples of `width` words at `data`, keys of key_words words.
struct Tuples {
  const std::uint32_t* data = nullptr;
  std::uint64_t rows = 0;
  int width = 1;
  int key_words = 1;
  const std::uint32_t* at(std::uint64_t i) const { return data + i * static_cast<std::uint64_t>(width); }
  std::uint64_t key(std::uint64_t i) const { return key_at(at(i), key_words); }
};

// A key of KW words (1 or 2, high word first) as one integer of its width.
template <int KW>
using KeyOf = std::conditional_t<KW == 2, std::uint64_t, std::uint32_t>;
template <int KW>
inline KeyOf<KW> load_key(const std::uint32_t* t) {
  if constexpr (KW == 2)
    return (std::uint64_t{t[0]} << 32) | t[1];
  else
    return t[0];
}

// A split point: the first i tuples of a and the first j tuples of b lie before it.
struct Split {
  std::uint64_t i = 0;
  std::uint64_t j = 0;
};

// Lexicographic order of W-word tuples (W = 0: `w` words at run time). The first differing word
// decides; written without early exits so short fixed widths compile to compare-and-select chains.
template <int W>
inline int compare_w(const std::uint32_t* a, const std::uint32_t* b, int w) {
  if constexpr (W == 1) {
    return (a[0] > b[0]) - (a[0] < b[0]);
  } else if constexpr (W >= 2 && W <= 4) {
    // Words packed big-endian into one or two 64-bit halves: the high half decides unless equal.
    auto pack = [](const std::uint32_t* t, int k) { return (std::uint64_t{t[k]} << 32) | (k + 1 < W ? t[k + 1] : 0u); };
    const std::uint64_t xh = pack(a, 0), yh = pack(b, 0);
    const int hi = (xh > yh) - (xh < yh);
    if constexpr (W == 2) {
      return hi;
    } else {
      const std::uint64_t xl = pack(a, 2), yl = pack(b, 2);
      const int lo = (xl > yl) - (xl < yl);
      return hi ? hi : lo;
    }
  } else {
    const int n = W ? W : w;
    for (int k = 0; k < n; ++k)
      if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
  }
}

// The merge-path split of a and b at merged position d (0 <= d <= a.rows + b.rows), where `a_first`
// (x, y) says whether a's tuple x comes before b's tuple y in the merged order. Binary search on the
// diagonal: the smallest i with a[i] not before b[d - i - 1].
template <class AFirst>
Split merge_path(const Tuples& a, const Tuples& b, std::uint64_t d, AFirst a_first) {
  std::uint64_t lo = d > b.rows ? d - b.rows : 0, hi = d < a.rows ? d : a.rows;
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (a_first(mid, d - mid - 1))
      lo = mid + 1;
    else
      hi = mid;
  }
  return {lo, d - lo};
}

// ---------------------------------------------------------------------------------------------
// Join: pairs of equal keys. Pieces own their left tuples; each left tuple meets its whole right
// run, so a split inside a run of equal keys (on either side) loses and repeats nothing.

// Merge-path split of l and r with left-first ties: every right tuple before the split has a key
// below the first left tuple after it, so a piece starting at (i, j) finds all right partners of
// l[i..] at or after j.
inline Split join_split(const Tuples& l, const Tuples& r, std::uint64_t d) {
  return merge_path(l, r, d, [&](std::uint64_t x, std::uint64_t y) { return l.key(x) <= r.key(y); });
}

// Joins l[i, le) with r[j, r.rows): for each left tuple, every right tuple with its key, as
// (left tuple, right values), into buf (grown as needed; its size is never shrunk, so a buffer kept
// between passes is allocated once); returns the rows written. LW / RW: the widths as constants
// (0: use l.width / r.width); KW: the key's words. One pass: the output is not counted first.
//
// One branch-free step per consumed tuple: the right input is consumed first on equal keys and its
// current run of equal keys [rs, j) is remembered, so a left tuple meets exactly that run when its
// key equals the run's key (m = j - rs partners, else 0). Random keys make any compare branch a coin
// flip; here the only branches are a left tuple with more than two partners, after two speculative
// pair writes that later writes overwrite when m is smaller, and a full buffer (rare: it doubles).
template <int LW, int RW, int KW>
std::uint64_t join_piece(const Tuples& l, std::uint64_t i, std::uint64_t le, const Tuples& r, std::uint64_t j,
                         std::vector<std::uint32_t>& buf) {
  using K = KeyOf<KW>;
  const std::uint64_t lw = LW ? LW : static_cast<std::uint64_t>(l.width);
  const std::uint64_t rw = RW ? RW : static_cast<std::uint64_t>(r.width), ow = lw + rw - KW;
  const std::uint32_t* ld = l.data;
  const std::uint32_t* rd = r.data;
  const std::uint64_t re = r.rows;
  if (j >= re || i >= le) return 0;
  // A first guess of one output tuple per left tuple (a key-unique join writes at most that).
  if (buf.size() < (le - i + 2) * ow) buf.resize((le - i + 2) * ow);
  std::uint32_t* dst = buf.data();
  std::uint64_t cap = buf.size() / ow;
  auto pair = [&](std::uint64_t x, std::uint64_t y, std::uint64_t at) {
    std::memcpy(dst + at * ow, ld + x * lw, lw * 4);
    std::memcpy(dst + at * ow + lw, rd + y * rw + KW, (rw - KW) * 4);
  };
  std::uint64_t rs = j, o = 0;  // rs == j: no run yet
  K run_key = 0;
  // Selects are written as arithmetic on 0/1 values: the compiler turns ?: and && here into
  // branches, which mispredict on random keys.
  while (i < le) {
    const K a = load_key<KW>(ld + i * lw);
    const K b = load_key<KW>(rd + (j - (j >= re ? 1 : 0)) * rw);
    const std::uint64_t take_r = static_cast<std::uint64_t>(j < re) & static_cast<std::uint64_t>(b <= a);
    rs += (take_r & static_cast<std::uint64_t>(b != run_key)) * (j - rs);
    run_key ^= (run_key ^ b) & (K{0} - static_cast<K>(take_r));
    const std::uint64_t m = ((1 - take_r) & static_cast<std::uint64_t>(a == run_key)) * (j - rs);
    if (o + m + 2 > cap) {
      buf.resize(std::max(buf.size() * 2, (o + m + 2) * ow));
      dst = buf.data();
      cap = buf.size() / ow;
    }
    // rs < re always (it only ever takes values of j below re).
    pair(i, rs, o);
    pair(i, rs + 1 < re ? rs + 1 : rs, o + 1);
    for (std::uint64_t k = 2; k < m; ++k) pair(i, rs + k, o + k);
    o += m;
    i += 1 - take_r;
    j += take_r;
  }
  return o;
}

// ---------------------------------------------------------------------------------------------
// Set operations on whole tuples with multiset semantics: the k-th copy of a tuple in a pairs with
// the k-th copy in b.

enum class SetKind { Union, Intersection, Difference };

// Merge-path split of a and b for set operations. A plain split with a-first ties could separate
// the k-th copy of a tuple in a from the k-th copy in b; so when the split falls among the copies of
// one tuple T, those copies are re-split by pairs (a's k-th copy beside b's k-th copy, then the
// surplus of the side that has more), keeping the split within one tuple of the diagonal.
template <int W>
Split set_split(const Tuples& a, const Tuples& b, std::uint64_t d) {
  const int w = a.width;
  auto a_first = [&](std::uint64_t x, std::uint64_t y) { return compare_w<W>(a.at(x), b.at(y), w) <= 0; };
  Split s = merge_path(a, b, d, a_first);
  if (s.i == a.rows && s.j == b.rows) return s;
  // T: the first tuple after the split.
  const std::uint32_t* t = s.j == b.rows || (s.i < a.rows && a_first(s.i, s.j)) ? a.at(s.i) : b.at(s.j);
  auto bound = [&](const Tuples& r, std::uint64_t lo, std::uint64_t hi, bool upper) {
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      const int c = compare_w<W>(r.at(mid), t, w);
      if (c < 0 || (upper && c == 0))
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  };
  // Every tuple below T lies before the split, so T's copies start at or before (i, j).
  const std::uint64_t a0 = bound(a, 0, s.i, false), b0 = bound(b, 0, s.j, false);
  const std::uint64_t ca = bound(a, s.i, a.rows, true) - a0, cb = bound(b, s.j, b.rows, true) - b0;
  const std::uint64_t taken = (s.i - a0) + (s.j - b0), pairs = ca < cb ? ca : cb;
  if (taken <= 2 * pairs) return {a0 + taken / 2, b0 + taken / 2};
  const std::uint64_t extra = taken - 2 * pairs;
  return {a0 + pairs + (ca > cb ? extra : 0), b0 + pairs + (cb > ca ? extra : 0)};
}

// std::set_union / set_intersection / set_difference of a[i, ae) and b[j, be) (W as for
// compare_w) into dst, one merge step at a time. Branch-free steps: every step writes the candidate
// tuple and advances the output only when the operation keeps it, so a write is never beyond the
// rows the piece consumed (its output bound).
template <SetKind Op, int W>
struct SetMerge {
  const std::uint32_t* ad;
  const std::uint32_t* bd;
  std::uint64_t i, ae, j, be;
  std::uint32_t* dst;
  int w;
  std::uint64_t o = 0;

  std::uint64_t tw() const { return W ? W : static_cast<std::uint64_t>(w); }
  bool active() const { return i < ae && j < be; }
  void step() {
    const std::uint32_t* x = ad + i * tw();
    const std::uint32_t* y = bd + j * tw();
    const int c = compare_w<W>(x, y, w);
    bool keep;
    const std::uint32_t* t = x;
    if constexpr (Op == SetKind::Union) {
      t = c <= 0 ? x : y;
      keep = true;
    } else if constexpr (Op == SetKind::Intersection) {
      keep = c == 0;
    } else {
      keep = c < 0;
    }
    std::memcpy(dst + o * tw(), t, tw() * 4);
    o += keep;
    i += c <= 0;
    j += c >= 0;
  }
  // The remaining steps, then the tails: a's rest for union and difference, b's rest for union.
  std::uint64_t finish() {
    while (active()) step();
    auto tail = [&](const std::uint32_t* src, std::uint64_t rows) {
      std::memcpy(dst + o * tw(), src, rows * tw() * 4);
      o += rows;
    };
    if constexpr (Op != SetKind::Intersection)
      if (i < ae) tail(ad + i * tw(), ae - i);
    if constexpr (Op == SetKind::Union)
      if (j < be) tail(bd + j * tw(), be - j);
    return o;
  }
};

// N independent merges side by side, merge m over [cut[m], cut[m + 1]) into dst[m], one step of
// each in turn: each step is a chain of loads, a compare and an index update that the next step of
// the same merge waits for, so N chains keep the core busy where one leaves it waiting. Writes
// every merge's output count into rows[m].
template <SetKind Op, int W, int N>
void set_pieces(const Tuples& a, const Tuples& b, const Split* cut, std::uint32_t* const* dst, std::uint64_t* rows) {
  std::array<SetMerge<Op, W>, N> m;
  for (int k = 0; k < N; ++k)
    m[k] = SetMerge<Op, W>{a.data, b.data, cut[k].i, cut[k + 1].i, cut[k].j, cut[k + 1].j, dst[k], a.width};
  auto all = [&] {
    bool on = true;
    for (int k = 0; k < N; ++k) on &= m[k].active();
    return on;
  };
  while (all())
    for (int k = 0; k < N; ++k) m[k].step();
  for (int k = 0; k < N; ++k) rows[k] = m[k].finish();
}

}  // namespace hdb::ra::cpu
