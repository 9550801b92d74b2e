#pragma once
// A test suite that shares one initialised platform (CUDA, OpenCL) among its tests and skips them,
// with the reason, where the machine has no such device. Only NoDevice skips: any other error in
// set-up is a failure, so a broken GPU machine is never reported as "skipped".
// The environment chooses what the device tests run on, so that scripts/test can run the same tests
// on every OpenCL implementation installed: HDB_TEST_OPENCL_PLATFORM is --platform (an index or a
// word of the platform's name: pocl, intel), and HDB_TEST_REQUIRE_DEVICE=1 makes "no device" a
// failure instead of a skip (a pass over an implementation must not pass by skipping).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "harness/platform.hpp"

namespace hdb::test {

inline Options device_options() {
  Options o;
  if (const char* p = std::getenv("HDB_TEST_OPENCL_PLATFORM"); p && *p) o.platform = p;
  return o;
}

// Initialises `p` on the device the environment names: "" when it runs, else why there is none
// (a failure, not a reason, when HDB_TEST_REQUIRE_DEVICE=1).
inline std::string init_device(Platform& p) {
#ifdef HDB_POCL_CACHE_DIR
  setenv("POCL_CACHE_DIR", HDB_POCL_CACHE_DIR, 0);  // PoCL needs a writable kernel cache
#endif
  try {
    p.init(device_options());
  } catch (const NoDevice& e) {
    const char* required = std::getenv("HDB_TEST_REQUIRE_DEVICE");
    if (required && std::string(required) == "1")
      throw std::runtime_error(std::string("HDB_TEST_REQUIRE_DEVICE=1, but: ") + e.what());
    return e.what();
  }
  return "";
}

template <class PlatformT>
class DeviceSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    platform_ = std::make_unique<PlatformT>();
    skip_.clear();
    failed_.clear();
    try {
      skip_ = init_device(*platform_);
    } catch (const std::runtime_error& e) {
      failed_ = e.what();
    }
  }
  static void TearDownTestSuite() { platform_.reset(); }
  void SetUp() override {
    if (!failed_.empty()) GTEST_FAIL() << failed_;
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  inline static std::unique_ptr<PlatformT> platform_;
  inline static std::string skip_;
  inline static std::string failed_;
};

}  // namespace hdb::test
