#pragma once
// Dispatch on a tuple's width (1..8 words, workloads/relations.hpp), so the loops that move tuples
// have a compile-time trip count and compile to plain moves or vector code, where a memcpy of a
// run-time size would be a call per tuple.
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace hdb::ra::cpu {

// f(std::integral_constant<int, W>) for the width w, 1..8 (no tuple is wider).
template <class F>
void for_width(int w, F&& f) {
  switch (w) {
    case 1: f(std::integral_constant<int, 1>{}); break;
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    case 6: f(std::integral_constant<int, 6>{}); break;
    case 7: f(std::integral_constant<int, 7>{}); break;
    default: f(std::integral_constant<int, 8>{}); break;
  }
}

// The same for the common widths only (Min..4 words: a key and up to 3 values, as generated inputs
// have), else W = 0, the width then known only at run time: kernels templated on two or three
// widths keep their instantiations few. Min 2 leaves out the 1-word tuple where code would otherwise
// be instantiated for a value part of negative width (a 2-word key in 1 word).
template <int Min = 1, class F>
void for_common_width(int w, F&& f) {
  static_assert(Min == 1 || Min == 2);
  if constexpr (Min == 1) {
    if (w == 1) {
      f(std::integral_constant<int, 1>{});
      return;
    }
  }
  switch (w) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    default: f(std::integral_constant<int, 0>{}); break;
  }
}

// f(std::integral_constant<int, KW>) for a key of kw words (1 or 2, workloads/relations.hpp), so
// loops over a tuple's key and value parts have compile-time bounds and vectorise across tuples
// (a run-time key width kept the pstl arithmetic scalar: 3.6x slower at 256M).
template <class F>
void for_key_words(int kw, F&& f) {
  if (kw == 2)
    f(std::integral_constant<int, 2>{});
  else
    f(std::integral_constant<int, 1>{});
}

// Copies N words, or n where N is 0 (for_common_width's run-time width).
template <int N>
inline void copy_fixed(std::uint32_t* dst, const std::uint32_t* src, std::uint64_t n) {
  if constexpr (N > 0) {
    for (int i = 0; i < N; ++i) dst[i] = src[i];
  } else {
    std::memcpy(dst, src, n * 4);
  }
}

}  // namespace hdb::ra::cpu
