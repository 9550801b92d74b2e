#include "ra_backend.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "harness/errors.hpp"
#include "ra_relation.hpp"

namespace hdb::opencl::kernels {
extern const char ra[];
}

namespace hdb::ra::opencl {
namespace {

using hdb::opencl::checked;
using hdb::opencl::event_seconds;
using hdb::opencl::HostStaging;
using hdb::opencl::OpenClPlatform;
using hdb::opencl::set_args;

// Pinned host memory: a mapped CL_MEM_ALLOC_HOST_PTR buffer (the runtime's HostStaging).
class PinnedMemory : public HostMemory {
 public:
  PinnedMemory(OpenClPlatform& p, std::uint64_t words) : staging_(p, words * 4, Transfer::Pinned) {
    words_ = static_cast<std::uint32_t*>(staging_.data());
    capacity_ = words;
  }
  ~PinnedMemory() override { words_ = nullptr; }  // the staging buffer owns the memory
  Transfer kind() const override { return Transfer::Pinned; }

 private:
  HostStaging staging_;
};

}  // namespace

const ClRelation& as_cl(const DeviceRelation& r) {
  auto* c = dynamic_cast<const ClRelation*>(&r);
  if (!c) throw std::invalid_argument("relation handle was not made by the opencl backend");
  return *c;
}

std::uint32_t rows32(std::uint64_t rows) {
  if (rows > std::numeric_limits<std::uint32_t>::max() - 1)
    throw SkipCase("relations of 2^32 tuples or more are beyond the opencl backend's 32-bit row indices");
  return static_cast<std::uint32_t>(rows);
}

ClRelation& ensure(OpenClPlatform& p, DeviceRel& out, std::uint64_t rows, int values, int key_words) {
  auto* c = dynamic_cast<ClRelation*>(out.get());
  const std::uint64_t words = rows * static_cast<std::uint64_t>(key_words + values);
  if (!c || c->capacity_words() < words || out.use_count() > 1) {
    if (words * 4 > p.max_alloc_bytes())
      throw SkipCase("a buffer of " + std::to_string(words * 4 >> 20) + " MiB exceeds the device's largest allocation");
    auto fresh = checked("allocating a relation", [&] {
      return std::make_shared<ClRelation>(hdb::opencl::device_buffer(p.context_ref(), words * 4), words);
    });
    c = fresh.get();
    out = fresh;
  }
  c->shape(rows, values, key_words);
  return *c;
}

namespace {

enum class Impl { Paper, Tuned, Radix, Hash };

// paper: the paper's kernels for every operator but sort; radix: sort.hpp's key sort and a gather;
// tuned: the chunked, barrier-free select, unique and join, and the whole-tuple sort; hash: the
// operators a database engine runs by hashing unsorted input (ra_hash.cpp), in any input order.
const VariantTable<Impl>& table() {
  static const VariantTable<Impl> t(
      "the opencl ra backend",
      {{Impl::Paper, {"paper", test_names(paper_ops()), ""}},
       {Impl::Tuned, {"tuned", {"select", "unique", "join", "sort"}, ""}},
       {Impl::Radix, {"radix", {"sort"}, ""}},
       {Impl::Hash,
        {"hash",
         test_names({Op::Unique, Op::ReduceByKey, Op::Join, Op::SetUnion, Op::SetIntersection, Op::SetDifference}), "",
         true}}});
  return t;
}

bool is_tuned(const std::string& variant) { return table().id(variant) == Impl::Tuned; }
bool is_hash(const std::string& variant) { return table().id(variant) == Impl::Hash; }

}  // namespace

const VariantList& OpenClRa::variant_table() const { return table(); }

std::size_t OpenClRa::work_group() {
  // The paper's constant 256, or the largest power of two the device allows below it.
  if (!wg_) wg_ = hdb::opencl::preferred_work_group(p_);
  return wg_;
}

cl::Kernel& OpenClRa::kernel(const std::string& name, int key_words) {
  auto it = kernels_.find({name, key_words});
  if (it != kernels_.end()) return it->second;
  cl::Program& program = p_.program("ra" + std::to_string(32 * key_words), hdb::opencl::kernels::ra,
                                    "-DWG=" + std::to_string(work_group()) + " -DKW=" + std::to_string(key_words));
  return kernels_
      .emplace(std::make_pair(name, key_words),
               checked("creating kernel " + name, [&] { return cl::Kernel(program, name.c_str()); }))
      .first->second;
}

void OpenClRa::launch(Trace& tr, const std::string& phase, cl::Kernel& k, std::uint64_t items) {
  if (items == 0) return;
  const std::uint64_t wg = work_group();
  const std::uint64_t global = (items + wg - 1) / wg * wg;
  cl::Event e;
  checked("running " + phase, [&] {
    return p_.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(wg), nullptr, &e);
  });
  tr.add(phase, e);
}

