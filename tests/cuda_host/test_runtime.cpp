// Host execution's runtime (src/cuda/runtime/host) against what a GPU does: launch limits and their
// errors, thread and block indices, barriers, warp intrinsics, exited threads, memory checks, the
// CUB stand-ins' protocol and semantics, and faults (a barrier not every thread reaches, an injected
// fault) leaving the sticky error a lost context leaves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "runtime/cuda_check.hpp"
#include "runtime/host/engine.hpp"
#include "runtime/prim.cuh"
#include "runtime/patterns.cuh"

namespace {

namespace prim = hdb::cuda::prim;

__global__ void record_index(unsigned* out) {
  const unsigned block = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  const unsigned thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  const unsigned per_block = blockDim.x * blockDim.y * blockDim.z;
  atomicAdd(&out[block * per_block + thread], 1u);
}

// Reverses each block's slice through shared memory: wrong without the barrier.
__global__ void reverse_in_block(const unsigned* in, unsigned* out) {
  __shared__ unsigned tile[256];
  const unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
  tile[threadIdx.x] = in[i];
  __syncthreads();
  out[i] = tile[blockDim.x - 1 - threadIdx.x];
}

// Threads past n return first; the others still meet at the barrier (as on Volta and later).
__global__ void early_exit_then_barrier(unsigned n, unsigned* out) {
  __shared__ unsigned seen;
  if (threadIdx.x >= n) return;
  if (threadIdx.x == 0) seen = 0;
  __syncthreads();
  atomicAdd(&seen, 1u);
  __syncthreads();
  out[threadIdx.x] = seen;
}

// The order the blocks ran in: each block's first thread takes the next ticket.
__global__ void record_block_order(unsigned* ticket, unsigned* order) {
  if (threadIdx.x == 0) order[atomicAdd(ticket, 1u)] = blockIdx.x + gridDim.x * blockIdx.y;
}

__global__ void count_and_or(unsigned* out) {
  const int odd = threadIdx.x & 1;
  const unsigned count = static_cast<unsigned>(__syncthreads_count(odd));
  const unsigned any = static_cast<unsigned>(__syncthreads_or(threadIdx.x == 7));
  if (threadIdx.x == 0) {  // one writer: every thread writing the same word is a race (ThreadSanitizer said so)
    out[0] = count;
    out[1] = any;
  }
}

// Counting barriers with plain ones between them, as a search loop has (clear, fill, then vote):
// round r's count and vote are of that round's predicate alone.
__global__ void count_between_barriers(unsigned rounds, unsigned* counts, unsigned* votes) {
  for (unsigned r = 0; r < rounds; ++r) {
    __syncthreads();
    __syncthreads();
    const unsigned count = static_cast<unsigned>(__syncthreads_count(threadIdx.x < r % 3));
    __syncthreads();
    const unsigned vote = static_cast<unsigned>(__syncthreads_or(r == 0 && threadIdx.x == 5));
    if (threadIdx.x == 0) {
      counts[r] = count;
      votes[r] = vote;
    }
  }
}

__global__ void warp_ops(unsigned* ballots, unsigned* sums) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned b = __ballot_sync(0xffffffffu, lane % 3 == 0);
  unsigned x = threadIdx.x;
  for (int off = 16; off > 0; off /= 2) x += __shfl_down_sync(0xffffffffu, x, off);
  if (lane == 0) {
    ballots[threadIdx.x / 32] = b;
    sums[threadIdx.x / 32] = x;
  }
}

// Each lane takes lane (l * 5 + 3) % 32's value, a 64-bit one, and in segments of 8 lanes the
// segment's lane (l + 1) % 8; lane 0 of each warp ORs its warp's bit into one word.
__global__ void shuffles(unsigned long long* from, unsigned* seg, unsigned* bits) {
  const unsigned lane = threadIdx.x % 32;
  const unsigned long long mine = (static_cast<unsigned long long>(threadIdx.x) << 40) | threadIdx.x;
  from[threadIdx.x] = __shfl_sync(0xffffffffu, mine, static_cast<int>((lane * 5 + 3) % 32));
  seg[threadIdx.x] = __shfl_sync(0xffffffffu, threadIdx.x, static_cast<int>(lane + 1), 8);
  if (lane == 0) atomicOr(bits, 1u << (threadIdx.x / 32));
}

