// hdb-dist-opencl: the true-parallel distributed operators with every rank on its own OpenCL
// device.
#include "bench/dist.hpp"
#include "merge_backend.hpp"
#include "ra_backend.hpp"
#include "runtime/cl_platform.hpp"

int main(int argc, char** argv) {
  return hdb::dist::dist_main_for<hdb::opencl::OpenClPlatform, hdb::ra::opencl::OpenClRa, hdb::opencl::OpenClMerge>(
      argc, argv);
}