Breakdown OpenClRa::finish(Trace& tr) {
  checked("finishing an operator", [&] { return p_.queue().finish(); });
  // The paper's kernels run at the work-group size they were built for (-DWG).
  if (!ran_.work_group && !tr.empty()) ran_.work_group = static_cast<int>(work_group());
  Breakdown b;
  if (tr.empty()) return b;
  b.kernel = b.total = tr.span();
  tr.add_phases(b);
  return b;
}

std::uint64_t OpenClRa::scan(Trace& tr, const cl::Buffer& in, cl::Buffer& out, std::uint32_t n, bool wide) {
  if (n == 0) return 0;
  auto& s = wide ? scan64_ : scan_;
  if (!s) s = std::make_unique<hdb::opencl::DeviceScan>(p_, wide);
  std::vector<cl::Event> evs;
  checked("scanning", [&] { s->run(in, out, n, evs); });
  tr.take("scan", evs);
  return checked("reading the scan total", [&] { return s->total(); });
}

std::uint32_t OpenClRa::compact(Trace& tr, std::uint32_t mode, const DeviceRelation& in_, const DeviceRelation* other,
                                const Predicate& pred, bool emit_index) {
  const ClRelation& in = as_cl(in_);
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) return 0;
  const std::uint64_t wg = work_group();
  const std::uint64_t groups = (n + wg - 1) / wg;
  const std::uint64_t ow = emit_index ? 1 : static_cast<std::uint64_t>(in.width());
  cl::Buffer& part = scratch_.get("part", groups * wg * ow * 4);
  cl::Buffer& counts = scratch_.get("counts", groups * 4);
  cl::Buffer& offsets = scratch_.get("offsets", groups * 4);
  static const char* const kCompactKernels[] = {"compact_select", "compact_unique", "compact_intersection",
                                                "compact_difference", "compact_union_keep"};
  cl::Kernel& k = kernel(kCompactKernels[mode], in.key_words());
  const ClRelation& o = other ? as_cl(*other) : in;
  set_args("compact_partition arguments", k, in.buf, n, u32(in.width()), o.buf, rows32(other ? other->rows() : 0),
           u32(pred.word()), u32(pred.wide() ? 1 : 0), cl_ulong{pred.lo}, cl_ulong{pred.hi}, u32(emit_index ? 1 : 0),
           part, counts);
  launch(tr, "partition", k, n);
  return static_cast<std::uint32_t>(scan(tr, counts, offsets, static_cast<std::uint32_t>(groups)));
}

void OpenClRa::gather_into(Trace& tr, std::uint64_t rows_in, std::uint32_t w, const cl::Buffer& out,
                           std::uint32_t items) {
  const std::uint64_t wg = work_group();
  const std::uint64_t slot = wg * items;
  const std::uint64_t groups = (rows_in + slot - 1) / slot;
  cl::Kernel& k = kernel("gather", 1);
  set_args("gather arguments", k, scratch_.get("part", 0), scratch_.get("counts", 0), scratch_.get("offsets", 0), w,
           static_cast<std::uint32_t>(slot), out);
  launch(tr, "gather", k, groups * wg);
}

