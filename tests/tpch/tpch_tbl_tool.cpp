// A helper for the scripted TPC-H tests and for measuring the .tbl loader by itself:
//   tpch_tbl_tool write SF DIR      writes the built-in generator's tables (seed 42) as dbgen .tbl files
//   tpch_tbl_tool load DIR          loads DIR with load_tables and prints rows, kept bytes, peak RSS
//   tpch_tbl_tool check-memory DIR  loads DIR and exits 1 unless the loader's peak memory growth is at
//                                   most 1.3 x the kept columns + 16 MiB (a streaming loader; one
//                                   that reads a whole file first needs the file's size on top)
// Exit 2 with "error: ..." on a bad file, as the benchmarks do.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "harness/errors.hpp"
#include "harness/sanitizers.hpp"
#include "workloads/tpch_tables.hpp"

namespace {

// A field of /proc/self/status in KiB (VmHWM: peak resident set, VmRSS: current), 0 if unknown.
std::uint64_t status_kib(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  const std::size_t n = std::strlen(field);
  while (std::getline(in, line))
    if (line.compare(0, n, field) == 0 && line.size() > n && line[n] == ':')
      return std::strtoull(line.c_str() + n + 1, nullptr, 10);
  return 0;
}

int usage() {
  std::fprintf(stderr, "usage: tpch_tbl_tool write SF DIR | load DIR | check-memory DIR\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace hdb;
  using namespace hdb::tpch;
  if (argc < 3) return usage();
  const std::string mode = argv[1];
  try {
    if (mode == "write" && argc == 4) {
      write_tbl_files(generate_tables(std::stod(argv[2]), 42, 2), argv[3]);
      return 0;
    }
    if ((mode == "load" || mode == "check-memory") && argc == 3) {
      const std::uint64_t before = status_kib("VmRSS");
      Tables t = load_tables(argv[2]);
      const std::uint64_t peak = status_kib("VmHWM");
      const std::uint64_t kept = t.bytes() >> 10;
      std::printf("rows: customer %" PRIu64 ", orders %" PRIu64 ", lineitem %" PRIu64 "\n", t.customer.rows(),
                  t.orders.rows(), t.lineitem.rows());
      std::printf("kept columns %" PRIu64 " KiB; RSS before loading %" PRIu64 " KiB, peak %" PRIu64
                  " KiB, growth %" PRIu64 " KiB\n",
                  kept, before, peak, peak - before);
      if (mode == "check-memory") {
        if (peak == 0) {
          std::printf("no /proc/self/status: not checked\n");
          return 0;
        }
#if defined(HDB_ASAN)
        std::printf("AddressSanitizer keeps freed memory in quarantine: not checked\n");
        return 0;
#endif
        const std::uint64_t allowed = kept * 13 / 10 + (16u << 10);
        if (peak - before > allowed) {
          std::printf("FAIL: the loader grew by %" PRIu64 " KiB, more than %" PRIu64 " KiB\n", peak - before, allowed);
          return 1;
        }
        std::printf("ok: growth within %" PRIu64 " KiB\n", allowed);
      }
      return 0;
    }
  } catch (const UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  }
  return usage();
}
