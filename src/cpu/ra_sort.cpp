#include "ra_sort.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/chunks.hpp"

namespace hdb::ra::cpu {
namespace {

using hdb::cpu::chunk_begin;
using hdb::cpu::chunk_count;
using hdb::cpu::for_chunks;

// One pass on the digit at `shift` (of the 64-bit pair, so 32..56 for the key); false when every
// pair has the same digit there (nothing moves, src stays the result).
bool radix_pass(const std::uint64_t* src, std::uint64_t* dst, std::uint64_t n, int shift, int chunks, SortScratch& s) {
  for_chunks(chunks, chunks, [&](int c) {
    auto& h = s.hist[static_cast<std::size_t>(c)];
    h.fill(0);
    for (std::uint64_t i = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1); i < e; ++i)
      ++h[(src[i] >> shift) & 255];
  });
  std::uint64_t offset = 0;
  for (int d = 0; d < 256; ++d) {
    std::uint64_t count = 0;
    for (int c = 0; c < chunks; ++c) count += s.hist[static_cast<std::size_t>(c)][static_cast<std::size_t>(d)];
    if (count == n) return false;
    for (int c = 0; c < chunks; ++c) {
      auto& slot = s.hist[static_cast<std::size_t>(c)][static_cast<std::size_t>(d)];
      const std::uint64_t here = slot;
      slot = offset;
      offset += here;
    }
  }
  for_chunks(chunks, chunks, [&](int c) {
    auto& next = s.hist[static_cast<std::size_t>(c)];
    for (std::uint64_t i = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1); i < e; ++i)
      dst[next[(src[i] >> shift) & 255]++] = src[i];
  });
  return true;
}

}  // namespace

Breakdown stable_sort_by_key(const std::uint32_t* in, std::uint64_t n, int w, std::uint32_t* out, int threads,
                             SortScratch& s) {
  HostTimer t;
  const int chunks = chunk_count(n, threads);
  if (s.a.size() < n) {
    s.a.resize(n);
    s.b.resize(n);
  }
  if (s.hist.size() < static_cast<std::size_t>(chunks)) s.hist.resize(static_cast<std::size_t>(chunks));
  std::uint64_t* src = s.a.data();
  std::uint64_t* dst = s.b.data();
  const std::uint64_t uw = static_cast<std::uint64_t>(w);
  for_chunks(chunks, chunks, [&](int c) {
    for (std::uint64_t i = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1); i < e; ++i)
      src[i] = std::uint64_t{in[i * uw]} << 32 | i;
  });
  for (int shift = 32; shift < 64; shift += 8)
    if (radix_pass(src, dst, n, shift, chunks, s)) std::swap(src, dst);
  const double sort_s = t.seconds();
  for_chunks(chunks, chunks, [&](int c) {
    for (std::uint64_t i = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1); i < e; ++i)
      std::memcpy(out + i * uw, in + (src[i] & 0xffffffffu) * uw, uw * 4);
  });
  Breakdown b = Breakdown::compute_only(t.seconds());
  b.add_phase("sort", sort_s);
  b.add_phase("gather", b.kernel - sort_s);
  return b;
}

}  // namespace hdb::ra::cpu
