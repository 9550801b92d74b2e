#include "tpch_backend.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

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
void parallel_sort(std::vector<std::uint64_t>& v, int threads) {
  const std::uint64_t n = v.size();
  const int chunks = chunk_count(n, threads);
  if (chunks <= 1) {
    std::sort(v.begin(), v.end());
    return;
  }
  auto at = [&](std::vector<std::uint64_t>& x, int c) { return x.begin() + static_cast<std::ptrdiff_t>(chunk_begin(n, chunks, std::min(c, chunks))); };
  for_chunks(chunks, threads, [&](int c) { std::sort(at(v, c), at(v, c + 1)); });
  std::vector<std::uint64_t> tmp(n);
  for (int width = 1; width < chunks; width *= 2) {
    const int pairs = (chunks + 2 * width - 1) / (2 * width);
    for_chunks(pairs, threads, [&](int p) {
      int a = p * 2 * width, m = std::min(a + width, chunks), e = std::min(a + 2 * width, chunks);
      std::merge(at(v, a), at(v, m), at(v, m), at(v, e), at(tmp, a));
    });
    v.swap(tmp);
  }
}

class CpuRun : public tpch::TpchRun {
 public:
  CpuRun(const Plan& plan, int threads) : plan_(plan), threads_(threads) {
    for (const auto& in : plan_.inputs) {
      Cols c;
      for (const auto& col : in->cols) c.emplace_back(col.v.begin(), col.v.end());
      rel_.push_back(std::move(c));
    }
    rel_.resize(plan_.inputs.size() + plan_.steps.size());
  }

