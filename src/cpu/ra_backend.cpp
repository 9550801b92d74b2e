#include "ra_backend.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <type_traits>

#ifdef HDB_HAVE_OPENMP
#include <omp.h>
#endif

#include "reference/ra.hpp"
#include "runtime/chunks.hpp"

namespace hdb::ra::cpu {
namespace {

using hdb::cpu::chunk_begin;
using hdb::cpu::chunk_count;
using hdb::cpu::for_chunks;

// Host memory is the device memory: a handle owns a host relation.
class CpuRelation : public DeviceRelation {
 public:
  CpuRelation(std::uint64_t capacity_rows, int values) : rel(capacity_rows, values) {}
  std::uint64_t capacity_words() const override { return rel.capacity_rows() * static_cast<std::uint64_t>(rel.width()); }
  void shape(std::uint64_t rows, int values) {
    rows_ = rows;
    values_ = values;
  }
  const std::uint32_t* data() const { return rel.data(); }
  std::uint32_t* data() { return rel.data(); }
  Relation rel;  // storage; its own rows/values are the capacity shape
};

const CpuRelation& as_cpu(const DeviceRelation& r) {
  auto* c = dynamic_cast<const CpuRelation*>(&r);
  if (!c) throw std::invalid_argument("relation handle was not made by the cpu backend");
  return *c;
}

// Makes `out` a cpu relation that can hold rows x (1 + values) words, reusing its memory when it is
// large enough (only the first pass of a case allocates).
CpuRelation& ensure(DeviceRel& out, std::uint64_t rows, int values) {
  auto* c = dynamic_cast<CpuRelation*>(out.get());
  std::uint64_t words = rows * static_cast<std::uint64_t>(1 + values);
  if (!c || c->capacity_words() < words || out.use_count() > 1) {
    // Capacity is counted in words so a relation may be reused with another width.
    auto fresh = std::make_shared<CpuRelation>(words, 0);
    c = fresh.get();
    out = fresh;
  }
  c->shape(rows, values);
  return *c;
}

void copy_tuple(std::uint32_t* dst, const std::uint32_t* src, int w) {
  for (int i = 0; i < w; ++i) dst[i] = src[i];
}

// Calls f(std::integral_constant<int, W>) for the tuple width w, so inner loops over a tuple's
// words have a compile-time trip count (and compile to plain moves / vector code).
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

// Keeps the tuples i of `in` for which flag(i) holds, in order. Serial: one pass into an output as
// large as the input. Parallel: count per chunk, prefix over chunks, write.
template <int W, class Flag>
void compact_w(const CpuRelation& in, Flag flag, int threads, DeviceRel& out_handle) {
  const std::uint64_t n = in.rows();
  const std::uint32_t* src = in.data();
  const int chunks = chunk_count(n, threads);
  // Branch-free: every tuple is copied to the next free slot, which advances only when the tuple
  // is kept (random predicates defeat branch prediction). The slot written is never beyond the
  // kept count so far, so the copy stays inside the output: below i in the single pass, and below
  // the chunk's known count (`limit`, where the loop stops) in the parallel pass.
  auto write = [&](std::uint64_t b, std::uint64_t e, std::uint64_t limit, std::uint32_t* dst) {
    std::uint64_t o = 0;
    for (std::uint64_t i = b; i < e && o < limit; ++i) {
      std::memcpy(dst + o * W, src + i * W, W * 4);
      o += flag(i) ? 1 : 0;
    }
    return o;
  };
  if (chunks == 1) {
    CpuRelation& out = ensure(out_handle, n, in.values());
    out.shape(write(0, n, n, out.data()), in.values());
    return;
  }
  std::vector<std::uint64_t> count(static_cast<std::size_t>(chunks) + 1, 0);
  for_chunks(chunks, chunks, [&](int c) {
    std::uint64_t k = 0;
    for (std::uint64_t i = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1); i < e; ++i) k += flag(i) ? 1 : 0;
    count[static_cast<std::size_t>(c) + 1] = k;
  });
  for (int c = 0; c < chunks; ++c) count[static_cast<std::size_t>(c) + 1] += count[static_cast<std::size_t>(c)];
  CpuRelation& out = ensure(out_handle, count.back(), in.values());
  for_chunks(chunks, chunks, [&](int c) {
    const auto k = static_cast<std::size_t>(c);
    write(chunk_begin(n, chunks, c), chunk_begin(n, chunks, c + 1), count[k + 1] - count[k], out.data() + count[k] * W);
  });
}

// Flag factories get the width as a constant too: make_flag(W) returns flag(i).
template <class MakeFlag>
void compact(const CpuRelation& in, MakeFlag make_flag, int threads, DeviceRel& out_handle) {
  for_width(in.width(), [&](auto W) { compact_w<decltype(W)::value>(in, make_flag(W), threads, out_handle); });
}

// Chunk starts moved forward to the start of a run of equal keys (or whole tuples), so a run is
// never split between chunks.
std::vector<std::uint64_t> run_aligned_bounds(const CpuRelation& r, int chunks, int compare_words) {
  const std::uint64_t n = r.rows();
  const int w = r.width();
  std::vector<std::uint64_t> b(static_cast<std::size_t>(chunks) + 1);
  for (int c = 0; c <= chunks; ++c) {
    std::uint64_t i = chunk_begin(n, chunks, c);
    while (i > 0 && i < n &&
           compare_tuples(r.data() + i * static_cast<std::uint64_t>(w), r.data() + (i - 1) * static_cast<std::uint64_t>(w),
                          compare_words) == 0)
      ++i;
    b[static_cast<std::size_t>(c)] = std::max(i, c ? b[static_cast<std::size_t>(c) - 1] : 0);
  }
  return b;
}

// First tuple of r not less than `t` over the first `words` words.
std::uint64_t lower_bound_tuple(const CpuRelation& r, const std::uint32_t* t, int words) {
  std::uint64_t lo = 0, hi = r.rows();
  const int w = r.width();
  while (lo < hi) {
    std::uint64_t mid = (lo + hi) / 2;
    if (compare_tuples(r.data() + mid * static_cast<std::uint64_t>(w), t, words) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}


// Merge join of l[lb, le) with r[rb, re); writes at dst when Write, returns the tuples produced.
template <bool Write>
std::uint64_t merge_join(const CpuRelation& l, std::uint64_t lb, std::uint64_t le, const CpuRelation& r, std::uint64_t rb,
                         std::uint64_t re, std::uint32_t* dst) {
  const int lw = l.width(), rw = r.width(), ow = lw + r.values();
  std::uint64_t i = lb, j = rb, o = 0;
  auto lk = [&](std::uint64_t x) { return l.data()[x * static_cast<std::uint64_t>(lw)]; };
  auto rk = [&](std::uint64_t x) { return r.data()[x * static_cast<std::uint64_t>(rw)]; };
  while (i < le && j < re) {
    std::uint32_t a = lk(i), b = rk(j);
    if (a < b) ++i;
    else if (b < a) ++j;
    else {
      std::uint64_t i2 = i, j2 = j;
      while (i2 < le && lk(i2) == a) ++i2;
      while (j2 < re && rk(j2) == a) ++j2;
      if constexpr (Write) {
        for (std::uint64_t x = i; x < i2; ++x)
          for (std::uint64_t y = j; y < j2; ++y) {
            std::uint32_t* t = dst + (o++) * static_cast<std::uint64_t>(ow);
            copy_tuple(t, l.data() + x * static_cast<std::uint64_t>(lw), lw);
            copy_tuple(t + lw, r.data() + y * static_cast<std::uint64_t>(rw) + 1, r.values());
          }
      } else {
        o += (i2 - i) * (j2 - j);
      }
      i = i2;
      j = j2;
    }
  }
  return o;
}

// The std::set_* merge on whole tuples of a[ab, ae) and b[bb, be).
template <bool Write>
std::uint64_t merge_set(const CpuRelation& a, std::uint64_t i, std::uint64_t ae, const CpuRelation& b, std::uint64_t j,
                        std::uint64_t be, SetOp op, std::uint32_t* dst) {
  const int w = a.width();
  std::uint64_t o = 0;
  auto emit = [&](const std::uint32_t* t) {
    if constexpr (Write) copy_tuple(dst + o * static_cast<std::uint64_t>(w), t, w);
    ++o;
  };
  auto at = [&](const CpuRelation& r, std::uint64_t x) { return r.data() + x * static_cast<std::uint64_t>(w); };
  while (i < ae && j < be) {
    int c = compare_tuples(at(a, i), at(b, j), w);
    if (c < 0) {
      if (op != SetOp::Intersection) emit(at(a, i));
      ++i;
    } else if (c > 0) {
      if (op == SetOp::Union) emit(at(b, j));
      ++j;
    } else {
      if (op != SetOp::Difference) emit(at(a, i));
      ++i;
      ++j;
    }
  }
  if (op != SetOp::Intersection)
    for (; i < ae; ++i) emit(at(a, i));
  if (op == SetOp::Union)
    for (; j < be; ++j) emit(at(b, j));
  return o;
}

// Runs a two-input merge per chunk: chunk c covers a[ab[c], ab[c+1]) and b[bb[c], bb[c+1]).
// Count pass, prefix over chunks, write pass: the output is sized exactly before it is written.
template <class Merge>
void chunked_merge(int chunks, const std::vector<std::uint64_t>& ab, const std::vector<std::uint64_t>& bb, int out_values,
                   Merge merge, DeviceRel& out_handle) {
  std::vector<std::uint64_t> count(static_cast<std::size_t>(chunks) + 1, 0);
  for_chunks(chunks, chunks, [&](int c) {
    auto k = static_cast<std::size_t>(c);
    count[k + 1] = merge(std::false_type{}, ab[k], ab[k + 1], bb[k], bb[k + 1], nullptr);
  });
  for (int c = 0; c < chunks; ++c) count[static_cast<std::size_t>(c) + 1] += count[static_cast<std::size_t>(c)];
  CpuRelation& out = ensure(out_handle, count.back(), out_values);
  const std::uint64_t ow = static_cast<std::uint64_t>(1 + out_values);
  for_chunks(chunks, chunks, [&](int c) {
    auto k = static_cast<std::size_t>(c);
    merge(std::true_type{}, ab[k], ab[k + 1], bb[k], bb[k + 1], out.data() + count[k] * ow);
  });
}

}  // namespace

int CpuRa::threads_for(const std::string& variant) const {
  if (variant == "serial") return 1;
  if (variant == "parallel") return platform_ ? std::max(1, platform_->threads()) : threads_;
  throw std::invalid_argument("cpu backend has no variant '" + variant + "'");
}

std::vector<std::string> CpuRa::variants(Op) const { return {"serial", "parallel"}; }

Breakdown CpuRa::upload(const Relation& host, DeviceRel& out) {
  HostTimer t;
  CpuRelation& d = ensure(out, host.rows(), host.values());
  if (host.words()) std::memcpy(d.data(), host.data(), host.bytes());
  Breakdown b;
  b.h2d = b.total = t.seconds();
  return b;
}

Breakdown CpuRa::download(const DeviceRelation& dev, Relation& host) {
  HostTimer t;
  const CpuRelation& d = as_cpu(dev);
  if (host.values() != d.values() || host.capacity_rows() < d.rows()) host = Relation(d.rows(), d.values());
  host.set_rows(d.rows());
  if (d.rows()) std::memcpy(host.data(), d.data(), d.bytes());
  Breakdown b;
  b.d2h = b.total = t.seconds();
  return b;
}

Breakdown CpuRa::project(const DeviceRelation& in_, const std::vector<int>& columns, const std::string& variant,
                         DeviceRel& out_handle) {
  ref::check_project(in_.values(), columns);
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const int threads = threads_for(variant);
  const int ow = static_cast<int>(columns.size()), iw = in.width();
  CpuRelation& out = ensure(out_handle, in.rows(), ow - 1);
  int cols[kMaxValues + 1];
  std::copy(columns.begin(), columns.end(), cols);
  const int chunks = chunk_count(in.rows(), threads);
  const std::uint32_t* src = in.data();
  std::uint32_t* dst = out.data();
  for_width(iw, [&](auto IW) {
    for_width(ow, [&](auto OW) {
      constexpr std::uint64_t w_in = decltype(IW)::value, w_out = decltype(OW)::value;
      for_chunks(chunks, chunks, [&](int c) {
        for (std::uint64_t i = chunk_begin(in.rows(), chunks, c), e = chunk_begin(in.rows(), chunks, c + 1); i < e; ++i)
          for (std::uint64_t k = 0; k < w_out; ++k) dst[i * w_out + k] = src[i * w_in + static_cast<std::uint64_t>(cols[k])];
      });
    });
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::select(const DeviceRelation& in_, const Predicate& pred, const std::string& variant, DeviceRel& out) {
  ref::check_predicate(in_.values(), pred);
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const std::uint32_t* d = in.data();
  compact(in, [&](auto W) { return [d, pred](std::uint64_t i) { return pred(d + i * decltype(W)::value); }; },
          threads_for(variant), out);
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::unique(const DeviceRelation& in_, const std::string& variant, DeviceRel& out) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const std::uint32_t* d = in.data();
  compact(in,
          [&](auto W) {
            constexpr std::uint64_t w = decltype(W)::value;
            return [d](std::uint64_t i) { return i == 0 || d[i * w] != d[(i - 1) * w]; };
          },
          threads_for(variant), out);
  return Breakdown::compute_only(t.seconds());
}

namespace {
template <int W, ReduceOp Op>
std::array<std::uint64_t, kMaxValues> reduce_range(const std::uint32_t* d, std::uint64_t b, std::uint64_t e) {
  constexpr std::uint64_t identity = Op == ReduceOp::Min ? 0xffffffffull : 0;
  std::array<std::uint64_t, kMaxValues> acc;
  acc.fill(identity);
  for (std::uint64_t i = b; i < e; ++i)
    for (int v = 1; v < W; ++v) {
      std::uint64_t x = d[i * W + static_cast<std::uint64_t>(v)];
      std::uint64_t& a = acc[static_cast<std::size_t>(v - 1)];
      if constexpr (Op == ReduceOp::Sum) a += x;
      else if constexpr (Op == ReduceOp::Min) a = std::min(a, x);
      else a = std::max(a, x);
    }
  return acc;
}
}  // namespace

Timed<Aggregate> CpuRa::reduce(const DeviceRelation& in_, ReduceOp op, const std::string& variant) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const int chunks = chunk_count(in.rows(), threads_for(variant));
  const std::uint64_t identity = op == ReduceOp::Min ? 0xffffffffull : 0;
  std::vector<std::array<std::uint64_t, kMaxValues>> part(static_cast<std::size_t>(chunks));
  for_chunks(chunks, chunks, [&](int c) {
    const std::uint64_t b = chunk_begin(in.rows(), chunks, c), e = chunk_begin(in.rows(), chunks, c + 1);
    for_width(in.width(), [&](auto W) {
      constexpr int w = decltype(W)::value;
      auto& p = part[static_cast<std::size_t>(c)];
      if (op == ReduceOp::Sum) p = reduce_range<w, ReduceOp::Sum>(in.data(), b, e);
      else if (op == ReduceOp::Min) p = reduce_range<w, ReduceOp::Min>(in.data(), b, e);
      else p = reduce_range<w, ReduceOp::Max>(in.data(), b, e);
    });
  });
  Aggregate g;
  g.values = in.values();
  for (int v = 0; v < in.values(); ++v) {
    std::uint64_t a = identity;
    for (const auto& p : part) {
      std::uint64_t x = p[static_cast<std::size_t>(v)];
      a = op == ReduceOp::Sum ? a + x : op == ReduceOp::Min ? std::min(a, x) : std::max(a, x);
    }
    g.value[static_cast<std::size_t>(v)] = a;
  }
  return {g, Breakdown::compute_only(t.seconds())};
}

Breakdown CpuRa::reduce_by_key(const DeviceRelation& in_, ReduceOp op, const std::string& variant, DeviceRel& out_handle) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const int chunks = chunk_count(in.rows(), threads_for(variant));
  const std::vector<std::uint64_t> b = run_aligned_bounds(in, chunks, 1);
  const int w = in.width();
  const std::uint32_t* d = in.data();
  // Each chunk starts at a run start, so a chunk's runs are whole: count, prefix, write.
  auto runs = [&](int c, std::uint32_t* dst) {
    std::uint64_t o = 0;
    for_width(w, [&](auto W) {
      constexpr std::uint64_t tw = decltype(W)::value;
      auto fold_runs = [&](auto fold) {
        const std::uint64_t e = b[static_cast<std::size_t>(c) + 1];
        for (std::uint64_t i = b[static_cast<std::size_t>(c)]; i < e; ++o) {
          const std::uint32_t key = d[i * tw];
          std::uint64_t j = i + 1;
          if (dst) {
            std::uint32_t acc[tw];
            std::memcpy(acc, d + i * tw, tw * 4);
            for (; j < e && d[j * tw] == key; ++j)
              for (std::uint64_t v = 1; v < tw; ++v) acc[v] = fold(acc[v], d[j * tw + v]);
            std::memcpy(dst + o * tw, acc, tw * 4);
          } else {
            while (j < e && d[j * tw] == key) ++j;
          }
          i = j;
        }
      };
      if (op == ReduceOp::Sum) fold_runs([](std::uint32_t x, std::uint32_t y) { return x + y; });
      else if (op == ReduceOp::Min) fold_runs([](std::uint32_t x, std::uint32_t y) { return std::min(x, y); });
      else fold_runs([](std::uint32_t x, std::uint32_t y) { return std::max(x, y); });
    });
    return o;
  };
  std::vector<std::uint64_t> count(static_cast<std::size_t>(chunks) + 1, 0);
  if (chunks == 1) {
    CpuRelation& out = ensure(out_handle, in.rows(), in.values());
    out.shape(runs(0, out.data()), in.values());
    return Breakdown::compute_only(t.seconds());
  }
  for_chunks(chunks, chunks, [&](int c) { count[static_cast<std::size_t>(c) + 1] = runs(c, nullptr); });
  for (int c = 0; c < chunks; ++c) count[static_cast<std::size_t>(c) + 1] += count[static_cast<std::size_t>(c)];
  CpuRelation& out = ensure(out_handle, count.back(), in.values());
  for_chunks(chunks, chunks, [&](int c) { runs(c, out.data() + count[static_cast<std::size_t>(c)] * static_cast<std::uint64_t>(w)); });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::join(const DeviceRelation& l_, const DeviceRelation& r_, const std::string& variant, DeviceRel& out) {
  ref::check_concat(l_.values(), r_.values(), "join");
  HostTimer t;
  const CpuRelation& l = as_cpu(l_);
  const CpuRelation& r = as_cpu(r_);
  const int chunks = chunk_count(l.rows(), threads_for(variant));
  std::vector<std::uint64_t> lb = run_aligned_bounds(l, chunks, 1), rb(lb.size());
  for (std::size_t c = 0; c < lb.size(); ++c)
    rb[c] = lb[c] >= l.rows() ? r.rows() : lower_bound_tuple(r, l.data() + lb[c] * static_cast<std::uint64_t>(l.width()), 1);
  rb[0] = 0;
  chunked_merge(chunks, lb, rb, l.values() + r.values(),
                [&](auto write, std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1, std::uint32_t* dst) {
                  return merge_join<decltype(write)::value>(l, a0, a1, r, b0, b1, dst);
                },
                out);
  Breakdown bd = Breakdown::compute_only(t.seconds());
  return bd;
}

Breakdown CpuRa::set_op(const DeviceRelation& a_, const DeviceRelation& b_, SetOp op, const std::string& variant,
                        DeviceRel& out) {
  ref::check_same_width(a_.values(), b_.values(), "set operation");
  HostTimer t;
  const CpuRelation& a = as_cpu(a_);
  const CpuRelation& b = as_cpu(b_);
  const int chunks = chunk_count(a.rows(), threads_for(variant));
  std::vector<std::uint64_t> ab = run_aligned_bounds(a, chunks, a.width()), bb(ab.size());
  for (std::size_t c = 0; c < ab.size(); ++c)
    bb[c] = ab[c] >= a.rows() ? b.rows()
                              : lower_bound_tuple(b, a.data() + ab[c] * static_cast<std::uint64_t>(a.width()), a.width());
  bb[0] = 0;
  chunked_merge(chunks, ab, bb, a.values(),
                [&](auto write, std::uint64_t a0, std::uint64_t a1, std::uint64_t b0, std::uint64_t b1, std::uint32_t* dst) {
                  return merge_set<decltype(write)::value>(a, a0, a1, b, b0, b1, op, dst);
                },
                out);
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::product(const DeviceRelation& a_, const DeviceRelation& b_, const std::string& variant,
                         DeviceRel& out_handle) {
  ref::check_concat(a_.values(), b_.width(), "product");
  HostTimer t;
  const CpuRelation& a = as_cpu(a_);
  const CpuRelation& b = as_cpu(b_);
  const int aw = a.width(), bw = b.width(), ow = aw + bw;
  CpuRelation& out = ensure(out_handle, a.rows() * b.rows(), a.values() + bw);
  const int chunks = chunk_count(a.rows() * b.rows(), threads_for(variant));
  for_chunks(chunks, chunks, [&](int c) {
    for (std::uint64_t i = chunk_begin(a.rows(), chunks, c), e = chunk_begin(a.rows(), chunks, c + 1); i < e; ++i)
      for (std::uint64_t j = 0; j < b.rows(); ++j) {
        std::uint32_t* tp = out.data() + (i * b.rows() + j) * static_cast<std::uint64_t>(ow);
        copy_tuple(tp, a.data() + i * static_cast<std::uint64_t>(aw), aw);
        copy_tuple(tp + aw, b.data() + j * static_cast<std::uint64_t>(bw), bw);
      }
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::arith(const DeviceRelation& a_, const DeviceRelation& b_, ArithOp op, const std::string& variant,
                       DeviceRel& out_handle) {
  ref::check_same_shape(a_.rows(), a_.values(), b_.rows(), b_.values(), "arithmetic");
  HostTimer t;
  const CpuRelation& a = as_cpu(a_);
  const CpuRelation& b = as_cpu(b_);
  CpuRelation& out = ensure(out_handle, a.rows(), a.values());
  const std::uint32_t* x = a.data();
  const std::uint32_t* y = b.data();
  std::uint32_t* z = out.data();
  const int chunks = chunk_count(a.rows(), threads_for(variant));
  auto apply = [&](auto W, auto f) {
    constexpr std::uint64_t w = decltype(W)::value;
    for_chunks(chunks, chunks, [&](int c) {
      for (std::uint64_t i = chunk_begin(a.rows(), chunks, c), e = chunk_begin(a.rows(), chunks, c + 1); i < e; ++i) {
        z[i * w] = x[i * w];
        for (std::uint64_t k = 1; k < w; ++k) z[i * w + k] = f(x[i * w + k], y[i * w + k]);
      }
    });
  };
  for_width(a.width(), [&](auto W) {
    if (op == ArithOp::Add) apply(W, [](std::uint32_t p, std::uint32_t q) { return p + q; });
    else if (op == ArithOp::Subtract) apply(W, [](std::uint32_t p, std::uint32_t q) { return p - q; });
    else apply(W, [](std::uint32_t p, std::uint32_t q) { return p * q; });
  });
  return Breakdown::compute_only(t.seconds());
}

}  // namespace hdb::ra::cpu
