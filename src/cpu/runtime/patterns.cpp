#include "runtime/patterns.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

#include "harness/parallel.hpp"
#include "harness/timing.hpp"
#include "runtime/cpu_platform.hpp"
#include "workloads/random.hpp"

namespace hdb::cpu {

namespace {
constexpr std::uint64_t kHugePage = 2ull << 20;
constexpr std::uint32_t kTriadScale = 3;

// The position of access i: splitmix64 of i, so that neighbouring accesses land in unrelated pages
// and no prefetcher can follow them.
inline std::uint64_t scatter(std::uint64_t i) { return splitmix64(i); }

template <int ItemWords>
std::uint64_t gather_range(const std::uint32_t* table, std::uint64_t items_mask, std::uint64_t b, std::uint64_t e) {
  std::uint64_t s = 0;
  for (std::uint64_t i = b; i < e; ++i) {
    const std::uint32_t* item = table + (scatter(i) & items_mask) * ItemWords;
    for (int w = 0; w < ItemWords; ++w) s += item[w];
  }
  return s;
}

std::uint64_t gather_range(const std::uint32_t* table, std::uint64_t n, int item_words, std::uint64_t b,
                           std::uint64_t e) {
  const std::uint64_t mask = n / static_cast<std::uint64_t>(item_words) - 1;
  return item_words == 8 ? gather_range<8>(table, mask, b, e) : gather_range<1>(table, mask, b, e);
}

template <class F>
double best_of(int passes, F&& pass) {
  double best = 1e30;
  for (int i = 0; i < passes; ++i) best = std::min(best, pass());
  return best;
}

// The largest power of two <= bytes / 4 words, down to 16 MB; 0 words when not even that fits.
std::uint64_t fitting_words(std::uint64_t bytes, int buffers, std::unique_ptr<Words[]>& out) {
  std::uint64_t words = 1;
  while (words * 2 * 4 <= bytes) words *= 2;
  for (; words * 4 >= (16ull << 20); words /= 2) {
    try {
      out.reset(new Words[static_cast<std::size_t>(buffers)]);
      for (int i = 0; i < buffers; ++i) out[i] = Words(words);
      return words;
    } catch (const std::bad_alloc&) {
      out.reset();
    }
  }
  return 0;
}

void fill(std::uint32_t* a, std::uint64_t n, std::uint32_t value, int threads) {
  parallel_for(n, threads, [&](std::uint64_t lo, std::uint64_t hi) { std::fill(a + lo, a + hi, value); });
}
}  // namespace

Words::Words(std::uint64_t count) : n_(count) {
  const std::uint64_t bytes = (std::max<std::uint64_t>(count, 1) * 4 + kHugePage - 1) / kHugePage * kHugePage;
  void* p = std::aligned_alloc(kHugePage, bytes);
  if (!p) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  madvise(p, bytes, MADV_HUGEPAGE);  // advice only: where it is refused, 4 KB pages
#endif
  p_.reset(static_cast<std::uint32_t*>(p));
}

void Words::Free::operator()(std::uint32_t* p) const { std::free(p); }

double pass_read(const std::uint32_t* a, std::uint64_t n, int threads, std::uint64_t* sum) {
  HostTimer t;
  std::atomic<std::uint64_t> total{0};
  parallel_for(n, threads, [&](std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t s = 0;
    for (std::uint64_t i = lo; i < hi; ++i) s += a[i];
    total.fetch_add(s, std::memory_order_relaxed);
  });
  const double s = t.seconds();
  *sum = total.load();
  return s;
}

double pass_write(std::uint32_t* a, std::uint64_t n, std::uint32_t value, int threads) {
  HostTimer t;
  fill(a, n, value, threads);
  return t.seconds();
}

double pass_add(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* c, std::uint64_t n, int threads) {
  HostTimer t;
  parallel_for(n, threads, [=](std::uint64_t lo, std::uint64_t hi) {
    for (std::uint64_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
  });
  return t.seconds();
}

double pass_triad(std::uint32_t* a, const std::uint32_t* b, const std::uint32_t* c, std::uint64_t n, int threads) {
  HostTimer t;
  parallel_for(n, threads, [=](std::uint64_t lo, std::uint64_t hi) {
    for (std::uint64_t i = lo; i < hi; ++i) a[i] = b[i] + kTriadScale * c[i];
  });
  return t.seconds();
}

double pass_gather(const std::uint32_t* table, std::uint64_t n, std::uint64_t accesses, int item_words, int threads,
                   std::uint64_t* sum) {
  HostTimer t;
  std::atomic<std::uint64_t> total{0};
  parallel_for(accesses, threads, [&](std::uint64_t lo, std::uint64_t hi) {
    total.fetch_add(gather_range(table, n, item_words, lo, hi), std::memory_order_relaxed);
  });
  const double s = t.seconds();
  *sum = total.load();
  return s;
}

std::uint64_t gather_sum(const std::uint32_t* table, std::uint64_t n, std::uint64_t accesses, int item_words) {
  return gather_range(table, n, item_words, 0, accesses);
}

PatternRates measure_patterns(std::uint64_t bytes, int threads) {
  PatternRates r;
  std::unique_ptr<Words[]> buf;
  const std::uint64_t n = fitting_words(bytes, 3, buf);
  if (n == 0) return r;
  std::uint32_t *a = buf[0].get(), *b = buf[1].get(), *c = buf[2].get();
  // Touched first on the threads that use them, so that every page is there before a timed pass.
  fill(a, n, 1, threads);
  fill(b, n, 2, threads);
  fill(c, n, 3, threads);
  const double bytes1 = static_cast<double>(n) * 4;
  constexpr int kPasses = 3;
  std::uint64_t sum = 0;
  r[MemoryPattern::Read] = bytes1 / best_of(kPasses, [&] { return pass_read(a, n, threads, &sum); }) / 1e9;
  r[MemoryPattern::Write] = bytes1 / best_of(kPasses, [&] { return pass_write(c, n, 7, threads); }) / 1e9;
  r[MemoryPattern::Copy] =
      2 * bytes1 / best_of(kPasses, [&] { return timed_parallel_memcpy(c, a, n * 4, threads); }) / 1e9;
  r[MemoryPattern::Add] = 3 * bytes1 / best_of(kPasses, [&] { return pass_add(a, b, c, n, threads); }) / 1e9;
  r[MemoryPattern::Triad] = 3 * bytes1 / best_of(kPasses, [&] { return pass_triad(c, a, b, n, threads); }) / 1e9;
  // A sixteenth of the table's bytes asked for: enough accesses that start-up costs vanish, few
  // enough that a pass takes tens of milliseconds at DRAM latency.
  const std::uint64_t g4 = n / 16, g32 = n / 16 / 8;
  r[MemoryPattern::Gather4] =
      static_cast<double>(g4) * 4 / best_of(kPasses, [&] { return pass_gather(a, n, g4, 1, threads, &sum); }) / 1e9;
  r[MemoryPattern::Gather32] =
      static_cast<double>(g32) * 32 / best_of(kPasses, [&] { return pass_gather(a, n, g32, 8, threads, &sum); }) / 1e9;
  return r;
}

double measure_copy(std::uint64_t bytes, int threads) {
  std::unique_ptr<Words[]> buf;
  const std::uint64_t n = fitting_words(bytes, 2, buf);
  if (n == 0) return 0;
  fill(buf[0].get(), n, 1, threads);
  fill(buf[1].get(), n, 2, threads);
  return 2.0 * static_cast<double>(n) * 4 /
         best_of(4, [&] { return timed_parallel_memcpy(buf[1].get(), buf[0].get(), n * 4, threads); }) / 1e9;
}

}  // namespace hdb::cpu
