#pragma once
// Stable counting scatter and LSD radix sort of tuples by key, on the host: the cpu backend's RA
// sort and the distributed operators' hash partition and local sort (algorithms/dist_partition.hpp).
// Tuples are W consecutive 32-bit words, key first (workloads/relations.hpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/parallel.hpp"

namespace hdb::ra {

// Fixed chunks, one thread each, so a counting pass and its scattering pass see the same tuples per
// thread (that keeps the scatter stable).
struct TupleChunks {
  int count = 1;
  std::uint64_t rows = 0;
  TupleChunks(std::uint64_t n, int threads) : rows(n) {
    if (threads > 1 && n >= 65536)
      count = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), n / 16384));
    count = std::max(count, 1);
  }
  std::uint64_t begin(int c) const { return rows * static_cast<std::uint64_t>(c) / static_cast<std::uint64_t>(count); }
  std::uint64_t end(int c) const { return begin(c + 1); }
  template <class F>
  void run(F&& fn) const {
    run_tasks(count, fn);
  }
};

// Stable counting scatter of W-word tuples into `buckets` by digit(tuple). Returns tuples per bucket.
template <int W, class Digit>
std::vector<std::uint64_t> scatter_tuples(const std::uint32_t* in, std::uint32_t* out, int buckets, const Digit& digit,
                                          const TupleChunks& ch) {
  const auto nb = static_cast<std::size_t>(buckets);
  std::vector<std::uint64_t> offs(static_cast<std::size_t>(ch.count) * nb, 0);
  ch.run([&](int c) {
    std::uint64_t* h = offs.data() + static_cast<std::size_t>(c) * nb;
    for (std::uint64_t i = ch.begin(c), e = ch.end(c); i < e; ++i) ++h[digit(in + i * W)];
  });
  // Bucket-major, chunk-minor: chunk c's tuples of a bucket follow chunk c-1's (stability).
  std::vector<std::uint64_t> totals(nb, 0);
  std::uint64_t pos = 0;
  for (std::size_t b = 0; b < nb; ++b)
    for (int c = 0; c < ch.count; ++c) {
      std::uint64_t& o = offs[static_cast<std::size_t>(c) * nb + b];
      std::uint64_t k = o;
      o = pos;
      pos += k;
      totals[b] += k;
    }
  ch.run([&](int c) {
    std::uint64_t* o = offs.data() + static_cast<std::size_t>(c) * nb;
    for (std::uint64_t i = ch.begin(c), e = ch.end(c); i < e; ++i) {
      const std::uint32_t* t = in + i * W;
      std::memcpy(out + (o[digit(t)]++) * W, t, W * sizeof(std::uint32_t));
    }
  });
  return totals;
}

// F<W>::call(a...) for the tuple width W = width (1..8); std::invalid_argument otherwise.
template <template <int> class F, class... A>
auto by_tuple_width(int width, A&&... a) {
  switch (width) {
    case 1: return F<1>::call(a...);
    case 2: return F<2>::call(a...);
    case 3: return F<3>::call(a...);
    case 4: return F<4>::call(a...);
    case 5: return F<5>::call(a...);
    case 6: return F<6>::call(a...);
    case 7: return F<7>::call(a...);
    case 8: return F<8>::call(a...);
    default: throw std::invalid_argument("tuples are 1..8 words wide, got " + std::to_string(width));
  }
}

// Stable sort by key (LSD radix over the 32- or 64-bit key, 8 bits a pass; digits where all keys
// agree are skipped): out = in ordered by key, equal keys in input order, the same for any thread
// count. key_words: 1 or 2 (high word first). scratch holds rows tuples; in, out and scratch must
// not overlap.
void stable_sort_by_key(const std::uint32_t* in, std::uint64_t rows, int width, std::uint32_t* out,
                        std::uint32_t* scratch, int threads, int key_words = 1);

}  // namespace hdb::ra
