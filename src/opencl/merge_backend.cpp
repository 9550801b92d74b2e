#include "merge_backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "harness/errors.hpp"
#include "sort.hpp"

namespace hdb::opencl::kernels {
extern const char merge[];
}

namespace hdb::opencl {
namespace {

template <class T>
const char* vkind() {
  if constexpr (std::is_same_v<T, std::uint32_t>) return "-DVKIND=1";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "-DVKIND=2";
  else return "-DVKIND=3";
}

template <class T>
SortKey sort_key() {
  if constexpr (std::is_same_v<T, std::uint32_t>) return SortKey::U32;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return SortKey::U64;
  else return SortKey::U128;
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
    if (up) p_.queue().enqueueWriteBuffer(dev_, CL_FALSE, 0, bytes, host_.data(), nullptr, &e);
    else p_.queue().enqueueReadBuffer(dev_, CL_FALSE, 0, bytes, host_.data(), nullptr, &e);
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
void launch_groups(OpenClPlatform& p, Trace& tr, const char* phase, cl::Kernel& k, std::uint64_t groups, std::size_t wg) {
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
    set_args("slice_merge arguments", merge_, d1, cl_ulong{n1}, d2, cl_ulong{n2}, slice, threads, inter_, x1, x2, counts_);
    set_args("scan_counts arguments", scan_, counts_, threads, cl::Local(scan_group_ * 8));
    set_args("close_gaps arguments", close_, d1, cl_ulong{n1}, d2, cl_ulong{n2}, slice, threads, inter_, x1, x2, counts_,
             dict);
    launch(p_, tr, "1b_slice_merge", merge_, threads_);
    launch(p_, tr, "1b_scan", scan_, scan_group_, cl::NDRange(scan_group_));
    launch(p_, tr, "1b_close_gaps", close_, threads_);
    cl_ulong total = 0;
    p_.queue().enqueueReadBuffer(counts_, CL_TRUE, threads_ * 8, 8, &total);
    return static_cast<std::uint32_t>(total);
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
  MergePathOp(OpenClPlatform& p, std::uint64_t max_n)
      : p_(p), scan_(p), items_(cpu_device(p) ? 64 : 16) {
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
    set_args("mp_merge arguments", count_, a, cl_uint{na}, b, cl_uint{nb}, tile_, items, split_, cl_uint{0}, counts_, dict,
             xm, xd);
    launch_groups(p_, tr, "1b_count", count_, groups, wg_);
    std::vector<cl::Event> evs;
    scan_.run(counts_, counts_, static_cast<std::uint32_t>(ceil_div(n, items_)), evs);
    tr.take("1b_scan", evs);
    set_args("mp_merge arguments", write_, a, cl_uint{na}, b, cl_uint{nb}, tile_, items, split_, cl_uint{1}, counts_, dict,
             xm, xd);
    launch_groups(p_, tr, "1b_write", write_, groups, wg_);
    return scan_.total();
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
      op_.run(old_.dev(), w_.in->main_codes.width, w_.in->main_rows(), xm_.dev(), ids_.dev(), xd_.dev(), rows_, w_.width,
              out_.dev(), tr);
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
      Breakdown b;
      b.h2d = sum_seconds(up);
      b.add_phase("1a", tr.span(0, end_1a));
      b.add_phase("1b", tr.span(end_1a, end_1b));
      b.add_phase("2a", 0.0);
      b.add_phase("2b", tr.span(end_1b, tr.size()));
      b.kernel = tr.span(0, tr.size());
      b.d2h = sum_seconds(down);
      b.total = all.seconds();
      return b;
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

}  // namespace

std::vector<MergeVariant> OpenClMerge::variants(const std::vector<Transfer>& transfers) const {
  std::vector<MergeVariant> v;
  for (Transfer t : transfers) v.push_back({MergeStep::DeltaDict, "radix", t});
  for (const char* name : {"slice", "merge_path"})
    for (Transfer t : transfers) v.push_back({MergeStep::DictMerge, name, t});
  for (Transfer t : transfers) v.push_back({MergeStep::Reencode, "lookup", t});
  for (Transfer t : transfers) v.push_back({MergeStep::Whole, "inorder", t});
  return v;
}

template <class T>
std::unique_ptr<MergeCase<T>> OpenClMerge::make(const MergeVariant& v, const MergeWork<T>& w) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    throw SkipCase("strings are not offered on OpenCL");
  } else {
    const std::uint64_t rows = w.in->main_rows() + w.in->delta_rows(), nd = w.in->delta_rows();
    const std::uint64_t n1 = w.in->main_dict.size(), n2 = w.delta_dict.size(), t = sizeof(T);
    const std::uint64_t old_codes = w.in->main_codes.words.size() * 8;
    // Ids, counts and dictionary positions are 32-bit on the device.
    if (n1 + nd >= std::numeric_limits<std::uint32_t>::max())
      throw SkipCase("dictionaries of 2^32 entries or more are beyond the 32-bit ids");
    // Device bytes of each step (inputs, outputs, scratch) and its largest single buffer.
    const std::uint64_t delta_dict = nd * (4 * t + 20), dict_merge = (n1 + n2) * (3 * t + 8);
    const std::uint64_t reencode = old_codes + rows * 8 + BitPacked::words_for(rows, w.width) * 8;
    std::uint64_t need = 0, biggest = 0;
    switch (v.step) {
      case MergeStep::DeltaDict:
        need = delta_dict;
        biggest = nd * t;
        break;
      case MergeStep::DictMerge:
        need = dict_merge;
        biggest = (n1 + n2) * t;
        break;
      case MergeStep::Reencode:
        need = reencode;
        biggest = std::max(old_codes, rows * 4);
        break;
      case MergeStep::Whole:
        need = delta_dict + (n1 + nd) * (2 * t + 8) + reencode;
        biggest = std::max({(n1 + nd) * t, old_codes, BitPacked::words_for(rows, code_width(n1 + nd)) * 8});
        break;
    }
    if (need > p_.memory_bytes() / 2)
      throw SkipCase("needs about " + std::to_string(need >> 20) + " MiB, more than half the device memory");
    if (biggest > p_.max_alloc_bytes()) throw SkipCase("a buffer exceeds the device's allocation limit");
    return checked("preparing a merge case", [&]() -> std::unique_ptr<MergeCase<T>> {
      switch (v.step) {
        case MergeStep::DeltaDict: return std::make_unique<DeltaDictCase<T>>(p_, w, v.transfer);
        case MergeStep::DictMerge:
          if (v.name == "slice") return std::make_unique<DictMergeCase<T, SliceOp<T>>>(p_, w, v.transfer, SliceOp<T>(p_, n1, n2));
          return std::make_unique<DictMergeCase<T, MergePathOp<T>>>(p_, w, v.transfer, MergePathOp<T>(p_, n1 + n2));
        case MergeStep::Reencode: return std::make_unique<ReencodeCase<T>>(p_, w, v.transfer);
        case MergeStep::Whole: break;
      }
      return std::make_unique<WholeCase<T>>(p_, w, v.transfer);
    });
  }
}

template std::unique_ptr<MergeCase<std::uint32_t>> OpenClMerge::make(const MergeVariant&, const MergeWork<std::uint32_t>&);
template std::unique_ptr<MergeCase<std::uint64_t>> OpenClMerge::make(const MergeVariant&, const MergeWork<std::uint64_t>&);
template std::unique_ptr<MergeCase<U128>> OpenClMerge::make(const MergeVariant&, const MergeWork<U128>&);
template std::unique_ptr<MergeCase<std::string_view>> OpenClMerge::make(const MergeVariant&,
                                                                        const MergeWork<std::string_view>&);

}  // namespace hdb::opencl
