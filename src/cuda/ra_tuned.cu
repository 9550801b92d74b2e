// The tuned variant of the streaming primitives (project, reduce, add/subtract/multiply): one
// kernel each over a grid sized to the GPU (a few blocks per SM, grid-stride loops), 16-byte
// loads and stores where the tuple layout lets a thread own whole 16-byte words, a scalar tail
// for the rows (or words) left over, and no shared-memory staging. Reduce folds per thread in
// 64 bits, across the warp with shuffles, and ends with one atomic per block and attribute.
#include <algorithm>
#include <cstdint>

#include "ra_device.cuh"

namespace hdb::ra::cuda {
namespace {

constexpr int kBlocksPerSm = 2048 / kBlock;  // a full SM of threads (fewer where registers run out)

__host__ __device__ constexpr int gcd(int a, int b) { return b == 0 ? a : gcd(b, a % b); }
__host__ __device__ constexpr int lcm(int a, int b) { return a / gcd(a, b) * b; }

// Blocks of kBlock threads for `items` units of work: at least one, at most as many as the GPU
// holds at once (SMs x the kernel's resident blocks per SM, from the occupancy calculator and
// cached, so the first call pays for it), so that every block of the grid-stride loop runs in the
// same wave and none waits for a second one.
template <class Kernel>
std::uint32_t stream_grid(CudaRa::State& s, Kernel kernel, std::uint64_t items) {
  int& per_sm = s.resident_blocks[reinterpret_cast<const void*>(kernel)];
  if (per_sm == 0) {
    HDB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0));
    per_sm = std::max(1, std::min(per_sm, kBlocksPerSm));
  }
  const std::uint64_t sms = s.platform.sm_count() > 0 ? static_cast<std::uint64_t>(s.platform.sm_count()) : 132;
  const std::uint64_t want = (items + kBlock - 1) / kBlock;
  std::uint64_t most = sms * static_cast<std::uint64_t>(per_sm);
  if (s.max_grid) most = std::min<std::uint64_t>(most, s.max_grid);
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, std::min(want, most)));
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }

__device__ __forceinline__ std::uint64_t thread_index() {
  return static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::uint64_t thread_count() { return static_cast<std::uint64_t>(gridDim.x) * blockDim.x; }

__device__ __forceinline__ void unpack(const uint4& v, std::uint32_t* t) {
  t[0] = v.x;
  t[1] = v.y;
  t[2] = v.z;
  t[3] = v.w;
}

// t[col] for a run-time col < W, without indexing the register array at run time.
template <int W>
__device__ __forceinline__ std::uint32_t pick(const std::uint32_t* t, std::uint32_t col) {
  std::uint32_t v = t[0];
#pragma unroll
  for (int k = 1; k < W; ++k)
    if (col == static_cast<std::uint32_t>(k)) v = t[k];
  return v;
}

// ---- project ----------------------------------------------------------------------------------

// The V uint4s each lane of a warp owns, lane l's at l * V .. l * V + V - 1 of the warp's 32 * V,
// moved through the warp's `stage` in shared memory so that every global access of the warp reads or
// writes 32 consecutive uint4s (512 bytes, 16 whole sectors): a thread reading its own V consecutive
// uint4s would make each request span 32 * V of them for 32 (issue 44: 60 % of the sectors used).
// Global indices from `base`, those at or beyond `limit` skipped; every lane of the warp calls.
template <int V>
__device__ __forceinline__ void warp_load(const uint4* src, std::uint64_t base, std::uint64_t limit, uint4* stage,
                                          unsigned lane) {
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (base + k * 32 + lane < limit) stage[k * 32 + lane] = src[base + k * 32 + lane];
  __syncwarp();
}
template <int V>
__device__ __forceinline__ void warp_store(uint4* dst, std::uint64_t base, std::uint64_t limit, const uint4* stage,
                                           unsigned lane) {
  __syncwarp();
#pragma unroll
  for (int k = 0; k < V; ++k)
    if (base + k * 32 + lane < limit) dst[base + k * 32 + lane] = stage[k * 32 + lane];
}

// A thread owns G consecutive rows: G * W input words and G * NC output words, both multiples of
// four, so it handles whole uint4s; where it owns more than one, they go through shared memory (warp_load,
// warp_store). The warp's lanes take consecutive groups and loop together. The n % G rows left over go
// one per thread.
template <int W, int NC>
__global__ void __launch_bounds__(kBlock) project_vec(const std::uint32_t* __restrict__ in, std::uint64_t n,
                                                      std::uint32_t packed, std::uint32_t* __restrict__ out) {
  constexpr int G = lcm(4 / gcd(W, 4), 4 / gcd(NC, 4));
  constexpr int IV = G * W / 4, OV = G * NC / 4;
  constexpr int kStaged = IV > OV ? IV : OV;
  __shared__ uint4 stage_all[kBlock / 32][kStaged > 1 ? 32 * kStaged : 1];
  std::uint32_t col[NC];
#pragma unroll
  for (int c = 0; c < NC; ++c) col[c] = (packed >> (4 * c)) & 15u;
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  uint4* out4 = reinterpret_cast<uint4*>(out);
  const std::uint64_t groups = n / G;
  const unsigned lane = threadIdx.x % 32;
  uint4* stage = stage_all[threadIdx.x / 32];
  // Host execution runs a kernel without barriers once its first launch made none; a first launch
  // with fewer rows than a group would make none here, so every launch of a staged kernel makes one.
  if constexpr (kStaged > 1) __syncwarp();
  for (std::uint64_t g0 = thread_index() - lane; g0 < groups; g0 += thread_count()) {
    const std::uint64_t g = g0 + lane;
    const bool mine = g < groups;
    std::uint32_t t[G * W] = {};
    if constexpr (IV > 1) {
      warp_load<IV>(in4, g0 * IV, groups * IV, stage, lane);
#pragma unroll
      for (int v = 0; v < IV; ++v) unpack(stage[lane * IV + v], t + 4 * v);
    } else if (mine) {
      unpack(in4[g], t);
    }
    std::uint32_t o[G * NC];
#pragma unroll
    for (int r = 0; r < G; ++r)
#pragma unroll
      for (int c = 0; c < NC; ++c) o[r * NC + c] = pick<W>(t + r * W, col[c]);
    if constexpr (OV > 1) {
      if constexpr (IV > 1) __syncwarp();  // every lane has read its input from the stage
#pragma unroll
      for (int v = 0; v < OV; ++v)
        stage[lane * OV + v] = make_uint4(o[4 * v], o[4 * v + 1], o[4 * v + 2], o[4 * v + 3]);
      warp_store<OV>(out4, g0 * OV, groups * OV, stage, lane);
    } else if (mine) {
      out4[g] = make_uint4(o[0], o[1], o[2], o[3]);
    }
    if constexpr (kStaged > 1) __syncwarp();  // the stage is free for the next round
  }
  const std::uint64_t row = groups * G + thread_index();
  if (row < n)
#pragma unroll
    for (int c = 0; c < NC; ++c) out[row * NC + c] = in[row * W + col[c]];
}

// Any width: one row per thread and iteration, scalar words.
__global__ void __launch_bounds__(kBlock)
    project_scalar(const std::uint32_t* __restrict__ in, std::uint64_t n, std::uint32_t w, std::uint32_t nc,
                   std::uint32_t packed, std::uint32_t* __restrict__ out) {
  for (std::uint64_t i = thread_index(); i < n; i += thread_count())
    for (std::uint32_t c = 0; c < nc; ++c) out[i * nc + c] = in[i * w + ((packed >> (4 * c)) & 15u)];
}

template <int W, int NC>
void launch_project_vec(CudaRa::State& s, const std::uint32_t* in, std::uint64_t n, std::uint32_t packed,
                        std::uint32_t* out) {
  constexpr int G = lcm(4 / gcd(W, 4), 4 / gcd(NC, 4));
  // Enough threads for the groups, and at least the tail's rows (fewer than G).
  const auto kernel = project_vec<W, NC>;
  HDB_LAUNCH(kernel, stream_grid(s, kernel, std::max<std::uint64_t>(n / G, G)), kBlock, 0, s.stream.get())
  (in, n, packed, out);
  HDB_CUDA_CHECK_LAUNCH("project_vec");
}

template <int W>
bool project_w(CudaRa::State& s, const std::uint32_t* in, std::uint64_t n, int nc, std::uint32_t packed,
               std::uint32_t* out) {
  switch (nc) {
    case 1: launch_project_vec<W, 1>(s, in, n, packed, out); return true;
    case 2: launch_project_vec<W, 2>(s, in, n, packed, out); return true;
    case 3: launch_project_vec<W, 3>(s, in, n, packed, out); return true;
    case 4: launch_project_vec<W, 4>(s, in, n, packed, out); return true;
    default: return false;
  }
}

// ---- add / subtract / multiply ----------------------------------------------------------------

template <int OP>
__device__ __forceinline__ std::uint32_t apply(std::uint32_t x, std::uint32_t y) {
  return OP == 0 ? x + y : OP == 1 ? x - y : x * y;
}

// The relations as flat word arrays: word k is a key word (copied from a) when k % w < kw. Each thread
// takes uint4 q (words 4q..4q+3); the position of word 4q within its tuple advances by a fixed
// step per grid stride, so there is no division inside the loop.
template <int OP>
__global__ void __launch_bounds__(kBlock)
    arith_vec(const std::uint32_t* __restrict__ a, const std::uint32_t* __restrict__ b, std::uint64_t words,
              std::uint32_t w, std::uint32_t kw, std::uint32_t* __restrict__ out) {
  const uint4* a4 = reinterpret_cast<const uint4*>(a);
  const uint4* b4 = reinterpret_cast<const uint4*>(b);
  uint4* o4 = reinterpret_cast<uint4*>(out);
  const std::uint64_t chunks = words / 4, stride = thread_count();
  std::uint64_t q = thread_index();
  std::uint32_t pos = static_cast<std::uint32_t>((4 * q) % w);
  const std::uint32_t step = static_cast<std::uint32_t>((4 * stride) % w);
  for (; q < chunks; q += stride) {
    std::uint32_t x[4], y[4], r[4];
    unpack(a4[q], x);
    unpack(b4[q], y);
    std::uint32_t p = pos;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      r[j] = p < kw ? x[j] : apply<OP>(x[j], y[j]);
      p = p + 1 == w ? 0 : p + 1;
    }
    o4[q] = make_uint4(r[0], r[1], r[2], r[3]);
    pos += step;
    if (pos >= w) pos -= w;
  }
  const std::uint64_t k = chunks * 4 + thread_index();
  if (k < words) out[k] = k % w < kw ? a[k] : apply<OP>(a[k], b[k]);
}

