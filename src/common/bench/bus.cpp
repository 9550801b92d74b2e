#include "bench/bus.hpp"

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "harness/stats.hpp"
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

const char* to_string(BusKind k) {
  switch (k) {
    case BusKind::H2d: return "h2d";
    case BusKind::D2h: return "d2h";
    case BusKind::DeviceCopy: return "device_copy";
    case BusKind::Memcpy: return "memcpy";
    case BusKind::Triad: return "triad";
    case BusKind::Read: return "read";
    case BusKind::Write: return "write";
    case BusKind::Add: return "add";
    case BusKind::Gather4: return "gather4";
    case BusKind::Gather32: return "gather32";
    case BusKind::Latency: return "latency";
  }
  return "?";
}

int BusTest::streams_read() const {
  switch (kind) {
    case BusKind::Triad:
    case BusKind::Add: return 2;
    case BusKind::Write:
    case BusKind::Latency:
    case BusKind::Gather4:
    case BusKind::Gather32: return 0;
    default: return 1;
  }
}

VariantInfo bus_copy_variant() { return {"copy", {"h2d", "d2h"}, ""}; }

std::vector<BusTest> bus_tests(const BusBackend& backend, const std::vector<Transfer>& transfers) {
  std::vector<BusTest> out;
  for (BusKind k : {BusKind::H2d, BusKind::D2h, BusKind::DeviceCopy, BusKind::Memcpy, BusKind::Triad, BusKind::Read,
                    BusKind::Write, BusKind::Add, BusKind::Gather4, BusKind::Gather32, BusKind::Latency})
    for (const std::string& name : backend.variant_table().names(to_string(k))) {
      BusTest t{k, name, Transfer::None};
      if (!t.over_bus()) {
        out.push_back(t);
        continue;
      }
      for (Transfer mode : transfers) out.push_back({k, name, mode});
    }
  return out;
}

namespace {
void run_bus(Session& s, BusBackend& backend) {
  for (const BusTest& t : bus_tests(backend, s.transfers())) {
    for (std::uint64_t bytes : s.sizes()) {
      CaseSetup setup;
      setup.plan = [&](MemoryPlan& plan) {
        backend.variant_table().require_available(t.variant);
        backend.plan_memory(t, bytes, plan);
      };
      setup.prepare = [&]() {
        std::shared_ptr<BusCase> c = backend.prepare(t, bytes, s.seed("bus", bytes), effective_threads(s.options()));
        Prepared p = prepared_from(c);
        p.verify = [c] { return c->verify(); };
        p.elements = bytes / 4;
        p.input_bytes = bytes;
        p.transfer_bytes = t.over_bus() ? bytes : 0;
        // Memory-to-memory tests count bytes read + written, each against the ceiling of its own
        // pattern; bus tests are the bus ceiling itself.
        if (t.kind == BusKind::Latency) {
          // No bytes moved to speak of: its figure is the time per load (extra.ns_per_load).
          p.elements = BusTest::kChaseSteps;
          p.figures = [bytes](const std::vector<Breakdown>& trials) {
            std::vector<double> k;
            for (const Breakdown& b : trials) k.push_back(b.kernel);
            return nlohmann::json{
                {"ns_per_load", summarize(k).median / static_cast<double>(BusTest::kChaseSteps) * 1e9},
                {"lines", bytes / BusTest::kLineBytes}};
          };
        } else if (t.gather()) {
          const std::uint64_t asked = t.accesses(bytes) * static_cast<std::uint64_t>(t.item_bytes());
          p.moves(asked, 0, asked, static_cast<std::uint32_t>(t.item_bytes()));
          p.input_bytes = asked;  // its rate is the items' bytes per second; the table is --sizes
          p.elements = t.accesses(bytes);
        } else if (!t.over_bus()) {
          p.moves(bytes / 4 * 4 * static_cast<std::uint64_t>(t.streams_read()),
                  bytes / 4 * 4 * static_cast<std::uint64_t>(t.streams_written()));
        }
        return p;
      };
      s.run(CaseKey{to_string(t.kind), t.variant, {}, bytes, t.transfer}, setup);
    }
  }
}
}  // namespace

int bus_main(int argc, char** argv, Platform& platform, BusBackend& backend) {
  BenchmarkDef def;
  def.name = "bus";
  def.description =
      "Bandwidth ceilings: host<->device (pageable, pinned), device copy; on the CPU memcpy, triad, read, write, add "
      "random gathers, and the latency of dependent loads by working-set size";
  def.run = [&backend](Session& s) { run_bus(s, backend); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb
