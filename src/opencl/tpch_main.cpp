// hdb-tpch-opencl: the kernels composed from the OpenCL RA primitives (the paper's partition /
// compute / gather kernels), inputs uploaded once and the answer downloaded once per pass.
#include "bench/tpch_ra.hpp"
#include "ra_backend.hpp"
#include "runtime/cl_platform.hpp"

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::ra::opencl::OpenClRa ra(platform);
  hdb::tpch::RaComposed backend(ra);
  return hdb::tpch::tpch_main(argc, argv, platform, backend);
}
