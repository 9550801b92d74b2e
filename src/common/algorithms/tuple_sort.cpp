#include "algorithms/tuple_sort.hpp"

#include <array>

namespace hdb::ra {
namespace {

template <int W>
struct SortW {
  static int call(const std::uint32_t* in, std::uint64_t n, std::uint32_t* out, std::uint32_t* scratch, int threads,
                  int key_words) {
    const TupleChunks ch(n, threads);
    // Digit d (0 = least significant) of a key of key_words words, high word first.
    const int nd = 4 * key_words;
    auto digit_of = [key_words](const std::uint32_t* t, int d) {
      return (t[key_words - 1 - d / 4] >> (8 * (d % 4))) & 255u;
    };
    // One read of the keys finds the 8-bit digits on which keys differ; only those get a pass.
    std::vector<std::array<std::uint64_t, 8 * 256>> hist(static_cast<std::size_t>(ch.count));
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
      scatter_tuples<W>(src, dst, 256, [&](const std::uint32_t* t) { return static_cast<int>(digit_of(t, d)); }, ch);
      src = dst;
      dst = dst == out ? scratch : out;
    }
    return 0;
  }
};

}  // namespace

void stable_sort_by_key(const std::uint32_t* in, std::uint64_t rows, int width, std::uint32_t* out,
                        std::uint32_t* scratch, int threads, int key_words) {
  if (rows == 0) return;
  by_tuple_width<SortW>(width, in, rows, out, scratch, threads, key_words);
}

}  // namespace hdb::ra
