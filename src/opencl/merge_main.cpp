#include "merge_backend.hpp"

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::opencl::OpenClMerge backend(platform);
  return hdb::merge_main(argc, argv, platform, backend);
}
