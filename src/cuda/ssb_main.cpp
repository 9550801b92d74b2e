// hdb-ssb-cuda: the 13 SSB queries on CUDA, variants fused (Crystal's manner) and operators
// (operator at a time) (cuda/ssb_backend.hpp).
#include "runtime/cuda_platform.hpp"
#include "ssb_backend.hpp"

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::cuda::CudaSsb backend;
  return hdb::ssb::ssb_main(argc, argv, platform, backend);
}
