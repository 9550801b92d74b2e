#include "bench/dist_partition.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "workloads/random.hpp"

namespace hdb::dist {

RowRange share_of(std::uint64_t n, int rank, int ranks) {
  const auto r = static_cast<unsigned __int128>(rank), p = static_cast<unsigned __int128>(ranks);
  return {static_cast<std::uint64_t>(n * r / p), static_cast<std::uint64_t>(n * (r + 1) / p)};
}

namespace {

// Fixed chunks, so the counting and the scattering pass see the same tuples per thread.
struct Chunks {
  int count = 1;
  std::uint64_t rows = 0;
  Chunks(std::uint64_t n, int threads) : rows(n) {
    if (threads > 1 && n >= 65536) count = static_cast<int>(std::min<std::uint64_t>(static_cast<std::uint64_t>(threads), n / 16384));
    count = std::max(count, 1);
  }
  std::uint64_t begin(int c) const { return rows * static_cast<std::uint64_t>(c) / static_cast<std::uint64_t>(count); }
  std::uint64_t end(int c) const { return begin(c + 1); }
  template <class F>
  void run(F&& fn) const {
    if (count == 1) {
      fn(0);
      return;
    }
    std::vector<std::thread> pool;
    pool.reserve(static_cast<std::size_t>(count - 1));
    for (int c = 1; c < count; ++c) pool.emplace_back([&fn, c] { fn(c); });
    fn(0);
    for (auto& t : pool) t.join();
  }
};

// Stable counting scatter of W-word tuples into `buckets` by digit(key). Returns tuples per bucket.
template <int W, class Digit>
std::vector<std::uint64_t> scatter(const std::uint32_t* in, std::uint32_t* out, int buckets, const Digit& digit,
                                   const Chunks& ch) {
  const auto nb = static_cast<std::size_t>(buckets);
  std::vector<std::uint64_t> offs(static_cast<std::size_t>(ch.count) * nb, 0);
  ch.run([&](int c) {
    std::uint64_t* h = offs.data() + static_cast<std::size_t>(c) * nb;
    for (std::uint64_t i = ch.begin(c), e = ch.end(c); i < e; ++i) ++h[digit(in[i * W])];
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
      std::memcpy(out + (o[digit(t[0])]++) * W, t, W * sizeof(std::uint32_t));
    }
  });
  return totals;
}

template <int W>
std::vector<std::uint64_t> partition_w(const std::uint32_t* in, std::uint64_t rows, int ranks, std::uint32_t* out,
                                       int threads) {
  return scatter<W>(in, out, ranks, [ranks](std::uint32_t k) { return owner_of(k, ranks); }, Chunks(rows, threads));
}

template <int W>
void sort_w(const std::uint32_t* in, std::uint64_t n, std::uint32_t* out, std::uint32_t* scratch, int threads) {
  const Chunks ch(n, threads);
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
    return;
  }
  // Ping-pong so that the last pass writes `out`.
  std::uint32_t* dst = digits.size() % 2 ? out : scratch;
  const std::uint32_t* src = in;
  for (int d : digits) {
    const unsigned shift = 8u * static_cast<unsigned>(d);
    scatter<W>(src, dst, 256, [shift](std::uint32_t k) { return static_cast<int>((k >> shift) & 255u); }, ch);
    src = dst;
    dst = dst == out ? scratch : out;
  }
}

template <template <int> class F, class... A>
auto by_width(int width, A&&... a) {
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
template <int W>
struct PartitionW {
  static std::vector<std::uint64_t> call(const std::uint32_t* in, std::uint64_t rows, int ranks, std::uint32_t* out,
                                         int threads) {
    return partition_w<W>(in, rows, ranks, out, threads);
  }
};
template <int W>
struct SortW {
  static int call(const std::uint32_t* in, std::uint64_t rows, std::uint32_t* out, std::uint32_t* scratch, int threads) {
    sort_w<W>(in, rows, out, scratch, threads);
    return 0;
  }
};

}  // namespace

std::vector<std::uint64_t> partition_by_owner(const std::uint32_t* in, std::uint64_t rows, int width, int ranks,
                                              std::uint32_t* out, int threads) {
  if (ranks < 1) throw std::invalid_argument("partition_by_owner: at least one rank");
  if (rows == 0) return std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), 0);
  return by_width<PartitionW>(width, in, rows, ranks, out, threads);
}

void sort_by_key(const std::uint32_t* in, std::uint64_t rows, int width, std::uint32_t* out, std::uint32_t* scratch,
                 int threads) {
  if (rows == 0) return;
  by_width<SortW>(width, in, rows, out, scratch, threads);
}

void generate_rows(ra::Relation& out, const GlobalSpec& spec, RowRange range, std::uint64_t seed, int threads) {
  const std::uint64_t n = range.size();
  if (out.capacity_rows() < n || out.values() != spec.values)
    throw std::invalid_argument("generate_rows: relation too small or of another width");
  out.set_rows(n);
  std::vector<std::uint32_t> keys(n);
  fill_u32_at(keys.data(), range.begin, n, seed, spec.keys, threads);
  const int w = out.width();
  const std::uint64_t vseed = splitmix64(seed ^ 0x76616c756573ull);  // "values"
  const std::uint64_t mseed = splitmix64(seed ^ 0x6d61746368ull);    // "match"
  std::uint32_t* d = out.data();
  const Chunks ch(n, threads);
  ch.run([&](int c) {
    for (std::uint64_t j = ch.begin(c), e = ch.end(c); j < e; ++j) {
      const std::uint64_t i = range.begin + j;
      std::uint32_t* t = d + j * static_cast<std::uint64_t>(w);
      std::uint32_t k = keys[j];
      if (spec.join_even) k = 2 * k + (uniform01(rand_at(mseed, i)) < spec.join_match ? 0u : 1u);
      t[0] = k;
      for (int v = 1; v < w; ++v)
        t[v] = static_cast<std::uint32_t>(rand_at(vseed, i * ra::kMaxValues + static_cast<std::uint64_t>(v))) | 1u;
    }
  });
}

}  // namespace hdb::dist
