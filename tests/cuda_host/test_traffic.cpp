// The traffic profile (src/cuda/runtime/host/traffic.hpp) on kernels whose answer is known by hand:
// coalesced and vector copies, a strided gather, a broadcast, repeated launches, one contended atomic,
// shared memory and barriers, memsets, and the L2 model's reuse and eviction. Compiled like the
// instrumented executables (HDB_TRAFFIC_FLAGS), so every load and store below reaches the callbacks.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/cuda_check.hpp"
#include "runtime/host/traffic.hpp"
#include "runtime/launch.cuh"

namespace {

namespace traffic = hdb::cuda::host::traffic;

__global__ void copy_words(const std::uint32_t* in, std::uint32_t* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];
}

__global__ void copy_vectors(const uint4* in, uint4* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = in[i];
}

// Reads one word in eight; writes only if it finds a value the input does not hold, so that the
// loads are the whole profile.
__global__ void gather_stride8(const std::uint32_t* in, std::uint32_t* out) {
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  const std::uint32_t v = in[8 * i];
  if (v == 0xffffffffu) out[0] = v;
}

__global__ void broadcast(const std::uint32_t* in, std::uint32_t* out) {
  const std::uint32_t v = in[0];
  if (v == 0xffffffffu) out[0] = v;
}

__global__ void count_all(unsigned* counter) { atomicAdd(counter, 1u); }

// Global memory in and out once each; the shared tile and the barrier are not global traffic.
__global__ void reverse_in_block(const std::uint32_t* in, std::uint32_t* out) {
  __shared__ std::uint32_t tile[256];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

__global__ void sum_words(const std::uint32_t* in, std::uint64_t n, unsigned long long* out) {
  unsigned long long s = 0;
  for (std::uint64_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) s += in[i];
  if (s == ~0ull) *out = s;
}

// Device buffers of `words` 32-bit words each, holding 0..words-1, freed at the end of the test.
class Traffic : public ::testing::Test {
 protected:
  std::uint32_t* device_words(std::size_t words) {
    void* p = nullptr;
    HDB_CUDA_CHECK(cudaMalloc(&p, words * 4));
    std::vector<std::uint32_t> h(words);
    for (std::size_t i = 0; i < words; ++i) h[i] = static_cast<std::uint32_t>(i);
    HDB_CUDA_CHECK(cudaMemcpy(p, h.data(), words * 4, cudaMemcpyHostToDevice));
    buffers_.push_back(p);
    return static_cast<std::uint32_t*>(p);
  }
  void TearDown() override {
    for (void* p : buffers_) cudaFree(p);
  }
  static traffic::DeviceModel model(double l2_bytes = 1 << 20) {
    traffic::DeviceModel m = traffic::h200();
    m.l2_bytes = l2_bytes;
    return m;
  }

 private:
  std::vector<void*> buffers_;
};

TEST_F(Traffic, TheBuildIsInstrumented) { EXPECT_TRUE(traffic::instrumented()); }

TEST_F(Traffic, CoalescedWordCopyUsesEverySectorWhole) {
  const unsigned n = 2048;
  auto* in = device_words(n);
  auto* out = device_words(n);
  traffic::begin(model());
  HDB_LAUNCH(copy_words, n / 256, 256, 0, nullptr)(in, out);
  const nlohmann::json t = traffic::end();
  HDB_CUDA_CHECK(cudaDeviceSynchronize());
  EXPECT_EQ(t["launches"], 1);
  EXPECT_EQ(t["blocks"], 8);
  EXPECT_EQ(t["threads"], n);
  EXPECT_EQ(t["requests_ld"], n / 32);
  EXPECT_EQ(t["requests_st"], n / 32);
  EXPECT_EQ(t["sectors_ld"], n / 32 * 4);  // 32 lanes x 4 bytes = 128 bytes = 4 sectors
  EXPECT_EQ(t["sectors_st"], n / 32 * 4);
  EXPECT_EQ(t["requested_bytes"], 2 * 4 * n);
  EXPECT_EQ(t["access_width"]["4"], 2 * n);
  EXPECT_DOUBLE_EQ(t["sector_efficiency"].get<double>(), 1.0);
  EXPECT_EQ(t["unique_bytes"], 2 * 4 * n);
  EXPECT_EQ(t["dram_read_bytes_model"], 4 * n);
  EXPECT_EQ(t["dram_write_bytes_model"], 4 * n);
  EXPECT_EQ(t["atomics"], 0);
  EXPECT_EQ(t["barriers"], 0);
  const auto& m = traffic::h200();
  EXPECT_DOUBLE_EQ(t["model_ms"].get<double>(), 1e3 * (8.0 * n / (m.copy_gbps * 1e9) + m.launch_s));
}

TEST_F(Traffic, VectorCopyMakesAQuarterOfTheRequests) {
  const unsigned words = 2048, vectors = words / 4;
  auto* in = device_words(words);
  auto* out = device_words(words);
  traffic::begin(model());
  HDB_LAUNCH(copy_vectors, vectors / 128, 128, 0, nullptr)
  (reinterpret_cast<const uint4*>(in), reinterpret_cast<uint4*>(out));
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["requests_ld"], words / 32 / 4);
  EXPECT_EQ(t["requests_st"], words / 32 / 4);
  EXPECT_EQ(t["sectors_ld"], words / 32 * 4);  // the same bytes, the same sectors
  EXPECT_EQ(t["access_width"]["16"], 2 * vectors);
  EXPECT_EQ(t["access_width"]["4"], 0);
  EXPECT_DOUBLE_EQ(t["sector_efficiency"].get<double>(), 1.0);
}

