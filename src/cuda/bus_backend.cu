// CUDA ceilings: host<->device from pageable and pinned memory (cudaMemcpy, timed with events),
// and device memory copy both by the copy engine (cudaMemcpy D2D) and by an SM copy kernel with
// 16-byte accesses, which is what the other kernels' bandwidth is really bounded by.
#include <cstring>
#include <memory>
#include <vector>

#include "bench/bus.hpp"
#include "harness/errors.hpp"
#include "harness/memory_plan.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/cuda_platform.hpp"

namespace hdb::cuda {
namespace {

__global__ void copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::size_t n16,
                            const unsigned* __restrict__ tail_src, unsigned* __restrict__ tail_dst, std::size_t tail) {
  std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n16; i += stride)
    dst[i] = src[i];
  if (blockIdx.x == 0 && threadIdx.x < tail) tail_dst[threadIdx.x] = tail_src[threadIdx.x];
}

class TransferCase : public BusCase {
 public:
  TransferCase(const BusTest& t, std::uint64_t bytes, std::uint64_t seed, int host_threads)
      : up_(t.kind == BusKind::H2d), n_(bytes / 4), seed_(seed), host_(n_, t.transfer), dev_(n_) {
    if (up_) {
      fill_pattern(host_.get(), n_, seed, host_threads);
    } else {
      std::vector<std::uint32_t> src(n_);
      fill_pattern(src.data(), n_, seed, host_threads);
      HDB_CUDA_CHECK(cudaMemcpy(dev_.get(), src.data(), n_ * 4, cudaMemcpyHostToDevice));
      std::memset(host_.get(), 0, n_ * 4);
    }
  }
  Breakdown pass() override {
    PhaseTimer t;
    t.start();
    if (up_)
      HDB_CUDA_CHECK(cudaMemcpy(dev_.get(), host_.get(), n_ * 4, cudaMemcpyHostToDevice));
    else
      HDB_CUDA_CHECK(cudaMemcpy(host_.get(), dev_.get(), n_ * 4, cudaMemcpyDeviceToHost));
    return Breakdown::transfer_only(up_, t.stop());
  }
  Verification verify() override {
    if (!up_) return check_pattern(host_.get(), n_, seed_);
    std::vector<std::uint32_t> back(n_);
    HDB_CUDA_CHECK(cudaMemcpy(back.data(), dev_.get(), n_ * 4, cudaMemcpyDeviceToHost));
    return check_pattern(back.data(), n_, seed_);
  }

 private:
  bool up_;
  std::uint64_t n_, seed_;
  HostBuffer<std::uint32_t> host_;
  DeviceBuffer<std::uint32_t> dev_;
};

class DeviceCopyCase : public BusCase {
 public:
  DeviceCopyCase(bool kernel, std::uint64_t bytes, std::uint64_t seed, int sms, int host_threads)
      : kernel_(kernel), n_(bytes / 4), seed_(seed), sms_(sms), src_(n_), dst_(n_) {
    std::vector<std::uint32_t> w(n_);
    fill_pattern(w.data(), n_, seed, host_threads);
    HDB_CUDA_CHECK(cudaMemcpy(src_.get(), w.data(), n_ * 4, cudaMemcpyHostToDevice));
    HDB_CUDA_CHECK(cudaMemset(dst_.get(), 0, n_ * 4));
  }
  Breakdown pass() override {
    PhaseTimer t;
    t.start();
    if (kernel_) {
      std::size_t n16 = n_ / 4, tail = n_ % 4;
      unsigned blocks = static_cast<unsigned>(std::min<std::size_t>((n16 + 255) / 256 + 1, 32ull * sms_));
      HDB_LAUNCH(copy_kernel, blocks, 256, 0, nullptr)
      (reinterpret_cast<const uint4*>(src_.get()), reinterpret_cast<uint4*>(dst_.get()), n16, src_.get() + n16 * 4,
       dst_.get() + n16 * 4, tail);
      HDB_CUDA_CHECK_LAUNCH("copy_kernel");
    } else {
      HDB_CUDA_CHECK(cudaMemcpyAsync(dst_.get(), src_.get(), n_ * 4, cudaMemcpyDeviceToDevice));
    }
    return Breakdown::compute_only(t.stop());
  }
  Verification verify() override {
    std::vector<std::uint32_t> back(n_);
    HDB_CUDA_CHECK(cudaMemcpy(back.data(), dst_.get(), n_ * 4, cudaMemcpyDeviceToHost));
    return check_pattern(back.data(), n_, seed_);
  }

 private:
  bool kernel_;
  std::uint64_t n_, seed_;
  int sms_;
  DeviceBuffer<std::uint32_t> src_, dst_;
};

enum class CudaBusVariant { Copy, Memcpy, Kernel };

class CudaBus : public BusBackend {
 public:
  explicit CudaBus(CudaPlatform& p)
      : p_(p),
        table_("CUDA bus", {{CudaBusVariant::Copy, bus_copy_variant()},
                            {CudaBusVariant::Memcpy, {"memcpy", {"device_copy"}, ""}},
                            {CudaBusVariant::Kernel, {"kernel", {"device_copy"}, ""}}}) {}
  const VariantList& variant_table() const override { return table_; }
  void plan_memory(const BusTest& t, std::uint64_t bytes, MemoryPlan& plan) const override {
    // Every cudaMalloc of the case (whole words); the pinned or pageable host buffer and the host
    // vectors that fill and read back the device are host memory.
    const std::uint64_t array = bytes / 4 * 4;
    if (t.kind == BusKind::DeviceCopy)
      plan.add("source", array).add("destination", array);
    else
      plan.add("device buffer", array);
  }
  std::unique_ptr<BusCase> prepare(const BusTest& t, std::uint64_t bytes, std::uint64_t seed,
                                   int host_threads) override {
    // The cases move whole 4-byte pattern words (bytes / 4 of them): a size that is not a multiple
    // of 4 has its last bytes left out, and one below a word has nothing to move.
    if (bytes < 4) throw SkipCase("below one 4-byte word");
    switch (table_.id(t.variant)) {
      case CudaBusVariant::Memcpy:
        return std::make_unique<DeviceCopyCase>(false, bytes, seed, p_.sm_count(), host_threads);
      case CudaBusVariant::Kernel:
        return std::make_unique<DeviceCopyCase>(true, bytes, seed, p_.sm_count(), host_threads);
      case CudaBusVariant::Copy: break;
    }
    return std::make_unique<TransferCase>(t, bytes, seed, host_threads);
  }

 private:
  CudaPlatform& p_;
  VariantTable<CudaBusVariant> table_;
};

}  // namespace
}  // namespace hdb::cuda

int main(int argc, char** argv) {
  hdb::cuda::CudaPlatform platform;
  hdb::cuda::CudaBus backend(platform);
  return hdb::bus_main(argc, argv, platform, backend);
}
