// hdb-dist-opencl: the true-parallel distributed operators with every rank on its own OpenCL device.
#include "bench/dist.hpp"
#include "merge_backend.hpp"
#include "ra_backend.hpp"
#include "runtime/cl_platform.hpp"

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::ra::opencl::ClRa ra(platform);
  hdb::opencl::OpenClMerge merge(platform);
  return hdb::dist::dist_main(argc, argv, platform, {&ra, &merge});
}
