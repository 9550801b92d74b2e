#pragma once
// A platform with no device work, for driving the harness in tests.
#include "harness/errors.hpp"
#include "harness/platform.hpp"

namespace hdb::test {

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

 protected:
  std::uint64_t device_memory_bytes() const override { return 1ull << 30; }

 private:
  bool has_device_;
};

}  // namespace hdb::test
