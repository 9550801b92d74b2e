#include "ngram_backend.hpp"

#include <algorithm>

#include "algorithms/ngram_bits.hpp"
#include "algorithms/ngram_search.hpp"
#include "runtime/cuda_check.hpp"
#include "runtime/scratch.hpp"

namespace hdb::cuda {

using ngram::kBinSize;
using ngram::kPlanes;
using ngram::NgramIndex;
using ngram::QueryPlan;

namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kWordsPerBin = kBinSize / 32;
constexpr unsigned kMaxGridY = 65535;

struct IndexView {
  const std::uint32_t *article, *map, *list_off, *dir_off, *dir_bin, *dir_start;
};

unsigned blocks_for(std::size_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// ---- Figure 1: dense arrays over all articles ------------------------------------------------

// Unpacks one posting list: newmap[article] = map.
// 64-bit index: begin + the rounded-up grid may pass 2^32 for a list near the end of the postings.
__global__ void scatter_kernel(const std::uint32_t* article, const std::uint32_t* map, std::uint32_t begin,
                               std::uint32_t end, std::uint32_t* newmap) {
  std::uint64_t j = begin + blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (j < end) newmap[article[j]] = map[j];
}

// One query 3-gram for every article: gathering (i < g) admits new articles, pruning only updates
// the alive ones; from the end of gathering on, articles that cannot reach m any more are dropped.
// planes is structure-of-arrays: plane k of article a at planes[k * n + a].
__global__ void update_kernel(const std::uint32_t* newmap, std::uint32_t* planes, std::uint8_t* alive, std::uint32_t n,
                              int i, int g, int need) {
  std::uint32_t a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= n) return;
  bool al = alive[a] != 0;
  if (!(i < g || al)) return;
  std::uint32_t w = newmap[a];
  bool prune = i + 1 >= g;
  if (!w && !(prune && al)) return;
  std::uint32_t p[kPlanes];
#pragma unroll
  for (int k = 0; k < kPlanes; ++k) p[k] = planes[static_cast<std::size_t>(k) * n + a];
  if (w) {
    ngram::add_lanes(p, ngram::window_lanes(w));
    al = true;
#pragma unroll
    for (int k = 0; k < kPlanes; ++k) planes[static_cast<std::size_t>(k) * n + a] = p[k];
  }
  if (prune) al = ngram::lanes_at_least(p, need) != 0;
  alive[a] = al ? 1 : 0;
}

// Hit bitmap from the alive flags (one bit per article, 8 words per bin).
__global__ void bitmap_kernel(const std::uint8_t* alive, std::uint32_t n, std::uint32_t* words, std::uint32_t slots) {
  std::uint32_t a = blockIdx.x * blockDim.x + threadIdx.x;
  if (a >= slots) return;  // slots is a multiple of 32: whole warps return together
  unsigned bits = __ballot_sync(0xffffffffu, a < n && alive[a]);
  if ((threadIdx.x & 31) == 0) words[a / 32] = bits;
}

// ---- segment-wise: one block per (bin of 256 articles, query) ---------------------------------

// The directory entry of bin b in list L, found by warp 0 with 32-way probes (3 rounds for a
// million bins instead of 20 dependent loads).
__device__ void find_bin_range(const IndexView& ix, std::uint32_t L, std::uint32_t b, unsigned lane, std::uint32_t& rb,
                               std::uint32_t& re) {
  std::uint32_t lo = ix.dir_off[L], hi = ix.dir_off[L + 1];
  const std::uint32_t dend = hi;
  while (hi - lo > 32) {
    std::uint32_t step = ngram::probe_step(lo, hi);
    std::uint32_t idx = lo + lane * step;
    bool less = idx < hi && ix.dir_bin[idx] < b;
    ngram::narrow(lo, hi, step, __popc(__ballot_sync(0xffffffffu, less)));
  }
  std::uint32_t idx = lo + lane;
  bool less = idx < hi && ix.dir_bin[idx] < b;
  std::uint32_t ans = lo + static_cast<std::uint32_t>(__popc(__ballot_sync(0xffffffffu, less)));
  if (ans < dend && ix.dir_bin[ans] == b) {
    rb = ix.dir_start[ans];
    re = ans + 1 < dend ? ix.dir_start[ans + 1] : ix.list_off[L + 1];
  } else {
    rb = re = 0;
  }
}

__global__ void __launch_bounds__(kThreads)
    segmented_kernel(IndexView ix, const std::uint32_t* q_lists, const std::uint32_t* q_off, const std::int32_t* q_m,
                     std::uint32_t q_base, std::uint32_t nbins, std::uint32_t* hit_words) {
  __shared__ std::uint32_t newmap[kBinSize];
  __shared__ std::uint32_t range[2];
  const unsigned t = threadIdx.x;
  const std::uint32_t b = blockIdx.x;
  const std::uint32_t q = q_base + blockIdx.y;
  const std::uint32_t qb = q_off[q];
  const int n = static_cast<int>(q_off[q + 1] - qb);
  const int m = q_m[q];
  const int g = n - m + 1;
  std::uint32_t p[kPlanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  bool alive = false;
  for (int i = 0; i < n; ++i) {
    if (t < 32) {
      std::uint32_t rb, re;
      find_bin_range(ix, q_lists[qb + static_cast<std::uint32_t>(i)], b, t, rb, re);
      if (t == 0) {
        range[0] = rb;
        range[1] = re;
      }
    }
    newmap[t] = 0;
    __syncthreads();
    for (std::uint32_t j = range[0] + t; j < range[1]; j += kThreads) newmap[ix.article[j] % kBinSize] = ix.map[j];
    __syncthreads();
    std::uint32_t w = newmap[t];
    if (w && (i < g || alive)) {
      ngram::add_lanes(p, ngram::window_lanes(w));
      alive = true;
    }
    int any;
    if (i + 1 >= g) {
      alive = alive && ngram::lanes_at_least(p, ngram::needed_after(m, n, i + 1)) != 0;
      any = __syncthreads_or(alive);
    } else {
      any = __syncthreads_or(1);  // gathering: new articles may still join
    }
    if (!any) break;
  }
  unsigned bits = __ballot_sync(0xffffffffu, alive);
  if ((t & 31) == 0)
    hit_words[static_cast<std::size_t>(blockIdx.y) * nbins * kWordsPerBin + static_cast<std::size_t>(b) * kWordsPerBin +
              t / 32] = bits;
}

// ---- tuned: the bin ranges resolved once per batch, a block's lists unpacked together ----------

// Lists a block unpacks at once: 8 KiB of shared memory. The segmented kernel unpacks one list at a
// time, each behind a directory search and three barriers: per list a chain of dependent loads (up
// to three probe rounds, then the postings), 40-odd lists a query. Here the bin ranges come resolved
// (resolve_ranges_kernel), the postings of 8 lists are loaded together and each thread walks its
// article's 8 maps without a barrier. A bin with no candidate left is seen only at a chunk's end, so
// a few lists may be unpacked for nothing (16 lists a chunk: 30 % more sectors at 1M than 8); the
// first chunks end with gathering (no article can drop out before), so a bin the rarest lists miss
// stops at once.
constexpr int kChunk = 8;

// Every bin's posting range [x, y) in every list of a batch's queries, rows of nbins in the order
// of the packed lists from first_list on: a warp per list walks the list's bin directory (a list
// touches few bins of a small corpus; a block per list had 7 idle warps load its bounds).
// `ranges` is cleared first, so a bin the list has no posting in reads (0, 0).
constexpr unsigned kListsPerBlock = kThreads / 32;
__global__ void resolve_ranges_kernel(IndexView ix, const std::uint32_t* q_lists, std::uint32_t first_list,
                                      std::uint32_t lists, std::uint32_t nbins, uint2* ranges) {
  const std::uint32_t x = blockIdx.x * kListsPerBlock + threadIdx.x / 32;
  if (x >= lists) return;  // whole warps
  const std::uint32_t L = q_lists[first_list + x];
  const std::uint32_t d0 = ix.dir_off[L], d1 = ix.dir_off[L + 1], last = ix.list_off[L + 1];
  uint2* row = ranges + static_cast<std::size_t>(x) * nbins;
  for (std::uint32_t e = d0 + threadIdx.x % 32; e < d1; e += 32)
    row[ix.dir_bin[e]] = uint2{ix.dir_start[e], e + 1 < d1 ? ix.dir_start[e + 1] : last};
}

// One block per (bin, query) as in segmented_kernel, and the same hits: each thread keeps its
// article's counters, gathering admits, pruning drops; the block leaves when its bin has no
// candidate and gathering is over.
__global__ void __launch_bounds__(kThreads)
    tuned_kernel(IndexView ix, const uint2* ranges, const std::uint32_t* q_off, const std::int32_t* q_m,
                 std::uint32_t q_base, std::uint32_t first_list, std::uint32_t nbins, std::uint32_t* hit_words) {
  __shared__ std::uint32_t maps[kChunk][kBinSize];
  __shared__ uint2 chunk_ranges[kChunk];
  const unsigned t = threadIdx.x;
  const std::uint32_t b = blockIdx.x, q = q_base + blockIdx.y;
  const std::uint32_t qb = q_off[q];
  const int n = static_cast<int>(q_off[q + 1] - qb), m = q_m[q], g = n - m + 1;
  const uint2* range = ranges + static_cast<std::size_t>(qb - first_list) * nbins + b;  // list i: range[i * nbins]
  std::uint32_t p[kPlanes] = {0, 0, 0, 0, 0, 0, 0, 0};
  bool alive = false;
  for (int c = 0; c < n;) {
    const int cn = min(kChunk, (c < g ? g : n) - c);
    if (t < static_cast<unsigned>(cn)) chunk_ranges[t] = range[static_cast<std::size_t>(c) * nbins + t * nbins];
    for (int i = 0; i < cn; ++i) maps[i][t] = 0;
    __syncthreads();
    // A list holds an article once, so it has at most kBinSize postings in a bin: one a thread. The
    // lists' loads do not depend on each other.
    for (int i = 0; i < cn; ++i) {
      const uint2 r = chunk_ranges[i];
      const std::uint32_t j = r.x + t;
      if (j < r.y) maps[i][ix.article[j] % kBinSize] = ix.map[j];
    }
    __syncthreads();
    for (int i = 0; i < cn; ++i) {
      const int li = c + i;
      const std::uint32_t w = maps[i][t];
      if (w && (li < g || alive)) {
        ngram::add_lanes(p, ngram::window_lanes(w));
        alive = true;
      }
      if (li + 1 >= g) alive = alive && ngram::lanes_at_least(p, ngram::needed_after(m, n, li + 1)) != 0;
    }
    c += cn;
    // Also the barrier before the next chunk clears the maps and ranges every thread has read.
    if (!__syncthreads_or(alive || c < g)) break;
  }
  unsigned bits = __ballot_sync(0xffffffffu, alive);
  if ((t & 31) == 0)
    hit_words[static_cast<std::size_t>(blockIdx.y) * nbins * kWordsPerBin + static_cast<std::size_t>(b) * kWordsPerBin +
              t / 32] = bits;
}

// ---- hybrid: the GPU prunes the CPU's candidates with the intermediate lists ------------------

__global__ void candidate_kernel(const std::uint32_t* newmap, const std::uint32_t* cand, std::uint32_t* planes,
                                 std::uint8_t* alive, std::uint32_t c, int need) {
  std::uint32_t x = blockIdx.x * blockDim.x + threadIdx.x;
  if (x >= c || !alive[x]) return;
  std::uint32_t p[kPlanes];
#pragma unroll
  for (int k = 0; k < kPlanes; ++k) p[k] = planes[static_cast<std::size_t>(k) * c + x];
  std::uint32_t w = newmap[cand[x]];
  if (w) {
    ngram::add_lanes(p, ngram::window_lanes(w));
#pragma unroll
    for (int k = 0; k < kPlanes; ++k) planes[static_cast<std::size_t>(k) * c + x] = p[k];
  }
  alive[x] = ngram::lanes_at_least(p, need) != 0;
}

// The chunks a search launches its kernels for: not batched, one query a chunk; batched, within the
// grid's y limit, at most 256 MiB of hit bitmaps (rows of `row` words) and, in the tuned search, at
// most 256 MiB of bin ranges (8 bytes per list and bin).
std::vector<ngram::QueryChunk> query_chunks(const std::vector<QueryPlan>& plans, bool batch, std::size_t row,
                                            std::uint32_t bins, bool ranges) {
  constexpr std::uint64_t kCap = 256u << 20;
  const std::size_t per = batch ? std::max<std::size_t>(1, std::min<std::size_t>(kMaxGridY, kCap / (4 * row + 1))) : 1;
  const std::uint64_t lists = ranges && bins ? kCap / (8ull * bins) : UINT64_MAX;
  return ngram::chunk_queries(plans, per, lists);
}

// The work arrays load_index allocates beside the index: Figure 1's dense arrays and the hit
// bitmap of one query, and the hybrid's candidate arrays.
void plan_work(MemoryPlan& plan, const NgramIndex& ix) {
  std::uint64_t a = ix.articles;
  plan_dense_work(plan, ix);
  plan.add("candidate ids", 4 * a).add("candidate counter planes", 4 * kPlanes * a).add("candidate alive flags", a);
}

// Grows the pinned staging buffer `b` to at least max(n, 1) elements (contents are not kept), as
// grow() does a device buffer: in the warm-up pass, so no cudaMallocHost falls in a timed pass.
template <class T>
T* grow_pinned(HostBuffer<T>& b, std::size_t n) {
  if (b.size() < std::max<std::size_t>(n, 1)) b = HostBuffer<T>(std::max<std::size_t>(n, 1), Transfer::Pinned);
  return b.get();
}

template <class T>
DeviceBuffer<T> upload(const std::vector<T>& v) {
  DeviceBuffer<T> d(v.size());
  if (!v.empty()) HDB_CUDA_CHECK(cudaMemcpy(d.get(), v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
  return d;
}

}  // namespace

struct CudaNgram::State {
  const NgramIndex* host = nullptr;
  std::uint32_t articles = 0, bins = 0;
  DeviceBuffer<std::uint32_t> article, map, list_off, dir_off, dir_bin, dir_start;
  DeviceBuffer<std::uint32_t> newmap, planes, words;
  DeviceBuffer<std::uint8_t> alive;
  DeviceBuffer<std::uint32_t> cand, cand_planes;  // hybrid: the CPU's candidates
  DeviceBuffer<std::uint8_t> cand_alive;
  HostBuffer<std::uint32_t> host_words;
  // The hybrid's pinned staging of the candidates (sized for every article, made by load_index):
  // its cases are pinned ones, and the CPU stages' vectors are pageable.
  HostBuffer<std::uint32_t> cand_host, cand_planes_host;
  HostBuffer<std::uint8_t> cand_alive_host;
  // Per-pass buffers kept across passes (grown in the warm-up), so no cudaMalloc/cudaFree (which
  // synchronises the device) falls inside a timed pass: packed queries (and their pinned staging)
  // and batch hit bitmaps.
  DeviceBuffer<std::uint32_t> q_lists, q_off, batch_words;
  DeviceBuffer<std::int32_t> q_m;
  DeviceBuffer<uint2> ranges;  // the tuned search's bin ranges of a chunk's lists
  HostBuffer<std::uint32_t> q_lists_host, q_off_host;
  HostBuffer<std::int32_t> q_m_host;
  HostBuffer<std::uint32_t> batch_host;
  Stream stream;
  PhaseTimer kernel_t, copy_t;
  IndexView view() const {
    return {article.get(), map.get(), list_off.get(), dir_off.get(), dir_bin.get(), dir_start.get()};
  }
  std::size_t row() const { return std::size_t{bins} * kWordsPerBin; }
};

// Made from its platform as every backend is; the CUDA runtime itself keeps the device.
CudaNgram::CudaNgram(CudaPlatform& /*platform*/)
    : table_("CUDA ngram", {{CudaNgramVariant::Gpu, {"gpu", {"search"}, ""}},
                            {CudaNgramVariant::GpuSegmented, {"gpu-segmented", {"search", "batch"}, ""}},
                            {CudaNgramVariant::GpuTuned, {"gpu-tuned", {"search", "batch"}, ""}},
                            {CudaNgramVariant::Hybrid, {"hybrid", {"search"}, ""}}}) {}
CudaNgram::~CudaNgram() = default;

void CudaNgram::plan_memory(MemoryPlan& plan, const NgramIndex& ix, const NgramVariant& v,
                            const std::vector<QueryPlan>& plans) const {
  plan_index_copy(plan, ix);
  plan_work(plan, ix);
  const CudaNgramVariant id = table_.id(v.name);
  if (id != CudaNgramVariant::GpuSegmented && id != CudaNgramVariant::GpuTuned) return;
  // search's buffers, kept across passes: the packed queries, a batch's hit bitmaps per chunk and
  // the tuned search's bin ranges per chunk.
  plan_packed_queries(plan, plans);
  const std::size_t row = std::size_t{ix.bins()} * kWordsPerBin;
  const bool tuned = id == CudaNgramVariant::GpuTuned;
  const ngram::QueryChunk big = ngram::largest_chunk(query_chunks(plans, v.batch, row, ix.bins(), tuned));
  if (v.batch) plan.add("batch hit bitmaps", 4ull * std::max<std::size_t>(big.count * row, 1));
  if (tuned) plan.add("bin ranges", 8ull * std::max<std::uint64_t>(big.lists * ix.bins(), 1));
}

nlohmann::json CudaNgram::load_index(const NgramIndex& ix) {
  MemoryPlan work_plan;
  plan_work(work_plan, ix);
  std::uint64_t work = work_plan.total();
  s_.reset();
  auto s = std::make_unique<State>();
  HostTimer t;
  s->article = upload(ix.post_article);
  s->map = upload(ix.post_map);
  s->list_off = upload(ix.list_offsets);
  s->dir_off = upload(ix.dir_offsets);
  s->dir_bin = upload(ix.dir_bin);
  s->dir_start = upload(ix.dir_start);
  // cudaMemcpy from pageable memory may return before its last DMA has landed, and it ran on the
  // legacy stream, which the non-blocking search stream does not wait for.
  HDB_CUDA_CHECK(cudaDeviceSynchronize());
  double upload_s = t.seconds();
  s->host = &ix;
  s->articles = ix.articles;
  s->bins = ix.bins();
  s->newmap = DeviceBuffer<std::uint32_t>(ix.articles);
  s->planes = DeviceBuffer<std::uint32_t>(std::size_t{ix.articles} * kPlanes);
  s->alive = DeviceBuffer<std::uint8_t>(ix.articles);
  s->words = DeviceBuffer<std::uint32_t>(s->row());
  s->cand = DeviceBuffer<std::uint32_t>(ix.articles);
  s->cand_planes = DeviceBuffer<std::uint32_t>(std::size_t{ix.articles} * kPlanes);
  s->cand_alive = DeviceBuffer<std::uint8_t>(ix.articles);
  s->host_words = HostBuffer<std::uint32_t>(s->row(), Transfer::Pinned);
  s->cand_host = HostBuffer<std::uint32_t>(ix.articles, Transfer::Pinned);
  s->cand_planes_host = HostBuffer<std::uint32_t>(std::size_t{ix.articles} * kPlanes, Transfer::Pinned);
  s->cand_alive_host = HostBuffer<std::uint8_t>(ix.articles, Transfer::Pinned);
  s_ = std::move(s);
  return {{"device_index_bytes", ix.bytes()}, {"device_work_bytes", work}, {"upload_s", upload_s}};
}

void CudaNgram::release_index() { s_.reset(); }

namespace {

using State = CudaNgram::State;

// One posting list unpacked into s.newmap (cleared first).
void unpack(State& s, std::uint32_t list) {
  cudaStream_t st = s.stream.get();
  std::uint32_t begin = s.host->list_offsets[list], end = s.host->list_offsets[list + 1];
  HDB_CUDA_CHECK(cudaMemsetAsync(s.newmap.get(), 0, s.newmap.bytes(), st));
  if (end > begin) {
    HDB_LAUNCH(scatter_kernel, blocks_for(end - begin), kThreads, 0, st)
    (s.article.get(), s.map.get(), begin, end, s.newmap.get());
    HDB_CUDA_CHECK_LAUNCH("scatter_kernel");
  }
}

std::vector<std::uint32_t> fetch_hits(State& s, const std::uint32_t* dev_words, Breakdown& b) {
  cudaStream_t st = s.stream.get();
  s.copy_t.start(st);
  HDB_CUDA_CHECK(cudaMemcpyAsync(s.host_words.get(), dev_words, s.row() * 4, cudaMemcpyDeviceToHost, st));
  b.d2h += s.copy_t.stop(st);
  return ngram::bitmap_hits(s.host_words.get(), s.row());
}

std::vector<std::uint32_t> run_figure1(State& s, const QueryPlan& plan, Breakdown& b) {
  if (plan.n == 0 || s.articles == 0) return {};
  cudaStream_t st = s.stream.get();
  s.kernel_t.start(st);
  HDB_CUDA_CHECK(cudaMemsetAsync(s.planes.get(), 0, s.planes.bytes(), st));
  HDB_CUDA_CHECK(cudaMemsetAsync(s.alive.get(), 0, s.alive.bytes(), st));
  for (int i = 0; i < plan.n; ++i) {
    unpack(s, plan.lists[static_cast<std::size_t>(i)]);
    HDB_LAUNCH(update_kernel, blocks_for(s.articles), kThreads, 0, st)
    (s.newmap.get(), s.planes.get(), s.alive.get(), s.articles, i, plan.g, ngram::needed_after(plan.m, plan.n, i + 1));
    HDB_CUDA_CHECK_LAUNCH("update_kernel");
  }
  std::uint32_t slots = s.bins * kBinSize;
  HDB_LAUNCH(bitmap_kernel, blocks_for(slots), kThreads, 0, st)(s.alive.get(), s.articles, s.words.get(), slots);
  HDB_CUDA_CHECK_LAUNCH("bitmap_kernel");
  b.kernel += s.kernel_t.stop(st);
  return fetch_hits(s, s.words.get(), b);
}

// The packed queries into s.q_lists / s.q_off / s.q_m, copied from pinned staging buffers.
void upload_queries(State& s, const std::vector<QueryPlan>& plans, Breakdown& b) {
  ngram::PackedQueries pq = ngram::pack_queries(plans);
  grow(s.q_lists, pq.lists.size());
  grow(s.q_off, pq.off.size());
  grow(s.q_m, pq.m.size());
  std::uint32_t* lists = grow_pinned(s.q_lists_host, pq.lists.size());
  std::uint32_t* off = grow_pinned(s.q_off_host, pq.off.size());
  std::int32_t* m = grow_pinned(s.q_m_host, pq.m.size());
  std::copy(pq.lists.begin(), pq.lists.end(), lists);
  std::copy(pq.off.begin(), pq.off.end(), off);
  std::copy(pq.m.begin(), pq.m.end(), m);
  cudaStream_t st = s.stream.get();
  s.copy_t.start(st);
  if (!pq.lists.empty())
    HDB_CUDA_CHECK(cudaMemcpyAsync(s.q_lists.get(), lists, 4 * pq.lists.size(), cudaMemcpyHostToDevice, st));
  HDB_CUDA_CHECK(cudaMemcpyAsync(s.q_off.get(), off, 4 * pq.off.size(), cudaMemcpyHostToDevice, st));
  if (!pq.m.empty()) HDB_CUDA_CHECK(cudaMemcpyAsync(s.q_m.get(), m, 4 * pq.m.size(), cudaMemcpyHostToDevice, st));
  b.h2d += s.copy_t.stop(st);  // waits for the copies: the staging buffers are refilled by the next upload
}

void launch_segmented(State& s, std::uint32_t q_base, std::uint32_t count, std::uint32_t* out) {
  dim3 grid(s.bins, count);
  HDB_LAUNCH(segmented_kernel, grid, kThreads, 0, s.stream.get())
  (s.view(), s.q_lists.get(), s.q_off.get(), s.q_m.get(), q_base, s.bins, out);
  HDB_CUDA_CHECK_LAUNCH("segmented_kernel");
}

// The tuned search of a chunk of queries: its lists' bin ranges cleared and resolved, then one block
// per (bin, query): a memset and two launches whatever the chunk's size.
void launch_tuned(State& s, const ngram::QueryChunk& c, std::uint32_t* out) {
  cudaStream_t st = s.stream.get();
  const std::size_t cells = c.lists * s.bins;
  if (cells) {
    HDB_CUDA_CHECK(cudaMemsetAsync(s.ranges.get(), 0, 8 * cells, st));
    HDB_LAUNCH(resolve_ranges_kernel, static_cast<unsigned>((c.lists + kListsPerBlock - 1) / kListsPerBlock), kThreads,
               0, st)
    (s.view(), s.q_lists.get(), static_cast<std::uint32_t>(c.first_list), static_cast<std::uint32_t>(c.lists), s.bins,
     s.ranges.get());
    HDB_CUDA_CHECK_LAUNCH("resolve_ranges_kernel");
  }
  dim3 grid(s.bins, static_cast<unsigned>(c.count));
  HDB_LAUNCH(tuned_kernel, grid, kThreads, 0, st)
  (s.view(), s.ranges.get(), s.q_off.get(), s.q_m.get(), static_cast<std::uint32_t>(c.q0),
   static_cast<std::uint32_t>(c.first_list), s.bins, out);
  HDB_CUDA_CHECK_LAUNCH("tuned_kernel");
}

// The paper's five stages for one query: the host stages are common code, stage 3 (initial
// pruning of the candidates with the intermediate lists) runs here on the device.
std::vector<std::uint32_t> run_hybrid(State& s, const QueryPlan& plan, Breakdown& b) {
  cudaStream_t st = s.stream.get();
  ngram::CandidatePrune on_gpu = [&](int from, int to, const std::vector<std::uint32_t>& cand,
                                     std::vector<std::uint32_t>& planes, std::vector<std::uint8_t>& alive) {
    auto c = static_cast<std::uint32_t>(cand.size());
    // The CPU stages' vectors are pageable: the copies go through the state's pinned buffers, and
    // the host copies into and out of them are a host phase of their own, "pinned_staging".
    HostTimer staging;
    std::copy(cand.begin(), cand.end(), s.cand_host.get());
    std::copy(planes.begin(), planes.end(), s.cand_planes_host.get());
    std::copy(alive.begin(), alive.end(), s.cand_alive_host.get());
    double staged = staging.seconds();
    s.copy_t.start(st);
    HDB_CUDA_CHECK(cudaMemcpyAsync(s.cand.get(), s.cand_host.get(), 4ull * c, cudaMemcpyHostToDevice, st));
    HDB_CUDA_CHECK(cudaMemcpyAsync(s.cand_planes.get(), s.cand_planes_host.get(), 4ull * planes.size(),
                                   cudaMemcpyHostToDevice, st));
    HDB_CUDA_CHECK(cudaMemcpyAsync(s.cand_alive.get(), s.cand_alive_host.get(), c, cudaMemcpyHostToDevice, st));
    double up = s.copy_t.stop(st);
    s.kernel_t.start(st);
    for (int i = from; i < to; ++i) {
      unpack(s, plan.lists[static_cast<std::size_t>(i)]);
      HDB_LAUNCH(candidate_kernel, blocks_for(c), kThreads, 0, st)
      (s.newmap.get(), s.cand.get(), s.cand_planes.get(), s.cand_alive.get(), c,
       ngram::needed_after(plan.m, plan.n, i + 1));
      HDB_CUDA_CHECK_LAUNCH("candidate_kernel");
    }
    double k = s.kernel_t.stop(st);
    s.copy_t.start(st);
    HDB_CUDA_CHECK(cudaMemcpyAsync(s.cand_planes_host.get(), s.cand_planes.get(), 4ull * planes.size(),
                                   cudaMemcpyDeviceToHost, st));
    HDB_CUDA_CHECK(cudaMemcpyAsync(s.cand_alive_host.get(), s.cand_alive.get(), c, cudaMemcpyDeviceToHost, st));
    double down = s.copy_t.stop(st);  // waits for the copies
    staging.reset();
    std::copy(s.cand_planes_host.get(), s.cand_planes_host.get() + planes.size(), planes.begin());
    std::copy(s.cand_alive_host.get(), s.cand_alive_host.get() + c, alive.begin());
    staged += staging.seconds();
    b.h2d += up;
    b.d2h += down;
    b.kernel += k;
    b.add_phase("prune_gpu", k);
    b.add_phase("pinned_staging", staged, PhaseKind::Host);
  };
  ngram::HybridTimes times;
  std::vector<std::uint32_t> hits = ngram::search_hybrid(*s.host, plan, on_gpu, times);
  // The paper's host stages: host time of the pass, outside the device's kernel time.
  b.add_phase("gather_cpu", times.gather_s, PhaseKind::Host);
  b.add_phase("prune_cpu", times.final_s, PhaseKind::Host);
  return hits;
}

}  // namespace

Breakdown CudaNgram::search(const NgramVariant& v, const std::vector<QueryPlan>& plans, NgramSearchOut& out) {
  if (!s_) throw DeviceError("ngram: search before load_index");
  State& s = *s_;
  Breakdown dev;
  const CudaNgramVariant id = table_.id(v.name);
  const bool tuned = id == CudaNgramVariant::GpuTuned;
  if ((id == CudaNgramVariant::GpuSegmented || tuned) && v.batch) {
    HostTimer total;
    upload_queries(s, plans, dev);
    out.hits.assign(plans.size(), {});
    out.seconds.clear();
    const std::vector<ngram::QueryChunk> chunks = query_chunks(plans, true, s.row(), s.bins, tuned);
    const ngram::QueryChunk big = ngram::largest_chunk(chunks);
    std::size_t words = big.count * s.row();
    grow(s.batch_words, words);
    if (tuned) grow(s.ranges, big.lists * s.bins);
    if (s.batch_host.size() < words) s.batch_host = HostBuffer<std::uint32_t>(words, Transfer::Pinned);
    for (const ngram::QueryChunk& c : chunks) {
      if (!s.bins) break;
      cudaStream_t st = s.stream.get();
      s.kernel_t.start(st);
      if (tuned)
        launch_tuned(s, c, s.batch_words.get());
      else
        launch_segmented(s, static_cast<std::uint32_t>(c.q0), static_cast<std::uint32_t>(c.count), s.batch_words.get());
      dev.kernel += s.kernel_t.stop(st);
      s.copy_t.start(st);
      HDB_CUDA_CHECK(
          cudaMemcpyAsync(s.batch_host.get(), s.batch_words.get(), 4 * c.count * s.row(), cudaMemcpyDeviceToHost, st));
      dev.d2h += s.copy_t.stop(st);
      for (std::size_t q = 0; q < c.count; ++q)
        out.hits[c.q0 + q] = ngram::bitmap_hits(s.batch_host.get() + q * s.row(), s.row());
    }
    dev.total = total.seconds();
    return dev;
  }
  Breakdown host;
  switch (id) {
    case CudaNgramVariant::Gpu:
      host = time_each_query(plans.size(), out, [&](std::size_t q) { out.hits[q] = run_figure1(s, plans[q], dev); });
      break;
    case CudaNgramVariant::GpuSegmented:
    case CudaNgramVariant::GpuTuned: {
      HostTimer up;
      upload_queries(s, plans, dev);
      const std::vector<ngram::QueryChunk> chunks = query_chunks(plans, false, s.row(), s.bins, tuned);
      if (tuned) grow(s.ranges, ngram::largest_chunk(chunks).lists * s.bins);
      double up_s = up.seconds();
      host = time_each_query(plans.size(), out, [&](std::size_t q) {
        if (plans[q].n == 0 || s.bins == 0) return;
        cudaStream_t st = s.stream.get();
        s.kernel_t.start(st);
        if (tuned)
          launch_tuned(s, chunks[q], s.words.get());
        else
          launch_segmented(s, static_cast<std::uint32_t>(q), 1, s.words.get());
        dev.kernel += s.kernel_t.stop(st);
        out.hits[q] = fetch_hits(s, s.words.get(), dev);
      });
      host.total += up_s;
      break;
    }
    case CudaNgramVariant::Hybrid:
      host = time_each_query(plans.size(), out, [&](std::size_t q) { out.hits[q] = run_hybrid(s, plans[q], dev); });
      break;
  }
  host.h2d = dev.h2d;
  host.d2h = dev.d2h;
  host.phases = dev.phases;
  // The device share of the time; the hybrid's CPU stages count as compute too.
  host.kernel = id == CudaNgramVariant::Hybrid ? host.total - dev.h2d - dev.d2h : dev.kernel;
  return host;
}

}  // namespace hdb::cuda
