// hdb-tpch-cuda: the kernels composed from the CUDA RA primitives (ra-paper, ra-cub, ra-tuned) and
// by kernels of their own (operator at a time, and fused without intermediates).
#include "bench/tpch_ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cuda_platform.hpp"
#include "tpch_backend.hpp"

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::ra::cuda::CudaRa ra(platform);
  hdb::tpch::RaComposed composed(ra);
  hdb::cuda::CudaTpch own;
  hdb::tpch::MultiBackend backend({&composed, &own});
  return hdb::tpch::tpch_main(argc, argv, platform, backend);
}
