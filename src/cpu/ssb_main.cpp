// hdb-ssb-cpu: the 13 SSB queries on the CPU, variants serial and parallel (cpu/ssb_backend.hpp).
#include "runtime/cpu_platform.hpp"
#include "ssb_backend.hpp"

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::cpu::CpuSsb backend(platform);
  return hdb::ssb::ssb_main(argc, argv, platform, backend);
}
