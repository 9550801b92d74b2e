#include "merge_backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <map>
#include <string>

#include "harness/memory_plan.hpp"

#include "harness/errors.hpp"
#include "sort.hpp"

namespace hdb::opencl::kernels {
extern const char merge[];
}

namespace hdb::opencl {
namespace {

template <class T>
const char* vkind() {
  if constexpr (std::is_same_v<T, std::uint32_t>)
    return "-DVKIND=1";
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return "-DVKIND=2";
  else if constexpr (std::is_same_v<T, U128>)
    return "-DVKIND=3";
  else
    return "-DVKIND=4";  // strings
}

template <class T>
SortKey sort_key() {
  if constexpr (std::is_same_v<T, std::uint32_t>)
    return SortKey::U32;
  else if constexpr (std::is_same_v<T, std::uint64_t>)
    return SortKey::U64;
  else
    return SortKey::U128;
}

template <class T>
cl::Program& merge_program(OpenClPlatform& p) {
  return p.program(std::string("merge") + vkind<T>(), kernels::merge, vkind<T>());
}

bool cpu_device(OpenClPlatform& p) { return (p.device().getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) != 0; }

// A host array in pageable or pinned memory and its device twin; transfers are timed by events.
class Mirror {
 public:
  Mirror(OpenClPlatform& p, std::uint64_t bytes, Transfer mode)
      : p_(p), bytes_(bytes), host_(p, bytes, mode), dev_(device_buffer(p.context_ref(), bytes)) {}
  void* host() { return host_.data(); }
  cl::Buffer& dev() { return dev_; }
  void fill(const void* src, std::uint64_t bytes) {
    if (bytes) std::memcpy(host_.data(), src, bytes);
  }
  // Enqueued without waiting; the event joins `evs` (nothing for an empty array).
  void upload(std::vector<cl::Event>& evs) { move(true, bytes_, evs); }
  void download(std::uint64_t bytes, std::vector<cl::Event>& evs) { move(false, bytes, evs); }
  template <class U>
  std::vector<U> host_vector(std::uint64_t n) {
    auto* d = static_cast<const U*>(host_.data());
    return std::vector<U>(d, d + n);
  }

 private:
  void move(bool up, std::uint64_t bytes, std::vector<cl::Event>& evs) {
    if (!bytes) return;
    cl::Event e;
    if (up)
      p_.queue().enqueueWriteBuffer(dev_, CL_FALSE, 0, bytes, host_.data(), nullptr, &e);
    else
      p_.queue().enqueueReadBuffer(dev_, CL_FALSE, 0, bytes, host_.data(), nullptr, &e);
    evs.push_back(e);
  }
  OpenClPlatform& p_;
  std::uint64_t bytes_;
  HostStaging host_;
  cl::Buffer dev_;
};

// A device-only array read back after the pass (untimed).
template <class U>
std::vector<U> read_back(OpenClPlatform& p, const cl::Buffer& b, std::uint64_t n) {
  std::vector<U> v(n);
  if (n) p.queue().enqueueReadBuffer(b, CL_TRUE, 0, n * sizeof(U), v.data());
  return v;
}

double sum_seconds(const std::vector<cl::Event>& evs) {
  double s = 0;
  for (const cl::Event& e : evs) s += event_seconds(e);
  return s;
}

// One work-item per index (global rounded by the runtime), or `groups` work-groups of `wg`.
void launch(OpenClPlatform& p, Trace& tr, const char* phase, cl::Kernel& k, std::uint64_t global,
            cl::NDRange local = cl::NullRange) {
  cl::Event e;
  p.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), local, nullptr, &e);
  tr.add(phase, e);
}
void launch_groups(OpenClPlatform& p, Trace& tr, const char* phase, cl::Kernel& k, std::uint64_t groups,
                   std::size_t wg) {
  launch(p, tr, phase, k, groups * wg, cl::NDRange(wg));
}

std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return (a + b - 1) / b; }

// ---- the steps on device buffers: each enqueues its kernels and returns what the host needs ----

// Step 1a: the delta radix-sorted with its row indices, run heads flagged and numbered by a scan,
// then U_D and every row's id scattered. Returns |U_D|.
template <class T>
class DeltaDictOp {
 public:
  DeltaDictOp(OpenClPlatform& p, std::uint64_t n)
      : p_(p),
        sort_(p, sort_key<T>()),
        scan_(p),
        keys_(device_buffer(p.context_ref(), n * sizeof(T))),
        rows_(device_buffer(p.context_ref(), n * 4)),
        pos_(device_buffer(p.context_ref(), n * 4)) {
    sort_.reserve(n);
    scan_.reserve(n);
    cl::Program& prog = merge_program<T>(p);
    heads_ = cl::Kernel(prog, "run_heads");
    scatter_ = cl::Kernel(prog, "scatter_unique");
  }
  std::uint32_t run(const cl::Buffer& delta, std::uint32_t n, cl::Buffer& ud, cl::Buffer& ids, Trace& tr) {
    if (n == 0) return 0;
    std::vector<cl::Event> evs;
    sort_.sort(delta, nullptr, keys_, rows_, n, evs);
    tr.take("1a_sort", evs);
    set_args("run_heads arguments", heads_, keys_, cl_uint{n}, pos_);
    launch(p_, tr, "1a_unique", heads_, n);
    scan_.run(pos_, pos_, n, evs);
    tr.take("1a_unique", evs);
    set_args("scatter_unique arguments", scatter_, keys_, rows_, pos_, cl_uint{n}, ud, ids);
    launch(p_, tr, "1a_scatter", scatter_, n);
    return scan_.total();
  }

 private:
  OpenClPlatform& p_;
  RadixSort sort_;
  DeviceScan scan_;
  cl::Buffer keys_, rows_, pos_;
  cl::Kernel heads_, scatter_;
};