__global__ void __launch_bounds__(kBlock)
    arith_scalar(const std::uint32_t* a, const std::uint32_t* b, std::uint64_t words, std::uint32_t w, std::uint32_t kw,
                 std::uint32_t op, std::uint32_t* out) {
  for (std::uint64_t k = thread_index(); k < words; k += thread_count()) {
    const std::uint32_t x = a[k], y = b[k];
    out[k] = k % w < kw ? x : op == 0 ? apply<0>(x, y) : op == 1 ? apply<1>(x, y) : apply<2>(x, y);
  }
}

// ---- reduce -----------------------------------------------------------------------------------

template <int OP>
__device__ __forceinline__ std::uint64_t fold(std::uint64_t a, std::uint64_t b) {
  return OP == 0 ? a + b : OP == 1 ? (a < b ? a : b) : (a > b ? a : b);
}
template <int OP>
__host__ __device__ constexpr std::uint64_t identity() {
  return OP == 1 ? 0xffffffffull : 0ull;
}

// A super-chunk of lcm(4, W) words is whole uint4s and whole tuples, so word j of it is word j % W
// of a tuple, known at compile time (a value when j % W >= KW, the key words before): the
// accumulators stay in registers. Two super-chunks per iteration
// where one is a single uint4, for more loads in flight. Words past the last whole super-chunk (or
// all words, when the input is not 16-byte aligned) go one per thread.
template <int W, int KW, int OP>
__global__ void __launch_bounds__(kBlock) reduce_vec(const std::uint32_t* __restrict__ in, std::uint64_t words,
                                                     std::uint64_t supers, unsigned long long* result) {
  constexpr int L = lcm(4, W), SV = L / 4, U = SV == 1 ? 2 : 1;
  std::uint64_t acc[W];
#pragma unroll
  for (int v = 0; v < W; ++v) acc[v] = identity<OP>();
  const uint4* in4 = reinterpret_cast<const uint4*>(in);
  const std::uint64_t stride = thread_count();
  std::uint64_t sc = thread_index();
  for (; sc + (U - 1) * stride < supers; sc += U * stride) {
    std::uint32_t t[U * L];
#pragma unroll
    for (int u = 0; u < U; ++u)
#pragma unroll
      for (int v = 0; v < SV; ++v) unpack(in4[(sc + u * stride) * SV + v], t + u * L + 4 * v);
#pragma unroll
    for (int j = 0; j < U * L; ++j)
      if (j % W >= KW) acc[j % W] = fold<OP>(acc[j % W], t[j]);
  }
  if (U > 1 && sc < supers) {
    std::uint32_t t[L];
#pragma unroll
    for (int v = 0; v < SV; ++v) unpack(in4[sc * SV + v], t + 4 * v);
#pragma unroll
    for (int j = 0; j < L; ++j)
      if (j % W >= KW) acc[j % W] = fold<OP>(acc[j % W], t[j]);
  }
  for (std::uint64_t k = supers * L + thread_index(); k < words; k += stride) {
    const std::uint32_t a = static_cast<std::uint32_t>(k % W);
    const std::uint32_t x = in[k];
#pragma unroll
    for (int v = KW; v < W; ++v)
      if (a == static_cast<std::uint32_t>(v)) acc[v] = fold<OP>(acc[v], x);
  }
  // Warp, then block (one warp over the warps' figures), then one atomic per attribute. Min is
  // kept as max of 0xffffffff - x so that every result starts at 0 (one memset).
  __shared__ std::uint64_t warp_acc[kBlock / 32][W];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
#pragma unroll
  for (int v = KW; v < W; ++v) {
    std::uint64_t x = acc[v];
#pragma unroll
    for (int off = 16; off > 0; off /= 2) x = fold<OP>(x, __shfl_down_sync(0xffffffffu, x, off));
    if (lane == 0) warp_acc[warp][v] = x;
  }
  __syncthreads();
  if (warp != 0) return;
#pragma unroll
  for (int v = KW; v < W; ++v) {
    std::uint64_t x = lane < kBlock / 32 ? warp_acc[lane][v] : identity<OP>();
#pragma unroll
    for (int off = 16; off > 0; off /= 2) x = fold<OP>(x, __shfl_down_sync(0xffffffffu, x, off));
    if (lane != 0) continue;
    unsigned long long* r = result + (v - KW);
    if (OP == 0)
      atomicAdd(r, static_cast<unsigned long long>(x));
    else if (OP == 1)
      atomicMax(r, static_cast<unsigned long long>(0xffffffffull - x));
    else
      atomicMax(r, static_cast<unsigned long long>(x));
  }
}

