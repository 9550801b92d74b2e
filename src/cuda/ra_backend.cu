// CudaRa: transfers, variant dispatch, the paper's one-kernel primitives (project, product,
// arithmetic) and the kernels the paper and cub variants share.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "ra_device.cuh"

namespace hdb::ra::cuda {
namespace {

// Pinned host memory from cudaMallocHost.
class PinnedMemory : public HostMemory {
 public:
  explicit PinnedMemory(std::uint64_t words) {
    if (words) HDB_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&words_), words * 4));
    capacity_ = words;
  }
  ~PinnedMemory() override {
    if (words_) cudaFreeHost(words_);
    words_ = nullptr;
  }
  Transfer kind() const override { return Transfer::Pinned; }
};

std::uint32_t blocks_for(std::uint64_t n) { return static_cast<std::uint32_t>((n + kBlock - 1) / kBlock); }

__global__ void gather_rows(const std::uint32_t* in, std::uint32_t w, const std::uint32_t* rows, std::uint32_t count,
                            std::uint32_t* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const std::uint64_t src = static_cast<std::uint64_t>(rows[i]) * w;
  for (std::uint32_t k = 0; k < w; ++k) out[static_cast<std::uint64_t>(i) * w + k] = in[src + k];
}

// One thread per run: the head tuple (its key words kept), each value (from word kw) folded.
__global__ void reduce_runs(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t kw,
                            std::uint32_t op, const std::uint32_t* heads, std::uint32_t runs, std::uint32_t* out) {
  const std::uint32_t r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= runs) return;
  const std::uint32_t begin = heads[r], end = r + 1 < runs ? heads[r + 1] : n;
  std::uint32_t acc[kMaxWidth];
  for (std::uint32_t k = 0; k < w; ++k) acc[k] = in[static_cast<std::uint64_t>(begin) * w + k];
  for (std::uint32_t i = begin + 1; i < end; ++i)
    for (std::uint32_t k = kw; k < w; ++k) {
      const std::uint32_t x = in[static_cast<std::uint64_t>(i) * w + k];
      acc[k] = op == 0 ? acc[k] + x : op == 1 ? min(acc[k], x) : max(acc[k], x);
    }
  for (std::uint32_t k = 0; k < w; ++k) out[static_cast<std::uint64_t>(r) * w + k] = acc[k];
}

__global__ void merge_scatter(const std::uint32_t* a, std::uint32_t n, const std::uint32_t* b, std::uint32_t m,
                              std::uint32_t w, std::uint32_t* out) {
  const std::uint32_t gid = blockIdx.x * blockDim.x + threadIdx.x;
  if (gid >= n + m) return;
  std::uint32_t t[kMaxWidth];
  std::uint64_t pos;
  if (gid < n) {
    for (std::uint32_t k = 0; k < w; ++k) t[k] = a[static_cast<std::uint64_t>(gid) * w + k];
    pos = gid + static_cast<std::uint64_t>(lower_bound_rows(b, 0, m, w, t, w));
  } else {
    const std::uint32_t j = gid - n;
    for (std::uint32_t k = 0; k < w; ++k) t[k] = b[static_cast<std::uint64_t>(j) * w + k];
    pos = j + static_cast<std::uint64_t>(upper_bound_rows(a, 0, n, w, t, w));
  }
  for (std::uint32_t k = 0; k < w; ++k) out[pos * w + k] = t[k];
}

__global__ void project_rows(const std::uint32_t* in, std::uint32_t n, std::uint32_t w, std::uint32_t ncols,
                             std::uint32_t packed, std::uint32_t* out) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (std::uint32_t c = 0; c < ncols; ++c)
    out[static_cast<std::uint64_t>(i) * ncols + c] =
        in[static_cast<std::uint64_t>(i) * w + ((packed >> (4 * c)) & 15u)];
}

__global__ void product_rows(const std::uint32_t* a, std::uint32_t wa, const std::uint32_t* b, std::uint32_t nb,
                             std::uint32_t wb, std::uint64_t rows, std::uint32_t* out) {
  const std::uint64_t o = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= rows) return;
  const std::uint64_t i = o / nb, j = o % nb;
  std::uint32_t* dst = out + o * (wa + wb);
  for (std::uint32_t k = 0; k < wa; ++k) dst[k] = a[i * wa + k];
  for (std::uint32_t k = 0; k < wb; ++k) dst[wa + k] = b[j * wb + k];
}