// Step 1b as the paper's dictionary slice merge: D1 = U_M cut into equal slices (16 entries per
// work-item, at most 65536 work-items), D2 = U_D sliced by binary search, one work-item per slice
// pair, then a one-work-group scan of the counts and a pass that closes the gaps. Returns |U'_M|.
template <class T>
class SliceOp {
 public:
  SliceOp(OpenClPlatform& p, std::uint64_t n1, std::uint64_t n2)
      : p_(p),
        threads_(std::clamp<std::uint64_t>((n1 + 15) / 16, 1, 65536)),
        inter_(device_buffer(p.context_ref(), (n1 + n2) * sizeof(T))),
        counts_(device_buffer(p.context_ref(), (threads_ + 1) * 8)) {
    cl::Program& prog = merge_program<T>(p);
    merge_ = cl::Kernel(prog, "slice_merge");
    scan_ = cl::Kernel(prog, "scan_counts");
    close_ = cl::Kernel(prog, "close_gaps");
    scan_group_ = fit_work_group(p, scan_, preferred_work_group(p));
  }
  std::uint32_t run(const cl::Buffer& d1, std::uint32_t n1, const cl::Buffer& d2, std::uint32_t n2, cl::Buffer& dict,
                    cl::Buffer& x1, cl::Buffer& x2, Trace& tr) {
    const cl_ulong slice = std::max<std::uint64_t>(1, ceil_div(n1, threads_)), threads = threads_;
    set_args("slice_merge arguments", merge_, d1, cl_ulong{n1}, d2, cl_ulong{n2}, slice, threads, inter_, x1, x2,
             counts_);
    set_args("scan_counts arguments", scan_, counts_, threads, cl::Local(scan_group_ * 8));
    set_args("close_gaps arguments", close_, d1, cl_ulong{n1}, d2, cl_ulong{n2}, slice, threads, inter_, x1, x2,
             counts_, dict);
    launch(p_, tr, "1b_slice_merge", merge_, threads_);
    launch(p_, tr, "1b_scan", scan_, scan_group_, cl::NDRange(scan_group_));
    launch(p_, tr, "1b_close_gaps", close_, threads_);
    cl_ulong total = 0;
    p_.queue().enqueueReadBuffer(counts_, CL_TRUE, threads_ * 8, 8, &total);
    return static_cast<std::uint32_t>(total);
  }
  // The scan's work-group (the merge and gap-closing kernels take the runtime's) and the U_M
  // entries of a slice.
  Ran ran(std::uint64_t n1) const {
    Ran r;
    r.work_group = static_cast<int>(scan_group_);
    r.items_per_thread = static_cast<int>(std::max<std::uint64_t>(1, ceil_div(n1, threads_)));
    return r;
  }

 private:
  OpenClPlatform& p_;
  std::uint64_t threads_;
  cl::Buffer inter_, counts_;
  cl::Kernel merge_, scan_, close_;
  std::size_t scan_group_ = 1;
};

// Step 1b by merge path: the diagonal of each work-group's tile found by binary search, each
// work-item's diagonal searched between its tile's, then every work-item merges its entries
// serially twice: counting the distinct values that start in its range, and, after a scan of the
// counts, writing them and the maps. Returns |U'_M|.
template <class T>
class MergePathOp {
 public:
  MergePathOp(OpenClPlatform& p, std::uint64_t max_n) : p_(p), scan_(p), items_(cpu_device(p) ? 64 : 16) {
    cl::Program& prog = merge_program<T>(p);
    part_ = cl::Kernel(prog, "mp_partition");
    count_ = cl::Kernel(prog, "mp_merge");
    write_ = cl::Kernel(prog, "mp_merge");
    wg_ = fit_work_group(p, count_, preferred_work_group(p));
    tile_ = static_cast<std::uint32_t>(wg_ * items_);
    split_ = device_buffer(p.context_ref(), (ceil_div(max_n, tile_) + 1) * 4);
    counts_ = device_buffer(p.context_ref(), ceil_div(max_n, items_) * 4);
    scan_.reserve(ceil_div(max_n, items_));
  }
  std::uint32_t run(const cl::Buffer& a, std::uint32_t na, const cl::Buffer& b, std::uint32_t nb, cl::Buffer& dict,
                    cl::Buffer& xm, cl::Buffer& xd, Trace& tr) {
    const std::uint64_t n = std::uint64_t{na} + nb;
    if (n == 0) return 0;
    const auto groups = static_cast<cl_uint>(ceil_div(n, tile_)), items = static_cast<cl_uint>(items_);
    set_args("mp_partition arguments", part_, a, cl_uint{na}, b, cl_uint{nb}, tile_, groups, split_);
    launch(p_, tr, "1b_partition", part_, std::uint64_t{groups} + 1);
    set_args("mp_merge arguments", count_, a, cl_uint{na}, b, cl_uint{nb}, tile_, items, split_, cl_uint{0}, counts_,
             dict, xm, xd);
    launch_groups(p_, tr, "1b_count", count_, groups, wg_);
    std::vector<cl::Event> evs;
    scan_.run(counts_, counts_, static_cast<std::uint32_t>(ceil_div(n, items_)), evs);
    tr.take("1b_scan", evs);
    set_args("mp_merge arguments", write_, a, cl_uint{na}, b, cl_uint{nb}, tile_, items, split_, cl_uint{1}, counts_,
             dict, xm, xd);
    launch_groups(p_, tr, "1b_write", write_, groups, wg_);
    return scan_.total();
  }
  // The merge kernels' work-group and entries per work-item (64 on a CPU device, 16 on a GPU).
  Ran ran(std::uint64_t) const {
    Ran r;
    r.work_group = static_cast<int>(wg_);
    r.items_per_thread = static_cast<int>(items_);
    return r;
  }

 private:
  OpenClPlatform& p_;
  DeviceScan scan_;
  std::uint64_t items_;
  std::size_t wg_ = 1;
  cl_uint tile_ = 1;
  cl::Kernel part_, count_, write_;
  cl::Buffer split_, counts_;
};

// Step 2b: X_M[old id] for main rows, X_D[delta id] for delta rows. A GPU gets one 64-row block
// per work-item; a CPU device (PoCL) 1024 rows, since its work-items run as loop iterations and
// per-item overhead dominates small items.
class ReencodeOp {
 public:
  explicit ReencodeOp(OpenClPlatform& p, cl::Program& prog)
      : p_(p), rows_per_item_(cpu_device(p) ? 1024 : 64), k_(prog, "reencode") {}
  void run(const cl::Buffer& old, unsigned old_width, std::uint64_t main_rows, const cl::Buffer& xm,
           const cl::Buffer& delta_ids, const cl::Buffer& xd, std::uint64_t rows, unsigned width, cl::Buffer& out,
           Trace& tr) {
    if (BitPacked::words_for(rows, width) == 0) return;
    set_args("reencode arguments", k_, old, cl_uint{old_width}, cl_ulong{main_rows}, xm, delta_ids, xd, cl_ulong{rows},
             cl_uint{width}, cl_ulong{rows_per_item_}, out);
    launch(p_, tr, "2b", k_, ceil_div(rows, rows_per_item_));
  }

 private:
  OpenClPlatform& p_;
  std::uint64_t rows_per_item_;
  cl::Kernel k_;
};

// One pass of a step: body(up, trace, down) enqueues the uploads, the kernels and the downloads;
// h2d and d2h are the transfers' event times, kernel the span of the kernels, each kernel's time
// goes to its phase, total is the host's wall time.
template <class F>
Breakdown step_pass(OpenClPlatform& p, const char* what, F&& body) {
  return checked(what, [&] {
    HostTimer all;
    Trace tr;
    std::vector<cl::Event> up, down;
    body(up, tr, down);
    p.queue().finish();
    Breakdown b;
    b.h2d = sum_seconds(up);
    b.kernel = tr.span(0, tr.size());
    tr.add_phases(b);
    b.d2h = sum_seconds(down);
    b.total = all.seconds();
    return b;
  });
}

// ---- the cases: each pass uploads the step's inputs, runs it, downloads its outputs ----

