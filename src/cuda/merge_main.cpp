#include "merge_backend.hpp"

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::cuda::CudaMerge backend(platform);
  return hdb::merge_main(argc, argv, platform, backend);
}
