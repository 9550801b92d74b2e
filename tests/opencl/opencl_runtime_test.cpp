// What the OpenCL backends rely on from an implementation, checked on the one selected: profiling
// times are read only for completed commands (strict implementations refuse the others), a command
// that has none is an error naming it, --platform selects by index or by name, and an OpenCL error
// that escapes a backend is reported with its code's name.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "common/device_suite.hpp"
#include "harness/errors.hpp"
#include "runtime/cl_platform.hpp"
#include "sort.hpp"

namespace hdb::opencl::kernels {
extern const char ra[];
extern const char ngram[];
}  // namespace hdb::opencl::kernels

namespace hdb::opencl {
namespace {

class OpenClRuntime : public test::DeviceSuite<OpenClPlatform> {};

std::vector<cl::Platform> all_platforms() {
  std::vector<cl::Platform> v;
  cl::Platform::get(&v);
  return v;
}

TEST_F(OpenClRuntime, ProfilingWaitsForACommandStillRunning) {
  // A large fill enqueued without waiting: its times are read while (or before) it runs, which a
  // strict implementation answers with CL_PROFILING_INFO_NOT_AVAILABLE unless the reader waits.
  const std::uint64_t bytes = std::min<std::uint64_t>(64ull << 20, platform_->max_alloc_bytes());
  cl::Buffer b = device_buffer(platform_->context_ref(), bytes);
  std::vector<cl::Event> ev(4);
  for (cl::Event& e : ev) platform_->queue().enqueueFillBuffer(b, cl_uint{7}, 0, bytes, nullptr, &e);
  const double first = event_seconds(ev.front());
  const double span = event_span(ev.front(), ev.back());
  EXPECT_GT(first, 0.0);
  EXPECT_GE(span, first);
  platform_->queue().finish();
}

TEST_F(OpenClRuntime, ProfilingOfAUserEventIsANamedError) {
  cl::UserEvent u(platform_->context_ref());
  try {
    event_seconds(u);
    FAIL() << "a user event has no profiling times";
  } catch (const DeviceError& e) {
    EXPECT_NE(std::string(e.what()).find("user event"), std::string::npos) << e.what();
  }
  u.setStatus(CL_COMPLETE);
}

TEST_F(OpenClRuntime, ProfilingOnAQueueWithoutItNamesTheCode) {
  cl::CommandQueue plain(platform_->context_ref(), platform_->device(), 0);
  cl::Buffer b = device_buffer(platform_->context_ref(), 4096);
  cl::Event e;
  plain.enqueueFillBuffer(b, cl_uint{1}, 0, 4096, nullptr, &e);
  plain.finish();
  try {
    event_seconds(e);
    FAIL() << "a queue without CL_QUEUE_PROFILING_ENABLE has no profiling times";
  } catch (const DeviceError& err) {
    std::string m = err.what();
    EXPECT_NE(m.find("CL_PROFILING_INFO_NOT_AVAILABLE"), std::string::npos) << m;
    EXPECT_NE(m.find("buffer fill"), std::string::npos) << m;
  }
}

TEST_F(OpenClRuntime, EscapedErrorsNameTheirCode) {
  cl::Error raw(CL_INVALID_WORK_GROUP_SIZE, "clEnqueueNDRangeKernel");
  EXPECT_EQ(platform_->describe_runtime_error(raw),
            "OpenCL call clEnqueueNDRangeKernel failed with CL_INVALID_WORK_GROUP_SIZE (-54)");
  EXPECT_EQ(platform_->describe_runtime_error(std::runtime_error("other")), "");
}

TEST_F(OpenClRuntime, ContextNamesTheImplementation) {
  nlohmann::json c = platform_->context();
  const std::string impl = c.at("implementation");
  ASSERT_FALSE(impl.empty());
  EXPECT_TRUE(std::all_of(impl.begin(), impl.end(), [](unsigned char ch) {
    return std::isalnum(ch) && !std::isupper(ch);
  })) << impl;
  EXPECT_FALSE(c.at("driver_version").get<std::string>().empty());
}

TEST_F(OpenClRuntime, PlatformSelectedByIndexOrByItsName) {
  std::vector<cl::Platform> platforms = all_platforms();
  for (std::size_t i = 0; i < platforms.size(); ++i) {
    OpenClPlatform by_index, by_name;
    Options o;
    o.platform = std::to_string(i);
    try {
      by_index.init(o);
    } catch (const NoDevice&) {
      continue;  // a platform without devices
    }
    o.platform = implementation_name(platforms[i]);
    std::size_t same = 0;
    for (const cl::Platform& p : platforms) same += implementation_name(p) == o.platform;
    if (same != 1) continue;  // two platforms of one implementation: only the index tells them apart
    by_name.init(o);
    EXPECT_EQ(by_name.context().at("platform"), by_index.context().at("platform"));
  }
}

TEST_F(OpenClRuntime, PlatformThatSelectsNothingIsRefused) {
  OpenClPlatform p;
  Options o;
  o.platform = "no-such-implementation";
  try {
    p.init(o);
    FAIL() << "a name no platform has must not select one";
  } catch (const NoDevice& e) {
    EXPECT_NE(std::string(e.what()).find("found: 0 '"), std::string::npos) << e.what();
  }
  o.platform = std::to_string(all_platforms().size());
  EXPECT_THROW(p.init(o), UsageError);
}

TEST_F(OpenClRuntime, KernelsFitTheLimitsTheImplementationReports) {
  // The RA kernels are compiled for one work-group size (-DWG: the paper's 256, or the device's limit
  // below it) and the n-gram kernel requires 256; a kernel's own limit (CL_KERNEL_WORK_GROUP_SIZE,
  // lowered by its registers and local memory) may be below the device's, differently on each
  // implementation (PoCL 4096 for the device, Intel's CPU runtime 8192). Every kernel must accept the
  // size it is launched with and fit the device's local memory.
  const std::size_t wg = preferred_work_group(*platform_);
  const cl_ulong local = platform_->device().getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  struct Program {
    std::string name;
    const char* source;
    std::string options;
    std::size_t wg;
  };
  std::vector<Program> programs = {{"ra32", kernels::ra, "-DWG=" + std::to_string(wg) + " -DKW=1", wg},
                                   {"ra64", kernels::ra, "-DWG=" + std::to_string(wg) + " -DKW=2", wg}};
  if (platform_->max_work_group_size() >= 256) programs.push_back({"ngram", kernels::ngram, "", 256});
  std::size_t checked_kernels = 0;
  for (const Program& pr : programs) {
    cl::Program& prog = platform_->program("limits-" + pr.name, pr.source, pr.options);
    std::string names = prog.getInfo<CL_PROGRAM_KERNEL_NAMES>();
    for (std::size_t at = 0; at < names.size();) {
      std::size_t end = names.find(';', at);
      std::string name = names.substr(at, end == std::string::npos ? std::string::npos : end - at);
      at = end == std::string::npos ? names.size() : end + 1;
      if (name.empty()) continue;
      cl::Kernel k(prog, name.c_str());
      EXPECT_GE(k.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(platform_->device()), pr.wg) << pr.name << " " << name;
      EXPECT_LE(k.getWorkGroupInfo<CL_KERNEL_LOCAL_MEM_SIZE>(platform_->device()), local) << pr.name << " " << name;
      ++checked_kernels;
    }
  }
  EXPECT_GT(checked_kernels, 10u);
}

}  // namespace
}  // namespace hdb::opencl
