#include "algorithms/tuple_sort.hpp"

#include <array>

namespace hdb::ra {
namespace {

template <int W>
struct SortW {
  static int call(const std::uint32_t* in, std::uint64_t n, std::uint32_t* out, std::uint32_t* scratch, int threads) {
    const TupleChunks ch(n, threads);
    // One read of the keys finds the 8-bit digits on which keys differ; only those get a pass.
    std::vector<std::array<std::uint64_t, 4 * 256>> hist(static_cast<std::size_t>(ch.count));
    ch.run([&](int c) {
      auto& h = hist[static_cast<std::size_t>(c)];
      h.fill(0);
      for (std::uint64_t i = ch.begin(c), e = ch.end(c); i < e; ++i) {
        std::uint32_t k = in[i * W];
        for (int d = 0; d < 4; ++d) ++h[static_cast<std::size_t>(d * 256 + ((k >> (8 * d)) & 255u))];
      }
    });
    std::vector<int> digits;
    for (int d = 0; d < 4; ++d) {
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
      const unsigned shift = 8u * static_cast<unsigned>(d);
      scatter_tuples<W>(src, dst, 256, [shift](std::uint32_t k) { return static_cast<int>((k >> shift) & 255u); }, ch);
      src = dst;
      dst = dst == out ? scratch : out;
    }
    return 0;
  }
};

}  // namespace

void stable_sort_by_key(const std::uint32_t* in, std::uint64_t rows, int width, std::uint32_t* out,
                        std::uint32_t* scratch, int threads) {
  if (rows == 0) return;
  by_tuple_width<SortW>(width, in, rows, out, scratch, threads);
}

}  // namespace hdb::ra
