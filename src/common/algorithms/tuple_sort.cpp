#include "algorithms/tuple_sort.hpp"

#include <array>
#include <stdexcept>
#include <string>

namespace hdb::ra {
namespace {

// The sort of W-word tuples by a key of KW words (high word first). Both are compile-time
// constants: with a run-time key width the digit loops kept a division and a run-time trip count
// per tuple, and sort/parallel took 1.4-1.6x longer (issue 51).
template <int W, int KW>
int sort_tuples(const std::uint32_t* in, std::uint64_t n, std::uint32_t* out, std::uint32_t* scratch, int threads) {
  const TupleChunks ch(n, threads);
  constexpr int nd = 4 * KW;
  // Digit d (0 = least significant) of the key.
  auto digit_of = [](const std::uint32_t* t, int d) { return (t[KW - 1 - d / 4] >> (8 * (d % 4))) & 255u; };
  // One read of the keys finds the 8-bit digits on which keys differ; only those get a pass.
  std::vector<std::array<std::uint64_t, nd * 256>> hist(static_cast<std::size_t>(ch.count));
  ch.run([&](int c) {
    auto& h = hist[static_cast<std::size_t>(c)];
    h.fill(0);
    for (std::uint64_t i = ch.begin(c), e = ch.end(c); i < e; ++i)
      for (int d = 0; d < nd; ++d) ++h[static_cast<std::size_t>(d * 256) + digit_of(in + i * W, d)];
  });
  std::vector<int> digits;
  for (int d = 0; d < nd; ++d) {
    bool trivial = false;
    for (int v = 0; v < 256 && !trivial; ++v) {
      std::uint64_t t = 0;
      for (const auto& h : hist) t += h[static_cast<std::size_t>(d * 256 + v)];
      trivial = t == n;
    }
    if (!trivial) digits.push_back(d);
  }
  if (digits.empty()) {
    std::memcpy(out, in, n * W * sizeof(std::uint32_t));
    return 0;
  }
  // Ping-pong so that the last pass writes `out`.
  std::uint32_t* dst = digits.size() % 2 ? out : scratch;
  const std::uint32_t* src = in;
  for (int d : digits) {
    // The pass's word and shift once, not per tuple.
    const int word = KW - 1 - d / 4;
    const unsigned shift = 8u * static_cast<unsigned>(d % 4);
    scatter_tuples<W>(
        src, dst, 256, [word, shift](const std::uint32_t* t) { return static_cast<int>((t[word] >> shift) & 255u); },
        ch);
    src = dst;
    dst = dst == out ? scratch : out;
  }
  return 0;
}

template <int W>
struct SortW {
  static int call(const std::uint32_t* in, std::uint64_t n, std::uint32_t* out, std::uint32_t* scratch, int threads,
                  int key_words) {
    if (key_words == 1) return sort_tuples<W, 1>(in, n, out, scratch, threads);
    if constexpr (W >= 2) {
      if (key_words == 2) return sort_tuples<W, 2>(in, n, out, scratch, threads);
    }
    throw std::invalid_argument("a key of " + std::to_string(key_words) + " words in tuples of " + std::to_string(W));
  }
};

}  // namespace

void stable_sort_by_key(const std::uint32_t* in, std::uint64_t rows, int width, std::uint32_t* out,
                        std::uint32_t* scratch, int threads, int key_words) {
  if (rows == 0) return;
  by_tuple_width<SortW>(width, in, rows, out, scratch, threads, key_words);
}

}  // namespace hdb::ra
