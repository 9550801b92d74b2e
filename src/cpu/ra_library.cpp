#include "ra_library.hpp"
#include "ra_merge.hpp"
#include "tuple_width.hpp"

#include <stdexcept>

#ifdef HDB_HAVE_TBB
#include <tbb/blocked_range.h>
#include <tbb/global_control.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>
#include <tbb/parallel_sort.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <array>
#include <execution>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#endif

namespace hdb::ra::cpu::library {

std::vector<Op> ops(Library lib) {
  if (lib == Library::Tbb) return {Op::Sort, Op::Reduce};
  return {Op::Sort,          Op::Reduce, Op::Select,   Op::Unique,  Op::SetUnion, Op::SetIntersection,
          Op::SetDifference, Op::Add,    Op::Subtract, Op::Multiply};
}

#ifndef HDB_HAVE_TBB

bool available() { return false; }
namespace {
[[noreturn]] void absent() { throw std::invalid_argument("this build has no oneTBB: no library variants"); }
}  // namespace
void sort(Library, const std::uint32_t*, std::uint64_t, int, int, std::uint32_t*, std::vector<std::uint64_t>&, int) {
  absent();
}
Aggregate reduce(Library, const std::uint32_t*, std::uint64_t, int, int, ReduceOp, int) { absent(); }
std::uint64_t select(const std::uint32_t*, std::uint64_t, int, const Predicate&, std::uint32_t*, int) { absent(); }
std::uint64_t unique(const std::uint32_t*, std::uint64_t, int, int, std::uint32_t*, int) { absent(); }
std::uint64_t set_op(SetOp, const std::uint32_t*, std::uint64_t, const std::uint32_t*, std::uint64_t, int,
                     std::uint32_t*, int) {
  absent();
}
void arith(ArithOp, const std::uint32_t*, const std::uint32_t*, std::uint64_t, int, int, std::uint32_t*, int) {
  absent();
}

#else

bool available() { return true; }

namespace {

// Runs f inside an arena of `threads` threads, so the library uses as many threads as the variant
// is given (the parallel algorithms run in the calling arena; global_control lets oneTBB start
// more workers than cores when --threads asks for that). Arenas are kept per count.
template <class F>
void in_arena(int threads, F&& f) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<tbb::task_arena> > arenas;
  tbb::task_arena* a;
  {
    std::lock_guard<std::mutex> lk(mu);
    auto& slot = arenas[threads];
    if (!slot) slot = std::make_unique<tbb::task_arena>(threads);
    a = slot.get();
  }
  tbb::global_control workers(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
  a->execute(std::forward<F>(f));
}

// Calls f(std::integral_constant<int, W>) for tuples of W = 2..5 words.
template <class F>
void for_tuple_width(int width, F&& f) {
  switch (width) {
    case 2: f(std::integral_constant<int, 2>{}); break;
    case 3: f(std::integral_constant<int, 3>{}); break;
    case 4: f(std::integral_constant<int, 4>{}); break;
    case 5: f(std::integral_constant<int, 5>{}); break;
    default: throw std::invalid_argument("library variants take tuples of 2..5 words, not " + std::to_string(width));
  }
}

template <int W>
using Tuple = std::array<std::uint32_t, W>;
template <int W>
const Tuple<W>* tuples(const std::uint32_t* p) {
  return reinterpret_cast<const Tuple<W>*>(p);
}
template <int W>
Tuple<W>* tuples(std::uint32_t* p) {
  return reinterpret_cast<Tuple<W>*>(p);
}

}  // namespace

void sort(Library lib, const std::uint32_t* in, std::uint64_t rows, int width, int key_words, std::uint32_t* out,
          std::vector<std::uint64_t>& scratch, int threads) {
  const auto w = static_cast<std::uint64_t>(width);
  if (lib == Library::Tbb) {
    if (rows > 0xffffffffull) throw std::invalid_argument("tbb sort: more than 2^32 rows");
    // (key, row) packed so that one integer compare orders by key, then by row (stability).
    auto run = [&](auto* kr, auto pack) {
      in_arena(threads, [&] {
        tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, rows), [&](const tbb::blocked_range<std::uint64_t>& r) {
          for (std::uint64_t i = r.begin(); i < r.end(); ++i) kr[i] = pack(in + i * w, i);
        });
        tbb::parallel_sort(kr, kr + rows);
        tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, rows), [&](const tbb::blocked_range<std::uint64_t>& r) {
          for (std::uint64_t i = r.begin(); i < r.end(); ++i)
            std::copy_n(in + static_cast<std::uint64_t>(kr[i] & 0xffffffffu) * w, w, out + i * w);
        });
      });
    };
    if (key_words == 2) {
      using U128 = unsigned __int128;
      if (scratch.size() < 2 * rows) scratch.resize(2 * rows);
      run(reinterpret_cast<U128*>(scratch.data()),
          [](const std::uint32_t* t, std::uint64_t i) { return (U128{t[0]} << 96) | (U128{t[1]} << 64) | i; });
    } else {
      if (scratch.size() < rows) scratch.resize(rows);
      run(scratch.data(), [](const std::uint32_t* t, std::uint64_t i) { return std::uint64_t{t[0]} << 32 | i; });
    }
    return;
  }
  for_tuple_width(width, [&](auto W) {
    constexpr int k = decltype(W)::value;
    for_key_words(key_words, [&](auto KW) {
      in_arena(threads, [&] {
        std::copy(std::execution::par, tuples<k>(in), tuples<k>(in) + rows, tuples<k>(out));
        std::stable_sort(std::execution::par, tuples<k>(out), tuples<k>(out) + rows,
                         [](const Tuple<k>& x, const Tuple<k>& y) {
                           return load_key<decltype(KW)::value>(x.data()) < load_key<decltype(KW)::value>(y.data());
                         });
      });
    });
  });
}