template <class T>
class DeltaDictCase : public MergeCase<T> {
 public:
  DeltaDictCase(OpenClPlatform& p, const MergeWork<T>& w, Transfer mode)
      : p_(p),
        nd_(w.in->delta_rows()),
        ud_size_(w.delta_dict.size()),
        delta_(p, nd_ * sizeof(T), mode),
        ud_(p, nd_ * sizeof(T), mode),
        ids_(p, nd_ * 4, mode),
        op_(p, nd_) {
    delta_.fill(w.in->delta.data(), nd_ * sizeof(T));
  }
  Breakdown pass() override {
    return step_pass(p_, "delta dictionary pass", [&](auto& up, Trace& tr, auto& down) {
      delta_.upload(up);
      m_ = op_.run(delta_.dev(), static_cast<std::uint32_t>(nd_), ud_.dev(), ids_.dev(), tr);
      ud_.download(m_ * sizeof(T), down);
      ids_.download(nd_ * 4, down);
    });
  }
  MergeOutput<T> output() override {
    MergeOutput<T> o;
    o.delta_dict = ud_.host_vector<T>(m_);
    o.delta_ids = ids_.host_vector<std::uint32_t>(nd_);
    return o;
  }
  std::uint64_t transfer_bytes() const override { return (nd_ + ud_size_) * sizeof(T) + nd_ * 4; }

 private:
  OpenClPlatform& p_;
  std::uint64_t nd_, ud_size_, m_ = 0;
  Mirror delta_, ud_, ids_;
  DeltaDictOp<T> op_;
};

// Step 1b with either dictionary merge (Op = SliceOp or MergePathOp).
template <class T, class Op>
class DictMergeCase : public MergeCase<T> {
 public:
  DictMergeCase(OpenClPlatform& p, const MergeWork<T>& w, Transfer mode, Op op)
      : p_(p),
        n1_(w.in->main_dict.size()),
        n2_(w.delta_dict.size()),
        merged_(w.dict.size()),
        d1_(p, n1_ * sizeof(T), mode),
        d2_(p, n2_ * sizeof(T), mode),
        x1_(p, n1_ * 4, mode),
        x2_(p, n2_ * 4, mode),
        dict_(p, (n1_ + n2_) * sizeof(T), mode),
        op_(std::move(op)) {
    d1_.fill(w.in->main_dict.data(), n1_ * sizeof(T));
    d2_.fill(w.delta_dict.data(), n2_ * sizeof(T));
  }
  Breakdown pass() override {
    return step_pass(p_, "dictionary merge pass", [&](auto& up, Trace& tr, auto& down) {
      d1_.upload(up);
      d2_.upload(up);
      // The dictionary's length is known once the kernels ran: it decides how much comes back.
      m_ = op_.run(d1_.dev(), static_cast<std::uint32_t>(n1_), d2_.dev(), static_cast<std::uint32_t>(n2_), dict_.dev(),
                   x1_.dev(), x2_.dev(), tr);
      dict_.download(m_ * sizeof(T), down);
      x1_.download(n1_ * 4, down);
      x2_.download(n2_ * 4, down);
    });
  }
  MergeOutput<T> output() override {
    MergeOutput<T> o;
    o.dict = dict_.host_vector<T>(m_);
    o.x_m = x1_.host_vector<std::uint32_t>(n1_);
    o.x_d = x2_.host_vector<std::uint32_t>(n2_);
    return o;
  }
  std::uint64_t transfer_bytes() const override { return (n1_ + n2_ + merged_) * sizeof(T) + (n1_ + n2_) * 4; }
  Ran ran() const override { return op_.ran(n1_); }

 private:
  OpenClPlatform& p_;
  std::uint64_t n1_, n2_, merged_, m_ = 0;
  Mirror d1_, d2_, x1_, x2_, dict_;
  Op op_;
};

template <class T>
class ReencodeCase : public MergeCase<T> {
 public:
  ReencodeCase(OpenClPlatform& p, const MergeWork<T>& w, Transfer mode)
      : p_(p),
        w_(w),
        rows_(w.in->main_rows() + w.in->delta_rows()),
        nwords_(BitPacked::words_for(rows_, w.width)),
        old_(p, w.in->main_codes.words.size() * 8, mode),
        xm_(p, w.x_m.size() * 4, mode),
        ids_(p, w.delta_ids.size() * 4, mode),
        xd_(p, w.x_d.size() * 4, mode),
        out_(p, nwords_ * 8, mode),
        in_bytes_(w.in->main_codes.words.size() * 8 + (w.x_m.size() + w.delta_ids.size() + w.x_d.size()) * 4),
        op_(p, merge_program<T>(p)) {
    old_.fill(w.in->main_codes.words.data(), w.in->main_codes.words.size() * 8);
    xm_.fill(w.x_m.data(), w.x_m.size() * 4);
    ids_.fill(w.delta_ids.data(), w.delta_ids.size() * 4);
    xd_.fill(w.x_d.data(), w.x_d.size() * 4);
  }
  Breakdown pass() override {
    Breakdown b = step_pass(p_, "re-encode pass", [&](auto& up, Trace& tr, auto& down) {
      for (Mirror* m : {&old_, &xm_, &ids_, &xd_}) m->upload(up);
      op_.run(old_.dev(), w_.in->main_codes.width, w_.in->main_rows(), xm_.dev(), ids_.dev(), xd_.dev(), rows_,
              w_.width, out_.dev(), tr);
      out_.download(nwords_ * 8, down);
    });
    if (b.phases.empty()) b.add_phase("2b", 0.0);  // nothing to encode (no rows, or width 0)
    return b;
  }
  MergeOutput<T> output() override {
    MergeOutput<T> o;
    o.codes.width = w_.width;
    o.codes.size = rows_;
    o.codes.words = out_.host_vector<std::uint64_t>(nwords_);
    return o;
  }
  std::uint64_t transfer_bytes() const override { return in_bytes_ + nwords_ * 8; }

 private:
  OpenClPlatform& p_;
  const MergeWork<T>& w_;
  std::uint64_t rows_, nwords_;
  Mirror old_, xm_, ids_, xd_, out_;
  std::uint64_t in_bytes_;
  ReencodeOp op_;
};

