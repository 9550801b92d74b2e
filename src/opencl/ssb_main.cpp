// hdb-ssb-opencl: the 13 SSB queries as fused kernels and operator at a time (ssb_backend.hpp).
#include "ssb_backend.hpp"

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::ssb::opencl::OpenClSsb backend(platform);
  return hdb::ssb::ssb_main(argc, argv, platform, backend);
}