Aggregate reduce(Library lib, const std::uint32_t* in, std::uint64_t rows, int width, int key_words, ReduceOp op,
                 int threads) {
  using Acc = std::array<std::uint64_t, kMaxValues>;
  const std::uint64_t identity = op == ReduceOp::Min ? 0xffffffffull : 0;
  Acc init;
  init.fill(identity);
  auto combine = [op](Acc x, const Acc& y) {
    for (std::size_t v = 0; v < x.size(); ++v)
      x[v] = op == ReduceOp::Sum ? x[v] + y[v] : op == ReduceOp::Min ? std::min(x[v], y[v]) : std::max(x[v], y[v]);
    return x;
  };
  Acc acc = init;
  for_tuple_width(width, [&](auto W) {
    constexpr int k = decltype(W)::value;
    // The key width a compile-time constant, as the tuple's: the value loops then have fixed bounds.
    for_key_words(key_words, [&](auto KW) {
      constexpr int kw = decltype(KW)::value;
      // The tuple's values as an accumulator: the same combine folds tuples and partial results.
      using T = Tuple<k>;
      auto lift = [identity](const T& t) {
        constexpr int n = static_cast<int>(std::tuple_size_v<T>);
        constexpr int first = decltype(KW)::value;
        Acc a;
        a.fill(identity);
        for (int v = first; v < n; ++v) a[static_cast<std::size_t>(v - first)] = t[static_cast<std::size_t>(v)];
        return a;
      };
      in_arena(threads, [&] {
        if (lib == Library::Tbb) {
          acc = tbb::parallel_reduce(
              tbb::blocked_range<std::uint64_t>(0, rows), init,
              [&](const tbb::blocked_range<std::uint64_t>& r, Acc a) {
                const Tuple<k>* t = tuples<k>(in);
                for (std::uint64_t i = r.begin(); i < r.end(); ++i)
                  for (int v = kw; v < k; ++v) {
                    const std::uint64_t x = t[i][static_cast<std::size_t>(v)];
                    std::uint64_t& s = a[static_cast<std::size_t>(v - kw)];
                    s = op == ReduceOp::Sum ? s + x : op == ReduceOp::Min ? std::min(s, x) : std::max(s, x);
                  }
                return a;
              },
              combine);
        } else {
          acc = std::transform_reduce(std::execution::par, tuples<k>(in), tuples<k>(in) + rows, init, combine, lift);
        }
      });
    });
  });
  Aggregate g;
  g.values = width - key_words;
  for (int v = 0; v < g.values; ++v) g.value[static_cast<std::size_t>(v)] = acc[static_cast<std::size_t>(v)];
  return g;
}