// The whole merge on one in-order queue: upload U_M, the delta and the main ids; 1a (radix sort,
// unique), 1b (merge path), 2a (the width, on the host from |U'_M|), 2b (X_M/X_D lookup); download
// U'_M and the new main. |U_D| and |U'_M| come back to the host between the steps (they size the
// next launches), inside the kernel time as on CUDA.
template <class T>
class WholeCase : public MergeCase<T> {
 public:
  WholeCase(OpenClPlatform& p, const MergeWork<T>& w, Transfer mode)
      : p_(p),
        w_(w),
        nm_(w.in->main_rows()),
        nd_(w.in->delta_rows()),
        n1_(w.in->main_dict.size()),
        rows_(nm_ + nd_),
        old_(p, w.in->main_codes.words.size() * 8, mode),
        um_(p, n1_ * sizeof(T), mode),
        delta_(p, nd_ * sizeof(T), mode),
        dict_(p, (n1_ + nd_) * sizeof(T), mode),
        out_(p, BitPacked::words_for(rows_, code_width(n1_ + nd_)) * 8, mode),
        ud_(device_buffer(p.context_ref(), nd_ * sizeof(T))),
        ids_(device_buffer(p.context_ref(), nd_ * 4)),
        xm_(device_buffer(p.context_ref(), n1_ * 4)),
        xd_(device_buffer(p.context_ref(), nd_ * 4)),
        delta_dict_(p, nd_),
        merge_(p, n1_ + nd_),
        reencode_(p, merge_program<T>(p)) {
    old_.fill(w.in->main_codes.words.data(), w.in->main_codes.words.size() * 8);
    um_.fill(w.in->main_dict.data(), n1_ * sizeof(T));
    delta_.fill(w.in->delta.data(), nd_ * sizeof(T));
  }
  Breakdown pass() override {
    return checked("whole merge pass", [&] {
      HostTimer all;
      Trace tr;
      std::vector<cl::Event> up, down;
      um_.upload(up);
      delta_.upload(up);
      old_.upload(up);
      ud_n_ = delta_dict_.run(delta_.dev(), static_cast<std::uint32_t>(nd_), ud_, ids_, tr);
      const std::size_t end_1a = tr.size();
      m_ = merge_.run(um_.dev(), static_cast<std::uint32_t>(n1_), ud_, ud_n_, dict_.dev(), xm_, xd_, tr);
      const std::size_t end_1b = tr.size();
      width_ = code_width(m_);
      nwords_ = BitPacked::words_for(rows_, width_);
      reencode_.run(old_.dev(), w_.in->main_codes.width, nm_, xm_, ids_, xd_, rows_, width_, out_.dev(), tr);
      dict_.download(m_ * sizeof(T), down);
      out_.download(nwords_ * 8, down);
      p_.queue().finish();
      return whole_merge_breakdown(sum_seconds(up), tr.span(0, end_1a), tr.span(end_1a, end_1b),
                                   tr.span(end_1b, tr.size()), tr.span(0, tr.size()), sum_seconds(down), all.seconds());
    });
  }
  MergeOutput<T> output() override {
    return checked("reading the merge's results", [&] {
      MergeOutput<T> o;
      o.delta_dict = read_back<T>(p_, ud_, ud_n_);
      o.delta_ids = read_back<std::uint32_t>(p_, ids_, nd_);
      o.dict = dict_.host_vector<T>(m_);
      o.x_m = read_back<std::uint32_t>(p_, xm_, n1_);
      o.x_d = read_back<std::uint32_t>(p_, xd_, ud_n_);
      o.codes.width = width_;
      o.codes.size = rows_;
      o.codes.words = out_.host_vector<std::uint64_t>(nwords_);
      return o;
    });
  }
  std::uint64_t transfer_bytes() const override {
    return w_.in->main_codes.words.size() * 8 + (n1_ + nd_ + w_.dict.size()) * sizeof(T) +
           BitPacked::words_for(rows_, w_.width) * 8;
  }

 private:
  OpenClPlatform& p_;
  const MergeWork<T>& w_;
  std::uint64_t nm_, nd_, n1_, rows_, m_ = 0, nwords_ = 0;
  std::uint32_t ud_n_ = 0;
  unsigned width_ = 0;
  Mirror old_, um_, delta_, dict_, out_;
  cl::Buffer ud_, ids_, xm_, xd_;
  DeltaDictOp<T> delta_dict_;
  MergePathOp<T> merge_;
  ReencodeOp reencode_;
};

// ---- strings: offsets + one byte array per column (see merge.cl and docs/merge.md) ----

using StrMergeCase = MergeCase<std::string_view>;
using StrWork = MergeWork<std::string_view>;

// Offsets and lengths on the device are 32-bit: every column's bytes (U'_M's being the most) must
// stay below this.
constexpr std::uint64_t kMaxStringBytes = (std::uint64_t{1} << 32) - (std::uint64_t{1} << 16);

// A string column packed for the device: offs[0..n] and the bytes.
struct PackedStrings {
  std::vector<cl_uint> offs;
  std::string bytes;
  explicit PackedStrings(const std::vector<std::string_view>& v) : offs(v.size() + 1, 0) {
    bytes.reserve(total_bytes(v));
    for (std::size_t i = 0; i < v.size(); ++i) {
      bytes.append(v[i]);
      offs[i + 1] = static_cast<cl_uint>(bytes.size());
    }
  }
};

// A string column in host (staging) memory and on the device: `n` strings of at most `bytes` bytes.
class StrMirror {
 public:
  StrMirror(OpenClPlatform& p, std::uint64_t n, std::uint64_t bytes, Transfer mode)
      : offs_(p, (n + 1) * 4, mode), bytes_(p, bytes, mode) {}
  StrMirror(OpenClPlatform& p, const std::vector<std::string_view>& v, Transfer mode)
      : StrMirror(p, v.size(), total_bytes(v), mode) {
    PackedStrings s(v);
    n_ = v.size();
    nbytes_ = s.bytes.size();
    offs_.fill(s.offs.data(), s.offs.size() * 4);
    bytes_.fill(s.bytes.data(), s.bytes.size());
  }
  cl::Buffer& offs() { return offs_.dev(); }
  cl::Buffer& bytes() { return bytes_.dev(); }
  void upload(std::vector<cl::Event>& evs) {
    offs_.upload(evs);
    bytes_.upload(evs);
  }
  // The first n strings, of `nbytes` bytes in all.
  void download(std::uint64_t n, std::uint64_t nbytes, std::vector<cl::Event>& evs) {
    n_ = n;
    nbytes_ = nbytes;
    offs_.download((n + 1) * 4, evs);
    bytes_.download(nbytes, evs);
  }
  // Views of the downloaded strings into `store` (kept by the caller while the views are used).
  std::vector<std::string_view> host_views(std::string& store) {
    std::vector<std::string_view> v(n_);
    if (n_ == 0) return v;
    std::vector<cl_uint> o = offs_.host_vector<cl_uint>(n_ + 1);
    if (nbytes_)
      store.assign(static_cast<const char*>(bytes_.host()), nbytes_);
    else
      store.clear();
    for (std::uint64_t i = 0; i < n_; ++i) v[i] = std::string_view(store).substr(o[i], o[i + 1] - o[i]);
    return v;
  }
  std::uint64_t size() const { return n_; }
  std::uint64_t byte_size() const { return nbytes_; }

 private:
  Mirror offs_, bytes_;
  std::uint64_t n_ = 0, nbytes_ = 0;
};

// A string column's size on the device (what a step produced).
struct StrCount {
  std::uint32_t n = 0;
  std::uint64_t bytes = 0;
};

cl::Program& string_program(OpenClPlatform& p) { return merge_program<std::string_view>(p); }

// Bytes of DeviceScan's scratch for n entries at work-group size wg (its reserve()).
std::uint64_t scan_scratch_bytes(std::uint64_t n, std::size_t wg) {
  std::uint64_t bytes = 0;
  for (std::size_t level = 0; n > 1 || level == 0; ++level) {
    const std::uint64_t b = ceil_div(std::max<std::uint64_t>(n, 1), wg);
    bytes += 2 * b * 4;
    n = b;
  }
  return bytes;
}
// RadixSort's scratch for n keys of kb bytes (its reserve(): temporaries, tile histograms, their scan).
std::uint64_t sort_scratch_bytes(std::uint64_t n, std::uint64_t kb, std::size_t wg) {
  const std::uint64_t hist =
      (std::uint64_t{1} << RadixSort::kRadixBits) * ceil_div(std::max<std::uint64_t>(n, 1), wg * 8);
  return n * (kb + 4) + hist * 4 + scan_scratch_bytes(hist, wg);
}

