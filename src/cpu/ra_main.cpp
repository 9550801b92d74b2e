// hdb-ra-cpu: the relational-algebra primitives on the host, serial and on all cores.
#include "bench/ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cpu_platform.hpp"

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::ra::cpu::CpuRa backend(platform);
  return hdb::ra::ra_main(argc, argv, platform, backend);
}