__global__ void arith_words(const std::uint32_t* a, const std::uint32_t* b, std::uint64_t words, std::uint32_t w,
                            std::uint32_t kw, std::uint32_t op, std::uint32_t* out) {
  const std::uint64_t k = static_cast<std::uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (k >= words) return;
  const std::uint32_t x = a[k], y = b[k];
  // Word k is a key word when k % w < kw: keys come from a.
  out[k] = k % w < kw ? x : op == 0 ? x + y : op == 1 ? x - y : x * y;
}

}  // namespace

const CudaRelation& as_cuda(const DeviceRelation& r) {
  auto* c = dynamic_cast<const CudaRelation*>(&r);
  if (!c) throw std::invalid_argument("relation handle was not made by the cuda backend");
  return *c;
}

CudaRelation& ensure(DeviceRel& out, std::uint64_t rows, int values, int key_words) {
  auto* c = dynamic_cast<CudaRelation*>(out.get());
  const std::uint64_t words = rows * static_cast<std::uint64_t>(key_words + values);
  if (!c || c->capacity_words() < words || out.use_count() > 1) {
    auto fresh = std::make_shared<CudaRelation>(std::max<std::uint64_t>(words, 1));
    c = fresh.get();
    out = fresh;
  }
  c->shape(rows, values, key_words);
  return *c;
}

std::uint32_t rows32(std::uint64_t rows) {
  if (rows >= 0x7fffffffull)
    throw SkipCase("relations of 2^31 tuples or more are beyond the cuda backend's 32-bit row indices");
  return static_cast<std::uint32_t>(rows);
}

bool empty_join(const CudaRelation& l, const CudaRelation& r, DeviceRel& out) {
  if (l.rows() && r.rows()) return false;
  ensure(out, 0, l.values() + r.values(), l.key_words());
  return true;
}

Aggregate identity_aggregate(int values, ReduceOp op) {
  Aggregate a;
  a.values = values;
  const std::uint64_t identity = op == ReduceOp::Min ? 0xffffffffull : 0;
  for (int v = 0; v < values; ++v) a.value[static_cast<std::size_t>(v)] = identity;
  return a;
}

std::uint32_t read_count(CudaRa::State& s, const std::uint32_t* d_count) {
  auto* host = reinterpret_cast<std::uint32_t*>(s.count_host.get());
  HDB_CUDA_CHECK(cudaMemcpyAsync(host, d_count, 4, cudaMemcpyDeviceToHost, s.stream.get()));
  s.stream.sync();
  return *host;
}

JoinCount read_count64(CudaRa::State& s, const JoinCount* d_count) {
  JoinCount* host = s.count_host.get();
  HDB_CUDA_CHECK(cudaMemcpyAsync(host, d_count, sizeof(JoinCount), cudaMemcpyDeviceToHost, s.stream.get()));
  s.stream.sync();
  return *host;
}

void read_results(CudaRa::State& s, const std::uint64_t* d_results, int values, Aggregate& result) {
  if (values <= 0) return;
  const auto n = static_cast<std::size_t>(values);
  HDB_CUDA_CHECK(cudaMemcpyAsync(s.result_host.get(), d_results, n * sizeof(std::uint64_t), cudaMemcpyDeviceToHost,
                                 s.stream.get()));
  s.stream.sync();
  std::copy(s.result_host.get(), s.result_host.get() + n, result.value.begin());
}

KeepFlag keep_flag(std::uint32_t mode, const CudaRelation& in, const CudaRelation* other, const Predicate& pred) {
  Predicate p = pred;
  p.key_words = in.key_words();
  return make_keep_flag(mode, in.data(), rows32(in.rows()), in.width(), in.key_words(), other ? other->data() : nullptr,
                        other ? rows32(other->rows()) : 0u, p);
}

void launch_gather_rows(CudaRa::State& s, const std::uint32_t* in, std::uint32_t w, const std::uint32_t* rows,
                        std::uint32_t count, std::uint32_t* out) {
  if (!count) return;
  HDB_LAUNCH(gather_rows, blocks_for(count), kBlock, 0, s.stream.get())(in, w, rows, count, out);
  HDB_CUDA_CHECK_LAUNCH("gather_rows");
}