__global__ void block_scan(const unsigned* in, unsigned* out, unsigned* total) {
  using Scan = prim::BlockScan<unsigned, 128>;
  __shared__ typename Scan::TempStorage tmp;
  unsigned mine = 0, sum = 0;
  Scan(tmp).ExclusiveSum(in[threadIdx.x], mine, sum);
  out[threadIdx.x] = mine;
  if (threadIdx.x == 0) *total = sum;
}

// A bug: lane 0 waits at the block barrier for lanes that wait in the warp's ballot for lane 0.
// (A barrier that only some threads reach while the others return is not one: returned threads no
// longer count, as on Volta and later.)
__global__ void barrier_in_branch(unsigned* out) {
  if (threadIdx.x % 32 == 0) __syncthreads();
  out[threadIdx.x] = __ballot_sync(0xffffffffu, 1);
}

template <class T>
struct Dev {
  explicit Dev(std::size_t n) : buf(n) {}
  hdb::cuda::DeviceBuffer<T> buf;
  T* get() const { return buf.get(); }
  void put(const std::vector<T>& v) {
    HDB_CUDA_CHECK(cudaMemcpy(get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> take(std::size_t n) const { return take_from(get(), n); }
  static std::vector<T> take_from(const T* p, std::size_t n) {
    std::vector<T> v(n);
    HDB_CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
    return v;
  }
};

TEST(CudaHostLaunch, RefusesWhatAGpuRefuses) {
  Dev<unsigned> d(1);
  HDB_LAUNCH(record_index, 1, 1025, 0, nullptr)(d.get());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  HDB_LAUNCH(record_index, 0, 32, 0, nullptr)(d.get());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  HDB_LAUNCH(record_index, dim3(1, 65536), 32, 0, nullptr)(d.get());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  HDB_LAUNCH(record_index, 1, dim3(1, 1, 65), 0, nullptr)(d.get());
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidConfiguration);
  HDB_LAUNCH(record_index, 1, 32, 64 * 1024, nullptr)(d.get());  // dynamic shared memory past 48 KB
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // launch errors are not sticky
  cudaDeviceProp p{};
  ASSERT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  EXPECT_EQ(p.maxThreadsPerBlock, 1024);
  EXPECT_EQ(p.warpSize, 32);
  EXPECT_EQ(p.major, 9);
  EXPECT_NE(std::string(p.name).find("not a GPU"), std::string::npos);
}

TEST(CudaHostLaunch, EveryThreadOfEveryBlockRunsOnceWithItsIndices) {
  const dim3 grid(3, 2, 2), block(10, 3, 2);  // 60 threads: two warps, the second partial
  const std::size_t n = 12 * 60;
  Dev<unsigned> d(n);
  HDB_CUDA_CHECK(cudaMemset(d.get(), 0, n * sizeof(unsigned)));
  for (int launch = 0; launch < 2; ++launch) {  // the second runs without barriers (none needed)
    HDB_LAUNCH(record_index, grid, block, 0, nullptr)(d.get());
    HDB_CUDA_CHECK_LAUNCH("record_index");
  }
  const auto got = d.take(n);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](unsigned c) { return c == 2; }));
}

TEST(CudaHostLaunch, BarriersOrderSharedMemory) {
  const unsigned blocks = 5, threads = 256, n = blocks * threads;
  std::vector<unsigned> in(n);
  std::iota(in.begin(), in.end(), 1u);
  Dev<unsigned> a(n), b(n);
  a.put(in);
  HDB_LAUNCH(reverse_in_block, blocks, threads, 0, nullptr)(a.get(), b.get());
  HDB_CUDA_CHECK_LAUNCH("reverse_in_block");
  const auto got = b.take(n);
  for (unsigned i = 0; i < n; ++i) ASSERT_EQ(got[i], in[(i / threads) * threads + threads - 1 - i % threads]) << i;
}