Relation OpenClRa::host_relation(std::uint64_t rows, int values, Transfer kind, int key_words) {
  if (kind != Transfer::Pinned) return Relation(rows, values, key_words);
  const std::uint64_t words = rows * static_cast<std::uint64_t>(key_words + values);
  return Relation(std::make_shared<PinnedMemory>(p_, words), rows, values, key_words);
}

Breakdown OpenClRa::upload(const Relation& host, DeviceRel& out) {
  ClRelation& d = ensure(p_, out, host.rows(), host.values(), host.key_words());
  Breakdown b;
  if (!host.words()) return b;
  HostTimer t;
  cl::Event e;
  checked("uploading a relation",
          [&] { return p_.queue().enqueueWriteBuffer(d.buf, CL_TRUE, 0, host.bytes(), host.data(), nullptr, &e); });
  b.h2d = event_seconds(e);
  b.total = t.seconds();
  return b;
}

Breakdown OpenClRa::download(const DeviceRelation& dev, Relation& host) {
  const ClRelation& d = as_cl(dev);
  if (host.values() != d.values() || host.key_words() != d.key_words() || host.capacity_rows() < d.rows())
    host = Relation(d.rows(), d.values(), d.key_words());
  host.set_rows(d.rows());
  Breakdown b;
  if (!d.rows()) return b;
  HostTimer t;
  cl::Event e;
  checked("downloading a relation",
          [&] { return p_.queue().enqueueReadBuffer(d.buf, CL_TRUE, 0, d.bytes(), host.data(), nullptr, &e); });
  b.d2h = event_seconds(e);
  b.total = t.seconds();
  return b;
}

Breakdown OpenClRa::run_project(const DeviceRelation& in_, const ProjectLayout& layout, const std::string& /*variant*/,
                                DeviceRel& out_handle) {
  const ClRelation& in = as_cl(in_);
  const std::uint32_t n = rows32(in.rows());
  const std::vector<int>& columns = layout.words;
  ClRelation& out = ensure(p_, out_handle, n, layout.values(), layout.key_words);
  std::uint32_t packed = 0;
  for (std::size_t c = 0; c < columns.size(); ++c) packed |= static_cast<std::uint32_t>(columns[c]) << (4 * c);
  Trace tr;
  cl::Kernel& k = kernel("project", 1);
  set_args("project arguments", k, in.buf, n, u32(in.width()), u32(static_cast<std::int64_t>(columns.size())), packed,
           out.buf);
  launch(tr, "compute", k, n);
  return finish(tr);
}

std::uint32_t OpenClRa::compact_coarse(Trace& tr, bool unique_mode, const DeviceRelation& in_, const Predicate& pred) {
  const ClRelation& in = as_cl(in_);
  const std::uint32_t n = rows32(in.rows());
  if (n == 0) return 0;
  const std::uint64_t slot = work_group() * kCoarseItems;
  const std::uint64_t groups = (n + slot - 1) / slot;
  cl::Buffer& part = scratch_.get("part", groups * slot * static_cast<std::uint64_t>(in.width()) * 4);
  cl::Buffer& counts = scratch_.get("counts", groups * 4);
  cl::Buffer& offsets = scratch_.get("offsets", groups * 4);
  cl::Kernel& k = kernel("compact_coarse", in.key_words());
  set_args("compact_coarse arguments", k, u32(unique_mode ? 1 : 0), in.buf, n, u32(in.width()), u32(pred.word()),
           u32(pred.wide() ? 1 : 0), cl_ulong{pred.lo}, cl_ulong{pred.hi}, part, counts);
  launch(tr, "partition", k, groups * work_group());
  return static_cast<std::uint32_t>(scan(tr, counts, offsets, static_cast<std::uint32_t>(groups)));
}

Breakdown OpenClRa::compaction(const DeviceRelation& in, bool unique_mode, const Predicate& pred,
                               const std::string& variant, DeviceRel& out_handle) {
  Trace tr;
  const bool tuned = is_tuned(variant);
  if (tuned) ran_.items_per_thread = kCoarseItems;
  const std::uint32_t total =
      tuned ? compact_coarse(tr, unique_mode, in, pred) : compact(tr, unique_mode ? 1 : 0, in, nullptr, pred, false);
  ClRelation& out = ensure(p_, out_handle, total, in.values(), in.key_words());
  if (total) gather_into(tr, in.rows(), u32(in.width()), out.buf, tuned ? kCoarseItems : 1);
  return finish(tr);
}