// Step 1a on strings: rounds of a stable sort by chunk k (RadixSort, 64-bit keys, the active
// entries' indices as payload) then by group number (RadixSort, 32-bit), over the entries whose
// strings are still tied; then the heads numbered by a scan, U_D's lengths scanned into its
// offsets, its bytes gathered. Buffers for n strings, allocated here.
class StrDeltaDictOp {
 public:
  static constexpr int kRoundBuffers = 11;  // act, act_next, grp, grp_next, perm, head, order, g, moved, hd, kpos
  StrDeltaDictOp(OpenClPlatform& p, std::uint64_t n)
      : p_(p), chunk_sort_(p, SortKey::U64), group_sort_(p, SortKey::U32), scan_(p), n_(n) {
    for (cl::Buffer& b : u32_) b = device_buffer(p.context_ref(), n * 4);
    keep_ = device_buffer(p.context_ref(), (n + 1) * 4);
    hpos_ = device_buffer(p.context_ref(), (n + 1) * 4);
    keys_ = device_buffer(p.context_ref(), n * 8);
    sorted_keys_ = device_buffer(p.context_ref(), n * 8);
    chunk_sort_.reserve(n);
    group_sort_.reserve(n);
    scan_.reserve(n + 1);
    cl::Program& prog = string_program(p);
    for (const char* k : {"str_init", "str_round_keys", "str_gather_groups", "str_round_gather", "str_round_place",
                          "str_round_keep", "str_round_compact", "str_unique", "str_gather"})
      k_[k] = cl::Kernel(prog, k);
  }
  // Device bytes the op allocates for n strings (the memory plan).
  static void plan(MemoryPlan& m, OpenClPlatform& p, std::uint64_t n) {
    m.add("1a round buffers", n * 4 * kRoundBuffers + 2 * (n + 1) * 4 + 2 * n * 8);
    const std::size_t wg = RadixSort(p, SortKey::U64).work_group();
    m.add("1a radix sort scratch", sort_scratch_bytes(n, 8, wg) + sort_scratch_bytes(n, 4, wg));
    m.add("1a scan scratch", scan_scratch_bytes(n + 1, DeviceScan(p).work_group()));
  }
  StrCount run(cl::Buffer& offs, cl::Buffer& bytes, std::uint32_t n, cl::Buffer& ud_offs, cl::Buffer& ud_bytes,
               cl::Buffer& ids, Trace& tr) {
    if (n == 0) return {};
    cl::Buffer &act = u32_[0], &act_next = u32_[1], &grp = u32_[2], &grp_next = u32_[3], &perm = u32_[4],
               &head = u32_[5], &order = u32_[6], &g = u32_[7], &moved = u32_[8], &hd = u32_[9], &kpos = u32_[10];
    std::vector<cl::Event> evs;
    set_args("str_init arguments", k_["str_init"], cl_uint{n}, act, grp, perm, head);
    launch(p_, tr, "1a_sort", k_["str_init"], n);
    std::uint32_t a = n;
    for (cl_uint chunk = 0; a > 0; ++chunk) {
      set_args("str_round_keys arguments", k_["str_round_keys"], offs, bytes, perm, act, cl_uint{a}, chunk, keys_);
      launch(p_, tr, "1a_sort", k_["str_round_keys"], a);
      chunk_sort_.sort(keys_, nullptr, sorted_keys_, order, a, evs);
      set_args("str_gather_groups arguments", k_["str_gather_groups"], grp, order, cl_uint{a}, g);
      launch(p_, tr, "1a_sort", k_["str_gather_groups"], a);
      if (chunk > 0) group_sort_.sort(g, &order, g, order, a, evs);  // round 0: one group
      tr.take("1a_sort", evs);
      set_args("str_round_gather arguments", k_["str_round_gather"], keys_, order, perm, act, cl_uint{a}, sorted_keys_,
               moved);
      launch(p_, tr, "1a_sort", k_["str_round_gather"], a);
      set_args("str_round_place arguments", k_["str_round_place"], sorted_keys_, g, moved, act, cl_uint{a}, perm, head,
               hd);
      launch(p_, tr, "1a_sort", k_["str_round_place"], a);
      set_args("str_round_keep arguments", k_["str_round_keep"], sorted_keys_, hd, cl_uint{a}, keep_);
      launch(p_, tr, "1a_sort", k_["str_round_keep"], a);
      scan_.run(hd, hpos_, a, evs);
      scan_.run(keep_, kpos, a, evs);
      tr.take("1a_sort", evs);
      const std::uint32_t next = scan_.total();
      if (next > 0) {
        set_args("str_round_compact arguments", k_["str_round_compact"], act, keep_, kpos, hd, hpos_, cl_uint{a},
                 act_next, grp_next);
        launch(p_, tr, "1a_sort", k_["str_round_compact"], a);
        std::swap(act, act_next);
        std::swap(grp, grp_next);
      }
      a = next;
    }
    // U_D: heads numbered, each row's id, each entry's source and length; lengths -> offsets; bytes.
    scan_.run(head, hpos_, n, evs);
    tr.take("1a_unique", evs);
    const std::uint32_t m = scan_.total();
    cl::Buffer &src = kpos, &len = keep_;
    set_args("str_unique arguments", k_["str_unique"], offs, perm, head, hpos_, cl_uint{n}, cl_uint{m}, ids, src, len);
    launch(p_, tr, "1a_unique", k_["str_unique"], n);
    scan_.run(len, ud_offs, m + 1, evs);
    tr.take("1a_scatter", evs);
    const std::uint64_t total = scan_.total();
    set_args("str_gather arguments", k_["str_gather"], offs, bytes, cl_uint{n}, offs, bytes, src, cl_uint{m}, ud_offs,
             ud_bytes);
    launch(p_, tr, "1a_scatter", k_["str_gather"], m);
    return {m, total};
  }

 private:
  OpenClPlatform& p_;
  RadixSort chunk_sort_, group_sort_;
  DeviceScan scan_;
  std::uint64_t n_;
  cl::Buffer u32_[kRoundBuffers];
  cl::Buffer keep_, hpos_, keys_, sorted_keys_;
  std::map<std::string, cl::Kernel> k_;
};