TEST(CudaHostLaunch, ExitedThreadsNoLongerCountAtBarriers) {
  Dev<unsigned> d(64);
  HDB_LAUNCH(early_exit_then_barrier, 1, 64, 0, nullptr)(37u, d.get());
  HDB_CUDA_CHECK_LAUNCH("early_exit_then_barrier");
  const auto got = d.take(37);
  EXPECT_TRUE(std::all_of(got.begin(), got.end(), [](unsigned c) { return c == 37; }));
}

TEST(CudaHostLaunch, CountingBarriersAndWarpIntrinsics) {
  Dev<unsigned> d(2);
  HDB_LAUNCH(count_and_or, 1, 96, 0, nullptr)(d.get());
  HDB_CUDA_CHECK_LAUNCH("count_and_or");
  EXPECT_EQ(d.take(2), (std::vector<unsigned>{48, 1}));

  constexpr unsigned kRounds = 7;
  Dev<unsigned> counts(kRounds), votes(kRounds);
  HDB_LAUNCH(count_between_barriers, 2, 64, 0, nullptr)(kRounds, counts.get(), votes.get());
  HDB_CUDA_CHECK_LAUNCH("count_between_barriers");
  EXPECT_EQ(counts.take(kRounds), (std::vector<unsigned>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(votes.take(kRounds), (std::vector<unsigned>{1, 0, 0, 0, 0, 0, 0}));

  Dev<unsigned> ballots(4), sums(4);
  HDB_LAUNCH(warp_ops, 1, 128, 0, nullptr)(ballots.get(), sums.get());
  HDB_CUDA_CHECK_LAUNCH("warp_ops");
  for (unsigned w = 0; w < 4; ++w) {
    EXPECT_EQ(ballots.take(4)[w], 0x49249249u);               // lanes 0, 3, 6, ...
    EXPECT_EQ(sums.take(4)[w], 32 * (32 * w) + 31 * 32 / 2);  // lane 0 ends with its warp's sum
  }
}

TEST(CudaHostLaunch, ShuffleFromAnyLaneAndAtomicOr) {
  Dev<unsigned long long> from(128);
  Dev<unsigned> seg(128), bits(1);
  bits.put({0u});
  HDB_LAUNCH(shuffles, 1, 128, 0, nullptr)(from.get(), seg.get(), bits.get());
  HDB_CUDA_CHECK_LAUNCH("shuffles");
  const std::vector<unsigned long long> f = from.take(128);
  const std::vector<unsigned> g = seg.take(128);
  for (unsigned t = 0; t < 128; ++t) {
    const unsigned long long src = t / 32 * 32 + (t % 32 * 5 + 3) % 32;
    EXPECT_EQ(f[t], (src << 40) | src) << "thread " << t;
    EXPECT_EQ(g[t], t / 8 * 8 + (t % 8 + 1) % 8) << "thread " << t;
  }
  EXPECT_EQ(bits.take(1)[0], 0xfu);
}

TEST(CudaHostLaunch, BlockScanIsAnExclusiveSum) {
  std::vector<unsigned> in(128);
  for (unsigned i = 0; i < 128; ++i) in[i] = i % 7;
  Dev<unsigned> a(128), b(128), t(1);
  a.put(in);
  HDB_LAUNCH(block_scan, 1, 128, 0, nullptr)(a.get(), b.get(), t.get());
  HDB_CUDA_CHECK_LAUNCH("block_scan");
  std::vector<unsigned> want(128);
  std::exclusive_scan(in.begin(), in.end(), want.begin(), 0u);
  EXPECT_EQ(b.take(128), want);
  EXPECT_EQ(t.take(1)[0], std::accumulate(in.begin(), in.end(), 0u));
}

TEST(CudaHostMemory, CopiesAndFreesAreCheckedAgainstAllocations) {
  Dev<unsigned> d(16);
  std::vector<unsigned> host(32);
  EXPECT_EQ(cudaMemcpy(d.get(), host.data(), 17 * sizeof(unsigned), cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), host.data() + 16, 4, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemset(d.get() + 8, 0, 9 * sizeof(unsigned)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(d.get() + 1), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(d.get() + 8, host.data(), 8 * sizeof(unsigned), cudaMemcpyHostToDevice), cudaSuccess);
  std::size_t free_b = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_b, &total), cudaSuccess);
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, free_b + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}

TEST(CudaHostPrim, TemporaryStorageFollowsCubsProtocol) {
  const std::size_t n = 1000;
  Dev<std::uint32_t> in(n), out(n);
  std::size_t bytes = 0;
  ASSERT_EQ(prim::DeviceRadixSort::SortKeys(nullptr, bytes, in.get(), out.get(), n), cudaSuccess);
  ASSERT_GT(bytes, 0u);
  std::size_t fewer = bytes - 1;
  Dev<char> enough(bytes), short_of(bytes - 1);
  EXPECT_EQ(prim::DeviceRadixSort::SortKeys(enough.get(), fewer, in.get(), out.get(), n), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  // The size claimed, but not the memory behind it.
  EXPECT_EQ(prim::DeviceRadixSort::SortKeys(short_of.get(), bytes, in.get(), out.get(), n), cudaErrorInvalidValue);
  std::vector<char> host(bytes);
  EXPECT_EQ(prim::DeviceRadixSort::SortKeys(host.data(), bytes, in.get(), out.get(), n), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  HDB_CUDA_CHECK(cudaMemset(in.get(), 0, n * sizeof(std::uint32_t)));
  EXPECT_EQ(prim::DeviceRadixSort::SortKeys(enough.get(), bytes, in.get(), out.get(), n), cudaSuccess);
}

TEST(CudaHostPrim, SortScanSelectAndReduceMatchCub) {
  const std::vector<std::uint32_t> keys{0x30, 0x21, 0x12, 0x31, 0x20, 0x11};
  const std::size_t n = keys.size();
  Dev<std::uint32_t> k(n), k2(n), v(n), v2(n);
  k.put(keys);
  v.put({0, 1, 2, 3, 4, 5});
  prim::DoubleBuffer<std::uint32_t> dk(k.get(), k2.get()), dv(v.get(), v2.get());
  std::size_t bytes = 0;
  ASSERT_EQ(prim::DeviceRadixSort::SortPairs(nullptr, bytes, dk, dv, n, 4, 8), cudaSuccess);
  Dev<char> temp(bytes);
  ASSERT_EQ(prim::DeviceRadixSort::SortPairs(temp.get(), bytes, dk, dv, n, 4, 8), cudaSuccess);
  EXPECT_EQ(dk.Current(), k2.get());  // the result is where the selector says, not where it began
  // Bits 4..7 only: 0x1?, 0x2?, 0x3? in their input order.
  EXPECT_EQ(Dev<std::uint32_t>::take_from(dk.Current(), n),
            (std::vector<std::uint32_t>{0x12, 0x11, 0x21, 0x20, 0x30, 0x31}));
  EXPECT_EQ(Dev<std::uint32_t>::take_from(dv.Current(), n), (std::vector<std::uint32_t>{2, 5, 1, 4, 0, 3}));

  Dev<std::uint64_t> sums(n);
  ASSERT_EQ(prim::DeviceScan::ExclusiveSum(nullptr, bytes, k.get(), sums.get(), n), cudaSuccess);
  Dev<char> t2(bytes);
  ASSERT_EQ(prim::DeviceScan::ExclusiveSum(t2.get(), bytes, k.get(), sums.get(), n), cudaSuccess);
  std::vector<std::uint64_t> want(n);
  std::exclusive_scan(keys.begin(), keys.end(), want.begin(), std::uint64_t{0});
  EXPECT_EQ(sums.take(n), want);

  Dev<std::uint32_t> sel(n), num(1);
  auto odd = [](std::uint32_t x) { return (x & 1) != 0; };
  ASSERT_EQ(prim::DeviceSelect::If(nullptr, bytes, k.get(), sel.get(), num.get(), n, odd), cudaSuccess);
  Dev<char> t3(bytes);
  ASSERT_EQ(prim::DeviceSelect::If(t3.get(), bytes, k.get(), sel.get(), num.get(), n, odd), cudaSuccess);
  EXPECT_EQ(num.take(1)[0], 3u);
  EXPECT_EQ(sel.take(3), (std::vector<std::uint32_t>{0x21, 0x31, 0x11}));

  // UniqueByKey under an equality of the caller's: the first key of each run equal in the low
  // nibble (0x30 0x20 | 0x21 0x31 | 0x12 | 0x11 0x21 at the end), and its value.
  const std::vector<std::uint32_t> runs{0x30, 0x20, 0x21, 0x31, 0x12, 0x11, 0x21};
  Dev<std::uint32_t> rk(runs.size()), rv(runs.size()), uk(runs.size()), uv(runs.size());
  rk.put(runs);
  rv.put({0, 1, 2, 3, 4, 5, 6});
  auto same_nibble = [](std::uint32_t a, std::uint32_t b) { return (a & 0xf) == (b & 0xf); };
  ASSERT_EQ(prim::DeviceSelect::UniqueByKey(nullptr, bytes, rk.get(), rv.get(), uk.get(), uv.get(), num.get(),
                                            runs.size(), same_nibble),
            cudaSuccess);
  Dev<char> t5(bytes);
  ASSERT_EQ(prim::DeviceSelect::UniqueByKey(t5.get(), bytes, rk.get(), rv.get(), uk.get(), uv.get(), num.get(),
                                            runs.size(), same_nibble),
            cudaSuccess);
  EXPECT_EQ(num.take(1)[0], 4u);
  EXPECT_EQ(uk.take(4), (std::vector<std::uint32_t>{0x30, 0x21, 0x12, 0x11}));
  EXPECT_EQ(uv.take(4), (std::vector<std::uint32_t>{0, 2, 4, 5}));

  Dev<std::uint32_t> most(1);
  auto max = [](std::uint32_t a, std::uint32_t b) { return a < b ? b : a; };
  ASSERT_EQ(prim::DeviceReduce::Reduce(nullptr, bytes, k.get(), most.get(), n, max, 0u), cudaSuccess);
  Dev<char> t4(bytes);
  ASSERT_EQ(prim::DeviceReduce::Reduce(t4.get(), bytes, k.get(), most.get(), n, max, 0u), cudaSuccess);
  EXPECT_EQ(most.take(1)[0], 0x31u);
}

// Faults leave the sticky error, so each runs in a child process of its own.
TEST(CudaHostFaultDeathTest, BarrierThatNotEveryThreadReachesIsAFault) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        Dev<unsigned> d(64);
        HDB_LAUNCH(barrier_in_branch, 1, 64, 0, nullptr)(d.get());
        const cudaError_t launch = cudaGetLastError();
        const cudaError_t later = cudaMemset(d.get(), 0, 4);  // the context is lost: sticky
        std::exit(launch == cudaErrorLaunchFailure && later == cudaErrorLaunchFailure ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "barrier_in_branch faulted: .*wait at a barrier that the others never reach");
}

TEST(CudaHostFaultDeathTest, InjectedFaultIsStickyAndThrowsDeviceLost) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        setenv("HDB_CUDA_HOST_FAULT", "2", 1);
        Dev<unsigned> d(32);
        HDB_LAUNCH(record_index, 1, 32, 0, nullptr)(d.get());
        const cudaError_t first = cudaGetLastError();
        HDB_LAUNCH(record_index, 1, 32, 0, nullptr)(d.get());
        bool lost = false;
        try {
          HDB_CUDA_CHECK(cudaDeviceSynchronize());
        } catch (const hdb::DeviceLost&) {
          lost = true;
        }
        std::exit(first == cudaSuccess && lost ? 3 : 4);
      },
      ::testing::ExitedWithCode(3), "fault injected by HDB_CUDA_HOST_FAULT");
}

