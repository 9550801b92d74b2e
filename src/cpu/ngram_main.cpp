// hdb-ngram-cpu: baseline (common), binned, parallel (bins over cores) and batch (queries over cores).
#include "ngram_backend.hpp"

int main(int argc, char** argv) {
  hdb::cpu::CpuPlatform platform;
  hdb::cpu::CpuNgram backend(platform);
  return hdb::ngram_main(argc, argv, platform, backend);
}
