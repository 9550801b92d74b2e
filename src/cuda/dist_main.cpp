// hdb-dist-cuda: the true-parallel distributed operators with every rank on its own GPU (the
// node-local rank picks the device).
#include "bench/dist.hpp"
#include "merge_backend.hpp"
#include "ra_backend.hpp"
#include "runtime/cuda_platform.hpp"

int main(int argc, char** argv) {
  return hdb::dist::dist_main_for<hdb::cuda::CudaPlatform, hdb::ra::cuda::CudaRa, hdb::cuda::CudaMerge>(argc, argv);
}