// Step 1b on strings by merge path, as MergePathOp: chunk-0 keys of both dictionaries first, the
// write pass names each U'_M entry's source and length, a scan of the lengths gives U'_M's offsets,
// and a gather copies its bytes. Buffers for dictionaries of up to `max_n` entries in all.
class StrMergePathOp {
 public:
  StrMergePathOp(OpenClPlatform& p, std::uint64_t max_n) : p_(p), scan_(p), items_(cpu_device(p) ? 64 : 16) {
    cl::Program& prog = string_program(p);
    keys_ = cl::Kernel(prog, "str_keys");
    part_ = cl::Kernel(prog, "smp_partition");
    count_ = cl::Kernel(prog, "smp_merge");
    write_ = cl::Kernel(prog, "smp_merge");
    gather_ = cl::Kernel(prog, "str_gather");
    wg_ = fit_work_group(p, count_, preferred_work_group(p));
    tile_ = static_cast<std::uint32_t>(wg_ * items_);
    split_ = device_buffer(p.context_ref(), (ceil_div(max_n, tile_) + 1) * 4);
    counts_ = device_buffer(p.context_ref(), ceil_div(max_n, items_) * 4);
    keys_a_ = device_buffer(p.context_ref(), max_n * 8);
    keys_b_ = device_buffer(p.context_ref(), max_n * 8);
    src_ = device_buffer(p.context_ref(), max_n * 4);
    len_ = device_buffer(p.context_ref(), (max_n + 1) * 4);
    scan_.reserve(std::max(ceil_div(max_n, items_), max_n + 1));
  }
  static void plan(MemoryPlan& m, OpenClPlatform& p, std::uint64_t max_n) {
    // A tile is at least 16 entries (items x a work-group of at least 1).
    m.add("1b merge-path scratch",
          (ceil_div(max_n, 16) + 1) * 4 + ceil_div(max_n, 16) * 4 + 2 * max_n * 8 + max_n * 4 + (max_n + 1) * 4);
    m.add("1b scan scratch", scan_scratch_bytes(max_n + 1, DeviceScan(p).work_group()));
  }
  StrCount run(cl::Buffer& ao, cl::Buffer& ab, std::uint32_t na, cl::Buffer& bo, cl::Buffer& bb, std::uint32_t nb,
               cl::Buffer& dict_offs, cl::Buffer& dict_bytes, cl::Buffer& xm, cl::Buffer& xd, Trace& tr) {
    const std::uint64_t n = std::uint64_t{na} + nb;
    if (n == 0) return {};
    if (na) {
      set_args("str_keys arguments", keys_, ao, ab, cl_uint{na}, keys_a_);
      launch(p_, tr, "1b_keys", keys_, na);
    }
    if (nb) {
      set_args("str_keys arguments", keys_, bo, bb, cl_uint{nb}, keys_b_);
      launch(p_, tr, "1b_keys", keys_, nb);
    }
    const auto groups = static_cast<cl_uint>(ceil_div(n, tile_)), items = static_cast<cl_uint>(items_);
    set_args("smp_partition arguments", part_, keys_a_, ao, ab, cl_uint{na}, keys_b_, bo, bb, cl_uint{nb}, tile_,
             groups, split_);
    launch(p_, tr, "1b_partition", part_, std::uint64_t{groups} + 1);
    set_args("smp_merge arguments", count_, keys_a_, ao, ab, cl_uint{na}, keys_b_, bo, bb, cl_uint{nb}, tile_, items,
             split_, cl_uint{0}, cl_uint{0}, counts_, src_, len_, xm, xd);
    launch_groups(p_, tr, "1b_count", count_, groups, wg_);
    std::vector<cl::Event> evs;
    scan_.run(counts_, counts_, static_cast<std::uint32_t>(ceil_div(n, items_)), evs);
    tr.take("1b_scan", evs);
    const std::uint32_t m = scan_.total();
    set_args("smp_merge arguments", write_, keys_a_, ao, ab, cl_uint{na}, keys_b_, bo, bb, cl_uint{nb}, tile_, items,
             split_, cl_uint{1}, cl_uint{m}, counts_, src_, len_, xm, xd);
    launch_groups(p_, tr, "1b_write", write_, groups, wg_);
    scan_.run(len_, dict_offs, m + 1, evs);
    tr.take("1b_gather", evs);
    const std::uint64_t total = scan_.total();
    set_args("str_gather arguments", gather_, ao, ab, cl_uint{na}, bo, bb, src_, cl_uint{m}, dict_offs, dict_bytes);
    launch(p_, tr, "1b_gather", gather_, m);
    return {m, total};
  }

  // The merge kernels' work-group and entries per work-item (64 on a CPU device, 16 on a GPU).
  Ran ran() const {
    Ran r;
    r.work_group = static_cast<int>(wg_);
    r.items_per_thread = static_cast<int>(items_);
    return r;
  }

 private:
  OpenClPlatform& p_;
  DeviceScan scan_;
  std::uint64_t items_;
  std::size_t wg_ = 1;
  cl_uint tile_ = 1;
  cl::Kernel keys_, part_, count_, write_, gather_;
  cl::Buffer split_, counts_, keys_a_, keys_b_, src_, len_;
};

class StrDeltaDictCase : public StrMergeCase {
 public:
  StrDeltaDictCase(OpenClPlatform& p, const StrWork& w, Transfer mode)
      : p_(p),
        nd_(w.in->delta_rows()),
        bytes_(total_bytes(w.in->delta)),
        out_bytes_(total_bytes(w.delta_dict)),
        nu_(w.delta_dict.size()),
        delta_(p, w.in->delta, mode),
        ud_(p, nd_, bytes_, mode),
        ids_(p, nd_ * 4, mode),
        op_(p, nd_) {}
  Breakdown pass() override {
    return step_pass(p_, "delta dictionary pass", [&](auto& up, Trace& tr, auto& down) {
      delta_.upload(up);
      StrCount c = op_.run(delta_.offs(), delta_.bytes(), static_cast<std::uint32_t>(nd_), ud_.offs(), ud_.bytes(),
                           ids_.dev(), tr);
      ud_.download(c.n, c.bytes, down);
      ids_.download(nd_ * 4, down);
    });
  }
  MergeOutput<std::string_view> output() override {
    MergeOutput<std::string_view> o;
    o.delta_dict = ud_.host_views(store_);
    o.delta_ids = ids_.host_vector<std::uint32_t>(nd_);
    return o;
  }
  std::uint64_t transfer_bytes() const override {
    return (nd_ + 1) * 4 + bytes_ + (nu_ + 1) * 4 + out_bytes_ + nd_ * 4;
  }

 private:
  OpenClPlatform& p_;
  std::uint64_t nd_, bytes_, out_bytes_, nu_;
  StrMirror delta_, ud_;
  Mirror ids_;
  StrDeltaDictOp op_;
  std::string store_;
};

