// CPU ceilings: memcpy on one thread and on all threads, a STREAM-style triad a = b + s*c, and the
// access patterns every case's ceiling is matched from (runtime/patterns.hpp).
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include "bench/bus.hpp"
#include "harness/errors.hpp"
#include "harness/memory_plan.hpp"
#include "harness/parallel.hpp"
#include "runtime/cpu_platform.hpp"
#include "runtime/patterns.hpp"
#include "harness/timing.hpp"
#include "workloads/random.hpp"

namespace hdb::cpu {
namespace {

constexpr std::uint32_t kTriadScale = 3;  // as runtime/patterns.cpp's triad
constexpr std::uint32_t kWriteValue = 0x5a5a5a5au;

// Every CPU test: the loops of runtime/patterns.cpp, which the platform's ceilings run too, over
// arrays of pattern words (fill_pattern) that each test's check can recompute.
class PatternCase : public BusCase {
 public:
  PatternCase(const BusTest& t, std::uint64_t bytes, std::uint64_t seed, int threads, int host_threads)
      : t_(t), n_(bytes / 4), seed_(seed), threads_(threads) {
    if (t.kind == BusKind::Latency) {
      make_cycle(bytes, seed);
      return;
    }
    if (t.gather()) {
      n_ = 1;  // the table: the largest power of two of words within `bytes`, whole items
      while (n_ * 2 <= bytes / 4) n_ *= 2;
      accesses_ = t.accesses(bytes);
      if (n_ < static_cast<std::uint64_t>(item_words()) || accesses_ == 0)
        throw SkipCase("a gather of " + std::to_string(t.item_bytes()) + "-byte items needs a table of at least " +
                       std::to_string(16 * t.item_bytes()) + " bytes");
    }
    a_ = Words(n_);
    fill_pattern(a_.get(), n_, seed, host_threads);
    if (t.kind == BusKind::Memcpy || t.kind == BusKind::Triad || t.kind == BusKind::Add) {
      b_ = Words(n_);
      fill_pattern(b_.get(), n_, seed + 1, host_threads);
    }
    if (t.kind == BusKind::Triad || t.kind == BusKind::Add) {
      c_ = Words(n_);
      parallel_for(n_, threads_,
                   [&](std::uint64_t lo, std::uint64_t hi) { std::memset(c_.get() + lo, 0, (hi - lo) * 4); });
    }
  }
  Breakdown pass() override {
    std::uint32_t *a = a_.get(), *b = b_.get(), *c = c_.get();
    switch (t_.kind) {
      case BusKind::Memcpy: return Breakdown::compute_only(timed_parallel_memcpy(b, a, n_ * 4, threads_));
      case BusKind::Triad: return Breakdown::compute_only(pass_triad(c, a, b, n_, threads_));
      case BusKind::Add: return Breakdown::compute_only(pass_add(a, b, c, n_, threads_));
      case BusKind::Read: return Breakdown::compute_only(pass_read(a, n_, threads_, &sum_));
      case BusKind::Write: return Breakdown::compute_only(pass_write(a, n_, kWriteValue, threads_));
      case BusKind::Gather4:
      case BusKind::Gather32:
        return Breakdown::compute_only(pass_gather(a, n_, accesses_, item_words(), threads_, &sum_));
      case BusKind::Latency: {
        HostTimer timer;
        end_ = chase(BusTest::kChaseSteps);
        return Breakdown::compute_only(timer.seconds());
      }
      default: throw std::logic_error(std::string("no CPU bus test ") + to_string(t_.kind));
    }
  }
  Verification verify() override {
    const std::uint32_t *a = a_.get(), *b = b_.get(), *c = c_.get();
    switch (t_.kind) {
      case BusKind::Memcpy: return check_pattern(b, n_, seed_);
      case BusKind::Triad:
        return check_elements("a = b + 3c", [&](std::uint64_t i) { return c[i] == a[i] + kTriadScale * b[i]; });
      case BusKind::Add: return check_elements("c = a + b", [&](std::uint64_t i) { return c[i] == a[i] + b[i]; });
      case BusKind::Write:
        return check_elements("a = 0x5a5a5a5a", [&](std::uint64_t i) { return a[i] == kWriteValue; });
      case BusKind::Latency: {
        const std::uint64_t want = chase(BusTest::kChaseSteps);
        if (end_ != want)
          return Verification::fail("the chase ended at line " + std::to_string(end_) + ", expected " +
                                    std::to_string(want));
        return Verification::pass("the chase of " + std::to_string(BusTest::kChaseSteps) + " loads over " +
                                  std::to_string(lines_) + " lines, one cycle, ended where a second walk does");
      }
      case BusKind::Read: {
        std::uint64_t want = 0;
        for (std::uint64_t i = 0; i < n_; ++i) want += a[i];
        return check_sum("the sum of " + std::to_string(n_) + " words", want);
      }
      default: {
        const std::uint64_t want = gather_sum(a, n_, accesses_, item_words());
        return check_sum("the sum of " + std::to_string(accesses_) + " random items", want);
      }
    }
  }

