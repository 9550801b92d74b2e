#include "algorithms/dist_partition.hpp"

#include <stdexcept>

#include "workloads/random.hpp"
#include "algorithms/tuple_sort.hpp"

namespace hdb::dist {

RowRange share_of(std::uint64_t n, int rank, int ranks) {
  const auto r = static_cast<unsigned __int128>(rank), p = static_cast<unsigned __int128>(ranks);
  return {static_cast<std::uint64_t>(n * r / p), static_cast<std::uint64_t>(n * (r + 1) / p)};
}

namespace {

template <int W>
std::vector<std::uint64_t> partition_w(const std::uint32_t* in, std::uint64_t rows, int ranks, std::uint32_t* out,
                                       int threads) {
  return ra::scatter_tuples<W>(
      in, out, ranks, [ranks](const std::uint32_t* t) { return owner_of(t[0], ranks); },
      ra::TupleChunks(rows, threads));
}

template <int W>
struct PartitionW {
  static std::vector<std::uint64_t> call(const std::uint32_t* in, std::uint64_t rows, int ranks, std::uint32_t* out,
                                         int threads) {
    return partition_w<W>(in, rows, ranks, out, threads);
  }
};

}  // namespace

std::vector<std::uint64_t> partition_by_owner(const std::uint32_t* in, std::uint64_t rows, int width, int ranks,
                                              std::uint32_t* out, int threads) {
  if (ranks < 1) throw std::invalid_argument("partition_by_owner: at least one rank");
  if (rows == 0) return std::vector<std::uint64_t>(static_cast<std::size_t>(ranks), 0);
  return ra::by_tuple_width<PartitionW>(width, in, rows, ranks, out, threads);
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
  const ra::TupleChunks ch(n, threads);
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