void launch_reduce_runs(CudaRa::State& s, const CudaRelation& in, ReduceOp op, const std::uint32_t* heads,
                        std::uint32_t runs, std::uint32_t* out) {
  if (!runs) return;
  const std::uint32_t opc = op == ReduceOp::Sum ? 0 : op == ReduceOp::Min ? 1 : 2;
  HDB_LAUNCH(reduce_runs, blocks_for(runs), kBlock, 0, s.stream.get())
  (in.data(), rows32(in.rows()), static_cast<std::uint32_t>(in.width()), static_cast<std::uint32_t>(in.key_words()),
   opc, heads, runs, out);
  HDB_CUDA_CHECK_LAUNCH("reduce_runs");
}

void launch_merge_scatter(CudaRa::State& s, const std::uint32_t* a, std::uint32_t n, const std::uint32_t* b,
                          std::uint32_t m, std::uint32_t w, std::uint32_t* out) {
  if (n + m == 0) return;
  HDB_LAUNCH(merge_scatter, blocks_for(std::uint64_t{n} + m), kBlock, 0, s.stream.get())(a, n, b, m, w, out);
  HDB_CUDA_CHECK_LAUNCH("merge_scatter");
}

void launch_project(CudaRa::State& s, const CudaRelation& in, const std::vector<int>& columns, std::uint32_t* out) {
  const std::uint32_t n = rows32(in.rows());
  if (!n) return;
  std::uint32_t packed = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) packed |= static_cast<std::uint32_t>(columns[c]) << (4 * c);
  HDB_LAUNCH(project_rows, blocks_for(n), kBlock, 0, s.stream.get())
  (in.data(), n, static_cast<std::uint32_t>(in.width()), static_cast<std::uint32_t>(columns.size()), packed, out);
  HDB_CUDA_CHECK_LAUNCH("project_rows");
}

namespace {
// The product kernel runs one thread per output tuple in one grid of at most 2^31 - 1 blocks:
// checked in 64 bits before the output is allocated (blocks_for() narrows to 32 bits and would wrap).
void check_product_grid(std::uint64_t rows) {
  if ((rows + kBlock - 1) / kBlock > 0x7fffffffull)
    throw SkipCase("a product of " + std::to_string(rows) + " tuples is beyond the cuda product kernel's one grid " +
                   "(2^31 - 1 blocks of " + std::to_string(kBlock) + " threads)");
}
}  // namespace

void launch_product(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, std::uint32_t* out) {
  const std::uint64_t rows = a.rows() * b.rows();
  if (!rows) return;
  check_product_grid(rows);
  HDB_LAUNCH(product_rows, blocks_for(rows), kBlock, 0, s.stream.get())
  (a.data(), static_cast<std::uint32_t>(a.width()), b.data(), rows32(b.rows()), static_cast<std::uint32_t>(b.width()),
   rows, out);
  HDB_CUDA_CHECK_LAUNCH("product_rows");
}

void launch_arith(CudaRa::State& s, const CudaRelation& a, const CudaRelation& b, ArithOp op, std::uint32_t* out) {
  const std::uint64_t words = a.rows() * static_cast<std::uint64_t>(a.width());
  if (!words) return;
  const std::uint32_t opc = op == ArithOp::Add ? 0 : op == ArithOp::Subtract ? 1 : 2;
  HDB_LAUNCH(arith_words, blocks_for(words), kBlock, 0, s.stream.get())
  (a.data(), b.data(), words, static_cast<std::uint32_t>(a.width()), static_cast<std::uint32_t>(a.key_words()), opc,
   out);
  HDB_CUDA_CHECK_LAUNCH("arith_words");
}

CudaRa::CudaRa(hdb::cuda::CudaPlatform& platform) : platform_(platform) {}
CudaRa::~CudaRa() = default;

void CudaRa::release_scratch() {
  if (s_) s_->scratch.clear();
}

CudaRa::State& CudaRa::state() {
  // Created on first use: the device is chosen by the platform's init, after construction.
  if (!s_) s_ = std::make_unique<State>(platform_);
  return *s_;
}

namespace {

enum class Impl { Paper, Cub, Tuned, Hash };

// paper: every operator but sort; cub: the operators with a data-dependent output or a reduction,
// and sort; tuned: select, unique, join, reduce and the streaming project and arithmetic; hash:
// the operators a database engine hashes, on input in any order (ra_hash.cu).
const VariantTable<Impl>& table() {
  static const VariantTable<Impl> t(
      "the cuda ra backend",
      {{Impl::Paper, {"paper", test_names(paper_ops()), ""}},
       {Impl::Cub,
        {"cub",
         {"select", "unique", "join", "reduce", "reduce_by_key", "set_union", "set_intersection", "set_difference",
          "sort"},
         ""}},
       {Impl::Tuned, {"tuned", {"select", "unique", "join", "reduce", "project", "add", "subtract", "multiply"}, ""}},
       {Impl::Hash,
        {"hash",
         test_names({Op::Unique, Op::ReduceByKey, Op::Join, Op::SetUnion, Op::SetIntersection, Op::SetDifference}), "",
         true}}});
  return t;
}

}  // namespace