Breakdown OpenClRa::run_select(const DeviceRelation& in, const Predicate& pred, const std::string& variant,
                               DeviceRel& out_handle) {
  return compaction(in, false, pred, variant, out_handle);
}

Breakdown OpenClRa::run_unique(const DeviceRelation& in, const std::string& variant, DeviceRel& out_handle) {
  if (is_hash(variant)) return hash_group(in, false, ReduceOp::Sum, out_handle);
  Predicate all;
  all.key_words = in.key_words();
  return compaction(in, true, all, variant, out_handle);
}

Timed<Aggregate> OpenClRa::run_reduce(const DeviceRelation& in_, ReduceOp op, const std::string& /*variant*/) {
  const ClRelation& in = as_cl(in_);
  const std::uint32_t n = rows32(in.rows());
  const std::uint32_t values = u32(in.values());
  Aggregate agg;
  agg.values = in.values();
  const std::uint64_t identity = op == ReduceOp::Min ? 0xffffffffull : 0;
  for (int v = 0; v < in.values(); ++v) agg.value[static_cast<std::size_t>(v)] = identity;
  if (n == 0 || values == 0) return {agg, Breakdown{}};
  const std::uint64_t wg = work_group();
  // Enough groups to fill the device, few enough that one group folds the partials quickly.
  const std::uint64_t groups = std::min<std::uint64_t>((n + wg - 1) / wg, 1024);
  cl::Buffer& partials = scratch_.get("reduce.partials", groups * values * 8);
  cl::Buffer& result = scratch_.get("reduce.result", values * 8);
  const std::uint32_t opc = reduce_code(op);
  Trace tr;
  cl::Kernel& k = kernel("reduce_partial", in.key_words());
  set_args("reduce arguments", k, in.buf, n, u32(in.width()), opc, partials);
  launch(tr, "partition", k, groups * wg);
  cl::Kernel& f = kernel("reduce_final", 1);
  set_args("reduce_final arguments", f, partials, static_cast<std::uint32_t>(groups), values, opc, result);
  launch(tr, "compute", f, wg);
  cl::Event e;
  checked("reading the aggregate",
          [&] { return p_.queue().enqueueReadBuffer(result, CL_TRUE, 0, values * 8, agg.value.data(), nullptr, &e); });
  tr.add("compute", e);
  return {agg, finish(tr)};
}

Breakdown OpenClRa::run_reduce_by_key(const DeviceRelation& in_, ReduceOp op, const std::string& variant,
                                      DeviceRel& out_handle) {
  if (is_hash(variant)) return hash_group(in_, true, op, out_handle);
  const ClRelation& in = as_cl(in_);
  Trace tr;
  // Heads of key runs, as row indices, by the unique pipeline; then one work-item per run.
  const std::uint32_t runs = compact(tr, 1, in, nullptr, Predicate{}, true);
  ClRelation& out = ensure(p_, out_handle, runs, in.values(), in.key_words());
  if (runs) {
    cl::Buffer& heads = scratch_.get("rbk.heads", std::uint64_t{runs} * 4);
    gather_into(tr, in.rows(), 1, heads);
    cl::Kernel& k = kernel("reduce_runs", in.key_words());
    set_args("reduce_runs arguments", k, in.buf, rows32(in.rows()), u32(in.width()), reduce_code(op), heads, runs,
             out.buf);
    launch(tr, "compute", k, runs);
  }
  return finish(tr);
}

