// CPU ceilings: memcpy on one thread and on all threads, and a STREAM-style triad a = b + s*c.
#include <cstring>
#include <memory>
#include <vector>

#include "bench/bus.hpp"
#include "harness/errors.hpp"
#include "harness/memory_plan.hpp"
#include "harness/parallel.hpp"
#include "runtime/cpu_platform.hpp"

namespace hdb::cpu {
namespace {

constexpr std::uint32_t kTriadScale = 3;

class MemcpyCase : public BusCase {
 public:
  MemcpyCase(std::uint64_t bytes, std::uint64_t seed, int threads, int host_threads)
      : n_(bytes / 4), seed_(seed), threads_(threads), src_(n_), dst_(n_) {
    fill_pattern(src_.data(), n_, seed, host_threads);
    parallel_for(n_, threads_, [&](std::uint64_t b, std::uint64_t e) { std::memset(dst_.data() + b, 0, (e - b) * 4); });
  }
  Breakdown pass() override {
    return Breakdown::compute_only(timed_parallel_memcpy(dst_.data(), src_.data(), n_ * 4, threads_));
  }
  Verification verify() override { return check_pattern(dst_.data(), n_, seed_); }

 private:
  std::uint64_t n_, seed_;
  int threads_;
  std::vector<std::uint32_t> src_, dst_;
};

class TriadCase : public BusCase {
 public:
  TriadCase(std::uint64_t bytes, std::uint64_t seed, int threads, int host_threads)
      : n_(bytes / 4), seed_(seed), threads_(threads), a_(n_), b_(n_), c_(n_) {
    fill_pattern(b_.data(), n_, seed, host_threads);
    fill_pattern(c_.data(), n_, seed + 1, host_threads);
    parallel_for(n_, threads_, [&](std::uint64_t lo, std::uint64_t hi) { std::memset(a_.data() + lo, 0, (hi - lo) * 4); });
  }
  Breakdown pass() override {
    HostTimer t;
    std::uint32_t* a = a_.data();
    const std::uint32_t* b = b_.data();
    const std::uint32_t* c = c_.data();
    parallel_for(n_, threads_, [=](std::uint64_t lo, std::uint64_t hi) {
      for (std::uint64_t i = lo; i < hi; ++i) a[i] = b[i] + kTriadScale * c[i];
    });
    return Breakdown::compute_only(t.seconds());
  }
  Verification verify() override {
    for (std::uint64_t i = 0; i < n_; ++i)
      if (a_[i] != b_[i] + kTriadScale * c_[i])
        return Verification::fail("element " + std::to_string(i) + " of a = b + 3c is wrong");
    return Verification::pass("a = b + 3c for all " + std::to_string(n_) + " elements");
  }

 private:
  std::uint64_t n_, seed_;
  int threads_;
  std::vector<std::uint32_t> a_, b_, c_;
};

enum class CpuBusVariant { Serial, Parallel };

class CpuBus : public BusBackend {
 public:
  explicit CpuBus(const CpuPlatform& p)
      : platform_(p),
        table_("CPU bus", {{CpuBusVariant::Serial, {"serial", {"memcpy", "triad"}, ""}},
                           {CpuBusVariant::Parallel, {"parallel", {"memcpy", "triad"}, ""}}}) {}
  const VariantList& variant_table() const override { return table_; }
  void plan_memory(const BusTest& t, std::uint64_t bytes, MemoryPlan& plan) const override {
    // Every array the case allocates (whole 4-byte words); verification allocates nothing.
    const std::uint64_t array = bytes / 4 * 4;
    if (t.kind == BusKind::Triad) plan.add("a", array).add("b", array).add("c", array);
    else plan.add("source", array).add("destination", array);
  }
  std::unique_ptr<BusCase> prepare(const BusTest& t, std::uint64_t bytes, std::uint64_t seed, int host_threads) override {
    int threads = 1;
    switch (table_.id(t.variant)) {
      case CpuBusVariant::Serial: threads = 1; break;
      case CpuBusVariant::Parallel: threads = platform_.threads(); break;
    }
    if (t.kind == BusKind::Triad) return std::make_unique<TriadCase>(bytes, seed, threads, host_threads);
    return std::make_unique<MemcpyCase>(bytes, seed, threads, host_threads);
  }

 private:
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