 private:
  int item_words() const { return t_.item_bytes() / 4; }
  static constexpr std::uint64_t kLineWords = BusTest::kLineBytes / 4;
  // One random cycle through every line of `bytes` (Sattolo's shuffle), each line's first word the
  // index of the next: every load depends on the one before, and no prefetcher can guess it.
  void make_cycle(std::uint64_t bytes, std::uint64_t seed) {
    lines_ = bytes / BusTest::kLineBytes;
    if (lines_ < 2) throw SkipCase("a chase needs at least two cache lines (128 bytes)");
    n_ = lines_ * kLineWords;
    a_ = Words(n_);
    std::vector<std::uint32_t> order(lines_);
    for (std::uint64_t i = 0; i < lines_; ++i) order[i] = static_cast<std::uint32_t>(i);
    for (std::uint64_t i = lines_ - 1; i > 0; --i) std::swap(order[i], order[rand_at(seed, i) % i]);
    std::uint32_t* a = a_.get();
    for (std::uint64_t i = 0; i < lines_; ++i) a[order[i] * kLineWords] = order[(i + 1) % lines_];
  }
  std::uint64_t chase(std::uint64_t steps) const {
    const std::uint32_t* a = a_.get();
    std::uint32_t at = 0;
    for (std::uint64_t i = 0; i < steps; ++i) at = a[at * kLineWords];
    return at;
  }
  template <class Ok>
  Verification check_elements(const std::string& what, Ok ok) const {
    for (std::uint64_t i = 0; i < n_; ++i)
      if (!ok(i)) return Verification::fail("element " + std::to_string(i) + " of " + what + " is wrong");
    return Verification::pass(what + " for all " + std::to_string(n_) + " elements");
  }
  Verification check_sum(const std::string& what, std::uint64_t want) const {
    if (sum_ != want)
      return Verification::fail(what + " is " + std::to_string(sum_) + ", expected " + std::to_string(want));
    return Verification::pass(what + " equals the one-thread sum");
  }

  BusTest t_;
  std::uint64_t n_, seed_, accesses_ = 0, sum_ = 0, lines_ = 0, end_ = 0;
  int threads_;
  Words a_, b_, c_;
};

enum class CpuBusVariant { Serial, Parallel };

class CpuBus : public BusBackend {
 public:
  explicit CpuBus(const CpuPlatform& p)
      : platform_(p),
        table_("CPU bus", {{CpuBusVariant::Serial, {"serial", kSerialTests, ""}},
                           {CpuBusVariant::Parallel, {"parallel", kTests, ""}}}) {}
  const VariantList& variant_table() const override { return table_; }
  void plan_memory(const BusTest& t, std::uint64_t bytes, MemoryPlan& plan) const override {
    // Every array the case allocates (whole 4-byte words); verification allocates nothing.
    const std::uint64_t array = bytes / 4 * 4;
    switch (t.kind) {
      case BusKind::Triad:
      case BusKind::Add: plan.add("a", array).add("b", array).add("c", array); break;
      case BusKind::Memcpy: plan.add("source", array).add("destination", array); break;
      case BusKind::Gather4:
      case BusKind::Gather32: plan.add("table", array); break;
      case BusKind::Latency:
        plan.add("chase", bytes / BusTest::kLineBytes * BusTest::kLineBytes)
            .add("shuffled order", bytes / BusTest::kLineBytes * 4);
        break;
      default: plan.add("array", array);
    }
  }
  std::unique_ptr<BusCase> prepare(const BusTest& t, std::uint64_t bytes, std::uint64_t seed,
                                   int host_threads) override {
    int threads = 1;
    switch (table_.id(t.variant)) {
      case CpuBusVariant::Serial: threads = 1; break;
      case CpuBusVariant::Parallel: threads = platform_.threads(); break;
    }
    return std::make_unique<PatternCase>(t, bytes, seed, threads, host_threads);
  }

 private:
  static inline const std::vector<std::string> kTests = {"memcpy", "triad",   "read",    "write",
                                                         "add",    "gather4", "gather32"};
  // A chase is one chain of dependent loads: one thread.
  static inline const std::vector<std::string> kSerialTests = {"memcpy", "triad",   "read",     "write",
                                                               "add",    "gather4", "gather32", "latency"};
  const CpuPlatform& platform_;
  VariantTable<CpuBusVariant> table_;
};

}  // namespace
}  // namespace hdb::cpu

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::cpu::CpuBus backend(platform);
  return hdb::bus_main(argc, argv, platform, backend);
}