std::uint64_t select(const std::uint32_t* in, std::uint64_t rows, int width, const Predicate& pred, std::uint32_t* out,
                     int threads) {
  std::uint64_t n = 0;
  for_tuple_width(width, [&](auto W) {
    constexpr int k = decltype(W)::value;
    in_arena(threads, [&] {
      n = static_cast<std::uint64_t>(std::copy_if(std::execution::par, tuples<k>(in), tuples<k>(in) + rows,
                                                  tuples<k>(out),
                                                  [&pred](const Tuple<k>& t) { return pred(t.data()); }) -
                                     tuples<k>(out));
    });
  });
  return n;
}

std::uint64_t unique(const std::uint32_t* in, std::uint64_t rows, int width, int key_words, std::uint32_t* out,
                     int threads) {
  std::uint64_t n = 0;
  for_tuple_width(width, [&](auto W) {
    constexpr int k = decltype(W)::value;
    in_arena(threads, [&] {
      for_key_words(key_words, [&](auto KW) {
        constexpr int kw = decltype(KW)::value;
        n = static_cast<std::uint64_t>(
            std::unique_copy(
                std::execution::par, tuples<k>(in), tuples<k>(in) + rows, tuples<k>(out),
                [](const Tuple<k>& x, const Tuple<k>& y) { return load_key<kw>(x.data()) == load_key<kw>(y.data()); }) -
            tuples<k>(out));
      });
    });
  });
  return n;
}

std::uint64_t set_op(SetOp op, const std::uint32_t* a, std::uint64_t na, const std::uint32_t* b, std::uint64_t nb,
                     int width, std::uint32_t* out, int threads) {
  std::uint64_t n = 0;
  for_tuple_width(width, [&](auto W) {
    constexpr int k = decltype(W)::value;
    const Tuple<k>* x = tuples<k>(a);
    const Tuple<k>* y = tuples<k>(b);
    Tuple<k>* o = tuples<k>(out);
    in_arena(threads, [&] {
      Tuple<k>* e = op == SetOp::Union          ? std::set_union(std::execution::par, x, x + na, y, y + nb, o)
                    : op == SetOp::Intersection ? std::set_intersection(std::execution::par, x, x + na, y, y + nb, o)
                                                : std::set_difference(std::execution::par, x, x + na, y, y + nb, o);
      n = static_cast<std::uint64_t>(e - o);
    });
  });
  return n;
}

void arith(ArithOp op, const std::uint32_t* x, const std::uint32_t* y, std::uint64_t rows, int width, int key_words,
           std::uint32_t* z, int threads) {
  for_tuple_width(width, [&](auto W) {
    constexpr int k = decltype(W)::value;
    using T = Tuple<k>;
    auto apply = [&](auto f) {
      for_key_words(key_words, [&](auto KW) {
        constexpr std::size_t kw = decltype(KW)::value;
        in_arena(threads, [&] {
          std::transform(std::execution::par, tuples<k>(x), tuples<k>(x) + rows, tuples<k>(y), tuples<k>(z),
                         [f](const T& p, const T& q) {
                           T r;
                           for (std::size_t v = 0; v < kw; ++v) r[v] = p[v];
                           for (std::size_t v = kw; v < r.size(); ++v) r[v] = f(p[v], q[v]);
                           return r;
                         });
        });
      });
    };
    if (op == ArithOp::Add)
      apply([](std::uint32_t p, std::uint32_t q) { return p + q; });
    else if (op == ArithOp::Subtract)
      apply([](std::uint32_t p, std::uint32_t q) { return p - q; });
    else
      apply([](std::uint32_t p, std::uint32_t q) { return p * q; });
  });
}

#endif

}  // namespace hdb::ra::cpu::library