class StrDictMergeCase : public StrMergeCase {
 public:
  StrDictMergeCase(OpenClPlatform& p, const StrWork& w, Transfer mode)
      : p_(p),
        n1_(w.in->main_dict.size()),
        n2_(w.delta_dict.size()),
        merged_bytes_(total_bytes(w.dict)),
        merged_(w.dict.size()),
        d1_(p, w.in->main_dict, mode),
        d2_(p, w.delta_dict, mode),
        dict_(p, n1_ + n2_, d1_.byte_size() + d2_.byte_size(), mode),
        x1_(p, n1_ * 4, mode),
        x2_(p, n2_ * 4, mode),
        op_(p, n1_ + n2_) {}
  Breakdown pass() override {
    return step_pass(p_, "dictionary merge pass", [&](auto& up, Trace& tr, auto& down) {
      d1_.upload(up);
      d2_.upload(up);
      StrCount c = op_.run(d1_.offs(), d1_.bytes(), static_cast<std::uint32_t>(n1_), d2_.offs(), d2_.bytes(),
                           static_cast<std::uint32_t>(n2_), dict_.offs(), dict_.bytes(), x1_.dev(), x2_.dev(), tr);
      dict_.download(c.n, c.bytes, down);
      x1_.download(n1_ * 4, down);
      x2_.download(n2_ * 4, down);
    });
  }
  MergeOutput<std::string_view> output() override {
    MergeOutput<std::string_view> o;
    o.dict = dict_.host_views(store_);
    o.x_m = x1_.host_vector<std::uint32_t>(n1_);
    o.x_d = x2_.host_vector<std::uint32_t>(n2_);
    return o;
  }
  std::uint64_t transfer_bytes() const override {
    return (n1_ + n2_ + merged_ + 3) * 4 + d1_.byte_size() + d2_.byte_size() + merged_bytes_ + (n1_ + n2_) * 4;
  }
  Ran ran() const override { return op_.ran(); }

 private:
  OpenClPlatform& p_;
  std::uint64_t n1_, n2_, merged_bytes_, merged_;
  StrMirror d1_, d2_, dict_;
  Mirror x1_, x2_;
  StrMergePathOp op_;
  std::string store_;
};

// The whole merge on strings, as WholeCase: upload U_M, the delta and the main ids; 1a, 1b (merge
// path), 2a, 2b; download U'_M and the new main.
class StrWholeCase : public StrMergeCase {
 public:
  StrWholeCase(OpenClPlatform& p, const StrWork& w, Transfer mode)
      : p_(p),
        w_(w),
        nm_(w.in->main_rows()),
        nd_(w.in->delta_rows()),
        n1_(w.in->main_dict.size()),
        rows_(nm_ + nd_),
        old_(p, w.in->main_codes.words.size() * 8, mode),
        um_(p, w.in->main_dict, mode),
        delta_(p, w.in->delta, mode),
        dict_(p, n1_ + nd_, um_.byte_size() + delta_.byte_size(), mode),
        out_(p, BitPacked::words_for(rows_, code_width(n1_ + nd_)) * 8, mode),
        ud_offs_(device_buffer(p.context_ref(), (nd_ + 1) * 4)),
        ud_bytes_(device_buffer(p.context_ref(), delta_.byte_size())),
        ids_(device_buffer(p.context_ref(), nd_ * 4)),
        xm_(device_buffer(p.context_ref(), n1_ * 4)),
        xd_(device_buffer(p.context_ref(), nd_ * 4)),
        delta_dict_(p, nd_),
        merge_(p, n1_ + nd_),
        reencode_(p, string_program(p)) {
    old_.fill(w.in->main_codes.words.data(), w.in->main_codes.words.size() * 8);
  }
  Breakdown pass() override {
    return checked("whole merge pass", [&] {
      HostTimer all;
      Trace tr;
      std::vector<cl::Event> up, down;
      um_.upload(up);
      delta_.upload(up);
      old_.upload(up);
      ud_ = delta_dict_.run(delta_.offs(), delta_.bytes(), static_cast<std::uint32_t>(nd_), ud_offs_, ud_bytes_, ids_,
                            tr);
      const std::size_t end_1a = tr.size();
      StrCount m = merge_.run(um_.offs(), um_.bytes(), static_cast<std::uint32_t>(n1_), ud_offs_, ud_bytes_, ud_.n,
                              dict_.offs(), dict_.bytes(), xm_, xd_, tr);
      const std::size_t end_1b = tr.size();
      width_ = code_width(m.n);
      nwords_ = BitPacked::words_for(rows_, width_);
      reencode_.run(old_.dev(), w_.in->main_codes.width, nm_, xm_, ids_, xd_, rows_, width_, out_.dev(), tr);
      dict_.download(m.n, m.bytes, down);
      out_.download(nwords_ * 8, down);
      p_.queue().finish();
      return whole_merge_breakdown(sum_seconds(up), tr.span(0, end_1a), tr.span(end_1a, end_1b),
                                   tr.span(end_1b, tr.size()), tr.span(0, tr.size()), sum_seconds(down), all.seconds());
    });
  }
  MergeOutput<std::string_view> output() override {
    return checked("reading the merge's results", [&] {
      MergeOutput<std::string_view> o;
      std::vector<cl_uint> offs = read_back<cl_uint>(p_, ud_offs_, ud_.n ? ud_.n + 1 : 0);
      ud_store_.assign(ud_.bytes, '\0');
      if (ud_.bytes) p_.queue().enqueueReadBuffer(ud_bytes_, CL_TRUE, 0, ud_.bytes, ud_store_.data());
      for (std::uint32_t i = 0; i < ud_.n; ++i)
        o.delta_dict.push_back(std::string_view(ud_store_).substr(offs[i], offs[i + 1] - offs[i]));
      o.delta_ids = read_back<std::uint32_t>(p_, ids_, nd_);
      o.dict = dict_.host_views(dict_store_);
      o.x_m = read_back<std::uint32_t>(p_, xm_, n1_);
      o.x_d = read_back<std::uint32_t>(p_, xd_, ud_.n);
      o.codes.width = width_;
      o.codes.size = rows_;
      o.codes.words = out_.host_vector<std::uint64_t>(nwords_);
      return o;
    });
  }
  std::uint64_t transfer_bytes() const override {
    return w_.in->main_codes.words.size() * 8 + (n1_ + 1 + nd_ + 1 + w_.dict.size() + 1) * 4 + um_.byte_size() +
           delta_.byte_size() + total_bytes(w_.dict) + BitPacked::words_for(rows_, w_.width) * 8;
  }

 private:
  OpenClPlatform& p_;
  const StrWork& w_;
  std::uint64_t nm_, nd_, n1_, rows_, nwords_ = 0;
  StrCount ud_;
  unsigned width_ = 0;
  Mirror old_;
  StrMirror um_, delta_, dict_;
  Mirror out_;
  cl::Buffer ud_offs_, ud_bytes_, ids_, xm_, xd_;
  StrDeltaDictOp delta_dict_;
  StrMergePathOp merge_;
  ReencodeOp reencode_;
  std::string ud_store_, dict_store_;
};

