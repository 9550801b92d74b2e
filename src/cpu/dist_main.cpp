// hdb-dist-cpu: the true-parallel distributed operators with every rank on its share of the cores.
#include "bench/dist.hpp"
#include "merge_backend.hpp"
#include "ra_backend.hpp"
#include "runtime/cpu_platform.hpp"

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::ra::cpu::CpuRa ra(platform);
  hdb::cpu::CpuMerge merge(platform);
  return hdb::dist::dist_main(argc, argv, platform, {&ra, &merge});
}
