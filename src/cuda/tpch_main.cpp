#include "runtime/cuda_platform.hpp"
#include "tpch_backend.hpp"

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::cuda::CudaTpch backend;
  return hdb::tpch::tpch_main(argc, argv, platform, backend);
}