bool OpenClRa::cpu_device() const {
  if (cpu_ < 0) cpu_ = (p_.device().getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0 ? 1 : 0;
  return cpu_ == 1;
}

void OpenClRa::override_tuning(bool cpu, std::uint32_t floor, bool staged, unsigned sort_bits) {
  cpu_ = cpu ? 1 : 0;
  join_staged_ = staged;
  piece_floor_ = floor;
  sort_bits_ = sort_bits;
  tuning_forced_ = true;
  tsort_.reset();
  tuple_sort();
}

hdb::opencl::TupleSort& OpenClRa::tuple_sort() {
  if (!tsort_) {
    tsort_ = std::make_unique<hdb::opencl::TupleSort>(p_);
    if (tuning_forced_) tsort_->override_tuning(cpu_ == 1, piece_floor_, sort_bits_);
  }
  return *tsort_;
}

std::uint32_t OpenClRa::join_pieces(std::uint64_t merged) {
  // CPU device: about 64 pieces per compute unit (PoCL's threads take them in turn, so a piece with
  // a large output leaves the rest to the other threads), none shorter than 8192 merged rows (two
  // binary searches a piece). GPU: enough work-items to fill the device, 64 merged rows or more each.
  const std::uint64_t units = std::max<cl_uint>(1, p_.device().getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  const std::uint64_t want = cpu_device() ? units * 64 : units * 2048;
  const std::uint64_t floor = piece_floor_ ? piece_floor_ : cpu_device() ? 8192 : 64;
  const std::uint64_t len = std::max<std::uint64_t>(floor, (merged + want - 1) / want);
  return static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (merged + len - 1) / len));
}

void OpenClRa::launch_chunks(Trace& tr, const std::string& phase, cl::Kernel& k, std::uint64_t items, bool group_each) {
  if (items == 0) return;
  // Barrier-free kernels: one work-item a group on a CPU device (each group is one task of PoCL's
  // thread pool, and a group's copy one plain loop), 64 on a GPU. group_each: a work-group per item.
  const std::uint64_t wg = cpu_device() ? 1 : std::min<std::uint64_t>(64, work_group());
  ran_.work_group = static_cast<int>(wg);
  const std::uint64_t global = group_each ? items * wg : (items + wg - 1) / wg * wg;
  cl::Event e;
  checked("running " + phase, [&] {
    return p_.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), cl::NDRange(wg), nullptr, &e);
  });
  tr.add(phase, e);
}

