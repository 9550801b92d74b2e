// hdb-ra-opencl: the relational-algebra primitives as the paper's OpenCL kernels.
#include "bench/ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cl_platform.hpp"

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::ra::opencl::OpenClRa backend(platform);
  return hdb::ra::ra_main(argc, argv, platform, backend);
}
