#include "merge_backend.hpp"

#include <cstring>

#include "harness/errors.hpp"

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

double sum_seconds(const std::vector<cl::Event>& evs) {
  double s = 0;
  for (const cl::Event& e : evs) s += event_seconds(e);
  return s;
}

void launch(OpenClPlatform& p, cl::Kernel& k, std::uint64_t global, std::vector<cl::Event>& evs,
            cl::NDRange local = cl::NullRange) {
  cl::Event e;
  p.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(global), local, nullptr, &e);
  evs.push_back(e);
}

// Step 1b as the paper's dictionary slice merge: D1 = U_M cut into equal slices, D2 = U_D sliced
// by binary search, one work-item per slice pair, then a device scan of the counts and a device
// pass that closes the gaps.
template <class T>
class SliceMerge : public MergeCase<T> {
 public:
  SliceMerge(OpenClPlatform& p, const MergeWork<T>& w, Transfer mode)
      : p_(p),
        n1_(w.in->main_dict.size()),
        n2_(w.delta_dict.size()),
        threads_(std::clamp<std::uint64_t>((n1_ + 15) / 16, 1, 65536)),
        slice_(std::max<std::uint64_t>(1, (n1_ + threads_ - 1) / threads_)),
        d1_(p, n1_ * sizeof(T), mode),
        d2_(p, n2_ * sizeof(T), mode),
        x1_(p, n1_ * 4, mode),
        x2_(p, n2_ * 4, mode),
        dict_(p, (n1_ + n2_) * sizeof(T), mode),
        counts_(p, (threads_ + 1) * 8, mode),
        merged_(w.dict.size()) {
    d1_.fill(w.in->main_dict.data(), n1_ * sizeof(T));
    d2_.fill(w.delta_dict.data(), n2_ * sizeof(T));
    inter_ = device_buffer(p.context_ref(), (n1_ + n2_) * sizeof(T));
    cl::Program& prog = p.program(std::string("merge") + vkind<T>(), kernels::merge, vkind<T>());
    merge_ = cl::Kernel(prog, "slice_merge");
    scan_ = cl::Kernel(prog, "scan_counts");
    close_ = cl::Kernel(prog, "close_gaps");
    cl_ulong n1 = n1_, n2 = n2_, slice = slice_, threads = threads_;
    int a = 0;
    for (cl::Kernel* k : {&merge_, &close_}) {
      a = 0;
      k->setArg(a++, d1_.dev());
      k->setArg(a++, n1);
      k->setArg(a++, d2_.dev());
      k->setArg(a++, n2);
      k->setArg(a++, slice);
      k->setArg(a++, threads);
      k->setArg(a++, inter_);
      k->setArg(a++, x1_.dev());
      k->setArg(a++, x2_.dev());
      k->setArg(a++, counts_.dev());
    }
    close_.setArg(a, dict_.dev());
    scan_group_ = std::min<std::size_t>(256, p.max_work_group_size());
    scan_.setArg(0, counts_.dev());
    scan_.setArg(1, threads);
    scan_.setArg(2, cl::Local(scan_group_ * 8));
  }

  Breakdown pass() override {
    return checked("slice merge pass", [&] {
      Breakdown b;
      HostTimer all;
      std::vector<cl::Event> up, k1, k2, k3, down;
      d1_.upload(up);
      d2_.upload(up);
      launch(p_, merge_, threads_, k1);
      launch(p_, scan_, scan_group_, k2, cl::NDRange(scan_group_));
      launch(p_, close_, threads_, k3);
      // The dictionary's length is known once the scan ran: it decides how much comes back.
      down_total_ = 0;
      p_.queue().enqueueReadBuffer(counts_.dev(), CL_TRUE, threads_ * 8, 8, &down_total_);
      dict_.download(down_total_ * sizeof(T), down);
      x1_.download(n1_ * 4, down);
      x2_.download(n2_ * 4, down);
      p_.queue().finish();
      b.h2d = sum_seconds(up);
      b.add_phase("1b_slice_merge", event_seconds(k1[0]));
      b.add_phase("1b_scan", event_seconds(k2[0]));
      b.add_phase("1b_close_gaps", event_seconds(k3[0]));
      b.kernel = event_span(k1[0], k3[0]);
      b.d2h = sum_seconds(down);
      b.total = all.seconds();
      return b;
    });
  }
  MergeOutput<T> output() override {
    MergeOutput<T> o;
    auto* d = static_cast<const T*>(dict_.host());
    o.dict.assign(d, d + down_total_);
    auto* x1 = static_cast<const std::uint32_t*>(x1_.host());
    auto* x2 = static_cast<const std::uint32_t*>(x2_.host());
    o.x_m.assign(x1, x1 + n1_);
    o.x_d.assign(x2, x2 + n2_);
    return o;
  }
  std::uint64_t transfer_bytes() const override { return (n1_ + n2_ + merged_) * sizeof(T) + (n1_ + n2_) * 4 + 8; }

 private:
  OpenClPlatform& p_;
  std::uint64_t n1_, n2_, threads_, slice_;
  Mirror d1_, d2_, x1_, x2_, dict_, counts_;
  std::uint64_t merged_;
  cl::Buffer inter_;
  cl::Kernel merge_, scan_, close_;
  std::size_t scan_group_ = 1;
  cl_ulong down_total_ = 0;
};