Breakdown OpenClRa::run_join(const DeviceRelation& l_, const DeviceRelation& r_, const std::string& variant,
                             DeviceRel& out_handle) {
  if (is_hash(variant)) return hash_join(l_, r_, out_handle);
  const ClRelation& l = as_cl(l_);
  const ClRelation& r = as_cl(r_);
  const std::uint32_t nl = rows32(l.rows()), nr = rows32(r.rows());
  const int out_values = l.values() + r.values(), kw = l.key_words();
  Trace tr;
  if (nl == 0 || nr == 0) {
    ensure(p_, out_handle, 0, out_values, kw);
    return finish(tr);
  }
  if (is_tuned(variant)) {
    const std::uint32_t pieces = join_pieces(std::uint64_t{nl} + nr);
    ran_.pieces = static_cast<int>(pieces);
    cl::Buffer& splits = scratch_.get("join.splits", (std::uint64_t{pieces} + 1) * 4);
    cl::Buffer& counts = scratch_.get("join.piece_counts", std::uint64_t{pieces} * 8);
    cl::Buffer& offsets = scratch_.get("join.piece_offsets", std::uint64_t{pieces} * 8);
    // One merge into staging slots when they fit in an eighth of the device memory, else two (cap
    // 0: the first merge only counts). A slot holds half a piece's merged rows (every pair of a
    // join with distinct keys per side), or 1/8 more than the last join's pairs per merged row
    // where that was more (a larger fan-out: the warm-up pass teaches the timed ones).
    const std::uint64_t merged = std::uint64_t{nl} + nr;
    const std::uint64_t len = (merged + pieces - 1) / pieces;
    const std::uint64_t row_bytes = static_cast<std::uint64_t>(kw + out_values) * 4;
    const std::uint64_t limit = join_staged_ ? std::min<std::uint64_t>(p_.max_alloc_bytes(), p_.memory_bytes() / 8) : 0;
    std::uint64_t cap =
        std::max<std::uint64_t>((len + 1) / 2, static_cast<std::uint64_t>(len * join_ratio_ * 1.125) + 1);
    if (cap * pieces * row_bytes > limit) cap = (len + 1) / 2;
    if (cap * pieces * row_bytes > limit) cap = 0;
    cap = std::min<std::uint64_t>(cap, std::numeric_limits<std::uint32_t>::max() / 8);
    cl::Buffer& stage = cap ? scratch_.get("join.stage", cap * pieces * row_bytes) : counts;
    cl::Kernel& k = kernel("join_path_stage", kw);
    set_args("join_path_stage arguments", k, l.buf, nl, u32(l.width()), r.buf, nr, u32(r.width()), pieces,
             static_cast<std::uint32_t>(cap), splits, counts, stage);
    launch_chunks(tr, "partition", k, pieces);
    const std::uint64_t total = scan(tr, counts, offsets, pieces, true);
    join_ratio_ = static_cast<double>(total) / static_cast<double>(merged);
    ClRelation& out = ensure(p_, out_handle, total, out_values, kw);
    if (total && cap) {
      cl::Kernel& e = kernel("join_path_emit", kw);
      set_args("join_path_emit arguments", e, l.buf, nl, u32(l.width()), r.buf, nr, u32(r.width()), pieces,
               static_cast<std::uint32_t>(cap), splits, counts, offsets, stage, out.buf);
      launch_chunks(tr, "gather", e, pieces, true);
    } else if (total) {
      cl::Kernel& c = kernel("join_path_write", kw);
      set_args("join_path_write arguments", c, l.buf, nl, u32(l.width()), r.buf, nr, u32(r.width()), pieces, splits,
               offsets, cl_ulong{total}, out.buf);
      launch_chunks(tr, "compute", c, pieces);
    }
    return finish(tr);
  }
  const std::uint64_t wg = work_group();
  const std::uint64_t groups = (nl + wg - 1) / wg;
  cl::Buffer& first = scratch_.get("join.first", std::uint64_t{nl} * 4);
  cl::Buffer& local_off = scratch_.get("join.local", std::uint64_t{nl} * 8);
  cl::Buffer& counts = scratch_.get("join.counts", groups * 8);
  cl::Buffer& offsets = scratch_.get("join.offsets", groups * 8);
  cl::Kernel& k = kernel("join_partition", kw);
  set_args("join_partition arguments", k, l.buf, nl, u32(l.width()), r.buf, nr, u32(r.width()), first, local_off,
           counts);
  launch(tr, "partition", k, nl);
  const std::uint64_t total = scan(tr, counts, offsets, static_cast<std::uint32_t>(groups), true);
  ClRelation& out = ensure(p_, out_handle, total, out_values, kw);
  if (total) {
    cl::Kernel& c = kernel("join_compute", kw);
    set_args("join_compute arguments", c, l.buf, nl, u32(l.width()), r.buf, nr, u32(r.width()), first, local_off,
             offsets, out.buf);
    launch(tr, "compute", c, nl);
  }
  return finish(tr);
}

Breakdown OpenClRa::run_set_op(const DeviceRelation& a_, const DeviceRelation& b_, SetOp op, const std::string& variant,
                               DeviceRel& out_handle) {
  if (is_hash(variant)) return hash_set_op(a_, b_, op, out_handle);
  const ClRelation& a = as_cl(a_);
  const ClRelation& b = as_cl(b_);
  const std::uint32_t w = u32(a.width());
  Trace tr;
  if (op != SetOp::Union) {
    std::uint32_t total = compact(tr, op == SetOp::Intersection ? 2 : 3, a, &b, Predicate{}, false);
    ClRelation& out = ensure(p_, out_handle, total, a.values(), a.key_words());
    if (total) gather_into(tr, a.rows(), w, out.buf);
    return finish(tr);
  }
  // Union = a merged with b' (b's copies beyond a's counts): compact b', then scatter both.
  const std::uint32_t kept = compact(tr, 4, b, &a, Predicate{}, false);
  cl::Buffer& bprime = scratch_.get("union.b", std::uint64_t{kept} * w * 4);
  if (kept) gather_into(tr, b.rows(), w, bprime);
  const std::uint32_t n = rows32(a.rows());
  const std::uint32_t total = rows32(std::uint64_t{n} + kept);
  ClRelation& out = ensure(p_, out_handle, total, a.values(), a.key_words());
  cl::Kernel& k = kernel("merge_scatter", 1);
  set_args("merge_scatter arguments", k, a.buf, n, bprime, kept, w, out.buf);
  launch(tr, "merge", k, total);
  return finish(tr);
}