// HDB_CUDA_HOST_BLOCKS: every block runs once in every order; reverse is reverse; shuffled never runs
// a block right after its neighbour (from 7 blocks up).
TEST(CudaHostBlockOrder, EveryOrderIsAPermutation) {
  using hdb::cuda::host::engine::BlockOrder;
  for (BlockOrder::Kind kind : {BlockOrder::Kind::in_order, BlockOrder::Kind::reverse, BlockOrder::Kind::shuffled})
    for (std::uint64_t n : {1ull, 2ull, 3ull, 4ull, 6ull, 7ull, 64ull, 100ull, 255ull, 1000ull, 4096ull, 65537ull})
      for (std::uint64_t seed : {0ull, 1ull, 2ull, 17ull, 123456789ull}) {
        const BlockOrder o = BlockOrder::make(kind, n, seed);
        std::vector<bool> seen(n);
        for (std::uint64_t i = 0; i < n; ++i) {
          const std::uint64_t b = o.at(i);
          ASSERT_LT(b, n);
          ASSERT_FALSE(seen[b]) << "block " << b << " twice; n " << n << " seed " << seed;
          seen[b] = true;
          if (kind == BlockOrder::Kind::reverse) {
            ASSERT_EQ(b, n - 1 - i);
          }
          if (kind == BlockOrder::Kind::shuffled && n >= 7 && i > 0) {
            const std::uint64_t prev = o.at(i - 1);
            ASSERT_NE(b, prev + 1) << "neighbours in a row; n " << n << " seed " << seed;
          }
        }
      }
}