// Step 2b: X_M[old id] for main rows, X_D[delta id] for delta rows. A GPU gets one 64-row block
// per work-item; a CPU device (PoCL) 1024 rows, since its work-items run as loop iterations and
// per-item overhead dominates small items.
template <class T>
class Reencode : public MergeCase<T> {
 public:
  Reencode(OpenClPlatform& p, const MergeWork<T>& w, Transfer mode)
      : p_(p),
        rows_(w.in->main_rows() + w.in->delta_rows()),
        width_(w.width),
        nwords_(BitPacked::words_for(rows_, w.width)),
        rows_per_item_((p.device().getInfo<CL_DEVICE_TYPE>() & CL_DEVICE_TYPE_CPU) ? 1024 : 64),
        old_(p, w.in->main_codes.words.size() * 8, mode),
        xm_(p, w.x_m.size() * 4, mode),
        ids_(p, w.delta_ids.size() * 4, mode),
        xd_(p, w.x_d.size() * 4, mode),
        out_(p, nwords_ * 8, mode),
        in_bytes_(w.in->main_codes.words.size() * 8 + (w.x_m.size() + w.delta_ids.size() + w.x_d.size()) * 4) {
    old_.fill(w.in->main_codes.words.data(), w.in->main_codes.words.size() * 8);
    xm_.fill(w.x_m.data(), w.x_m.size() * 4);
    ids_.fill(w.delta_ids.data(), w.delta_ids.size() * 4);
    xd_.fill(w.x_d.data(), w.x_d.size() * 4);
    cl::Program& prog = p.program(std::string("merge") + vkind<T>(), kernels::merge, vkind<T>());
    k_ = cl::Kernel(prog, "reencode");
    int a = 0;
    k_.setArg(a++, old_.dev());
    k_.setArg(a++, cl_uint{w.in->main_codes.width});
    k_.setArg(a++, cl_ulong{w.in->main_rows()});
    k_.setArg(a++, xm_.dev());
    k_.setArg(a++, ids_.dev());
    k_.setArg(a++, xd_.dev());
    k_.setArg(a++, cl_ulong{rows_});
    k_.setArg(a++, cl_uint{width_});
    k_.setArg(a++, cl_ulong{rows_per_item_});
    k_.setArg(a++, out_.dev());
  }
  Breakdown pass() override {
    return checked("re-encode pass", [&] {
      Breakdown b;
      HostTimer all;
      std::vector<cl::Event> up, k, down;
      for (Mirror* m : {&old_, &xm_, &ids_, &xd_}) m->upload(up);
      if (nwords_) launch(p_, k_, (rows_ + rows_per_item_ - 1) / rows_per_item_, k);
      out_.download(nwords_ * 8, down);
      p_.queue().finish();
      b.h2d = sum_seconds(up);
      b.kernel = k.empty() ? 0 : event_seconds(k[0]);
      b.add_phase("2b", b.kernel);
      b.d2h = sum_seconds(down);
      b.total = all.seconds();
      return b;
    });
  }
  MergeOutput<T> output() override {
    MergeOutput<T> o;
    o.codes.width = width_;
    o.codes.size = rows_;
    auto* w = static_cast<const std::uint64_t*>(out_.host());
    o.codes.words.assign(w, w + nwords_);
    return o;
  }
  std::uint64_t transfer_bytes() const override { return in_bytes_ + nwords_ * 8; }

 private:
  OpenClPlatform& p_;
  std::uint64_t rows_;
  unsigned width_;
  std::uint64_t nwords_, rows_per_item_;
  Mirror old_, xm_, ids_, xd_, out_;
  std::uint64_t in_bytes_;
  cl::Kernel k_;
};

}  // namespace

std::vector<MergeVariant> OpenClMerge::variants(const std::vector<Transfer>& transfers) const {
  std::vector<MergeVariant> v;
  for (Transfer t : transfers) v.push_back({MergeStep::DictMerge, "slice", t});
  for (Transfer t : transfers) v.push_back({MergeStep::Reencode, "lookup", t});
  return v;
}

template <class T>
std::unique_ptr<MergeCase<T>> OpenClMerge::make(const MergeVariant& v, const MergeWork<T>& w) {
  if constexpr (std::is_same_v<T, std::string_view>) {
    throw SkipCase("strings are not offered on OpenCL");
  } else {
    std::uint64_t rows = w.in->main_rows() + w.in->delta_rows();
    std::uint64_t need = v.step == MergeStep::DictMerge
                             ? (w.in->main_dict.size() + w.delta_dict.size()) * (3 * sizeof(T) + 4)
                             : w.in->main_codes.words.size() * 8 + rows * 8 + BitPacked::words_for(rows, w.width) * 8;
    if (need > p_.memory_bytes() / 2) throw SkipCase("needs more than half the device memory");
    if (need > p_.max_alloc_bytes()) throw SkipCase("a buffer exceeds the device's allocation limit");
    return checked("preparing a merge case", [&]() -> std::unique_ptr<MergeCase<T>> {
      if (v.step == MergeStep::DictMerge) return std::make_unique<SliceMerge<T>>(p_, w, v.transfer);
      return std::make_unique<Reencode<T>>(p_, w, v.transfer);
    });
  }
}

template std::unique_ptr<MergeCase<std::uint32_t>> OpenClMerge::make(const MergeVariant&, const MergeWork<std::uint32_t>&);
template std::unique_ptr<MergeCase<std::uint64_t>> OpenClMerge::make(const MergeVariant&, const MergeWork<std::uint64_t>&);
template std::unique_ptr<MergeCase<U128>> OpenClMerge::make(const MergeVariant&, const MergeWork<U128>&);
template std::unique_ptr<MergeCase<std::string_view>> OpenClMerge::make(const MergeVariant&,
                                                                        const MergeWork<std::string_view>&);

}  // namespace hdb::opencl
