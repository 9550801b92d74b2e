#include "ra_hash.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "runtime/chunks.hpp"
#include "ra_staged.hpp"
#include "tuple_width.hpp"
#include "workloads/random.hpp"

namespace hdb::ra::cpu::hash {
namespace {

using hdb::cpu::chunk_begin;
using hdb::cpu::chunk_count;
using hdb::cpu::for_chunks;

constexpr std::uint32_t kEmpty = 0xffffffffu;
// Rows a partition aims at: its 2-word tuples (128 KB) and a table of two slots per row (128 KB)
// stay within the 512 KB L2 of the cores this suite is run on, with room for the output's lines.
constexpr std::uint64_t kPartitionRows = 65536;
// One partitioning pass writes to at most 2^10 partitions: beyond that, its scattered writes miss
// the TLB and the write-combining buffers, and a second pass would pay more than it saves.
constexpr int kMaxBits = 10;
constexpr std::uint64_t kMinTable = 16;

int partition_bits(std::uint64_t rows) {
  int bits = 0;
  while (bits < kMaxBits && (rows >> bits) > kPartitionRows) ++bits;
  return bits;
}

// SplitMix64's finaliser: every input bit moves every output bit, so the partition (high bits) and
// the table slot (low bits) are independent.
constexpr std::uint64_t mix(std::uint64_t h) { return splitmix64(h); }
inline std::uint64_t key_of(const std::uint32_t* t, int kw) {
  return kw == 2 ? (std::uint64_t{t[0]} << 32) | t[1] : t[0];
}
// A whole tuple's hash: W words (w where W is 0).
template <int W>
inline std::uint64_t tuple_hash(const std::uint32_t* t, int w) {
  const int n = W > 0 ? W : w;
  std::uint64_t h = 0;
  for (int i = 0; i < n; ++i) h = (h ^ t[i]) * 0x9E3779B97F4A7C15ULL;
  return mix(h);
}

std::uint64_t pow2_at_least(std::uint64_t n) {
  std::uint64_t c = kMinTable;
  while (c < n) c <<= 1;
  return c;
}

// Copies `in` into `out` grouped by partition (hash >> (64 - bits)), keeping input order within a
// partition: per chunk a histogram, then each chunk scatters to its own offsets. (Buffering a cache
// line of tuples per partition before writing it, as radix joins on large-page-less machines do,
// measured slower here: 213 ms against 173 ms to partition a join's two 8M-tuple inputs.)
template <class Hash>
void partition(const Rows& in, int bits, Hash hash, int threads, std::vector<std::uint32_t>& out,
               std::vector<std::uint64_t>& begin, std::vector<std::uint64_t>& hist) {
  const std::uint64_t parts = std::uint64_t{1} << bits;
  const auto w = static_cast<std::uint64_t>(in.width);
  const int chunks = chunk_count(in.rows, threads);
  if (out.size() < in.rows * w) out.resize(in.rows * w);
  begin.assign(parts + 1, 0);
  hist.assign(static_cast<std::size_t>(chunks) * parts, 0);
  auto part = [&](const std::uint32_t* t) { return bits ? hash(t) >> (64 - bits) : 0; };
  for_chunks(chunks, threads, [&](int c) {
    std::uint64_t* h = hist.data() + static_cast<std::uint64_t>(c) * parts;
    for (std::uint64_t i = chunk_begin(in.rows, chunks, c), e = chunk_begin(in.rows, chunks, c + 1); i < e; ++i)
      ++h[part(in.data + i * w)];
  });
  std::uint64_t run = 0;
  for (std::uint64_t p = 0; p < parts; ++p) {
    begin[p] = run;
    for (int c = 0; c < chunks; ++c) {
      std::uint64_t& h = hist[static_cast<std::uint64_t>(c) * parts + p];
      const std::uint64_t n = h;
      h = run;
      run += n;
    }
  }
  begin[parts] = run;
  std::uint32_t* dst = out.data();
  for_common_width(in.width, [&](auto W) {
    constexpr int kW = decltype(W)::value;
    for_chunks(chunks, threads, [&](int c) {
      std::uint64_t* at = hist.data() + static_cast<std::uint64_t>(c) * parts;
      for (std::uint64_t i = chunk_begin(in.rows, chunks, c), e = chunk_begin(in.rows, chunks, c + 1); i < e; ++i) {
        const std::uint32_t* t = in.data + i * w;
        copy_fixed<kW>(dst + (at[part(t)]++) * w, t, w);
      }
    });
  });
}

// Partition p's table: [table_begin[p], table_begin[p + 1]) of s.table, `slots_per_row` slots per
// row of rows(p) rounded up to a power of two. Throws where a partition's rows overflow a 32-bit slot.
template <class RowsOf>
void size_tables(std::uint64_t parts, RowsOf rows, std::uint64_t slots_per_row, Scratch& s) {
  s.table_begin.assign(parts + 1, 0);
  for (std::uint64_t p = 0; p < parts; ++p) {
    if (rows(p) >= kEmpty) throw std::length_error("hash variant: a partition holds 2^32 rows or more");
    s.table_begin[p + 1] = s.table_begin[p] + pow2_at_least(slots_per_row * rows(p));
  }
  if (s.table.size() < s.table_begin[parts]) s.table.resize(s.table_begin[parts]);
}

// out_begin = exclusive prefix sum of count; returns the total.
std::uint64_t place(Scratch& s) {
  s.out_begin.assign(s.count.size() + 1, 0);
  for (std::size_t p = 0; p < s.count.size(); ++p) s.out_begin[p + 1] = s.out_begin[p] + s.count[p];
  return s.out_begin.back();
}

int parts_threads(std::uint64_t parts, int threads) {
  return static_cast<int>(std::min<std::uint64_t>(parts, static_cast<std::uint64_t>(threads)));
}

// unique (Reduce false) and reduce_by_key: each partition's groups are gathered at its front, in
// the order their keys first occur, then copied out.
template <bool Reduce, int W>
std::uint64_t group(const Rows& in, ReduceOp op, std::uint32_t* out, int threads, Scratch& s, Breakdown& b) {
  HostTimer t;
  const int kw = in.key_words;
  const auto w = static_cast<std::uint64_t>(W > 0 ? W : in.width);
  const int bits = partition_bits(in.rows);
  const std::uint64_t parts = std::uint64_t{1} << bits;
  partition(
      in, bits, [kw](const std::uint32_t* x) { return mix(key_of(x, kw)); }, threads, s.part_a, s.begin_a, s.hist);
  b.add_phase("partition", t.seconds());
  t.reset();
  size_tables(
      parts, [&](std::uint64_t p) { return s.begin_a[p + 1] - s.begin_a[p]; }, 2, s);
  s.count.assign(parts, 0);
  for_chunks(static_cast<int>(parts), parts_threads(parts, threads), [&](int pi) {
    const auto p = static_cast<std::uint64_t>(pi);
    std::uint32_t* rows = s.part_a.data() + s.begin_a[p] * w;
    const std::uint64_t m = s.begin_a[p + 1] - s.begin_a[p];
    std::uint32_t* table = s.table.data() + s.table_begin[p];
    const std::uint64_t mask = s.table_begin[p + 1] - s.table_begin[p] - 1;
    std::fill(table, table + mask + 1, kEmpty);
    std::uint32_t groups = 0;
    for (std::uint64_t i = 0; i < m; ++i) {
      const std::uint32_t* row = rows + i * w;
      const std::uint64_t k = key_of(row, kw);
      for (std::uint64_t slot = mix(k) & mask;; slot = (slot + 1) & mask) {
        const std::uint32_t e = table[slot];
        if (e == kEmpty) {
          table[slot] = groups;
          // A group's row never lies past the row being read: gathering in place is safe.
          if (groups != i) copy_fixed<W>(rows + std::uint64_t{groups} * w, row, w);
          ++groups;
          break;
        }
        std::uint32_t* g = rows + std::uint64_t{e} * w;
        if (key_of(g, kw) != k) continue;
        if constexpr (Reduce)
          for (std::uint64_t v = static_cast<std::uint64_t>(kw); v < w; ++v) {
            if (op == ReduceOp::Sum)
              g[v] += row[v];  // modulo 2^32, as the contract's sums
            else if (op == ReduceOp::Min)
              g[v] = std::min(g[v], row[v]);
            else
              g[v] = std::max(g[v], row[v]);
          }
        break;
      }
    }
    s.count[p] = groups;
  });
  b.add_phase(Reduce ? "aggregate" : "deduplicate", t.seconds());
  t.reset();
  const std::uint64_t total = place(s);
  for_chunks(static_cast<int>(parts), parts_threads(parts, threads), [&](int pi) {
    const auto p = static_cast<std::uint64_t>(pi);
    if (s.count[p]) std::memcpy(out + s.out_begin[p] * w, s.part_a.data() + s.begin_a[p] * w, s.count[p] * w * 4);
  });
  b.add_phase("gather", t.seconds());
  return total;
}

}  // namespace

void Scratch::release() { *this = Scratch(); }

std::uint64_t unique(const Rows& in, std::uint32_t* out, int threads, Scratch& s, Breakdown& b) {
  std::uint64_t rows = 0;
  for_common_width(in.width,
                   [&](auto W) { rows = group<false, decltype(W)::value>(in, ReduceOp::Sum, out, threads, s, b); });
  return rows;
}

std::uint64_t reduce_by_key(const Rows& in, ReduceOp op, std::uint32_t* out, int threads, Scratch& s, Breakdown& b) {
  std::uint64_t rows = 0;
  for_common_width(in.width, [&](auto W) { rows = group<true, decltype(W)::value>(in, op, out, threads, s, b); });
  return rows;
}

std::uint64_t join(const Rows& l, const Rows& r, const std::function<std::uint32_t*(std::uint64_t)>& alloc, int threads,
                   Scratch& s, Breakdown& b) {
  HostTimer t;
  const int kw = l.key_words;
  const auto lw = static_cast<std::uint64_t>(l.width), rw = static_cast<std::uint64_t>(r.width);
  const auto ukw = static_cast<std::uint64_t>(kw);
  const std::uint64_t ow = lw + rw - ukw;
  const int bits = partition_bits(std::max(l.rows, r.rows));
  const std::uint64_t parts = std::uint64_t{1} << bits;
  auto hash = [kw](const std::uint32_t* x) { return mix(key_of(x, kw)); };
  partition(l, bits, hash, threads, s.part_a, s.begin_a, s.hist);
  partition(r, bits, hash, threads, s.part_b, s.begin_b, s.hist);
  b.add_phase("partition", t.seconds());
  t.reset();
  // Chained tables on the left partitions (one slot per row): next[] links the rows of a slot.
  size_tables(
      parts, [&](std::uint64_t p) { return s.begin_a[p + 1] - s.begin_a[p]; }, 1, s);
  if (s.next.size() < l.rows) s.next.resize(l.rows);
  const int pt = parts_threads(parts, threads);
  // Calls emit(left row, right row) for every match in partition p.
  auto probe = [&](std::uint64_t p, auto&& emit) {
    const std::uint32_t* lrows = s.part_a.data() + s.begin_a[p] * lw;
    const std::uint32_t* rrows = s.part_b.data() + s.begin_b[p] * rw;
    const std::uint32_t* table = s.table.data() + s.table_begin[p];
    const std::uint32_t* next = s.next.data() + s.begin_a[p];
    const std::uint64_t mask = s.table_begin[p + 1] - s.table_begin[p] - 1;
    for (std::uint64_t j = 0, m = s.begin_b[p + 1] - s.begin_b[p]; j < m; ++j) {
      const std::uint32_t* row = rrows + j * rw;
      const std::uint64_t k = key_of(row, kw);
      for (std::uint32_t e = table[mix(k) & mask]; e != kEmpty; e = next[e])
        if (key_of(lrows + std::uint64_t{e} * lw, kw) == k) emit(lrows + std::uint64_t{e} * lw, row);
    }
  };
  // Each partition is built and probed once while its rows and table are in the core's cache,
  // writing into a staging buffer of its own; then every buffer is copied to its place in the
  // output. (Probing twice, to count and then to write at exact offsets, cost a second chain walk
  // per right row: about 40 % of the join's time.)
  std::uint64_t total = 0;
  for_common_width(l.width, [&](auto LW) {
    for_common_width(r.width - kw, [&](auto RV) {
      constexpr int kLW = decltype(LW)::value, kRV = decltype(RV)::value;
      staged_all(
          static_cast<int>(parts), pt, ow, s.stages,
          [&](int pi, std::vector<std::uint32_t>& buf) -> std::uint64_t {
            const auto p = static_cast<std::uint64_t>(pi);
            const std::uint32_t* lrows = s.part_a.data() + s.begin_a[p] * lw;
            std::uint32_t* table = s.table.data() + s.table_begin[p];
            std::uint32_t* next = s.next.data() + s.begin_a[p];
            const std::uint64_t mask = s.table_begin[p + 1] - s.table_begin[p] - 1;
            std::fill(table, table + mask + 1, kEmpty);
            for (std::uint64_t i = 0, m = s.begin_a[p + 1] - s.begin_a[p]; i < m; ++i) {
              const std::uint64_t slot = mix(key_of(lrows + i * lw, kw)) & mask;
              next[i] = table[slot];
              table[slot] = static_cast<std::uint32_t>(i);
            }
            // One probe, writing as it goes: room for one match a right row, doubled when a
            // partition has more (kept from pass to pass, so only a case's first pass grows it).
            const std::uint64_t m = s.begin_b[p + 1] - s.begin_b[p];
            if (buf.size() < (m + 1) * ow) buf.resize((m + 1) * ow);
            std::uint64_t at = 0;
            probe(p, [&](const std::uint32_t* lrow, const std::uint32_t* rrow) {
              if (at + ow > buf.size()) buf.resize(2 * buf.size());
              std::uint32_t* o = buf.data() + at;
              copy_fixed<kLW>(o, lrow, lw);  // key, then the left values
              copy_fixed<kRV>(o + lw, rrow + ukw, rw - ukw);
              at += ow;
            });
            return at / ow;
          },
          [&](std::uint64_t rows) {
            total = rows;
            b.add_phase("build_probe", t.seconds());
            t.reset();
            return alloc(rows);
          });
    });
  });
  b.add_phase("copy", t.seconds());
  return total;
}

namespace {
template <int W>
std::uint64_t set_op_w(const Rows& a, const Rows& b, SetOp op, std::uint32_t* out, int threads, Scratch& s,
                       Breakdown& bd) {
  HostTimer t;
  const int w = W > 0 ? W : a.width;
  const auto uw = static_cast<std::uint64_t>(w);
  const int bits = partition_bits(a.rows + b.rows);
  const std::uint64_t parts = std::uint64_t{1} << bits;
  auto hash = [&](const std::uint32_t* x) { return tuple_hash<W>(x, w); };
  partition(a, bits, hash, threads, s.part_a, s.begin_a, s.hist);
  partition(b, bits, hash, threads, s.part_b, s.begin_b, s.hist);
  bd.add_phase("partition", t.seconds());
  t.reset();
  // Groups of partition p start at begin_a[p] + begin_b[p]: at most its rows in a and in b.
  auto rows = [&](std::uint64_t p) { return s.begin_a[p + 1] - s.begin_a[p] + s.begin_b[p + 1] - s.begin_b[p]; };
  size_tables(parts, rows, 2, s);
  if (s.group_row.size() < a.rows + b.rows) s.group_row.resize(a.rows + b.rows);
  if (s.group_count.size() < 2 * (a.rows + b.rows)) s.group_count.resize(2 * (a.rows + b.rows));
  s.count.assign(parts, 0);
  s.groups.assign(parts, 0);
  auto copies = [op](std::uint32_t ca, std::uint32_t cb) -> std::uint64_t {
    switch (op) {
      case SetOp::Union: return std::max(ca, cb);
      case SetOp::Intersection: return std::min(ca, cb);
      case SetOp::Difference: return ca > cb ? ca - cb : 0;
    }
    return 0;
  };
  const int pt = parts_threads(parts, threads);
  for_chunks(static_cast<int>(parts), pt, [&](int pi) {
    const auto p = static_cast<std::uint64_t>(pi);
    const std::uint64_t g0 = s.begin_a[p] + s.begin_b[p];
    const std::uint32_t** grow = s.group_row.data() + g0;
    std::uint32_t* gcount = s.group_count.data() + 2 * g0;
    std::uint32_t* table = s.table.data() + s.table_begin[p];
    const std::uint64_t mask = s.table_begin[p + 1] - s.table_begin[p] - 1;
    std::fill(table, table + mask + 1, kEmpty);
    std::uint32_t groups = 0;
    auto insert = [&](const std::uint32_t* row, int side) {
      for (std::uint64_t slot = tuple_hash<W>(row, w) & mask;; slot = (slot + 1) & mask) {
        const std::uint32_t e = table[slot];
        if (e == kEmpty) {
          table[slot] = groups;
          grow[groups] = row;
          gcount[2 * groups + static_cast<std::uint32_t>(side)] = 1;
          gcount[2 * groups + 1 - static_cast<std::uint32_t>(side)] = 0;
          ++groups;
          return;
        }
        if (std::equal(row, row + w, grow[e])) {
          ++gcount[2 * e + static_cast<std::uint32_t>(side)];
          return;
        }
      }
    };
    const std::uint32_t* ra = s.part_a.data() + s.begin_a[p] * uw;
    const std::uint32_t* rb = s.part_b.data() + s.begin_b[p] * uw;
    for (std::uint64_t i = 0, m = s.begin_a[p + 1] - s.begin_a[p]; i < m; ++i) insert(ra + i * uw, 0);
    for (std::uint64_t i = 0, m = s.begin_b[p + 1] - s.begin_b[p]; i < m; ++i) insert(rb + i * uw, 1);
    std::uint64_t n = 0;
    for (std::uint32_t g = 0; g < groups; ++g) n += copies(gcount[2 * g], gcount[2 * g + 1]);
    s.count[p] = n;
    s.groups[p] = groups;
  });
  bd.add_phase("count", t.seconds());
  t.reset();
  const std::uint64_t total = place(s);
  for_chunks(static_cast<int>(parts), pt, [&](int pi) {
    const auto p = static_cast<std::uint64_t>(pi);
    const std::uint64_t g0 = s.begin_a[p] + s.begin_b[p];
    std::uint32_t* o = out + s.out_begin[p] * uw;
    for (std::uint64_t g = 0; g < s.groups[p]; ++g) {
      const std::uint32_t* row = s.group_row[g0 + g];
      for (std::uint64_t c = copies(s.group_count[2 * (g0 + g)], s.group_count[2 * (g0 + g) + 1]); c > 0; --c, o += uw)
        copy_fixed<W>(o, row, uw);
    }
  });
  bd.add_phase("gather", t.seconds());
  return total;
}
}  // namespace

std::uint64_t set_op(const Rows& a, const Rows& b, SetOp op, std::uint32_t* out, int threads, Scratch& s,
                     Breakdown& bd) {
  std::uint64_t rows = 0;
  for_common_width(a.width, [&](auto W) { rows = set_op_w<decltype(W)::value>(a, b, op, out, threads, s, bd); });
  return rows;
}

void plan(const OpShape& s, int threads, MemoryPlan& plan) {
  const std::uint64_t in_a = s.rows_a * static_cast<std::uint64_t>(s.width_a) * 4;
  const std::uint64_t in_b = s.rows_b * static_cast<std::uint64_t>(s.width_b) * 4;
  const std::uint64_t parts = std::uint64_t{1} << kMaxBits;
  // Each partition's table: a power of two below twice its slots, at least kMinTable.
  auto tables = [&](std::uint64_t slots) { return (2 * slots + parts * kMinTable) * 4; };
  // Histograms (per chunk and partition), the per-partition counts and offsets.
  const std::uint64_t chunks = static_cast<std::uint64_t>(threads) * hdb::cpu::kChunksPerThread;
  plan.add("hash partition bookkeeping", (chunks + 4) * (parts + 1) * 8);
  switch (s.op) {
    case Op::Unique:
    case Op::ReduceByKey: plan.add("hash partitions", in_a).add("hash tables", tables(2 * s.rows_a)); break;
    case Op::Join:
      plan.add("hash partitions", in_a + in_b).add("hash tables", tables(s.rows_a)).add("hash chains", s.rows_a * 4);
      // A partition's buffer holds one match a right row, doubled while its output needs more:
      // below its right rows + 1, or twice its output where that is more.
      plan.add("hash join staged output",
               (s.rows_b + parts + 2 * s.out_rows) * static_cast<std::uint64_t>(s.out_width) * 4);
      break;
    case Op::SetUnion:
    case Op::SetIntersection:
    case Op::SetDifference:
      plan.add("hash partitions", in_a + in_b)
          .add("hash tables", tables(2 * (s.rows_a + s.rows_b)))
          .add("hash groups", (s.rows_a + s.rows_b) * (sizeof(void*) + 8));
      break;
    default: break;
  }
}

}  // namespace hdb::ra::cpu::hash