template <int W, int KW>
void launch_reduce_w(CudaRa::State& s, std::uint32_t op, const std::uint32_t* in, std::uint64_t words,
                     std::uint64_t supers, unsigned long long* result) {
  constexpr int L = lcm(4, W);
  const auto kernel = op == 0 ? reduce_vec<W, KW, 0> : op == 1 ? reduce_vec<W, KW, 1> : reduce_vec<W, KW, 2>;
  // Threads for the super-chunks, and at least for the (fewer than L) tail words.
  const std::uint32_t grid = stream_grid(s, kernel, std::max<std::uint64_t>(supers, static_cast<std::uint64_t>(L)));
  HDB_LAUNCH(kernel, grid, kBlock, 0, s.stream.get())(in, words, supers, result);
  HDB_CUDA_CHECK_LAUNCH("reduce_vec");
}

// launch_reduce_w<W, KW> for the run-time width w: a key of KW words and 1 to 8 - KW values.
template <int KW, int W = KW + 1>
void launch_reduce_for(CudaRa::State& s, int w, std::uint32_t op, const std::uint32_t* in, std::uint64_t words,
                       std::uint64_t supers, unsigned long long* result) {
  if constexpr (W < kMaxWidth) {
    if (w != W) return launch_reduce_for<KW, W + 1>(s, w, op, in, words, supers, result);
  }
  launch_reduce_w<W, KW>(s, op, in, words, supers, result);
}

}  // namespace

