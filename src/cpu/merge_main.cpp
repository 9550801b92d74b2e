#include "merge_backend.hpp"

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::cpu::CpuMerge backend(platform);
  return hdb::merge_main(argc, argv, platform, backend);
}