const VariantList& CudaRa::variant_table() const { return table(); }

Relation CudaRa::host_relation(std::uint64_t rows, int values, Transfer kind, int key_words) {
  if (kind != Transfer::Pinned) return Relation(rows, values, key_words);
  return Relation(std::make_shared<PinnedMemory>(rows * static_cast<std::uint64_t>(key_words + values)), rows, values,
                  key_words);
}

namespace {
// One copy between host and device on the state's stream: h2d or d2h by events, total by wall.
Breakdown timed_copy(CudaRa::State& s, void* dst, const void* src, std::uint64_t bytes, cudaMemcpyKind kind) {
  Breakdown b;
  HostTimer wall;
  s.timer.start(s.stream.get());
  HDB_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, kind, s.stream.get()));
  (kind == cudaMemcpyHostToDevice ? b.h2d : b.d2h) = s.timer.stop(s.stream.get());
  b.total = wall.seconds();
  return b;
}
}  // namespace

void CudaRa::plan_scratch(const OpShape& shape, MemoryPlan& plan) const {
  const Impl impl = table().id(shape.variant);
  switch (impl) {
    case Impl::Paper: paper_plan(shape, plan); break;
    case Impl::Cub:
    case Impl::Tuned: cub_plan(shape, impl == Impl::Tuned, plan); break;
    case Impl::Hash: hash_plan(shape, plan); break;
  }
}

Breakdown CudaRa::upload(const Relation& host, DeviceRel& out) {
  State& s = state();
  CudaRelation& d = ensure(out, host.rows(), host.values(), host.key_words());
  if (!host.words()) return {};
  return timed_copy(s, d.data(), host.data(), host.bytes(), cudaMemcpyHostToDevice);
}

Breakdown CudaRa::download(const DeviceRelation& dev, Relation& host) {
  State& s = state();
  const CudaRelation& d = as_cuda(dev);
  if (host.values() != d.values() || host.key_words() != d.key_words() || host.capacity_rows() < d.rows())
    host = Relation(d.rows(), d.values(), d.key_words());
  host.set_rows(d.rows());
  if (!d.rows()) return {};
  return timed_copy(s, host.data(), d.data(), d.bytes(), cudaMemcpyDeviceToHost);
}

Breakdown CudaRa::run_project(const DeviceRelation& in_, const ProjectLayout& layout, const std::string& variant,
                              DeviceRel& out_handle) {
  State& s = state();
  const CudaRelation& in = as_cuda(in_);
  const std::vector<int>& columns = layout.words;
  CudaRelation& out = ensure(out_handle, in.rows(), layout.values(), layout.key_words);
  PhaseTimer& t = s.begin_op();
  t.phase("compute");
  ran_.work_group = kBlock;
  if (table().id(variant) == Impl::Tuned)
    ran_.impl = launch_tuned_project(s, in, columns, out.data());
  else
    launch_project(s, in, columns, out.data());
  return t.finish();
}

Breakdown CudaRa::run_select(const DeviceRelation& in_, const Predicate& pred, const std::string& variant,
                             DeviceRel& out) {
  const CudaRelation& in = as_cuda(in_);
  switch (table().id(variant)) {
    case Impl::Tuned: return tuned_compact(state(), kSelect, in, pred, out);
    case Impl::Paper: return paper_compact(state(), kSelect, in, nullptr, pred, out);
    case Impl::Cub: return cub_compact(state(), kSelect, in, nullptr, pred, out);
    case Impl::Hash: break;  // not registered for select (begin_op refuses it)
  }
  throw std::logic_error("select: a variant without a case");
}

Breakdown CudaRa::run_unique(const DeviceRelation& in_, const std::string& variant, DeviceRel& out) {
  const CudaRelation& in = as_cuda(in_);
  switch (table().id(variant)) {
    case Impl::Tuned: return tuned_compact(state(), kUnique, in, Predicate{}, out);
    case Impl::Paper: return paper_compact(state(), kUnique, in, nullptr, Predicate{}, out);
    case Impl::Cub: return cub_compact(state(), kUnique, in, nullptr, Predicate{}, out);
    case Impl::Hash: return hash_unique(state(), in, out);
  }
  throw std::logic_error("unique: a variant without a case");
}

