// hdb-tpch-cpu: the kernels composed from the CPU RA primitives (ra-serial, ra-parallel) and by
// the columnar engine (columnar-serial, columnar-parallel).
#include "bench/tpch_ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cpu_platform.hpp"
#include "tpch_backend.hpp"

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::ra::cpu::CpuRa ra(platform);
  hdb::tpch::RaComposed composed(ra);
  hdb::cpu::CpuTpch columnar(platform);
  hdb::tpch::MultiBackend backend({&composed, &columnar});
  return hdb::tpch::tpch_main(argc, argv, platform, backend);
}
