#include "ra_backend.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "ra_library.hpp"
#include "ra_merge.hpp"
#include "ra_staged.hpp"
#include "runtime/chunks.hpp"
#include "tuple_width.hpp"
#include "algorithms/tuple_sort.hpp"

namespace hdb::ra::cpu {
namespace {

using hdb::cpu::chunk_begin;
using hdb::cpu::chunk_count;
using hdb::cpu::for_chunks;

// Host memory is the device memory: a handle owns a host relation.
class CpuRelation : public DeviceRelation {
 public:
  CpuRelation(std::uint64_t capacity_rows, int values) : rel(capacity_rows, values) {}
  std::uint64_t capacity_words() const override {
    return rel.capacity_rows() * static_cast<std::uint64_t>(rel.width());
  }
  void shape(std::uint64_t rows, int values, int key_words) {
    rows_ = rows;
    values_ = values;
    key_words_ = key_words;
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

// Makes `out` a cpu relation that can hold rows x (key_words + values) words, reusing its memory
// when it is large enough (only the first pass of a case allocates).
CpuRelation& ensure(DeviceRel& out, std::uint64_t rows, int values, int key_words) {
  auto* c = dynamic_cast<CpuRelation*>(out.get());
  std::uint64_t words = rows * static_cast<std::uint64_t>(key_words + values);
  if (!c || c->capacity_words() < words || out.use_count() > 1) {
    // Capacity is counted in words so a relation may be reused with another width.
    auto fresh = std::make_shared<CpuRelation>(words, 0);
    c = fresh.get();
    out = fresh;
  }
  c->shape(rows, values, key_words);
  return *c;
}

// Whether tuples a and b have equal keys of KW words (ra_merge.hpp's load_key).
template <int KW>
inline bool same_key(const std::uint32_t* a, const std::uint32_t* b) {
  return load_key<KW>(a) == load_key<KW>(b);
}

// Whether row i of sorted tuples of W words starts a new key of KW words. A type of its own, not a
// lambda nested in the generic ones of run_unique: clang 14 could not resolve same_key there.
template <int KW, std::uint64_t W>
struct NewKey {
  const std::uint32_t* d;
  bool operator()(std::uint64_t i) const { return i == 0 || !same_key<KW>(d + i * W, d + (i - 1) * W); }
};

// Pieces compact_rows cuts n rows into: one (a single pass straight into the output) on one thread
// or for few rows, else kStagedPieceRows each.
int compact_pieces(std::uint64_t n, int threads) {
  return threads <= 1 || n < 2 * kStagedPieceRows ? 1 : static_cast<int>((n + kStagedPieceRows - 1) / kStagedPieceRows);
}

// Writes tuples of `in` derived from its rows, in order (kept rows, folded runs), into `out`
// (ensured to hold as many rows as `in`): write(p, b, e, dst) writes piece p's tuples from rows
// [b, e) at dst and returns how many. Serial: one pass straight into the output. Parallel: the same pass over small
// pieces, each staged in cache and copied to its place (ra_staged.hpp), so the input is read once. Returns each piece's
// first output row and, last, the total.
template <int W, class Write>
std::vector<std::uint64_t> compact_rows(const CpuRelation& in, Write write, int threads, CpuRelation& out) {
  const std::uint64_t n = in.rows();
  const int pieces = compact_pieces(n, threads);
  if (pieces == 1) {
    const std::uint64_t rows = write(0, 0, n, out.data());
    out.shape(rows, in.values(), in.key_words());
    return {0, rows};
  }
  auto offset = staged_in_order(
      pieces, threads, W, n * W * 4 >= kStreamBytes,
      [&](int p, std::vector<std::uint32_t>& stage) {
        const std::uint64_t b = static_cast<std::uint64_t>(p) * kStagedPieceRows, e = std::min(n, b + kStagedPieceRows);
        if (stage.size() < (e - b) * W) stage.resize((e - b) * W);
        return write(p, b, e, stage.data());
      },
      out.data());
  out.shape(offset.back(), in.values(), in.key_words());
  return offset;
}

// compact_rows keeping the tuples i for which flag(i) holds.
template <int W, class Flag>
void compact_w(const CpuRelation& in, Flag flag, int threads, DeviceRel& out_handle) {
  const std::uint32_t* src = in.data();
  // Branch-free: every tuple is copied to the next free slot, which advances only when the tuple
  // is kept (random predicates defeat branch prediction); the slot is never beyond the tuple.
  auto write = [&](int, std::uint64_t b, std::uint64_t e, std::uint32_t* dst) {
    std::uint64_t o = 0;
    for (std::uint64_t i = b; i < e; ++i) {
      std::memcpy(dst + o * W, src + i * W, W * 4);
      o += flag(i) ? 1 : 0;
    }
    return o;
  };
  compact_rows<W>(in, write, threads, ensure(out_handle, in.rows(), in.values(), in.key_words()));
}

#if defined(__x86_64__) && defined(__GNUC__)
#define HDB_SELECT_AVX512 1
// Select on tuples of two words (a key and one value: the benchmark's default) with AVX-512 where
// the processor has it: eight tuples per step, kept ones written by one compress-store. The scalar
// loop spends about three cycles a tuple on its dependent slot updates; this stays memory-bound.
// lo <= x <= hi is (x - lo) <= (hi - lo) on 64-bit lanes (x < lo wraps far above); lo <= hi.
// (GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized on its own _mm512_undefined helpers.)
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f"))) std::uint64_t select_pairs_avx512(const std::uint32_t* src, std::uint64_t b,
                                                                     std::uint64_t e, int attribute, std::uint32_t lo,
                                                                     std::uint32_t hi, std::uint32_t* dst) {
  const __m512i vlo = _mm512_set1_epi64(lo), vspan = _mm512_set1_epi64(static_cast<long long>(hi - lo));
  const __m512i low = _mm512_set1_epi64(0xffffffffll);
  std::uint64_t o = 0, i = b;
  for (; i + 8 <= e; i += 8) {
    const __m512i t = _mm512_loadu_si512(src + i * 2);
    const __m512i x = attribute == 0 ? _mm512_and_si512(t, low) : _mm512_srli_epi64(t, 32);
    const __mmask8 keep = _mm512_cmple_epu64_mask(_mm512_sub_epi64(x, vlo), vspan);
    _mm512_mask_compressstoreu_epi64(dst + o * 2, keep, t);
    o += static_cast<std::uint64_t>(__builtin_popcount(keep));
  }
  for (; i < e; ++i) {
    std::memcpy(dst + o * 2, src + i * 2, 8);
    o += src[i * 2 + static_cast<std::uint64_t>(attribute)] - lo <= hi - lo ? 1 : 0;
  }
  return o;
}

// Select on tuples of three words (a 64-bit key and one value, or a 32-bit key and two values):
// sixteen tuples, three vectors, per step. The attribute's word (its high and low words when it is
// 64-bit) of each tuple is pulled out of the three vectors by permutes and compared with 32-bit
// mask logic; each tuple's keep bit is spread over its three lanes, and each vector's kept words
// go out by one compress-store. Tail rows by the scalar predicate.
__attribute__((target("avx512f"))) std::uint64_t select_triples_avx512(const std::uint32_t* src, std::uint64_t b,
                                                                       std::uint64_t e, const Predicate& pred,
                                                                       std::uint32_t* dst) {
  // spread[m]: bit j of the byte m copied to bits 3j, 3j + 1, 3j + 2.
  static const auto spread = [] {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t m = 0; m < 256; ++m)
      for (std::uint32_t j = 0; j < 8; ++j)
        if ((m >> j) & 1u) t[m] |= 7u << (3 * j);
    return t;
  }();
  const bool wide = pred.wide();
  const int word = pred.word();
  alignas(64) std::uint32_t ih[16], il[16];
  for (int k = 0; k < 16; ++k) {
    ih[k] = static_cast<std::uint32_t>(3 * k + word);
    il[k] = ih[k] + (wide ? 1u : 0u);
  }
  const __m512i vih = _mm512_load_si512(ih), vil = _mm512_load_si512(il), v32 = _mm512_set1_epi32(32);
  const __mmask16 ch = _mm512_cmpge_epu32_mask(vih, v32), cl = _mm512_cmpge_epu32_mask(vil, v32);
  // Bounds as 32-bit halves; a narrow attribute takes lo <= x <= hi as (x - lo) <= (hi - lo).
  const auto lo_h = static_cast<std::uint32_t>(pred.lo >> 32), lo_l = static_cast<std::uint32_t>(pred.lo);
  const auto hi_h = static_cast<std::uint32_t>(pred.hi >> 32), hi_l = static_cast<std::uint32_t>(pred.hi);
  const __m512i vloh = _mm512_set1_epi32(static_cast<int>(lo_h)), vlol = _mm512_set1_epi32(static_cast<int>(lo_l));
  const __m512i vhih = _mm512_set1_epi32(static_cast<int>(hi_h)), vhil = _mm512_set1_epi32(static_cast<int>(hi_l));
  const __m512i vspan = _mm512_set1_epi32(static_cast<int>(pred.hi32() - pred.lo32()));
  const __m512i vlo32 = _mm512_set1_epi32(static_cast<int>(pred.lo32()));
  const bool none = !wide && pred.lo32() > pred.hi32();  // narrow bounds beyond 32 bits select nothing
  std::uint64_t o = 0, i = b;                            // o: words written
  for (; i + 16 <= e; i += 16) {
    const std::uint32_t* s = src + i * 3;
    const __m512i a = _mm512_loadu_si512(s), bb = _mm512_loadu_si512(s + 16), c = _mm512_loadu_si512(s + 32);
    const __m512i xl =
        _mm512_mask_blend_epi32(cl, _mm512_permutex2var_epi32(a, vil, bb), _mm512_permutexvar_epi32(vil, c));
    __mmask16 keep;
    if (wide) {
      const __m512i xh =
          _mm512_mask_blend_epi32(ch, _mm512_permutex2var_epi32(a, vih, bb), _mm512_permutexvar_epi32(vih, c));
      const __mmask16 ge =
          _mm512_cmpgt_epu32_mask(xh, vloh) | (_mm512_cmpeq_epu32_mask(xh, vloh) & _mm512_cmpge_epu32_mask(xl, vlol));
      const __mmask16 le =
          _mm512_cmplt_epu32_mask(xh, vhih) | (_mm512_cmpeq_epu32_mask(xh, vhih) & _mm512_cmple_epu32_mask(xl, vhil));
      keep = ge & le;
    } else {
      keep = none ? 0 : _mm512_cmple_epu32_mask(_mm512_sub_epi32(xl, vlo32), vspan);
    }
    const std::uint64_t m = spread[keep & 255u] | (std::uint64_t{spread[keep >> 8]} << 24);
    const auto ma = static_cast<__mmask16>(m), mb = static_cast<__mmask16>(m >> 16),
               mc = static_cast<__mmask16>(m >> 32);
    _mm512_mask_compressstoreu_epi32(dst + o, ma, a);
    o += static_cast<std::uint64_t>(__builtin_popcount(ma));
    _mm512_mask_compressstoreu_epi32(dst + o, mb, bb);
    o += static_cast<std::uint64_t>(__builtin_popcount(mb));
    _mm512_mask_compressstoreu_epi32(dst + o, mc, c);
    o += static_cast<std::uint64_t>(__builtin_popcount(mc));
  }
  for (; i < e; ++i) {
    std::memcpy(dst + o, src + i * 3, 12);
    o += pred(src + i * 3) ? 3 : 0;
  }
  return o / 3;
}
#pragma GCC diagnostic pop
#endif

// Flag factories get the width as a constant too: make_flag(W) returns flag(i).
template <class MakeFlag>
void compact(const CpuRelation& in, MakeFlag make_flag, int threads, DeviceRel& out_handle) {
  for_width(in.width(), [&](auto W) { compact_w<decltype(W)::value>(in, make_flag(W), threads, out_handle); });
}

// Copies n words; Stream: with non-temporal stores (store_fence() after the last).
template <bool Stream>
inline void store_words(std::uint32_t* dst, const std::uint32_t* src, std::uint64_t n) {
#if defined(__SSE2__)
  if constexpr (Stream) {
    for (std::uint64_t k = 0; k < n; ++k) _mm_stream_si32(reinterpret_cast<int*>(dst + k), static_cast<int>(src[k]));
    return;
  }
#endif
  std::memcpy(dst, src, n * 4);
}

// Writes the tuple x (xw words) followed by y (yw words) at dst. Two 2-word halves (the default
// 16-byte product tuple) go out as one 16-byte store when streaming; dst is then 16-byte aligned
// (the caller streams only into a 16-byte aligned output, and every tuple is 16 bytes).
template <bool Stream, int XW, int YW>
inline void store_pair(std::uint32_t* dst, const std::uint32_t* x, std::uint64_t xw, const std::uint32_t* y,
                       std::uint64_t yw) {
#if defined(__SSE2__)
  if constexpr (Stream && XW == 2 && YW == 2) {
    const __m128i lo = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(x));
    const __m128i hi = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(y));
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm_unpacklo_epi64(lo, hi));
    return;
  }