Breakdown OpenClRa::run_product(const DeviceRelation& a_, const DeviceRelation& b_, const std::string& /*variant*/,
                                DeviceRel& out_handle) {
  const ClRelation& a = as_cl(a_);
  const ClRelation& b = as_cl(b_);
  const std::uint64_t rows = a.rows() * b.rows();
  ClRelation& out = ensure(p_, out_handle, rows, a.values() + b.width(), a.key_words());
  Trace tr;
  cl::Kernel& k = kernel("product", 1);
  set_args("product arguments", k, a.buf, u32(a.width()), b.buf, rows32(b.rows()), u32(b.width()),
           static_cast<cl_ulong>(rows), out.buf);
  launch(tr, "compute", k, rows);
  return finish(tr);
}

Breakdown OpenClRa::run_arith(const DeviceRelation& a_, const DeviceRelation& b_, ArithOp op,
                              const std::string& /*variant*/, DeviceRel& out_handle) {
  const ClRelation& a = as_cl(a_);
  const ClRelation& b = as_cl(b_);
  const std::uint32_t n = rows32(a.rows());
  ClRelation& out = ensure(p_, out_handle, n, a.values(), a.key_words());
  Trace tr;
  cl::Kernel& k = kernel("arith", a.key_words());
  set_args("arith arguments", k, a.buf, b.buf, n, u32(a.width()),
           u32(op == ArithOp::Add        ? 0
               : op == ArithOp::Subtract ? 1
                                         : 2),
           out.buf);
  launch(tr, "compute", k, n);
  return finish(tr);
}

void OpenClRa::release_scratch() {
  scratch_.clear();
  // The sorts and scans keep buffers of their own, sized by their last input.
  scan_.reset();
  scan64_.reset();
  sort_.reset();
  sort64_.reset();
  tsort_.reset();
}

void OpenClRa::plan_scratch(const OpShape& s, MemoryPlan& plan) const {
  if (is_hash(s.variant)) return plan_hash(s, plan);
  const std::uint64_t wg = hdb::opencl::preferred_work_group(p_);  // work_group()'s
  const auto wa = static_cast<std::uint64_t>(s.width_a);
  const std::uint64_t groups = (s.rows_a + wg - 1) / wg;
  const bool tuned = is_tuned(s.variant);
  // Partition slots hold every tuple of a partition (the kept ones fill them), plus counts and
  // offsets per partition and the scan's block sums (a few per cent of them, rounded up).
  auto partitions = [&](std::uint64_t rows, std::uint64_t words, std::uint64_t slot) {
    const std::uint64_t g = (rows + slot - 1) / slot;
    plan.add("partition slots", g * slot * words * 4).add("partition counts and offsets", g * 8 + (g / wg + 1) * 8);
  };
  switch (s.op) {
    case Op::Select:
    case Op::Unique: partitions(s.rows_a, wa, tuned ? wg * kCoarseItems : wg); break;
    case Op::ReduceByKey:
      partitions(s.rows_a, 1, wg);
      plan.add("run heads", s.out_rows * 4);
      break;
    case Op::Reduce: plan.add("partials", std::min<std::uint64_t>(groups, 1024) * wa * 8 + wa * 8); break;
    case Op::SetIntersection:
    case Op::SetDifference: partitions(s.rows_a, wa, wg); break;
    case Op::SetUnion:
      partitions(s.rows_b, wa, wg);
      plan.add("b's copies beyond a's", s.rows_b * wa * 4);
      break;
    case Op::Join:
      if (tuned) {
        // Staging slots take at most an eighth of the memory (and one allocation); pieces' splits,
        // counts and offsets are small against them.
        const std::uint64_t stage = std::min<std::uint64_t>(p_.max_alloc_bytes(), p_.memory_bytes() / 8);
        plan.add("join staging slots (at most)",
                 std::min<std::uint64_t>(stage, s.out_rows * 4 * s.out_width * 2 + 4096));
      } else {
        // First matches (uint) and 64-bit local offsets per left tuple; 64-bit counts and offsets.
        plan.add("join first matches and local offsets", s.rows_a * 12)
            .add("partition counts and offsets", groups * 16);
      }
      break;
    case Op::Sort:
      if (tuned) {
        plan.add("tuple sort buffer", s.rows_a * wa * 4).add("digit histogram", ((s.rows_a + 255) / 256 + 1) * 256 * 4);
      } else {
        // Keys and rows, and the radix sort's own second key and payload buffers and histogram.
        const std::uint64_t key = 4 * static_cast<std::uint64_t>(s.key_words);
        plan.add("sort keys and rows", s.rows_a * (key + 4))
            .add("radix sort buffers", s.rows_a * (key + 4) + 4096 * 16);
      }
      break;
    default: break;
  }
}

