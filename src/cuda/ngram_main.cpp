// hdb-ngram-cuda: baseline (host), the paper's GPU algorithm, the segment-wise GPU variant (per
// query and batched) and the hybrid CPU/GPU algorithm.
#include "ngram_backend.hpp"

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::cuda::CudaNgram backend(platform);
  return hdb::ngram_main(argc, argv, platform, backend);
}
