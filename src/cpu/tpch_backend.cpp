#include "tpch_backend.hpp"

#include "harness/variants.hpp"

#include <algorithm>
#include <cstring>
#include <thread>
#include <type_traits>

#include "harness/errors.hpp"
#include "runtime/chunks.hpp"

namespace hdb::cpu {
namespace {

using tpch::Op;
using tpch::Plan;
using tpch::Relation;
using tpch::Step;

// Vectors whose resize leaves new elements uninitialised: outputs are always overwritten, and a
// zero-fill would add a full extra write to every operator.
template <class T>
struct NoInit : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInit<U>;
  };
  NoInit() = default;
  template <class U>
  NoInit(const NoInit<U>&) {}
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};
using Col = std::vector<std::uint32_t, NoInit<std::uint32_t>>;
using Cols = std::vector<Col>;

// Exclusive prefix sum of per-chunk counts; returns the total.
std::uint64_t offsets(std::vector<std::uint64_t>& counts) {
  std::uint64_t sum = 0;
  for (auto& c : counts) {
    std::uint64_t x = c;
    c = sum;
    sum += x;
  }
  return sum;
}

// Chunk sorts, then rounds of pairwise merges (each round's merges run in parallel).
template <class T>
void parallel_sort(std::vector<T>& v, int threads) {
  const std::uint64_t n = v.size();
  const int chunks = chunk_count(n, threads);
  if (chunks <= 1) {
    std::sort(v.begin(), v.end());
    return;
  }
  auto at = [&](std::vector<T>& x, int c) {
    return x.begin() + static_cast<std::ptrdiff_t>(chunk_begin(n, chunks, std::min(c, chunks)));
  };
  for_chunks(chunks, threads, [&](int c) { std::sort(at(v, c), at(v, c + 1)); });
  std::vector<T> tmp(n);
  for (int width = 1; width < chunks; width *= 2) {
    const int pairs = (chunks + 2 * width - 1) / (2 * width);
    for_chunks(pairs, threads, [&](int p) {
      int a = p * 2 * width, m = std::min(a + width, chunks), e = std::min(a + 2 * width, chunks);
      std::merge(at(v, a), at(v, m), at(v, m), at(v, e), at(tmp, a));
    });
    v.swap(tmp);
  }
}

// A relation as word columns: a 32-bit plan column is one word column, a wide (64-bit) one two,
// low words then high words. Selects, gathers and projects copy words; only a select on a wide
// column and a join on wide keys read both words as one 64-bit value.
struct Rel : tpch::WordLayout {
  Cols words;
  std::uint64_t rows() const { return words.empty() ? 0 : words[0].size(); }
  void shape(const std::vector<tpch::ColumnInfo>& schema) {
    static_cast<tpch::WordLayout&>(*this) = tpch::word_layout(schema);
    words.resize(static_cast<std::size_t>(total));
  }
};

// Join keys as K (std::uint32_t or std::uint64_t) from a relation's key column.
template <class K>
struct KeyCol {
  const std::uint32_t* lo;
  const std::uint32_t* hi;
  K operator[](std::uint64_t i) const {
    if constexpr (sizeof(K) == 8)
      return (std::uint64_t{hi[i]} << 32) | lo[i];
    else
      return lo[i];
  }
};

// (key, row) packed into one integer, key in the high bits: 64 bits for 32-bit keys, 128 for 64-bit.
__extension__ typedef unsigned __int128 u128;
template <class K>
using PairOf = std::conditional_t<sizeof(K) == 8, u128, std::uint64_t>;

class CpuRun : public tpch::TpchRun {
 public:
  CpuRun(const Plan& plan, int threads) : plan_(plan), threads_(threads), schemas_(tpch::plan_schemas(plan)) {
    rel_.resize(plan_.inputs.size() + plan_.steps.size());
    for (std::size_t r = 0; r < rel_.size(); ++r) rel_[r].shape(schemas_[r]);
    for (std::size_t r = 0; r < plan_.inputs.size(); ++r) {
      std::size_t w = 0;
      for (const auto& col : plan_.inputs[r]->cols) {
        rel_[r].words[w++].assign(col.v.begin(), col.v.end());
        if (col.info.wide) rel_[r].words[w++].assign(col.hi.begin(), col.hi.end());
      }
    }
  }

