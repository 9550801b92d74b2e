#pragma once
// A test suite that shares one initialised platform (CUDA, OpenCL) among its tests and skips them,
// with the reason, where the machine has no such device. Only NoDevice skips: any other error in
// set-up is a failure, so a broken GPU machine is never reported as "skipped".
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "harness/errors.hpp"
#include "harness/options.hpp"

namespace hdb::test {

template <class PlatformT>
class DeviceSuite : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
#ifdef HDB_POCL_CACHE_DIR
    setenv("POCL_CACHE_DIR", HDB_POCL_CACHE_DIR, 0);  // PoCL needs a writable kernel cache
#endif
    platform_ = std::make_unique<PlatformT>();
    skip_.clear();
    try {
      platform_->init(Options{});
    } catch (const NoDevice& e) {
      skip_ = e.what();
    }
  }
  static void TearDownTestSuite() { platform_.reset(); }
  void SetUp() override {
    if (!skip_.empty()) GTEST_SKIP() << skip_;
  }

  inline static std::unique_ptr<PlatformT> platform_;
  inline static std::string skip_;
};

}  // namespace hdb::test