#endif
  store_words<Stream>(dst, x, xw);
  store_words<Stream>(dst + xw, y, yw);
}

inline void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

Tuples tuples_of(const CpuRelation& r) { return {r.data(), r.rows(), r.width(), r.key_words()}; }
hash::Rows hash_rows(const CpuRelation& r) { return {r.data(), r.rows(), r.width(), r.key_words()}; }

}  // namespace

namespace {

enum class Impl { Serial, Parallel, Tbb, Pstl, Hash };

// serial and parallel implement every operator; the library variants theirs, where the build has oneTBB;
// hash the operators a database engine runs by hashing unsorted input (ra_hash.hpp), on all cores.
const VariantTable<Impl>& table() {
  static const VariantTable<Impl> t = [] {
    std::vector<std::string> every = test_names(all_ops());
    const std::string no_tbb = library::available() ? "" : "this build has no oneTBB (the library variants need it)";
    return VariantTable<Impl>(
        "the cpu ra backend",
        {{Impl::Serial, {"serial", every, ""}},
         {Impl::Parallel, {"parallel", every, ""}},
         {Impl::Tbb, {"tbb", test_names(library::ops(library::Library::Tbb)), no_tbb}},
         {Impl::Pstl, {"pstl", test_names(library::ops(library::Library::Pstl)), no_tbb}},
         {Impl::Hash,
          {"hash",
           test_names({Op::Unique, Op::ReduceByKey, Op::Join, Op::SetUnion, Op::SetIntersection, Op::SetDifference}),
           "", true}}});
  }();
  return t;
}

}  // namespace