const char* launch_tuned_project(CudaRa::State& s, const CudaRelation& in, const std::vector<int>& columns,
                                 std::uint32_t* out) {
  const std::uint64_t n = in.rows();
  if (!n) return "";
  std::uint32_t packed = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) packed |= static_cast<std::uint32_t>(columns[c]) << (4 * c);
  const int nc = static_cast<int>(columns.size());
  bool done = false;
  if (aligned16(in.data()) && aligned16(out)) {
    switch (in.width()) {
      case 1: done = project_w<1>(s, in.data(), n, nc, packed, out); break;
      case 2: done = project_w<2>(s, in.data(), n, nc, packed, out); break;
      case 3: done = project_w<3>(s, in.data(), n, nc, packed, out); break;
      case 4: done = project_w<4>(s, in.data(), n, nc, packed, out); break;
      default: break;
    }
  }
  if (done) return "vec16";
  HDB_LAUNCH(project_scalar, stream_grid(s, project_scalar, n), kBlock, 0, s.stream.get())
  (in.data(), n, static_cast<std::uint32_t>(in.width()), static_cast<std::uint32_t>(nc), packed, out);
  HDB_CUDA_CHECK_LAUNCH("project_scalar");
  return "scalar";
}

const char* launch_tuned_arith(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, ArithOp op,
                               std::uint32_t* out) {
  const std::uint64_t words = a.rows() * static_cast<std::uint64_t>(a.width());
  if (!words) return "";
  const auto w = static_cast<std::uint32_t>(a.width()), kw = static_cast<std::uint32_t>(a.key_words());
  cudaStream_t st = s.stream.get();
  if (aligned16(a.data()) && aligned16(b.data()) && aligned16(out)) {
    const auto kernel = op == ArithOp::Add ? arith_vec<0> : op == ArithOp::Subtract ? arith_vec<1> : arith_vec<2>;
    // Threads for the uint4s, and at least for the (fewer than 4) tail words.
    HDB_LAUNCH(kernel, stream_grid(s, kernel, std::max<std::uint64_t>(words / 4, 4)), kBlock, 0, st)
    (a.data(), b.data(), words, w, kw, out);
    HDB_CUDA_CHECK_LAUNCH("arith_vec");
    return "vec16";
  }
  const std::uint32_t opc = op == ArithOp::Add ? 0 : op == ArithOp::Subtract ? 1 : 2;
  HDB_LAUNCH(arith_scalar, stream_grid(s, arith_scalar, words), kBlock, 0, st)
  (a.data(), b.data(), words, w, kw, opc, out);
  HDB_CUDA_CHECK_LAUNCH("arith_scalar");
  return "scalar";
}

Breakdown tuned_reduce(CudaRa::State& s, const CudaRelation& in, ReduceOp op, Aggregate& result) {
  PhaseTimer& t = s.begin_op();
  result = identity_aggregate(in.values(), op);
  const std::uint64_t n = in.rows();
  if (n == 0 || in.values() == 0) return t.finish();
  const int w = in.width();
  const std::uint64_t words = n * static_cast<std::uint64_t>(w);
  const std::uint64_t chunk = static_cast<std::uint64_t>(lcm(4, w));
  const std::uint64_t supers = aligned16(in.data()) ? words / chunk : 0;
  const std::size_t bytes = static_cast<std::size_t>(in.values()) * sizeof(unsigned long long);
  auto* d_out = s.scratch.get<unsigned long long>("tuned.reduce", static_cast<std::uint64_t>(in.values()));
  const std::uint32_t opc = op == ReduceOp::Sum ? 0 : op == ReduceOp::Min ? 1 : 2;
  t.phase("compute");
  HDB_CUDA_CHECK(cudaMemsetAsync(d_out, 0, bytes, s.stream.get()));
  if (in.key_words() == 2)
    launch_reduce_for<2>(s, w, opc, in.data(), words, supers, d_out);
  else
    launch_reduce_for<1>(s, w, opc, in.data(), words, supers, d_out);
  t.close();  // the read-back of the results ends the operator: outside its kernel time
  static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t), "the results are read back as 64-bit words");
  read_results(s, reinterpret_cast<const std::uint64_t*>(d_out), in.values(), result);
  Breakdown b = t.finish();
  if (op == ReduceOp::Min)
    for (int v = 0; v < in.values(); ++v)
      result.value[static_cast<std::size_t>(v)] = 0xffffffffull - result.value[static_cast<std::size_t>(v)];
  return b;
}

}  // namespace hdb::ra::cuda