// The keys (sort_keys: 32- or 64-bit), a stable LSD radix sort of them with their row
// numbers (sort.hpp), then one gather of whole tuples in that order.
Breakdown OpenClRa::run_sort(const DeviceRelation& in_, const std::string& variant, DeviceRel& out) {
  const ClRelation& in = as_cl(in_);
  const std::uint32_t n = rows32(in.rows());
  const std::uint32_t w = static_cast<std::uint32_t>(in.width());
  if (out.get() == &in_) out.reset();  // the tuned sort reads its input after writing its output
  ClRelation& o = ensure(p_, out, n, in.values(), in.key_words());
  Trace tr;
  if (n == 0) return finish(tr);
  if (is_tuned(variant)) {
    // Whole tuples, 8 bits a pass (sort.hpp's TupleSort): no key extraction, no gather.
    hdb::opencl::TupleSort& tsort = tuple_sort();
    std::vector<cl::Event> evs;
    checked("sorting tuples",
            [&] { tsort.sort(in.buf, o.buf, n, w, evs, static_cast<std::uint32_t>(in.key_words())); });
    ran_.radix_bits = static_cast<int>(tsort.bits());
    ran_.items_per_thread = static_cast<int>(tsort.chunk_for(n));
    ran_.work_group = static_cast<int>(tsort.local_size());
    // Events per pass: count, the scan's launches, scatter.
    const std::size_t per_pass = evs.size() / tsort.passes();
    for (std::size_t i = 0; i < evs.size(); ++i) {
      const std::size_t k = i % per_pass;
      tr.add(k == 0 ? "count" : k + 1 == per_pass ? "scatter" : "scan", evs[i]);
    }
    return finish(tr);
  }
  const int kw = in.key_words();
  cl::Buffer& keys = scratch_.get("sort.keys", std::uint64_t{n} * 4 * static_cast<std::uint64_t>(kw));
  cl::Buffer& rows = scratch_.get("sort.rows", std::uint64_t{n} * 4);
  cl::Kernel& key = kernel("sort_keys", kw);
  set_args("sort key arguments", key, in.buf, n, w, keys);
  launch(tr, "keys", key, n);
  auto& sorter = kw == 2 ? sort64_ : sort_;
  if (!sorter)
    sorter =
        std::make_unique<hdb::opencl::RadixSort>(p_, kw == 2 ? hdb::opencl::SortKey::U64 : hdb::opencl::SortKey::U32);
  ran_.radix_bits = 4;  // RadixSort's digit (sort.hpp)
  std::vector<cl::Event> evs;
  checked("sorting keys", [&] { sorter->sort(keys, nullptr, keys, rows, n, evs); });
  tr.take("sort", evs);
  cl::Kernel& gather = kernel("gather_rows", 1);
  set_args("gather_rows arguments", gather, in.buf, n, w, rows, o.buf);
  launch(tr, "gather", gather, n);
  return finish(tr);
}

}  // namespace hdb::ra::opencl