TEST_F(Traffic, StrideEightGatherUsesAnEighthOfEachSector) {
  const unsigned threads = 1024;
  auto* in = device_words(8 * threads);
  auto* out = device_words(1);
  traffic::begin(model());
  HDB_LAUNCH(gather_stride8, threads / 256, 256, 0, nullptr)(in, out);
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["requests_ld"], threads / 32);
  EXPECT_EQ(t["sectors_ld"], threads);  // every lane its own sector
  EXPECT_EQ(t["requests_st"], 0);
  EXPECT_DOUBLE_EQ(t["sector_efficiency"].get<double>(), 1.0 / 8);
  EXPECT_EQ(t["dram_read_bytes_model"], 32 * threads);
}

TEST_F(Traffic, BroadcastReadIsOneSectorARequest) {
  auto* in = device_words(64);
  auto* out = device_words(1);
  traffic::begin(model());
  HDB_LAUNCH(broadcast, 2, 128, 0, nullptr)(in, out);
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["requests_ld"], 8);
  EXPECT_EQ(t["sectors_ld"], 8);
  EXPECT_EQ(t["requested_bytes"], 4 * 256);
  EXPECT_EQ(t["delivered_bytes"], 4 * 8);  // the same 4 bytes serve a warp
  EXPECT_DOUBLE_EQ(t["sector_efficiency"].get<double>(), 4.0 / 32);
  EXPECT_EQ(t["unique_bytes"], 32);
}

TEST_F(Traffic, RepeatedLaunchesAreCountedEach) {
  const unsigned n = 1024;
  auto* in = device_words(n);
  auto* out = device_words(n);
  traffic::begin(model());
  for (int k = 0; k < 5; ++k) HDB_LAUNCH(copy_words, n / 256, 256, 0, nullptr)(in, out);
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["launches"], 5);
  EXPECT_EQ(t["blocks"], 5 * 4);
  EXPECT_EQ(t["unique_bytes"], 5 * 2 * 4 * n);    // each launch's footprint
  EXPECT_EQ(t["dram_read_bytes_model"], 4 * n);   // the L2 keeps the input after the first
  EXPECT_EQ(t["dram_write_bytes_model"], 4 * n);  // and the output until the end
}

TEST_F(Traffic, OneContendedAtomicAddress) {
  auto* counter = device_words(1);
  HDB_CUDA_CHECK(cudaMemset(counter, 0, 4));
  traffic::begin(model());
  HDB_LAUNCH(count_all, 4, 256, 0, nullptr)(counter);
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["atomics"], 1024);
  EXPECT_EQ(t["atomic_addresses"], 1);
  EXPECT_EQ(t["requests"], 0);
  std::uint32_t h = 0;
  HDB_CUDA_CHECK(cudaMemcpy(&h, counter, 4, cudaMemcpyDeviceToHost));
  EXPECT_EQ(h, 1024u);  // the callbacks did the additions
}

TEST_F(Traffic, SharedMemoryAndBarriersAreNotGlobalTraffic) {
  const unsigned n = 1024;
  auto* in = device_words(n);
  auto* out = device_words(n);
  traffic::begin(model());
  HDB_LAUNCH(reverse_in_block, n / 256, 256, 0, nullptr)(in, out);
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["barriers"], 4);  // one a block
  EXPECT_EQ(t["requested_bytes"], 2 * 4 * n);
  EXPECT_EQ(t["requests"], 2 * n / 32);
  std::vector<std::uint32_t> h(n);
  HDB_CUDA_CHECK(cudaMemcpy(h.data(), out, 4 * n, cudaMemcpyDeviceToHost));
  EXPECT_EQ(h[0], 255u);
}

TEST_F(Traffic, MemsetsAndDeviceCopiesGoThroughTheModel) {
  auto* a = device_words(1024);
  auto* b = device_words(1024);
  traffic::begin(model());
  HDB_CUDA_CHECK(cudaMemset(a, 0, 4096));
  HDB_CUDA_CHECK(cudaMemcpy(b, a, 4096, cudaMemcpyDeviceToDevice));
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["memsets"], 1);
  EXPECT_EQ(t["device_copies"], 1);
  EXPECT_EQ(t["launches"], 0);
  EXPECT_EQ(t["dram_read_bytes_model"], 0);      // the copy reads what the memset left in the L2
  EXPECT_EQ(t["dram_write_bytes_model"], 8192);  // both written back in the end
}

TEST_F(Traffic, AnL2SmallerThanTheDataRereadsIt) {
  const std::uint64_t n = 4096;  // 16 KB
  auto* in = device_words(n);
  auto* out = device_words(2);
  auto twice = [&](double l2) {
    traffic::begin(model(l2));
    for (int k = 0; k < 2; ++k)
      HDB_LAUNCH(sum_words, 4, 256, 0, nullptr)(in, n, reinterpret_cast<unsigned long long*>(out));
    return traffic::end();
  };
  EXPECT_EQ(twice(1 << 20)["dram_read_bytes_model"], 4 * n);   // fits: read once
  EXPECT_EQ(twice(4096)["dram_read_bytes_model"], 2 * 4 * n);  // 4 KB of L2: read twice
}

TEST_F(Traffic, NothingIsCountedOutsideBeginAndEnd) {
  const unsigned n = 256;
  auto* in = device_words(n);
  auto* out = device_words(n);
  HDB_LAUNCH(copy_words, 1, 256, 0, nullptr)(in, out);
  traffic::begin(model());
  const nlohmann::json t = traffic::end();
  EXPECT_EQ(t["launches"], 0);
  EXPECT_EQ(t["requests"], 0);
  EXPECT_TRUE(t["sector_efficiency"].is_null());
}

}  // namespace