  Breakdown pass() override {
    Breakdown b;
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      const Step& s = plan_.steps[i];
      Rel& out = rel_[plan_.inputs.size() + i];
      HostTimer t;
      switch (s.op) {
        case Op::Select: select(s, out); break;
        case Op::Join: join(s, out); break;
        case Op::Project: project(s, out); break;
      }
      double sec = t.seconds();
      b.add_phase(s.name, sec);
      b.kernel += sec;
    }
    b.total = b.kernel;
    return b;
  }

  Relation result() override {
    Relation r;
    r.name = plan_.kernel;
    const Rel& c = rel_.back();
    for (std::size_t j = 0; j < schemas_.back().size(); ++j) {
      const int lo = c.lo_word(static_cast<int>(j)), hi = c.hi_word(static_cast<int>(j));
      const Col& low = c.words[static_cast<std::size_t>(lo)];
      tpch::Column col{schemas_.back()[j], std::vector<std::uint32_t>(low.begin(), low.end()), {}};
      if (hi >= 0)
        col.hi.assign(c.words[static_cast<std::size_t>(hi)].begin(), c.words[static_cast<std::size_t>(hi)].end());
      r.cols.push_back(std::move(col));
    }
    return r;
  }

 private:
  // out.words[o + k][i] = in.words[k][idx[i]] for every word column k of `in` (skipping plan column `skip`'s).
  void gather(const Rel& in, const Col& idx, Rel& out, std::size_t o, int skip) {
    const std::uint64_t n = idx.size();
    const int chunks = chunk_count(n, threads_);
    for (std::size_t k = 0; k < in.words.size(); ++k) {
      if (skip >= 0 && (static_cast<int>(k) == in.lo_word(skip) || static_cast<int>(k) == in.hi_word(skip))) continue;
      Col& dst = out.words[o++];
      dst.resize(n);
      const std::uint32_t* src = in.words[k].data();
      for_chunks(chunks, threads_, [&](int c) {
        for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i) dst[i] = src[idx[i]];
      });
    }
  }

  void select(const Step& s, Rel& out) {
    const Rel& in = rel_[static_cast<std::size_t>(s.in)];
    if (in.hi_word(s.col) >= 0) return select_on<std::uint64_t>(s, in, out);
    return select_on<std::uint32_t>(s, in, out);
  }

  template <class K>
  void select_on(const Step& s, const Rel& in, Rel& out) {
    const std::uint64_t n = in.rows();
    const KeyCol<K> x = keys<K>(in, s.col);
    // Bounds clamped to the column's width: a 32-bit column never holds more than 2^32 - 1.
    const std::uint64_t top = sizeof(K) == 8 ? ~std::uint64_t{0} : 0xffffffffull;
    if (s.lo > top) {
      for (Col& c : out.words) c.resize(0);
      return;
    }
    const K lo = static_cast<K>(s.lo), span = static_cast<K>(std::min(s.hi, top) - s.lo);
    const int chunks = chunk_count(n, threads_);
    // Count per chunk, place each chunk's matches after the earlier chunks', then copy rows.
    std::vector<std::uint64_t> at(static_cast<std::size_t>(chunks), 0);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = 0;
      for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i)
        k += static_cast<K>(x[i] - lo) <= span;
      at[static_cast<std::size_t>(c)] = k;
    });
    const std::uint64_t total = offsets(at);
    for (Col& c : out.words) c.resize(total);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = at[static_cast<std::size_t>(c)];
      for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i) {
        if (static_cast<K>(x[i] - lo) > span) continue;
        for (std::size_t j = 0; j < in.words.size(); ++j) out.words[j][k] = in.words[j][i];
        ++k;
      }
    });
  }

  void join(const Step& s, Rel& out) {
    if (rel_[static_cast<std::size_t>(s.in)].hi_word(s.col) >= 0) return join_on<std::uint64_t>(s, out);
    return join_on<std::uint32_t>(s, out);
  }

  template <class K>
  static KeyCol<K> keys(const Rel& r, int col) {
    const int hi = r.hi_word(col);
    return {r.words[static_cast<std::size_t>(r.lo_word(col))].data(),
            hi < 0 ? nullptr : r.words[static_cast<std::size_t>(hi)].data()};
  }

  // Sort-merge inner join (the paper's sorted join): the right side is sorted as (key, row)
  // pairs, each left row finds its matches by binary search; then both sides are gathered.
  // K: the key type (32 or 64 bits), P: a (key, row) pair packed into one integer.
  template <class K>
  void join_on(const Step& s, Rel& out) {
    using P = PairOf<K>;
    std::vector<P>& sorted = pairs<P>(0);
    std::vector<P>& lsorted = pairs<P>(1);
    const Rel& left = rel_[static_cast<std::size_t>(s.in)];
    const Rel& right = rel_[static_cast<std::size_t>(s.right)];
    const std::uint64_t nl = left.rows(), nr = right.rows();
    const KeyCol<K> lk = keys<K>(left, s.col), rk = keys<K>(right, s.right_col);
    sorted.resize(nr);
    const int rchunks = chunk_count(nr, threads_);
    for_chunks(rchunks, threads_, [&](int c) {
      for (std::uint64_t j = chunk_begin(nr, rchunks, c); j < chunk_begin(nr, rchunks, c + 1); ++j)
        sorted[j] = (P{rk[j]} << 32) | j;
    });
    parallel_sort(sorted, threads_);
    using It = typename std::vector<P>::const_iterator;
    // Matches of one key in the sorted pairs. Left inputs are often in key order (TPC-H tables
    // are), so each search gallops forward from the previous one: O(n + m) on sorted input
    // instead of n binary searches over the whole right side.
    struct Finder {
      It begin, end, lo, hi;
      bool any = false;
      K prev = 0;
      static It gallop(It from, It end, P bound) {  // first element >= bound at or after from
        std::ptrdiff_t step = 1, left = end - from;
        while (step < left && from[step] < bound) step *= 2;
        return std::lower_bound(from + step / 2, from + std::min(step, left), bound);
      }
      // Branch-free lower bound: random probes mispredict every comparison of std::lower_bound.
      static It lower(It b, It e, P x) {
        std::size_t n = static_cast<std::size_t>(e - b);
        if (n == 0) return b;
        const P* base = &*b;
        while (n > 1) {
          std::size_t half = n / 2;
          base = base[half] < x ? base + half : base;
          n -= half;
        }
        return b + ((base - &*b) + (*base < x ? 1 : 0));
      }
      std::pair<It, It> operator()(K key) {
        const P first = P{key} << 32, next = first + (P{1} << 32);
        if (any && key == prev) return {lo, hi};
        lo = (any && key > prev) ? gallop(hi, end, first) : lower(begin, end, first);
        hi = key == static_cast<K>(~K{0}) ? end : gallop(lo, end, next);
        prev = key;
        any = true;
        return {lo, hi};
      }
    };
    auto finder = [&] { return Finder{sorted.cbegin(), sorted.cend(), sorted.cbegin(), sorted.cbegin()}; };
    // A left side out of key order is sorted as (key, row) pairs too, so that the search walks
    // forward (a merge join) instead of jumping across the right side for every row; unless the
    // right side's pairs fit in cache (4 MiB), where random binary searches are cheaper than a sort.
    bool left_sorted = nr <= (std::uint64_t{4} << 20) / sizeof(P);
    if (!left_sorted) {
      left_sorted = true;
      for (std::uint64_t i = 1; i < nl && left_sorted; ++i) left_sorted = !(lk[i] < lk[i - 1]);
    }
    if (!left_sorted) {
      lsorted.resize(nl);
      const int lchunks = chunk_count(nl, threads_);
      for_chunks(lchunks, threads_, [&](int c) {
        for (std::uint64_t i = chunk_begin(nl, lchunks, c); i < chunk_begin(nl, lchunks, c + 1); ++i)
          lsorted[i] = (P{lk[i]} << 32) | i;
      });
      parallel_sort(lsorted, threads_);
    }
    auto key_at = [&](std::uint64_t i) { return left_sorted ? lk[i] : static_cast<K>(lsorted[i] >> 32); };
    auto row_at = [&](std::uint64_t i) {
      return left_sorted ? static_cast<std::uint32_t>(i) : static_cast<std::uint32_t>(lsorted[i]);
    };
    const int chunks = chunk_count(nl, threads_);
    std::vector<std::uint64_t> at(static_cast<std::size_t>(chunks), 0);
    first_.resize(nl);  // each left row's matches, found once by the counting pass
    count_.resize(nl);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = 0;
      Finder range = finder();
      for (std::uint64_t i = chunk_begin(nl, chunks, c); i < chunk_begin(nl, chunks, c + 1); ++i) {
        auto r = range(key_at(i));
        first_[i] = static_cast<std::uint32_t>(r.first - sorted.cbegin());
        count_[i] = static_cast<std::uint32_t>(r.second - r.first);
        k += count_[i];
      }
      at[static_cast<std::size_t>(c)] = k;
    });
    const std::uint64_t total = offsets(at);
    if (total > 0xffffffffull) throw SkipCase("join result of " + std::to_string(total) + " rows exceeds 2^32");
    li_.resize(total);
    ri_.resize(total);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = at[static_cast<std::size_t>(c)];
      for (std::uint64_t i = chunk_begin(nl, chunks, c); i < chunk_begin(nl, chunks, c + 1); ++i) {
        const std::uint32_t row = row_at(i);
        const P* m = sorted.data() + first_[i];
        for (std::uint32_t j = 0; j < count_[i]; ++j, ++k) {
          li_[k] = row;
          ri_[k] = static_cast<std::uint32_t>(m[j] & 0xffffffffu);
        }
      }
    });
    gather(left, li_, out, 0, -1);
    gather(right, ri_, out, left.words.size(), s.right_col);
  }

  void project(const Step& s, Rel& out) {
    const Rel& in = rel_[static_cast<std::size_t>(s.in)];
    const std::uint64_t n = in.rows();
    const int chunks = chunk_count(n, threads_);
    std::size_t o = 0;
    for (int pc : s.cols) {
      for (int w : {in.lo_word(pc), in.hi_word(pc)}) {
        if (w < 0) continue;
        const Col& src = in.words[static_cast<std::size_t>(w)];
        Col& dst = out.words[o++];
        dst.resize(n);
        for_chunks(chunks, threads_, [&](int c) {
          std::uint64_t b = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1);
          if (e > b) std::memcpy(dst.data() + b, src.data() + b, (e - b) * sizeof(std::uint32_t));
        });
      }
    }
  }

  // The (key, row) pair buffers of the key width P (0: right side, 1: left side), kept across passes.
  template <class P>
  std::vector<P>& pairs(int which) {
    if constexpr (sizeof(P) == 8)
      return which == 0 ? sorted_ : lsorted_;
    else
      return which == 0 ? sorted_wide_ : lsorted_wide_;
  }

  const Plan& plan_;
  int threads_;
  std::vector<std::vector<tpch::ColumnInfo>> schemas_;
  std::vector<Rel> rel_;  // inputs, then one per step (buffers kept across passes)
  std::vector<std::uint64_t> sorted_, lsorted_;
  std::vector<u128> sorted_wide_, lsorted_wide_;
  Col li_, ri_, first_, count_;
};

}  // namespace

