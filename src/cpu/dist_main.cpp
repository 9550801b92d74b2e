// hdb-dist-cpu: the true-parallel distributed operators with every rank on its share of the cores.
// Built with the RA and/or merge backend of the CPU (HDB_DIST_RA, HDB_DIST_MERGE); each offers its tests.
#include "bench/dist.hpp"
#include "runtime/cpu_platform.hpp"
#ifdef HDB_DIST_RA
#include "ra_backend.hpp"
#endif
#ifdef HDB_DIST_MERGE
#include "merge_backend.hpp"
#endif

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::dist::DistBackends backends;
#ifdef HDB_DIST_RA
  hdb::ra::cpu::CpuRa ra(platform);
  backends.ra = &ra;
#endif
#ifdef HDB_DIST_MERGE
  hdb::cpu::CpuMerge merge(platform);
  backends.merge = &merge;
#endif
  return hdb::dist::dist_main(argc, argv, platform, backends);
}
