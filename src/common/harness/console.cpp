#include "harness/console.hpp"

#include <cstdio>

#include "harness/sizes.hpp"

namespace hdb {

void Console::header() {
  if (header_done_ || quiet_) return;
  header_done_ = true;
  std::printf("%-44s %6s %9s %10s %10s %7s %6s %7s %s\n", "case", "size", "median_ms", "kern_GB/s", "PCIe_GB/s",
              "parity", "cv%", "%peak", "verified");
}

void Console::row(const Record& r, const Ceiling& ceiling) {
  if (quiet_) return;
  header();
  const std::string id = r.key.id();
  const std::string name = id.substr(0, id.rfind('@'));  // the size has a column of its own
  if (r.status != Status::Ok) {
    std::printf("%-44s %6s %s: %s\n", name.c_str(), format_size(r.key.size_bytes).c_str(), to_string(r.status),
                r.reason.c_str());
  } else {
    Throughput t = throughput(r, ceiling);
    Stats k = r.stat("kernel");
    bool xfer = r.key.transfer != Transfer::None;
    char kern[32], pcie[32], parity[32], peak[32];
    std::snprintf(kern, sizeof kern, "%.3f", t.kernel_gbps);
    std::snprintf(pcie, sizeof pcie, "%.3f", t.total_gbps);
    std::snprintf(parity, sizeof parity, "%.2f", t.parity);
    std::snprintf(peak, sizeof peak, "%.1f", t.pct_of_peak);
    // A pass with no kernel (a bus copy) shows its time and cv of the transfer.
    Stats m = k.median > 0 ? k : r.stat("total");
    std::printf("%-44s %6s %9.4f %10s %10s %7s %6.1f %7s %s\n", name.c_str(), format_size(r.key.size_bytes).c_str(),
                m.median * 1e3, k.median > 0 ? kern : "-", xfer ? pcie : "-", xfer && k.median > 0 ? parity : "-",
                100 * m.cv, r.min_bytes_moved && ceiling.gbps > 0 ? peak : "-", r.verified ? "yes" : "no");
  }
  std::fflush(stdout);
}

void Console::line(const std::string& text) {
  if (quiet_) return;
  std::printf("%s\n", text.c_str());
  std::fflush(stdout);
}

}  // namespace hdb
