#pragma once
// A platform with no device work, for driving the harness in tests.
#include "harness/errors.hpp"
#include "harness/platform.hpp"

#include <stdexcept>
#include <string>

namespace hdb::test {

// What a runtime's own exception looks like to the harness (OpenCL's cl::Error): the platform names it.
struct FakeRuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class FakePlatform : public Platform {
 public:
  explicit FakePlatform(bool has_device = true) : has_device_(has_device) {}
  std::string name() const override { return "fake"; }
  void init(const Options&) override {
    if (!has_device_) throw NoDevice("no fake device (test)");
  }
  nlohmann::json context() const override { return {{"name", "fake device"}}; }
  bool has_transfers() const override { return true; }
  double measure_copy_ceiling() override { return 100.0; }
  std::string describe_runtime_error(const std::exception& e) const override {
    return dynamic_cast<const FakeRuntimeError*>(&e) ? std::string("fake runtime call ") + e.what() + " failed" : "";
  }

 protected:
  std::uint64_t device_memory_bytes() const override { return 1ull << 30; }

 private:
  bool has_device_;
};

}  // namespace hdb::test
