// hdb-ra-cuda: the relational-algebra primitives on a CUDA device (paper, cub and tuned variants).
#include "bench/ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cuda_platform.hpp"

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::ra::cuda::CudaRa backend(platform);
  return hdb::ra::ra_main(argc, argv, platform, backend);
}
