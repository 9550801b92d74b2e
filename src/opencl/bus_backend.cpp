// OpenCL ceilings: host->device and device->host from pageable memory and from a pinned
// (CL_MEM_ALLOC_HOST_PTR, mapped) staging buffer, and device-buffer copy. Timed by profiling events.
#include <algorithm>
#include <cstring>
#include <memory>

#include "bench/bus.hpp"
#include "harness/errors.hpp"
#include "harness/memory_plan.hpp"
#include "runtime/cl_platform.hpp"

namespace hdb::opencl {
namespace {

class TransferCase : public BusCase {
 public:
  TransferCase(OpenClPlatform& p, const BusTest& t, std::uint64_t bytes, std::uint64_t seed, int host_threads)
      : p_(p), up_(t.kind == BusKind::H2d), bytes_(bytes), seed_(seed), host_(p, bytes, t.transfer) {
    checked(std::string("preparing a ") + to_string(t.kind) + " transfer", [&] {
      dev_ = device_buffer(p.context_ref(), bytes);
      auto* w = static_cast<std::uint32_t*>(host_.data());
      if (up_) {
        fill_pattern(w, bytes / 4, seed, host_threads);
      } else {
        std::vector<std::uint32_t> src(bytes / 4);
        fill_pattern(src.data(), src.size(), seed, host_threads);
        p.queue().enqueueWriteBuffer(dev_, CL_TRUE, 0, bytes, src.data());
        std::memset(w, 0, bytes);
      }
      return 0;
    });
  }
  Breakdown pass() override {
    return checked("timed transfer", [&] {
      cl::Event e;
      if (up_)
        p_.queue().enqueueWriteBuffer(dev_, CL_TRUE, 0, bytes_, host_.data(), nullptr, &e);
      else
        p_.queue().enqueueReadBuffer(dev_, CL_TRUE, 0, bytes_, host_.data(), nullptr, &e);
      return Breakdown::transfer_only(up_, event_seconds(e));
    });
  }
  Verification verify() override {
    return checked("verifying a transfer", [&] {
      if (!up_) return check_pattern(static_cast<std::uint32_t*>(host_.data()), bytes_ / 4, seed_);
      std::vector<std::uint32_t> back(bytes_ / 4);
      p_.queue().enqueueReadBuffer(dev_, CL_TRUE, 0, bytes_, back.data());
      return check_pattern(back.data(), back.size(), seed_);
    });
  }

 private:
  OpenClPlatform& p_;
  bool up_;
  std::uint64_t bytes_, seed_;
  HostStaging host_;
  cl::Buffer dev_;
};

class DeviceCopyCase : public BusCase {
 public:
  DeviceCopyCase(OpenClPlatform& p, std::uint64_t bytes, std::uint64_t seed, int host_threads)
      : p_(p), bytes_(bytes), seed_(seed) {
    checked("preparing a device copy", [&] {
      src_ = device_buffer(p.context_ref(), bytes);
      dst_ = device_buffer(p.context_ref(), bytes);
      std::vector<std::uint32_t> w(bytes / 4);
      fill_pattern(w.data(), w.size(), seed, host_threads);
      p.queue().enqueueWriteBuffer(src_, CL_TRUE, 0, bytes, w.data());
      p.queue().enqueueFillBuffer(dst_, cl_uint{0}, 0, bytes);
      p.queue().finish();
      return 0;
    });
  }
  Breakdown pass() override {
    return checked("timed device copy", [&] {
      cl::Event e;
      p_.queue().enqueueCopyBuffer(src_, dst_, 0, 0, bytes_, nullptr, &e);
      e.wait();
      return Breakdown::compute_only(event_seconds(e));
    });
  }
  Verification verify() override {
    return checked("verifying a device copy", [&] {
      std::vector<std::uint32_t> back(bytes_ / 4);
      p_.queue().enqueueReadBuffer(dst_, CL_TRUE, 0, bytes_, back.data());
      return check_pattern(back.data(), back.size(), seed_);
    });
  }

 private:
  OpenClPlatform& p_;
  std::uint64_t bytes_, seed_;
  cl::Buffer src_, dst_;
};

enum class OpenClBusVariant { Copy, CopyBuffer };

class OpenClBus : public BusBackend {
 public:
  explicit OpenClBus(OpenClPlatform& p)
      : p_(p),
        table_("OpenCL bus", {{OpenClBusVariant::Copy, bus_copy_variant()},
                              {OpenClBusVariant::CopyBuffer, {"copy_buffer", {"device_copy"}, ""}}}) {}
  const VariantList& variant_table() const override { return table_; }
  void plan_memory(const BusTest& t, std::uint64_t bytes, MemoryPlan& plan) const override {
    // Every buffer the case allocates from the context (device_buffer: at least 1 byte). The pinned
    // staging memory is a CL_MEM_ALLOC_HOST_PTR buffer of the same context: counted, since
    // implementations may take it from the device's global memory (PoCL does). Pageable staging and
    // the host vectors that fill and read back the buffers are host memory, not the device's.
    const std::uint64_t buffer = std::max<std::uint64_t>(bytes, 1);
    switch (table_.id(t.variant)) {
      case OpenClBusVariant::CopyBuffer: plan.add("source buffer", buffer).add("destination buffer", buffer); break;
      case OpenClBusVariant::Copy:
        plan.add("device buffer", buffer);
        if (t.transfer == Transfer::Pinned) plan.add("pinned staging buffer", buffer);
        break;
    }
  }
  std::unique_ptr<BusCase> prepare(const BusTest& t, std::uint64_t bytes, std::uint64_t seed,
                                   int host_threads) override {
    const std::uint64_t buffer = std::max<std::uint64_t>(bytes, 1);
    if (buffer > p_.max_alloc_bytes())
      throw SkipCase("a buffer of " + std::to_string(buffer >> 20) +
                     " MiB is larger than the device's largest allocation (" +
                     std::to_string(p_.max_alloc_bytes() >> 20) + " MiB)");
    switch (table_.id(t.variant)) {
      case OpenClBusVariant::CopyBuffer: return std::make_unique<DeviceCopyCase>(p_, bytes, seed, host_threads);
      case OpenClBusVariant::Copy: break;
    }
    return std::make_unique<TransferCase>(p_, t, bytes, seed, host_threads);
  }

 private:
  OpenClPlatform& p_;
  VariantTable<OpenClBusVariant> table_;
};

}  // namespace
}  // namespace hdb::opencl

int main(int argc, char** argv) {
  hdb::opencl::OpenClPlatform platform;
  hdb::opencl::OpenClBus backend(platform);
  return hdb::bus_main(argc, argv, platform, backend);
}