const VariantList& CpuRa::variant_table() const { return table(); }

int CpuRa::threads_for(const std::string& variant) const {
  switch (table().id(variant)) {
    case Impl::Serial: return 1;
    case Impl::Parallel:
    case Impl::Hash: return platform_.threads();
    case Impl::Tbb:
    case Impl::Pstl: break;
  }
  throw std::logic_error("the library variant '" + variant + "' runs on oneTBB's threads, not the backend's");
}

bool CpuRa::is_library(const std::string& variant) const {
  const Impl id = table().id(variant);
  return id == Impl::Tbb || id == Impl::Pstl;
}

library::Library CpuRa::library_of(const std::string& variant) const {
  switch (table().id(variant)) {
    case Impl::Tbb: return library::Library::Tbb;
    case Impl::Pstl: return library::Library::Pstl;
    case Impl::Serial:
    case Impl::Parallel:
    case Impl::Hash: break;
  }
  throw std::logic_error("'" + variant + "' is not a library variant");
}

Breakdown CpuRa::upload(const Relation& host, DeviceRel& out) {
  HostTimer t;
  CpuRelation& d = ensure(out, host.rows(), host.values(), host.key_words());
  if (host.words()) std::memcpy(d.data(), host.data(), host.bytes());
  Breakdown b;
  b.h2d = b.total = t.seconds();
  return b;
}