Timed<Aggregate> CudaRa::run_reduce(const DeviceRelation& in_, ReduceOp op, const std::string& variant) {
  Timed<Aggregate> r;
  const CudaRelation& in = as_cuda(in_);
  switch (table().id(variant)) {
    case Impl::Paper: r.time = paper_reduce(state(), in, op, r.value); break;
    case Impl::Cub: r.time = cub_reduce(state(), in, op, r.value); break;
    case Impl::Tuned: r.time = tuned_reduce(state(), in, op, r.value); break;
    case Impl::Hash: throw std::logic_error("reduce: the hash variant is not registered for it");
  }
  return r;
}

Breakdown CudaRa::run_reduce_by_key(const DeviceRelation& in_, ReduceOp op, const std::string& variant,
                                    DeviceRel& out) {
  const CudaRelation& in = as_cuda(in_);
  // Registered for paper, cub and hash only (begin_op checked it).
  switch (table().id(variant)) {
    case Impl::Paper: return paper_reduce_by_key(state(), in, op, out);
    case Impl::Hash: return hash_reduce_by_key(state(), in, op, out);
    case Impl::Cub: return cub_reduce_by_key(state(), in, op, out);
    case Impl::Tuned: break;
  }
  throw std::logic_error("reduce_by_key: the tuned variant is not registered for it");
}

Breakdown CudaRa::run_join(const DeviceRelation& l_, const DeviceRelation& r_, const std::string& variant,
                           DeviceRel& out) {
  const CudaRelation& l = as_cuda(l_);
  const CudaRelation& r = as_cuda(r_);
  const Impl impl = table().id(variant);
  if (impl == Impl::Paper) return paper_join(state(), l, r, out);
  if (impl == Impl::Hash) return hash_join(state(), l, r, out);
  return cub_join(state(), l, r, impl == Impl::Tuned, out);
}

Breakdown CudaRa::run_set_op(const DeviceRelation& a_, const DeviceRelation& b_, SetOp op, const std::string& variant,
                             DeviceRel& out) {
  const CudaRelation& a = as_cuda(a_);
  const CudaRelation& b = as_cuda(b_);
  const std::uint32_t mode = op == SetOp::Intersection ? kIntersection : kDifference;
  if (table().id(variant) == Impl::Hash) return hash_set_op(state(), a, b, op, out);
  if (table().id(variant) == Impl::Paper)
    return op == SetOp::Union ? paper_union(state(), a, b, out) : paper_compact(state(), mode, a, &b, Predicate{}, out);
  return op == SetOp::Union ? cub_union(state(), a, b, out) : cub_compact(state(), mode, a, &b, Predicate{}, out);
}

Breakdown CudaRa::run_product(const DeviceRelation& a_, const DeviceRelation& b_, const std::string& /*variant*/,
                              DeviceRel& out_handle) {
  State& s = state();
  const CudaRelation& a = as_cuda(a_);
  const CudaRelation& b = as_cuda(b_);
  check_product_grid(a.rows() * b.rows());  // before the output is allocated
  CudaRelation& out = ensure(out_handle, a.rows() * b.rows(), a.values() + b.width(), a.key_words());
  PhaseTimer& t = s.begin_op();
  t.phase("compute");
  launch_product(s, a, b, out.data());
  return t.finish();
}

Breakdown CudaRa::run_arith(const DeviceRelation& a_, const DeviceRelation& b_, ArithOp op, const std::string& variant,
                            DeviceRel& out_handle) {
  State& s = state();
  const CudaRelation& a = as_cuda(a_);
  const CudaRelation& b = as_cuda(b_);
  CudaRelation& out = ensure(out_handle, a.rows(), a.values(), a.key_words());
  PhaseTimer& t = s.begin_op();
  t.phase("compute");
  ran_.work_group = kBlock;
  if (table().id(variant) == Impl::Tuned)
    ran_.impl = launch_tuned_arith(s, a, b, op, out.data());
  else
    launch_arith(s, a, b, op, out.data());
  return t.finish();
}

Breakdown CudaRa::run_sort(const DeviceRelation& in_, const std::string& /*variant*/, DeviceRel& out) {
  return cub_sort(state(), as_cuda(in_), out);
}

}  // namespace hdb::ra::cuda