// Every device buffer a case of variant v allocates, by name (MemoryPlan): the step's inputs and
// outputs (plan_step_buffers) and the ops' scratch; returns the largest single buffer.
template <class T>
std::uint64_t plan_case(MemoryPlan& m, OpenClPlatform& p, const MergeVariant& v, bool slice, const MergeWork<T>& w) {
  constexpr bool str = std::is_same_v<T, std::string_view>;
  const std::uint64_t rows = w.in->main_rows() + w.in->delta_rows(), nd = w.in->delta_rows();
  const std::uint64_t n1 = w.in->main_dict.size(), n2 = w.delta_dict.size();
  const std::uint64_t t = str ? 8 : sizeof(T);  // strings: their 64-bit keys are the widest per-entry buffer
  const std::uint64_t delta_b = total_bytes(w.in->delta), um_b = total_bytes(w.in->main_dict);
  const std::size_t scan_wg = DeviceScan(p).work_group();
  auto delta_dict_op = [&](std::uint64_t n) {
    if constexpr (str) {
      StrDeltaDictOp::plan(m, p, n);
    } else {
      m.add("1a sort output and row ids", n * (t + 8));
      m.add("1a radix sort scratch", sort_scratch_bytes(n, t, RadixSort(p, sort_key<T>()).work_group()));
      m.add("1a scan scratch", scan_scratch_bytes(n, scan_wg));
    }
  };
  auto merge_path_op = [&](std::uint64_t n) {
    if constexpr (str) {
      StrMergePathOp::plan(m, p, n);
    } else {
      m.add("1b merge-path splits and counts", (ceil_div(n, 16) + 1) * 4 + ceil_div(n, 16) * 4);
      m.add("1b scan scratch", scan_scratch_bytes(ceil_div(n, 16), scan_wg));
    }
  };
  plan_step_buffers(m, v.step, false, w);
  const std::uint64_t old_codes = w.in->main_codes.words.size() * 8;
  switch (v.step) {
    case MergeStep::DeltaDict: delta_dict_op(nd); return std::max(nd * t, delta_b);
    case MergeStep::DictMerge:
      if (slice) {
        const std::uint64_t threads = std::clamp<std::uint64_t>((n1 + 15) / 16, 1, 65536);
        m.add("1b slice scratch", (n1 + n2) * t + (threads + 1) * 8);  // intermediate dictionary, counts
      } else {
        merge_path_op(n1 + n2);
      }
      return std::max((n1 + n2) * t, um_b + total_bytes(w.delta_dict));
    case MergeStep::Reencode: return std::max(old_codes, rows * 4);
    case MergeStep::Whole: break;
  }
  delta_dict_op(nd);
  merge_path_op(n1 + nd);
  return std::max({(n1 + nd) * t, um_b + delta_b, old_codes, BitPacked::words_for(rows, code_width(n1 + nd)) * 8});
}

}  // namespace

OpenClMerge::OpenClMerge(OpenClPlatform& p)
    : p_(p),
      table_("OpenCL merge", {{OpenClMergeVariant::Radix, {"radix", {"delta_dict"}, ""}},
                              {OpenClMergeVariant::Slice, {"slice", {"dict_merge"}, ""}},
                              {OpenClMergeVariant::MergePath, {"merge_path", {"dict_merge"}, ""}},
                              {OpenClMergeVariant::Lookup, {"lookup", {"reencode"}, ""}},
                              {OpenClMergeVariant::InOrder, {"inorder", {"merge"}, ""}}}) {}

bool OpenClMerge::supports(const MergeVariant& v, ValueType t) const {
  // Strings: every step, 1b by merge path only (the slice merge's intermediate array would hold
  // copies of the strings).
  const bool slice = table_.id(v.name) == OpenClMergeVariant::Slice;  // looked up first: a name is always checked
  return t != ValueType::Str || !slice;
}

template <class T>
void OpenClMerge::plan(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const {
  plan_case(plan, p_, v, table_.id(v.name) == OpenClMergeVariant::Slice, w);
}

template <class T>
std::unique_ptr<MergeCase<T>> OpenClMerge::make(const MergeVariant& v, const MergeWork<T>& w) {
  const std::uint64_t n1 = w.in->main_dict.size(), nd = w.in->delta_rows();
  if (!supports(v, ValueTypeOf<T>::value))
    throw SkipCase(std::string("dict_merge/") + v.name + " is not offered for strings (merge_path is)");
  // Ids, counts and dictionary positions are 32-bit on the device.
  if (n1 + nd >= std::numeric_limits<std::uint32_t>::max())
    throw SkipCase("dictionaries of 2^32 entries or more are beyond the 32-bit ids");
  if constexpr (std::is_same_v<T, std::string_view>)
    if (total_bytes(w.in->main_dict) + total_bytes(w.in->delta) >= kMaxStringBytes)
      throw SkipCase("strings of 4 GiB or more in U_M and the delta are beyond the 32-bit byte offsets");
  // The plan (plan(), checked by the session) again, for its largest single buffer.
  MemoryPlan plan = MemoryPlan::for_platform(p_);
  const bool slice = table_.id(v.name) == OpenClMergeVariant::Slice;
  const std::uint64_t biggest = plan_case(plan, p_, v, slice, w);
  if (biggest > p_.max_alloc_bytes()) throw SkipCase("a buffer exceeds the device's allocation limit");
  return checked("preparing a merge case", [&]() -> std::unique_ptr<MergeCase<T>> {
    if constexpr (std::is_same_v<T, std::string_view>) {
      switch (v.step) {
        case MergeStep::DeltaDict: return std::make_unique<StrDeltaDictCase>(p_, w, v.transfer);
        case MergeStep::DictMerge: return std::make_unique<StrDictMergeCase>(p_, w, v.transfer);
        case MergeStep::Reencode: return std::make_unique<ReencodeCase<T>>(p_, w, v.transfer);
        case MergeStep::Whole: break;
      }
      return std::make_unique<StrWholeCase>(p_, w, v.transfer);
    } else {
      switch (v.step) {
        case MergeStep::DeltaDict: return std::make_unique<DeltaDictCase<T>>(p_, w, v.transfer);
        case MergeStep::DictMerge:
          if (slice)
            return std::make_unique<DictMergeCase<T, SliceOp<T>>>(p_, w, v.transfer,
                                                                  SliceOp<T>(p_, n1, w.delta_dict.size()));
          return std::make_unique<DictMergeCase<T, MergePathOp<T>>>(p_, w, v.transfer,
                                                                    MergePathOp<T>(p_, n1 + w.delta_dict.size()));
        case MergeStep::Reencode: return std::make_unique<ReencodeCase<T>>(p_, w, v.transfer);
        case MergeStep::Whole: break;
      }
      return std::make_unique<WholeCase<T>>(p_, w, v.transfer);
    }
  });
}

#define HDB_OPENCL_MERGE_PLAN(T) \
  template void OpenClMerge::plan(const MergeVariant&, const MergeWork<T>&, MemoryPlan&) const;
HDB_OPENCL_MERGE_PLAN(std::uint32_t)
HDB_OPENCL_MERGE_PLAN(std::uint64_t)
HDB_OPENCL_MERGE_PLAN(U128)
HDB_OPENCL_MERGE_PLAN(std::string_view)
#undef HDB_OPENCL_MERGE_PLAN
template std::unique_ptr<MergeCase<std::uint32_t>> OpenClMerge::make(const MergeVariant&,
                                                                     const MergeWork<std::uint32_t>&);
template std::unique_ptr<MergeCase<std::uint64_t>> OpenClMerge::make(const MergeVariant&,
                                                                     const MergeWork<std::uint64_t>&);
template std::unique_ptr<MergeCase<U128>> OpenClMerge::make(const MergeVariant&, const MergeWork<U128>&);
template std::unique_ptr<MergeCase<std::string_view>> OpenClMerge::make(const MergeVariant&,
                                                                        const MergeWork<std::string_view>&);

}  // namespace hdb::opencl