Breakdown CpuRa::download(const DeviceRelation& dev, Relation& host) {
  HostTimer t;
  const CpuRelation& d = as_cpu(dev);
  if (host.values() != d.values() || host.key_words() != d.key_words() || host.capacity_rows() < d.rows())
    host = Relation(d.rows(), d.values(), d.key_words());
  host.set_rows(d.rows());
  if (d.rows()) std::memcpy(host.data(), d.data(), d.bytes());
  Breakdown b;
  b.d2h = b.total = t.seconds();
  return b;
}

Breakdown CpuRa::run_project(const DeviceRelation& in_, const ProjectLayout& layout, const std::string& variant,
                             DeviceRel& out_handle) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const int threads = threads_for(variant);
  const int ow = static_cast<int>(layout.words.size()), iw = in.width();
  CpuRelation& out = ensure(out_handle, in.rows(), layout.values(), layout.key_words);
  int cols[kMaxWords];
  std::copy(layout.words.begin(), layout.words.end(), cols);
  const int chunks = chunk_count(in.rows(), threads);
  const std::uint32_t* src = in.data();
  std::uint32_t* dst = out.data();
  for_width(iw, [&](auto IW) {
    for_width(ow, [&](auto OW) {
      constexpr std::uint64_t w_in = decltype(IW)::value, w_out = decltype(OW)::value;
      for_chunks(chunks, threads, [&](int c) {
        for (std::uint64_t i = chunk_begin(in.rows(), chunks, c), e = chunk_begin(in.rows(), chunks, c + 1); i < e; ++i)
          for (std::uint64_t k = 0; k < w_out; ++k)
            dst[i * w_out + k] = src[i * w_in + static_cast<std::uint64_t>(cols[k])];
      });
    });
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::run_select(const DeviceRelation& in_, const Predicate& pred, const std::string& variant,
                            DeviceRel& out) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const std::uint32_t* d = in.data();
  if (is_library(variant)) {
    CpuRelation& o = ensure(out, in.rows(), in.values(), in.key_words());
    o.shape(library::select(d, in.rows(), in.width(), pred, o.data(), platform_.threads()), in.values(),
            in.key_words());
    return Breakdown::compute_only(t.seconds());
  }
#ifdef HDB_SELECT_AVX512
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  ran_.impl = "avx512";
  if (avx512 && in.width() == 2 && in.key_words() == 1 && pred.lo <= pred.hi && pred.hi <= 0xffffffffu) {
    compact_rows<2>(
        in,
        [&](int, std::uint64_t b, std::uint64_t e, std::uint32_t* dst) {
          return select_pairs_avx512(d, b, e, pred.attribute, static_cast<std::uint32_t>(pred.lo),
                                     static_cast<std::uint32_t>(pred.hi), dst);
        },
        threads_for(variant), ensure(out, in.rows(), in.values(), in.key_words()));
    return Breakdown::compute_only(t.seconds());
  }
  if (avx512 && in.width() == 3 && pred.lo <= pred.hi) {
    compact_rows<3>(
        in,
        [&](int, std::uint64_t b, std::uint64_t e, std::uint32_t* dst) {
          return select_triples_avx512(d, b, e, pred, dst);
        },
        threads_for(variant), ensure(out, in.rows(), in.values(), in.key_words()));
    return Breakdown::compute_only(t.seconds());
  }
#endif
  ran_.impl = "scalar";
  compact(
      in, [&](auto W) { return [d, pred](std::uint64_t i) { return pred(d + i * decltype(W)::value); }; },
      threads_for(variant), out);
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::run_unique(const DeviceRelation& in_, const std::string& variant, DeviceRel& out) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  const std::uint32_t* d = in.data();
  if (is_library(variant)) {
    CpuRelation& o = ensure(out, in.rows(), in.values(), in.key_words());
    o.shape(library::unique(d, in.rows(), in.width(), in.key_words(), o.data(), platform_.threads()), in.values(),
            in.key_words());
    return Breakdown::compute_only(t.seconds());
  }
  if (table().id(variant) == Impl::Hash) {
    CpuRelation& o = ensure(out, in.rows(), in.values(), in.key_words());
    Breakdown b;
    o.shape(hash::unique(hash_rows(in), o.data(), platform_.threads(), hash_, b), in.values(), in.key_words());
    b.kernel = b.total = t.seconds();
    return b;
  }
  for_key_words(in.key_words(), [&](auto KW) {
    compact(
        in, [&](auto W) { return NewKey<decltype(KW)::value, decltype(W)::value>{d}; }, threads_for(variant), out);
  });
  return Breakdown::compute_only(t.seconds());
}

namespace {
template <int W, int KW, ReduceOp Op>
std::array<std::uint64_t, kMaxValues> reduce_range(const std::uint32_t* d, std::uint64_t b, std::uint64_t e) {
  constexpr std::uint64_t identity = Op == ReduceOp::Min ? 0xffffffffull : 0;
  std::array<std::uint64_t, kMaxValues> acc;
  acc.fill(identity);
  for (std::uint64_t i = b; i < e; ++i)
    for (int v = KW; v < W; ++v) {
      std::uint64_t x = d[i * W + static_cast<std::uint64_t>(v)];
      std::uint64_t& a = acc[static_cast<std::size_t>(v - KW)];
      if constexpr (Op == ReduceOp::Sum)
        a += x;
      else if constexpr (Op == ReduceOp::Min)
        a = std::min(a, x);
      else
        a = std::max(a, x);
    }
  return acc;
}
}  // namespace

Timed<Aggregate> CpuRa::run_reduce(const DeviceRelation& in_, ReduceOp op, const std::string& variant) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  if (is_library(variant)) {
    Aggregate g =
        library::reduce(library_of(variant), in.data(), in.rows(), in.width(), in.key_words(), op, platform_.threads());
    return {g, Breakdown::compute_only(t.seconds())};
  }
  const int chunks = chunk_count(in.rows(), threads_for(variant));
  const std::uint64_t identity = op == ReduceOp::Min ? 0xffffffffull : 0;
  std::vector<std::array<std::uint64_t, kMaxValues>> part(static_cast<std::size_t>(chunks));
  for_chunks(chunks, threads_for(variant), [&](int c) {
    const std::uint64_t b = chunk_begin(in.rows(), chunks, c), e = chunk_begin(in.rows(), chunks, c + 1);
    for_key_words(in.key_words(), [&](auto KW) {
      for_width(in.width(), [&](auto W) {
        constexpr int w = decltype(W)::value, kw = decltype(KW)::value;
        auto& p = part[static_cast<std::size_t>(c)];
        if constexpr (w > kw) {
          if (op == ReduceOp::Sum)
            p = reduce_range<w, kw, ReduceOp::Sum>(in.data(), b, e);
          else if (op == ReduceOp::Min)
            p = reduce_range<w, kw, ReduceOp::Min>(in.data(), b, e);
          else
            p = reduce_range<w, kw, ReduceOp::Max>(in.data(), b, e);
        }
      });
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

namespace {
// x folded into acc, or x alone when keep is 0 (a new run): masks rather than a select, which the
// compiler would turn into an unpredictable branch. keep is 0 or all ones.
template <ReduceOp Op>
inline std::uint32_t fold_or_start(std::uint32_t acc, std::uint32_t x, std::uint32_t keep) {
  if constexpr (Op == ReduceOp::Sum)
    return (acc & keep) + x;
  else if constexpr (Op == ReduceOp::Min)
    return std::min(acc | ~keep, x);
  else
    return std::max(acc & keep, x);
}

// Folds the runs of equal keys in d[b, e) (W words per tuple) into one tuple each at dst, in order,
// and returns how many. Rows before the chunk's first run start continue a run of an earlier
// chunk: their fold goes to `lead` (has_lead set) for the caller to merge. After that the loop is
// branch-free: every row stores its run's running fold at the run's slot, so a run's last store
// leaves its total, and no store goes beyond the chunk's own runs.
template <int W, int KW, ReduceOp Op>
std::uint64_t fold_runs(const std::uint32_t* d, std::uint64_t b, std::uint64_t e, std::uint32_t* dst,
                        std::uint32_t* lead, bool& has_lead) {
  std::uint64_t i = b;
  has_lead = i > 0 && i < e && same_key<KW>(d + i * W, d + (i - 1) * W);
  if (has_lead) {
    std::memcpy(lead, d + i * W, W * 4);
    for (++i; i < e && same_key<KW>(d + i * W, d + (i - 1) * W); ++i)
      for (int v = KW; v < W; ++v) lead[v] = fold_or_start<Op>(lead[v], d[i * W + static_cast<std::uint64_t>(v)], ~0u);
  }
  if (i >= e) return 0;
  std::uint32_t acc[W];
  std::memcpy(acc, d + i * W, W * 4);
  std::memcpy(dst, acc, W * 4);
  std::uint64_t o = 0;
  for (++i; i < e; ++i) {
    const std::uint32_t* x = d + i * W;
    const std::uint32_t head = same_key<KW>(x, x - W) ? 0u : 1u;
    o += head;
    for (int k = 0; k < KW; ++k) acc[k] = x[k];
    for (int v = KW; v < W; ++v) acc[v] = fold_or_start<Op>(acc[v], x[v], head - 1u);
    std::memcpy(dst + o * W, acc, W * 4);
  }
  return o + 1;
}

template <int W, int KW, ReduceOp Op>
void reduce_by_key_w(const CpuRelation& in, int threads, DeviceRel& out_handle) {
  // Equal pieces whatever the run lengths, each folded once; a run crossing a piece edge is
  // finished afterwards.
  const auto pieces = static_cast<std::size_t>(compact_pieces(in.rows(), threads));
  CpuRelation& out = ensure(out_handle, in.rows(), in.values(), in.key_words());
  std::vector<std::array<std::uint32_t, W>> leads(pieces);
  std::vector<char> has(pieces, 0);
  const auto offset = compact_rows<W>(
      in,
      [&](int p, std::uint64_t b, std::uint64_t e, std::uint32_t* dst) {
        const auto k = static_cast<std::size_t>(p);
        bool h = false;
        const std::uint64_t rows = fold_runs<W, KW, Op>(in.data(), b, e, dst, leads[k].data(), h);
        has[k] = h ? 1 : 0;
        return rows;
      },
      threads, out);
  // A piece's leading rows belong to the last run written before the piece (row 0 always starts
  // one, so piece 0 has none); pieces in order, so a run spanning several pieces gathers every part.
  for (std::size_t k = 0; k < pieces; ++k)
    if (has[k]) {
      std::uint32_t* t = out.data() + (offset[k] - 1) * W;
      for (int v = KW; v < W; ++v) t[v] = fold_or_start<Op>(t[v], leads[k][static_cast<std::size_t>(v)], ~0u);
    }
}
}  // namespace

Breakdown CpuRa::run_reduce_by_key(const DeviceRelation& in_, ReduceOp op, const std::string& variant,
                                   DeviceRel& out_handle) {
  HostTimer t;
  const CpuRelation& in = as_cpu(in_);
  if (table().id(variant) == Impl::Hash) {
    CpuRelation& o = ensure(out_handle, in.rows(), in.values(), in.key_words());
    Breakdown b;
    o.shape(hash::reduce_by_key(hash_rows(in), op, o.data(), platform_.threads(), hash_, b), in.values(),
            in.key_words());
    b.kernel = b.total = t.seconds();
    return b;
  }
  const int threads = threads_for(variant);
  for_key_words(in.key_words(), [&](auto KW) {
    for_width(in.width(), [&](auto W) {
      constexpr int w = decltype(W)::value, kw = decltype(KW)::value;
      if constexpr (w >= kw) {
        if (op == ReduceOp::Sum)
          reduce_by_key_w<w, kw, ReduceOp::Sum>(in, threads, out_handle);
        else if (op == ReduceOp::Min)
          reduce_by_key_w<w, kw, ReduceOp::Min>(in, threads, out_handle);
        else
          reduce_by_key_w<w, kw, ReduceOp::Max>(in, threads, out_handle);
      }
    });
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::run_join(const DeviceRelation& l_, const DeviceRelation& r_, const std::string& variant,
                          DeviceRel& out) {
  HostTimer t;
  const int out_values = l_.values() + r_.values(), kw = l_.key_words();
  if (table().id(variant) == Impl::Hash) {
    Breakdown b;
    const std::uint64_t rows = hash::join(
        hash_rows(as_cpu(l_)), hash_rows(as_cpu(r_)),
        [&](std::uint64_t n) { return ensure(out, n, out_values, kw).data(); }, platform_.threads(), hash_, b);
    static_cast<CpuRelation&>(*out).shape(rows, out_values, kw);
    b.kernel = b.total = t.seconds();
    return b;
  }
  const Tuples l = tuples_of(as_cpu(l_)), r = tuples_of(as_cpu(r_));
  const int threads = threads_for(variant);
  // Merge-path pieces of equal merged length (left + right rows), however the keys are spread,
  // several per thread; each joined once into a buffer of its own, then copied out.
  const int pieces = chunk_count(l.rows + r.rows, threads);
  std::vector<Split> s(static_cast<std::size_t>(pieces) + 1);
  for (int p = 0; p <= pieces; ++p)
    s[static_cast<std::size_t>(p)] = join_split(l, r, chunk_begin(l.rows + r.rows, pieces, p));
  for_key_words(kw, [&](auto KW) {
    for_common_width<2>(l.width, [&](auto LW) {
      for_common_width<2>(r.width, [&](auto RW) {
        staged_all(
            pieces, threads, static_cast<std::uint64_t>(kw + out_values), join_stage_,
            [&](int p, std::vector<std::uint32_t>& buf) {
              const auto k = static_cast<std::size_t>(p);
              return join_piece<decltype(LW)::value, decltype(RW)::value, decltype(KW)::value>(l, s[k].i, s[k + 1].i, r,
                                                                                               s[k].j, buf);
            },
            [&](std::uint64_t rows) { return ensure(out, rows, out_values, kw).data(); });
      });
    });
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::run_set_op(const DeviceRelation& a_, const DeviceRelation& b_, SetOp op, const std::string& variant,
                            DeviceRel& out_handle) {
  HostTimer t;
  const Tuples a = tuples_of(as_cpu(a_)), b = tuples_of(as_cpu(b_));
  auto bound = [op](std::uint64_t na, std::uint64_t nb) {
    return op == SetOp::Union ? na + nb : op == SetOp::Intersection ? std::min(na, nb) : na;
  };
  CpuRelation& out = ensure(out_handle, bound(a.rows, b.rows), a_.values(), a_.key_words());
  if (is_library(variant)) {
    out.shape(library::set_op(op, a.data, a.rows, b.data, b.rows, a.width, out.data(), platform_.threads()),
              a_.values(), a_.key_words());
    return Breakdown::compute_only(t.seconds());
  }
  if (table().id(variant) == Impl::Hash) {
    Breakdown bd;
    out.shape(
        hash::set_op(hash_rows(as_cpu(a_)), hash_rows(as_cpu(b_)), op, out.data(), platform_.threads(), hash_, bd),
        a_.values(), a_.key_words());
    bd.kernel = bd.total = t.seconds();
    return bd;
  }
  const int threads = threads_for(variant);
  // Small merge-path pieces handed out in order, each merged once into cache (as four parts side by
  // side) and copied to its place; the output is sized for the largest result the operation can have.
  const std::uint64_t merged = a.rows + b.rows;
  const int pieces = static_cast<int>(std::max<std::uint64_t>(1, merged / kStagedPieceRows));
  constexpr int kInterleave = 4;
  std::vector<Split> s(static_cast<std::size_t>(pieces) + 1);
  for_common_width<2>(a.width, [&](auto W) {
    constexpr int w = decltype(W)::value;
    for_chunks(pieces + 1, threads,
               [&](int p) { s[static_cast<std::size_t>(p)] = set_split<w>(a, b, chunk_begin(merged, pieces, p)); });
    auto run = [&](auto kind) {
      const std::uint64_t tw = static_cast<std::uint64_t>(a.width);
      const auto offset = staged_in_order(
          pieces, threads, tw, out.bytes() >= kStreamBytes,
          [&](int p, std::vector<std::uint32_t>& stage) {
            // kInterleave parts of the piece merged side by side (set_pieces), each part's rows
            // then moved up behind the previous one's, within the cache.
            const auto k = static_cast<std::size_t>(p);
            const std::uint64_t d0 = chunk_begin(merged, pieces, p), d1 = chunk_begin(merged, pieces, p + 1);
            Split cut[kInterleave + 1];
            std::uint64_t at[kInterleave + 1] = {0};
            std::uint32_t* dst[kInterleave];
            cut[0] = s[k];
            cut[kInterleave] = s[k + 1];
            for (int m = 1; m < kInterleave; ++m) cut[m] = set_split<w>(a, b, d0 + (d1 - d0) * m / kInterleave);
            for (int m = 0; m < kInterleave; ++m)
              at[m + 1] = at[m] + bound(cut[m + 1].i - cut[m].i, cut[m + 1].j - cut[m].j);
            if (stage.size() < at[kInterleave] * tw) stage.resize(at[kInterleave] * tw);
            for (int m = 0; m < kInterleave; ++m) dst[m] = stage.data() + at[m] * tw;
            std::uint64_t rows[kInterleave];
            set_pieces<decltype(kind)::value, w, kInterleave>(a, b, cut, dst, rows);
            std::uint64_t o = rows[0];
            for (int m = 1; m < kInterleave; ++m) {
              if (rows[m]) std::memmove(stage.data() + o * tw, dst[m], rows[m] * tw * 4);
              o += rows[m];
            }
            return o;
          },
          out.data());
      out.shape(offset.back(), a_.values(), a_.key_words());
    };
    if (op == SetOp::Union)
      run(std::integral_constant<SetKind, SetKind::Union>{});
    else if (op == SetOp::Intersection)
      run(std::integral_constant<SetKind, SetKind::Intersection>{});
    else
      run(std::integral_constant<SetKind, SetKind::Difference>{});
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::run_product(const DeviceRelation& a_, const DeviceRelation& b_, const std::string& variant,
                             DeviceRel& out_handle) {
  HostTimer t;
  const CpuRelation& a = as_cpu(a_);
  const CpuRelation& b = as_cpu(b_);
  CpuRelation& out = ensure(out_handle, a.rows() * b.rows(), a.values() + b.width(), a.key_words());
  const int chunks = chunk_count(a.rows() * b.rows(), threads_for(variant));
  const std::uint64_t nb = b.rows();
  // Widths as constants where common, so each output tuple is a couple of fixed-size moves.
  for_common_width<2>(a.width(), [&](auto AW) {
    for_common_width<2>(b.width(), [&](auto BW) {
      const std::uint64_t aw = decltype(AW)::value ? decltype(AW)::value : static_cast<std::uint64_t>(a.width());
      const std::uint64_t bw = decltype(BW)::value ? decltype(BW)::value : static_cast<std::uint64_t>(b.width());
      const std::uint64_t ow = aw + bw;
      auto fill = [&](auto stream) {
        for_chunks(chunks, threads_for(variant), [&](int c) {
          std::uint32_t* tp = out.data() + chunk_begin(a.rows(), chunks, c) * nb * ow;
          for (std::uint64_t i = chunk_begin(a.rows(), chunks, c), e = chunk_begin(a.rows(), chunks, c + 1); i < e; ++i)
            for (std::uint64_t j = 0; j < nb; ++j, tp += ow)
              store_pair<decltype(stream)::value, decltype(AW)::value, decltype(BW)::value>(tp, a.data() + i * aw, aw,
                                                                                            b.data() + j * bw, bw);
          if constexpr (decltype(stream)::value) store_fence();
        });
      };
      // The output is many times the input: beyond the cache, stores that bypass it save reading
      // every output line before writing it.
      const bool aligned = reinterpret_cast<std::uintptr_t>(out.data()) % 16 == 0;
      if (out.bytes() >= kStreamBytes && aligned)
        fill(std::true_type{});
      else
        fill(std::false_type{});
    });
  });
  return Breakdown::compute_only(t.seconds());
}

Breakdown CpuRa::run_arith(const DeviceRelation& a_, const DeviceRelation& b_, ArithOp op, const std::string& variant,
                           DeviceRel& out_handle) {
  HostTimer t;
  const CpuRelation& a = as_cpu(a_);
  const CpuRelation& b = as_cpu(b_);
  CpuRelation& out = ensure(out_handle, a.rows(), a.values(), a.key_words());
  const std::uint32_t* x = a.data();
  const std::uint32_t* y = b.data();
  std::uint32_t* z = out.data();
  if (is_library(variant)) {
    library::arith(op, x, y, a.rows(), a.width(), a.key_words(), z, platform_.threads());
    return Breakdown::compute_only(t.seconds());
  }
  const int chunks = chunk_count(a.rows(), threads_for(variant));
  // The key width a compile-time constant like the tuple's, so the loop over a tuple's words
  // unrolls and the tuples vectorise (a run-time key width cost add/parallel 1.2x, issue 51).
  auto apply = [&](auto W, auto f) {
    constexpr std::uint64_t w = decltype(W)::value;
    for_key_words(a.key_words(), [&](auto KW) {
      constexpr std::uint64_t kw = decltype(KW)::value;
      if constexpr (kw <= w) {
        for_chunks(chunks, threads_for(variant), [&](int c) {
          for (std::uint64_t i = chunk_begin(a.rows(), chunks, c), e = chunk_begin(a.rows(), chunks, c + 1); i < e;
               ++i) {
            for (std::uint64_t k = 0; k < kw; ++k) z[i * w + k] = x[i * w + k];
            for (std::uint64_t k = kw; k < w; ++k) z[i * w + k] = f(x[i * w + k], y[i * w + k]);
          }
        });
      }
    });
  };
  for_width(a.width(), [&](auto W) {
    if (op == ArithOp::Add)
      apply(W, [](std::uint32_t p, std::uint32_t q) { return p + q; });
    else if (op == ArithOp::Subtract)
      apply(W, [](std::uint32_t p, std::uint32_t q) { return p - q; });
    else
      apply(W, [](std::uint32_t p, std::uint32_t q) { return p * q; });
  });
  return Breakdown::compute_only(t.seconds());
}

void CpuRa::release_scratch() {
  std::vector<std::uint32_t>().swap(sort_scratch_);
  StageBuffers().swap(join_stage_);
  std::vector<std::uint64_t>().swap(sort_keys_);
  hash_.release();
}

void CpuRa::plan_scratch(const OpShape& s, MemoryPlan& plan) const {
  const std::uint64_t in_bytes = s.rows_a * static_cast<std::uint64_t>(s.width_a) * 4;
  const std::uint64_t out_bytes = s.out_rows * static_cast<std::uint64_t>(s.out_width) * 4;
  const Impl impl = table().id(s.variant);
  const bool library = impl == Impl::Tbb || impl == Impl::Pstl;
  const int threads = impl == Impl::Parallel ? platform_.threads() : 1;
  if (impl == Impl::Hash) {
    hash::plan(s, platform_.threads(), plan);
    return;
  }
  switch (s.op) {
    case Op::Sort:
      if (impl == Impl::Tbb) plan.add("tbb sort (key, row) pairs", s.rows_a * (s.key_words == 2 ? 16 : 8));
      // libstdc++'s parallel stable_sort merges through a buffer of n elements.
      else if (impl == Impl::Pstl)
        plan.add("pstl stable_sort buffer", in_bytes);
      else
        plan.add("radix sort buffer", in_bytes);
      break;
    case Op::Join:
      // Piece buffers hold the whole output before it is copied out, at least a tuple per left tuple.
      plan.add("join piece buffers", std::max(out_bytes, s.rows_a * static_cast<std::uint64_t>(s.out_width) * 4));
      break;
    case Op::Select:
    case Op::Unique:
      // libstdc++'s parallel copy_if / unique_copy mark every element in a buffer of bools.
      if (library) plan.add("pstl mask", s.rows_a);
      [[fallthrough]];
    case Op::ReduceByKey:
    case Op::SetUnion:
    case Op::SetIntersection:
    case Op::SetDifference:
      if (library && s.op != Op::Select && s.op != Op::Unique) plan.add("pstl set operation buffer", out_bytes);
      // One staging buffer per thread, about a piece of kStagedPieceRows rows (merges: its bound).
      if (threads > 1)
        plan.add("staged pieces", static_cast<std::uint64_t>(threads) * kStagedPieceRows *
                                      static_cast<std::uint64_t>(s.width_a) * 4 * (s.op == Op::SetUnion ? 2 : 1));
      break;
    default: break;
  }
}

Breakdown CpuRa::run_sort(const DeviceRelation& in_, const std::string& variant, DeviceRel& out_handle) {
  const CpuRelation& in = as_cpu(in_);
  HostTimer t;
  CpuRelation& out = ensure(out_handle, in.rows(), in.values(), in.key_words());
  const std::uint64_t words = in.rows() * static_cast<std::uint64_t>(in.width());
  if (is_library(variant)) {
    library::sort(library_of(variant), in.data(), in.rows(), in.width(), in.key_words(), out.data(), sort_keys_,
                  platform_.threads());
    return Breakdown::compute_only(t.seconds());
  }
  if (sort_scratch_.size() < words) sort_scratch_.resize(words);
  stable_sort_by_key(in.data(), in.rows(), in.width(), out.data(), sort_scratch_.data(), threads_for(variant),
                     in.key_words());
  return Breakdown::compute_only(t.seconds());
}

}  // namespace hdb::ra::cpu
