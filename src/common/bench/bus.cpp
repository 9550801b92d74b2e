#include "bench/bus.hpp"

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"

namespace hdb {

void fill_pattern(std::uint32_t* w, std::uint64_t n, std::uint64_t seed, int threads) {
  parallel_for(n, threads, [&](std::uint64_t b, std::uint64_t e) {
    for (std::uint64_t i = b; i < e; ++i) w[i] = static_cast<std::uint32_t>(rand_at(seed, i)) | 1u;
  });
}

Verification check_pattern(const std::uint32_t* w, std::uint64_t n, std::uint64_t seed) {
  for (std::uint64_t i = 0; i < n; ++i) {
    std::uint32_t want = static_cast<std::uint32_t>(rand_at(seed, i)) | 1u;
    if (w[i] != want)
      return Verification::fail("word " + std::to_string(i) + " is " + std::to_string(w[i]) + ", expected " +
                                std::to_string(want));
  }
  return Verification::pass("all " + std::to_string(n) + " words equal the source");
}

std::vector<BusTest> transfer_tests(const std::vector<Transfer>& transfers) {
  std::vector<BusTest> out;
  for (const char* dir : {"h2d", "d2h"})
    for (Transfer t : transfers) out.push_back({dir, "copy", t, 1, 1});
  return out;
}

namespace {
void run_bus(Session& s, BusBackend& backend) {
  for (const BusTest& t : backend.tests(s.transfers())) {
    for (std::uint64_t bytes : s.sizes()) {
      CaseKey key{t.test, t.variant, {}, bytes, t.transfer};
      s.run(key, [&]() {
        std::shared_ptr<BusCase> c = backend.prepare(t, bytes, s.seed("bus", bytes), effective_threads(s.options()));
        Prepared p;
        p.pass = [c] { return c->pass(); };
        p.verify = [c] { return c->verify(); };
        p.elements = bytes / 4;
        p.input_bytes = bytes;
        bool over_bus = t.test == "h2d" || t.test == "d2h";
        p.transfer_bytes = over_bus ? bytes : 0;
        // Memory-to-memory tests count bytes read + written; bus tests are the bus ceiling itself.
        p.min_bytes_moved = over_bus ? 0 : bytes * static_cast<std::uint64_t>(t.streams_read + t.streams_written);
        return p;
      });
    }
  }
}
}  // namespace

int bus_main(int argc, char** argv, Platform& platform, BusBackend& backend) {
  BenchmarkDef def;
  def.name = "bus";
  def.description = "Bandwidth ceilings: host<->device (pageable, pinned), device copy, CPU memcpy and triad";
  def.run = [&backend](Session& s) { run_bus(s, backend); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb
