#include "runtime/patterns.cuh"

#include <algorithm>
#include <cstdint>
#include <string>

#include "harness/errors.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/launch.cuh"
#include "workloads/random.hpp"

namespace hdb::cuda {
namespace {

constexpr int kThreads = 256;
constexpr unsigned kTriadScale = 3;

// The position of access i: splitmix64 of i (a constexpr host function, callable here with
// --expt-relaxed-constexpr), as the CPU's gathers.
__device__ unsigned long long scatter(unsigned long long i) { return splitmix64(i); }

// One atomic per warp: the sum is the check, not the work.
__device__ void add_to(unsigned long long* sum, unsigned long long s) {
  for (int d = 16; d > 0; d /= 2) s += __shfl_down_sync(0xffffffffu, s, d);
  if ((threadIdx.x & 31) == 0) atomicAdd(sum, s);
}

__device__ std::size_t first() { return blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; }
__device__ std::size_t stride() { return static_cast<std::size_t>(gridDim.x) * blockDim.x; }

__global__ void read_kernel(const uint4* __restrict__ a, std::size_t n16, unsigned long long* sum) {
  unsigned long long s = 0;
  for (std::size_t i = first(); i < n16; i += stride()) {
    const uint4 v = a[i];
    s += static_cast<unsigned long long>(v.x) + v.y + v.z + v.w;
  }
  add_to(sum, s);
}

__global__ void write_kernel(uint4* __restrict__ a, std::size_t n16, unsigned value) {
  for (std::size_t i = first(); i < n16; i += stride()) a[i] = make_uint4(value, value, value, value);
}

__global__ void add_kernel(const uint4* __restrict__ a, const uint4* __restrict__ b, uint4* __restrict__ c,
                           std::size_t n16) {
  for (std::size_t i = first(); i < n16; i += stride()) {
    const uint4 x = a[i], y = b[i];
    c[i] = make_uint4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
  }
}

__global__ void triad_kernel(uint4* __restrict__ a, const uint4* __restrict__ b, const uint4* __restrict__ c,
                             std::size_t n16) {
  for (std::size_t i = first(); i < n16; i += stride()) {
    const uint4 x = b[i], y = c[i];
    a[i] =
        make_uint4(x.x + kTriadScale * y.x, x.y + kTriadScale * y.y, x.z + kTriadScale * y.z, x.w + kTriadScale * y.w);
  }
}

// items: a power of two; an item of 8 words is two aligned 16-byte loads (one 32-byte sector).
template <int ItemWords>
__global__ void gather_kernel(const unsigned* __restrict__ table, std::size_t items, std::size_t accesses,
                              unsigned long long* sum) {
  unsigned long long s = 0;
  for (std::size_t i = first(); i < accesses; i += stride()) {
    const std::size_t at = static_cast<std::size_t>(scatter(i) & (items - 1)) * ItemWords;
    if constexpr (ItemWords == 8) {
      const uint4* p = reinterpret_cast<const uint4*>(table + at);
      const uint4 x = p[0], y = p[1];
      s += static_cast<unsigned long long>(x.x) + x.y + x.z + x.w + y.x + y.y + y.z + y.w;
    } else {
      s += table[at];
    }
  }
  add_to(sum, s);
}

template <class Launch>
double best_of(int passes, Launch&& launch) {
  double best = 1e30;
  for (int i = 0; i < passes; ++i) {
    PhaseTimer t;
    t.start();
    launch();
    HDB_CUDA_CHECK(cudaGetLastError());
    best = std::min(best, t.stop());
  }
  return best;
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw DeviceError("measuring the pattern ceilings: " + what);
}

}  // namespace

PatternRates measure_patterns(std::size_t bytes, int sm_count, int passes) {
  bytes = bytes / 256 * 256;
  const std::size_t n16 = bytes / 16, words = bytes / 4;
  DeviceBuffer<uint4> a(n16), b(n16), c(n16);
  DeviceBuffer<unsigned long long> sum(1);
  HDB_CUDA_CHECK(cudaMemset(a.get(), 0, bytes));  // every word of a: 0 ...
  HDB_CUDA_CHECK(cudaMemset(b.get(), 1, bytes));  // ... of b: 0x01010101
  HDB_CUDA_CHECK(cudaMemset(c.get(), 0, bytes));
  const int blocks = (sm_count > 0 ? sm_count : 1) * 8;
  const double total = static_cast<double>(bytes);
  auto sum_of = [&](auto launch) {
    HDB_CUDA_CHECK(cudaMemset(sum.get(), 0, sizeof(unsigned long long)));
    launch();
    HDB_CUDA_CHECK(cudaGetLastError());
    unsigned long long s = 0;
    HDB_CUDA_CHECK(cudaMemcpy(&s, sum.get(), sizeof s, cudaMemcpyDeviceToHost));
    return s;
  };
  auto word = [&](const DeviceBuffer<uint4>& buf, std::size_t i) {
    unsigned w = 0;
    HDB_CUDA_CHECK(cudaMemcpy(&w, reinterpret_cast<const unsigned*>(buf.get()) + i, 4, cudaMemcpyDeviceToHost));
    return w;
  };
  PatternRates r;
  unsigned long long* s = sum.get();
  auto write = [&] { HDB_LAUNCH(write_kernel, blocks, kThreads, 0, nullptr)(a.get(), n16, 1u); };
  auto read = [&] { HDB_LAUNCH(read_kernel, blocks, kThreads, 0, nullptr)(a.get(), n16, s); };
  auto copy = [&] { HDB_CUDA_CHECK(cudaMemcpyAsync(c.get(), b.get(), bytes, cudaMemcpyDeviceToDevice)); };
  auto add = [&] { HDB_LAUNCH(add_kernel, blocks, kThreads, 0, nullptr)(a.get(), b.get(), c.get(), n16); };
  auto triad = [&] { HDB_LAUNCH(triad_kernel, blocks, kThreads, 0, nullptr)(c.get(), a.get(), b.get(), n16); };
  // The table: a's words, all 1 (the fill): a gather's sum is its accesses times its item's words.
  std::size_t table = 1;
  while (table * 2 <= words) table *= 2;
  const auto* t = reinterpret_cast<const unsigned*>(a.get());
  const std::size_t g4 = words / 16, g32 = words / 16 / 8;
  auto gather4 = [&] { HDB_LAUNCH(gather_kernel<1>, blocks, kThreads, 0, nullptr)(t, table, g4, s); };
  auto gather32 = [&] { HDB_LAUNCH(gather_kernel<8>, blocks, kThreads, 0, nullptr)(t, table / 8, g32, s); };
  constexpr unsigned kB = 0x01010101u;
  auto both_ends = [&](const DeviceBuffer<uint4>& buf, unsigned want) {
    return word(buf, 0) == want && word(buf, words - 1) == want;
  };
  r[MemoryPattern::Write] = total / best_of(passes, write) / 1e9;
  expect(both_ends(a, 1), "the fill left a word other than 1");
  r[MemoryPattern::Read] = total / best_of(passes, read) / 1e9;
  expect(sum_of(read) == words, "the sum of the ones is wrong");
  r[MemoryPattern::Copy] = 2 * total / best_of(passes, copy) / 1e9;
  r[MemoryPattern::Add] = 3 * total / best_of(passes, add) / 1e9;
  expect(both_ends(c, kB + 1), "c = a + b is wrong");
  r[MemoryPattern::Triad] = 3 * total / best_of(passes, triad) / 1e9;
  expect(both_ends(c, 1 + kTriadScale * kB), "a = b + 3c is wrong");
  r[MemoryPattern::Gather4] = static_cast<double>(g4) * 4 / best_of(passes, gather4) / 1e9;
  expect(sum_of(gather4) == g4, "the gather4 sum is wrong");
  r[MemoryPattern::Gather32] = static_cast<double>(g32) * 32 / best_of(passes, gather32) / 1e9;
  expect(sum_of(gather32) == 8 * g32, "the gather32 sum is wrong");
  return r;
}

}  // namespace hdb::cuda
