// hdb-dist-cpu: the true-parallel distributed operators with every rank on its share of the cores.
#include "bench/dist.hpp"
#include "merge_backend.hpp"
#include "ra_backend.hpp"
#include "runtime/cpu_platform.hpp"

int main(int argc, char** argv) {
  return hdb::dist::dist_main_for<hdb::cpu::CpuPlatform, hdb::ra::cpu::CpuRa, hdb::cpu::CpuMerge>(argc, argv);
}
