#pragma once
// Width-specialised bit packing for the CPU re-encode (step 2b). Ids of width w sit at bits
// [i*w, i*w+w) of little-endian 64-bit words (workloads/columns.hpp), so 64 ids of width w are
// exactly w whole words: a group of 64 rows starting on a 64-row mark is unpacked from, or packed
// into, w words with shifts and masks that are compile-time constants (one instantiation per width,
// fully unrolled, no per-id branch). Widths are dispatched once per block of groups through a table.
#include <cstddef>
#include <cstdint>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace hdb::cpu {

inline constexpr unsigned kMaxCodeWidth = 32;  // ids are 32-bit

// Stores a finished output word. Streaming (non-temporal) where SSE2 has it: the new main is
// written once and not read again by the step, so it should not evict the position maps from the
// cache, and a streaming store skips reading the line it overwrites. Callers fence (stream_fence)
// before another thread may read the words.
inline void stream_word(std::uint64_t* p, std::uint64_t v) {
#if defined(__SSE2__) && defined(__x86_64__)
  _mm_stream_si64(reinterpret_cast<long long*>(p), static_cast<long long>(v));
#else
  *p = v;
#endif
}
inline void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

namespace pack_detail {

template <unsigned W>
constexpr std::uint64_t mask() {
  return W >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << W) - 1;
}

// Id J of a group of 64 ids of width W starting at `in`.
template <unsigned W, unsigned J>
inline std::uint32_t extract(const std::uint64_t* in) {
  constexpr unsigned bit = J * W, word = bit / 64, off = bit % 64;
  if constexpr (W == 0) return 0;  // width 0: no words to read
  std::uint64_t v = in[word] >> off;
  if constexpr (off + W > 64) v |= in[word + 1] << (64 - off);
  return static_cast<std::uint32_t>(v & mask<W>());
}

// map(id) of the 64 ids of the group at `in`, into out[0..64).
template <unsigned W, class Map, std::size_t... J>
inline void unpack_group(const std::uint64_t* in, std::uint32_t* out, const Map& map, std::index_sequence<J...>) {
  ((out[J] = map(extract<W, J>(in))), ...);
}

// Appends id v as id J (of width W) of a group to the accumulator; writes the word it completes.
template <unsigned W, unsigned J>
inline void put(std::uint64_t v, std::uint64_t* out, std::uint64_t& acc) {
  constexpr unsigned bit = J * W, word = bit / 64, off = bit % 64;
  if constexpr (off == 0)
    acc = v;
  else
    acc |= v << off;
  if constexpr (off + W >= 64) {
    stream_word(out + word, acc);
    if constexpr (off + W > 64) acc = v >> (64 - off);
  }
}

template <unsigned W, std::size_t... J>
inline void pack_group(const std::uint32_t* in, std::uint64_t* out, std::index_sequence<J...>) {
  std::uint64_t acc = 0;
  (put<W, J>(in[J], out, acc), ...);
}

// map(id) of each of the 64 ids of width WO at `in`, packed at width WN into WN words at `out`:
// unpack and pack fused, the ids never leave registers.
template <unsigned WO, unsigned WN, class Map, std::size_t... J>
inline void repack_group(const std::uint64_t* in, std::uint64_t* out, const Map& map, std::index_sequence<J...>) {
  std::uint64_t acc = 0;
  (put<WN, J>(map(extract<WO, J>(in)), out, acc), ...);
}

}  // namespace pack_detail

// Packs `groups` groups of 64 ids (in[0 .. 64*groups)) into groups*W words at `out`; ids must be
// below 2^W. Width 0 writes nothing.
template <unsigned W>
void pack_groups(const std::uint32_t* in, std::uint64_t* out, std::size_t groups) {
  if constexpr (W > 0)
    for (std::size_t g = 0; g < groups; ++g)
      pack_detail::pack_group<W>(in + 64 * g, out + W * g, std::make_index_sequence<64>{});
}

// Unpacks `groups` groups of 64 ids of width W from `in` (groups*W words), writing map(id).
template <unsigned W, class Map>
void unpack_groups(const std::uint64_t* in, std::uint32_t* out, std::size_t groups, const Map& map) {
  for (std::size_t g = 0; g < groups; ++g) {
    if constexpr (W == 0) {
      for (unsigned j = 0; j < 64; ++j) out[64 * g + j] = map(0u);
    } else {
      pack_detail::unpack_group<W>(in + W * g, out + 64 * g, map, std::make_index_sequence<64>{});
    }
  }
}

// Groups of 64 ids of width WO through map into width WN (WN >= 1).
template <unsigned WO, unsigned WN, class Map>
void repack_groups(const std::uint64_t* in, std::uint64_t* out, std::size_t groups, const Map& map) {
  for (std::size_t g = 0; g < groups; ++g)
    pack_detail::repack_group<WO, WN>(in + WO * g, out + WN * g, map, std::make_index_sequence<64>{});
}

// Table of f<W> for W = 0..kMaxCodeWidth: pick<F>(w) returns the instantiation for width w.
template <template <unsigned> class F, std::size_t... W>
constexpr auto width_table(std::index_sequence<W...>) {
  using Fn = decltype(&F<0>::run);
  struct Table {
    Fn fn[sizeof...(W)];
  };
  return Table{{&F<W>::run...}};
}
template <template <unsigned> class F>
auto pick_width(unsigned w) {
  static constexpr auto table = width_table<F>(std::make_index_sequence<kMaxCodeWidth + 1>{});
  return table.fn[w];
}

// Table of F<WO, WO + D>::run for WO = 0..kMaxCodeWidth and D = 0, 1 (the new width of a merge is
// the old one or one more unless the delta more than doubles the dictionary): pick_widths<F>(wo,
// wn) is null for other pairs, which take the unfused path.
template <template <unsigned, unsigned> class F, std::size_t... W>
constexpr auto width_pair_table(std::index_sequence<W...>) {
  using Fn = decltype(&F<1, 1>::run);
  struct Table {
    Fn same[sizeof...(W)];
    Fn next[sizeof...(W)];
  };
  return Table{{(W == 0 ? nullptr : &F<W, W>::run)...}, {(W == kMaxCodeWidth ? nullptr : &F<W, W + 1>::run)...}};
}
template <template <unsigned, unsigned> class F>
auto pick_widths(unsigned wo, unsigned wn) {
  static constexpr auto table = width_pair_table<F>(std::make_index_sequence<kMaxCodeWidth + 1>{});
  using Fn = decltype(table.same[0]);
  if (wn == wo) return table.same[wo];
  if (wn == wo + 1) return table.next[wo];
  return Fn{nullptr};
}

// The generic (any width, one id at a time) forms, for the ragged ends of a column: id i of `w`
// bits, and a packer that ORs ids into words (the words it touches must start zeroed or be owned
// by the caller alone).
inline void or_bits(std::uint64_t* words, unsigned w, std::uint64_t i, std::uint32_t v) {
  if (w == 0) return;
  std::uint64_t bit = i * w, word = bit >> 6;
  unsigned off = static_cast<unsigned>(bit & 63);
  words[word] |= std::uint64_t{v} << off;
  if (off + w > 64) words[word + 1] |= std::uint64_t{v} >> (64 - off);
}

}  // namespace hdb::cpu