// Each order end to end (a setting is read once per process, so each runs in a child of its own):
// two launches of 300 blocks; 0 where each ran its blocks once each, in `order`.
int run_blocks_in_order(const char* order) {
  constexpr unsigned kBlocks = 300;
  setenv("HDB_CUDA_HOST_BLOCKS", order, 1);
  Dev<unsigned> ticket(1), ran(kBlocks);
  std::vector<std::vector<unsigned>> orders;
  for (int launch = 0; launch < 2; ++launch) {
    HDB_CUDA_CHECK(cudaMemset(ticket.get(), 0, sizeof(unsigned)));
    HDB_LAUNCH(record_block_order, dim3(20, 15), 64, 0, nullptr)(ticket.get(), ran.get());
    HDB_CUDA_CHECK_LAUNCH("record_block_order");
    orders.push_back(ran.take(kBlocks));
  }
  std::vector<unsigned> in_order(kBlocks), reverse(kBlocks);
  std::iota(in_order.begin(), in_order.end(), 0u);
  std::iota(reverse.rbegin(), reverse.rend(), 0u);
  bool ok = true;
  for (const auto& got : orders) {
    std::vector<unsigned> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    ok = ok && sorted == in_order;
  }
  const std::string o = order;
  if (o == "in-order") ok = ok && orders[0] == in_order;
  if (o == "reverse") ok = ok && orders[0] == reverse;
  if (o == "shuffled") ok = ok && orders[0] != in_order && orders[0] != reverse && orders[0] != orders[1];
  return ok ? 3 : 4;
}

TEST(CudaHostBlockOrderDeathTest, LaunchesRunTheirBlocksInTheChosenOrder) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (const char* order : {"in-order", "reverse", "shuffled"}) {
    SCOPED_TRACE(order);
    EXPECT_EXIT(std::exit(run_blocks_in_order(order)), ::testing::ExitedWithCode(3), "");
  }
}

}  // namespace

// The pattern kernels of the GPU's ceilings (runtime/patterns.cuh, issue 46): host execution never
// measures them for itself, so this is where they run before a GPU session does; each checks its
// own result and throws on a wrong one.
TEST(CudaHostLaunch, ThePatternKernelsDoTheirWork) {
  const hdb::PatternRates r = hdb::cuda::measure_patterns(256 << 10, 2, 1);
  for (hdb::MemoryPattern p : hdb::kAllPatterns) EXPECT_GT(r[p], 0) << hdb::to_string(p);
}