  Breakdown pass() override {
    Breakdown b;
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      const Step& s = plan_.steps[i];
      Cols& out = rel_[plan_.inputs.size() + i];
      HostTimer t;
      switch (s.op) {
        case Op::Select:
          select(s, out);
          break;
        case Op::Join:
          join(s, out);
          break;
        case Op::Project:
          project(s, out);
          break;
      }
      double sec = t.seconds();
      b.add_phase(s.name, sec);
      b.kernel += sec;
    }
    b.total = b.kernel;
    return b;
  }

  Relation result() override {
    const auto schemas = tpch::plan_schemas(plan_);
    Relation r;
    r.name = plan_.kernel;
    const Cols& c = rel_.back();
    for (std::size_t j = 0; j < c.size(); ++j) r.cols.push_back({schemas.back()[j], std::vector<std::uint32_t>(c[j].begin(), c[j].end())});
    return r;
  }

 private:
  static std::uint64_t rows(const Cols& c) { return c.empty() ? 0 : c[0].size(); }

  // out[o + k][i] = in[k][idx[i]] for every column k of `in` (skipping `skip`).
  void gather(const Cols& in, const Col& idx, Cols& out, std::size_t o, int skip) {
    const std::uint64_t n = idx.size();
    const int chunks = chunk_count(n, threads_);
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (static_cast<int>(k) == skip) continue;
      Col& dst = out[o++];
      dst.resize(n);
      const std::uint32_t* src = in[k].data();
      for_chunks(chunks, threads_, [&](int c) {
        for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i) dst[i] = src[idx[i]];
      });
    }
  }

  void select(const Step& s, Cols& out) {
    const Cols& in = rel_[static_cast<std::size_t>(s.in)];
    const std::uint64_t n = rows(in);
    const std::uint32_t* x = in[static_cast<std::size_t>(s.col)].data();
    const int chunks = chunk_count(n, threads_);
    // Count per chunk, place each chunk's matches after the earlier chunks', then copy rows.
    std::vector<std::uint64_t> at(static_cast<std::size_t>(chunks), 0);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = 0;
      for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i) k += (x[i] - s.lo) <= (s.hi - s.lo);
      at[static_cast<std::size_t>(c)] = k;
    });
    const std::uint64_t total = offsets(at);
    out.resize(in.size());
    for (Col& c : out) c.resize(total);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = at[static_cast<std::size_t>(c)];
      for (std::uint64_t i = chunk_begin(n, chunks, c); i < chunk_begin(n, chunks, c + 1); ++i) {
        if ((x[i] - s.lo) > (s.hi - s.lo)) continue;
        for (std::size_t j = 0; j < in.size(); ++j) out[j][k] = in[j][i];
        ++k;
      }
    });
  }

  // Sort-merge inner join (the paper's sorted join): the right side is sorted as (key, row)
  // pairs, each left row finds its matches by binary search; then both sides are gathered.
  void join(const Step& s, Cols& out) {
    const Cols& left = rel_[static_cast<std::size_t>(s.in)];
    const Cols& right = rel_[static_cast<std::size_t>(s.right)];
    const std::uint64_t nl = rows(left), nr = rows(right);
    const std::uint32_t* lk = left[static_cast<std::size_t>(s.col)].data();
    const std::uint32_t* rk = right[static_cast<std::size_t>(s.right_col)].data();
    sorted_.resize(nr);
    const int rchunks = chunk_count(nr, threads_);
    for_chunks(rchunks, threads_, [&](int c) {
      for (std::uint64_t j = chunk_begin(nr, rchunks, c); j < chunk_begin(nr, rchunks, c + 1); ++j)
        sorted_[j] = (std::uint64_t{rk[j]} << 32) | j;
    });
    parallel_sort(sorted_, threads_);
    using It = std::vector<std::uint64_t>::const_iterator;
    // Matches of one key in the sorted pairs. Left inputs are often in key order (TPC-H tables
    // are), so each search gallops forward from the previous one: O(n + m) on sorted input
    // instead of n binary searches over the whole right side.
    struct Finder {
      It begin, end, lo, hi;
      std::uint64_t prev = ~std::uint64_t{0};
      static It gallop(It from, It end, std::uint64_t bound) {  // first element >= bound at or after from
        std::ptrdiff_t step = 1, left = end - from;
        while (step < left && from[step] < bound) step *= 2;
        return std::lower_bound(from + step / 2, from + std::min(step, left), bound);
      }
      // Branch-free lower bound: random probes mispredict every comparison of std::lower_bound.
      static It lower(It b, It e, std::uint64_t x) {
        std::size_t n = static_cast<std::size_t>(e - b);
        if (n == 0) return b;
        const std::uint64_t* base = &*b;
        while (n > 1) {
          std::size_t half = n / 2;
          base = base[half] < x ? base + half : base;
          n -= half;
        }
        return b + ((base - &*b) + (*base < x ? 1 : 0));
      }
      std::pair<It, It> operator()(std::uint32_t key) {
        const std::uint64_t first = std::uint64_t{key} << 32, next = first + (std::uint64_t{1} << 32);
        if (key == prev) return {lo, hi};
        lo = (prev != ~std::uint64_t{0} && key > prev) ? gallop(hi, end, first) : lower(begin, end, first);
        hi = key == 0xffffffffu ? end : gallop(lo, end, next);
        prev = key;
        return {lo, hi};
      }
    };
    auto finder = [&] { return Finder{sorted_.cbegin(), sorted_.cend(), sorted_.cbegin(), sorted_.cbegin()}; };
    // A left side out of key order is sorted as (key, row) pairs too, so that the search walks
    // forward (a merge join) instead of jumping across the right side for every row; unless the
    // right side's pairs fit in cache (4 MiB), where random binary searches are cheaper than a sort.
    const bool left_sorted = nr <= (std::uint64_t{1} << 19) || std::is_sorted(lk, lk + nl);
    if (!left_sorted) {
      lsorted_.resize(nl);
      const int lchunks = chunk_count(nl, threads_);
      for_chunks(lchunks, threads_, [&](int c) {
        for (std::uint64_t i = chunk_begin(nl, lchunks, c); i < chunk_begin(nl, lchunks, c + 1); ++i)
          lsorted_[i] = (std::uint64_t{lk[i]} << 32) | i;
      });
      parallel_sort(lsorted_, threads_);
    }
    auto key_at = [&](std::uint64_t i) { return left_sorted ? lk[i] : static_cast<std::uint32_t>(lsorted_[i] >> 32); };
    auto row_at = [&](std::uint64_t i) { return left_sorted ? static_cast<std::uint32_t>(i) : static_cast<std::uint32_t>(lsorted_[i]); };
    const int chunks = chunk_count(nl, threads_);
    std::vector<std::uint64_t> at(static_cast<std::size_t>(chunks), 0);
    first_.resize(nl);  // each left row's matches, found once by the counting pass
    count_.resize(nl);
    for_chunks(chunks, threads_, [&](int c) {
      std::uint64_t k = 0;
      Finder range = finder();
      for (std::uint64_t i = chunk_begin(nl, chunks, c); i < chunk_begin(nl, chunks, c + 1); ++i) {
        auto r = range(key_at(i));
        first_[i] = static_cast<std::uint32_t>(r.first - sorted_.cbegin());
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
        const std::uint64_t* m = sorted_.data() + first_[i];
        for (std::uint32_t j = 0; j < count_[i]; ++j, ++k) {
          li_[k] = row;
          ri_[k] = static_cast<std::uint32_t>(m[j] & 0xffffffffu);
        }
      }
    });
    out.resize(left.size() + right.size() - 1);
    gather(left, li_, out, 0, -1);
    gather(right, ri_, out, left.size(), s.right_col);
  }

  void project(const Step& s, Cols& out) {
    const Cols& in = rel_[static_cast<std::size_t>(s.in)];
    const std::uint64_t n = rows(in);
    const int chunks = chunk_count(n, threads_);
    out.resize(s.cols.size());
    for (std::size_t k = 0; k < s.cols.size(); ++k) {
      const Col& src = in[static_cast<std::size_t>(s.cols[k])];
      out[k].resize(n);
      for_chunks(chunks, threads_, [&](int c) {
        std::uint64_t b = chunk_begin(n, chunks, c), e = chunk_begin(n, chunks, c + 1);
        if (e > b) std::memcpy(out[k].data() + b, src.data() + b, (e - b) * sizeof(std::uint32_t));
      });
    }
  }

  const Plan& plan_;
  int threads_;
  std::vector<Cols> rel_;  // inputs, then one per step (buffers kept across passes)
  std::vector<std::uint64_t> sorted_, lsorted_;
  Col li_, ri_, first_, count_;
};

}  // namespace

std::unique_ptr<tpch::TpchRun> CpuTpch::prepare(const Plan& plan, const std::string& variant, Transfer) {
  if (variant != "columnar-serial" && variant != "columnar-parallel") throw SkipCase("unknown variant " + variant);
  return std::make_unique<CpuRun>(plan, variant == "columnar-serial" ? 1 : platform_.threads());
}

}  // namespace hdb::cpu
