// hdb-ngram-opencl: baseline (host) and the segment-wise device search, per query and batched.
#include "ngram_backend.hpp"

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::opencl::OpenClNgram backend(platform);
  return hdb::ngram_main(argc, argv, platform, backend);
}