namespace {

enum class Columnar { Serial, Parallel };

const VariantTable<Columnar>& table() {
  static const VariantTable<Columnar> t("the cpu tpch backend",
                                        {{Columnar::Serial, {"columnar-serial", tpch::kKernels, ""}},
                                         {Columnar::Parallel, {"columnar-parallel", tpch::kKernels, ""}}});
  return t;
}

}  // namespace

const VariantList& CpuTpch::variant_table() const { return table(); }

std::unique_ptr<tpch::TpchRun> CpuTpch::prepare(const Plan& plan, const std::string& variant, Transfer) {
  return std::make_unique<CpuRun>(plan, table().id(variant) == Columnar::Serial ? 1 : platform_.threads());
}

void CpuTpch::plan_scratch(const Plan& plan, const std::string&, std::uint64_t join_rows, MemoryPlan& memory) const {
  if (tpch::join_steps(plan) == 0) return;
  const bool wide = tpch::has_wide_columns(plan);
  // A join sorts (key, row) pairs of the right side and, unless already in key order, of the left
  // (8 bytes each, 16 with 64-bit keys), keeps each left row's first match and count, and the
  // row indices of its output; the buffers are reused by every join of the plan.
  const std::uint64_t rows = tpch::max_input_rows(plan);
  memory.add("join (key, row) pairs", 2 * rows * (wide ? 16 : 8))
      .add("join first matches and counts", rows * 8)
      .add("join row indices", join_rows * 8);
}

}  // namespace hdb::cpu
