// The access patterns of harness/patterns.hpp on an OpenCL device (kernels/patterns.cl), each the
// best of a few passes timed by profiling events, each kernel's result checked.
#include "runtime/cl_patterns.hpp"

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "harness/errors.hpp"

namespace hdb::opencl {
namespace kernels {
extern const char patterns[];
}

namespace {
constexpr std::size_t kWorkGroup = 64;
constexpr cl_uint kB = 0x01010101u;
}  // namespace

PatternRates measure_patterns(OpenClPlatform& p, std::uint64_t bytes, int passes) {
  return checked("measuring the pattern ceilings", [&] {
    bytes = bytes / 256 * 256;
    const cl_ulong n16 = bytes / 16, words = bytes / 4;
    cl::Context& ctx = p.context_ref();
    cl::CommandQueue& q = p.queue();
    cl::Device& dev = p.device();
    // kernels/patterns.cl, FOR_EACH_WORD: on this 2-core EPYC the blocked loop read 33 GB/s on PoCL
    // (grid-stride: 4.4) and 10.8 GB/s on Intel's CPU runtime (grid-stride: 2.9).
    const bool cpu = (dev.getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0;
    cl::Program& prog = p.program("patterns", kernels::patterns, cpu ? "-DHDB_BLOCKED" : "");
    const std::size_t units = dev.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>();
    const std::size_t wg = std::min(kWorkGroup, p.max_work_group_size());
    const std::size_t global = std::max<std::size_t>(units, 1) * 8 * wg;
    cl::Buffer a = device_buffer(ctx, bytes), b = device_buffer(ctx, bytes), c = device_buffer(ctx, bytes);
    cl::Buffer partial = device_buffer(ctx, global * 8);
    q.enqueueFillBuffer(b, kB, 0, bytes);
    q.enqueueFillBuffer(c, cl_uint{0}, 0, bytes);
    q.finish();
    cl::Kernel read(prog, "pattern_read"), write(prog, "pattern_write"), add(prog, "pattern_add"),
        triad(prog, "pattern_triad"), gather(prog, "pattern_gather");
    set_args("pattern_write", write, a, n16, cl_uint{1});
    set_args("pattern_read", read, a, n16, partial);
    set_args("pattern_add", add, a, b, c, n16);
    set_args("pattern_triad", triad, c, a, b, n16);
    auto run = [&](cl::Kernel& k) {
      cl::Event e;
      q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(wg), nullptr, &e);
      e.wait();
      return event_seconds(e);
    };
    auto best = [&](auto pass) {
      double t = 1e30;
      for (int i = 0; i < passes; ++i) t = std::min(t, pass());
      return t;
    };
    auto sum = [&] {
      std::vector<cl_ulong> v(global);
      q.enqueueReadBuffer(partial, CL_TRUE, 0, global * 8, v.data());
      return std::accumulate(v.begin(), v.end(), cl_ulong{0});
    };
    auto word = [&](const cl::Buffer& buf, cl_ulong i) {
      cl_uint w = 0;
      q.enqueueReadBuffer(buf, CL_TRUE, i * 4, 4, &w);
      return w;
    };
    auto expect = [](bool ok, const std::string& what) {
      if (!ok) throw DeviceError("measuring the pattern ceilings: " + what);
    };
    const double total = static_cast<double>(bytes);
    PatternRates r;
    r[MemoryPattern::Write] = total / best([&] { return run(write); }) / 1e9;
    expect(word(a, 0) == 1 && word(a, words - 1) == 1, "the fill left a word other than 1");
    r[MemoryPattern::Read] = total / best([&] { return run(read); }) / 1e9;
    expect(sum() == words, "the sum of the ones is wrong");
    r[MemoryPattern::Copy] = 2 * total / best([&] {
                               cl::Event e;
                               q.enqueueCopyBuffer(b, c, 0, 0, bytes, nullptr, &e);
                               e.wait();
                               return event_seconds(e);
                             }) /
                             1e9;
    r[MemoryPattern::Add] = 3 * total / best([&] { return run(add); }) / 1e9;
    expect(word(c, 0) == kB + 1 && word(c, words - 1) == kB + 1, "c = a + b is wrong");
    r[MemoryPattern::Triad] = 3 * total / best([&] { return run(triad); }) / 1e9;
    expect(word(c, 0) == 1 + 3 * kB && word(c, words - 1) == 1 + 3 * kB, "a = b + 3c is wrong");
    // The table: a's words, all 1 (the fill): a gather's sum is its accesses times its item's words.
    cl_ulong table = 1;
    while (table * 2 <= words) table *= 2;
    for (cl_uint item : {1u, 8u}) {
      const cl_ulong accesses = words / 16 / item;
      set_args("pattern_gather", gather, a, table / item, accesses, item, partial);
      const double rate = static_cast<double>(accesses) * 4 * item / best([&] { return run(gather); }) / 1e9;
      r[item == 1 ? MemoryPattern::Gather4 : MemoryPattern::Gather32] = rate;
      expect(sum() == accesses * item, "the gather sum of " + std::to_string(item * 4) + "-byte items is wrong");
    }
    return r;
  });
}

}  // namespace hdb::opencl
