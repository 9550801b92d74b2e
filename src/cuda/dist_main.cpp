// hdb-dist-cuda: the true-parallel distributed operators with every rank on its own GPU (the
// node-local rank picks the device). Built with the CUDA RA and/or merge backend (HDB_DIST_RA,
// HDB_DIST_MERGE); each offers its tests.
#include "bench/dist.hpp"
#include "runtime/cuda_platform.hpp"
#ifdef HDB_DIST_RA
#include "ra_backend.hpp"
#endif
#ifdef HDB_DIST_MERGE
#include "merge_backend.hpp"
#endif

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::dist::DistBackends backends;
#ifdef HDB_DIST_RA
  hdb::ra::cuda::CudaRa ra(platform);
  backends.ra = &ra;
#endif
#ifdef HDB_DIST_MERGE
  hdb::cuda::CudaMerge merge(platform);
  backends.merge = &merge;
#endif
  return hdb::dist::dist_main(argc, argv, platform, backends);
}
