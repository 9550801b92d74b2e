#include "merge_backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <string>

#include "harness/memory_plan.hpp"

#include "harness/errors.hpp"
#include "merge_steps.cuh"

namespace hdb::cuda {
namespace {

using merge::DictMergeKind;

// A host array (pageable or pinned) filled at set-up, and its device twin.
template <class U>
struct Mirror {
  Mirror(std::size_t n, Transfer mode) : host(n, mode), dev(n) {}
  Mirror(const U* src, std::size_t n, Transfer mode) : host(n, mode), dev(n) {
    if (n) std::memcpy(host.get(), src, n * sizeof(U));
  }
  void up(cudaStream_t s, std::size_t n) {
    if (n) HDB_CUDA_CHECK(cudaMemcpyAsync(dev.get(), host.get(), n * sizeof(U), cudaMemcpyHostToDevice, s));
  }
  void up(cudaStream_t s) { up(s, host.size()); }
  void down(cudaStream_t s, std::size_t n) {
    if (n) HDB_CUDA_CHECK(cudaMemcpyAsync(host.get(), dev.get(), n * sizeof(U), cudaMemcpyDeviceToHost, s));
  }
  std::vector<U> host_vector(std::size_t n) const { return std::vector<U>(host.get(), host.get() + n); }
  HostBuffer<U> host;
  DeviceBuffer<U> dev;
};

template <class U>
std::vector<U> from_device(const U* p, std::size_t n) {
  std::vector<U> v(n);
  if (n) HDB_CUDA_CHECK(cudaMemcpy(v.data(), p, n * sizeof(U), cudaMemcpyDeviceToHost));
  return v;
}

// A step's pass from its marks: 0 before the uploads, 1 after them, 2 after the kernels, 3 after the
// downloads; the kernels are the step's one phase.
Breakdown step_breakdown(const PhaseTimer& marks, const std::string& phase, double total) {
  Breakdown b;
  b.h2d = marks.between(0, 1);
  b.kernel = marks.between(1, 2);
  b.d2h = marks.between(2, 3);
  b.add_phase(phase, b.kernel);
  b.total = total;
  return b;
}

// The 1b algorithm of a dict_merge variant; the other variants have none.
DictMergeKind kind_of(CudaMergeVariant v) {
  switch (v) {
    case CudaMergeVariant::Slice: return DictMergeKind::Slice;
    case CudaMergeVariant::Csum: return DictMergeKind::Csum;
    case CudaMergeVariant::Mum: return DictMergeKind::Mum;
    case CudaMergeVariant::MergePath: return DictMergeKind::MergePath;
    case CudaMergeVariant::Tuned: return DictMergeKind::Tiles;
    case CudaMergeVariant::Thrust:
    case CudaMergeVariant::Radix:
    case CudaMergeVariant::Lookup:
    case CudaMergeVariant::Binsearch:
    case CudaMergeVariant::InOrder:
    case CudaMergeVariant::Overlap: break;
  }
  throw std::logic_error("the CUDA merge variant runs no dictionary merge of its own");
}

// Steps 1a, 1b and 2b on their own: upload the step's inputs, run it, download its outputs. On
// strings only 2b with X_M/X_D (no values involved); StrStepCase runs their 1a and 1b.
template <class T>
class StepCase : public MergeCase<T> {
  static constexpr bool kStr = std::is_same_v<T, std::string_view>;
  // Values CUB's radix sort takes as keys: 1a tuned's.
  static constexpr bool kRadix = std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>;

 public:
  StepCase(const MergeVariant& v, CudaMergeVariant id, const MergeWork<T>& w)
      : v_(v),
        binsearch_(id == CudaMergeVariant::Binsearch),
        tuned_(id == CudaMergeVariant::Tuned),
        kind_(v.step == MergeStep::DictMerge ? kind_of(id) : DictMergeKind::MergePath),
        w_(w),
        nm_(w.in->main_rows()),
        nd_(w.in->delta_rows()),
        n1_(w.in->main_dict.size()),
        n2_(w.delta_dict.size()),
        rows_(nm_ + nd_),
        nwords_(BitPacked::words_for(rows_, w.width)),
        marks_(4) {
    Transfer t = v.transfer;
    switch (v.step) {
      case MergeStep::DeltaDict:
        a_ = std::make_unique<Mirror<T>>(w.in->delta.data(), nd_, t);
        b_ = std::make_unique<Mirror<T>>(nd_, t);  // U_D
        ids_ = std::make_unique<Mirror<std::uint32_t>>(nd_, t);
        break;
      case MergeStep::DictMerge:
        a_ = std::make_unique<Mirror<T>>(w.in->main_dict.data(), n1_, t);
        b_ = std::make_unique<Mirror<T>>(w.delta_dict.data(), n2_, t);
        dict_ = std::make_unique<Mirror<T>>(n1_ + n2_, t);
        xm_ = std::make_unique<Mirror<std::uint32_t>>(n1_, t);
        xd_ = std::make_unique<Mirror<std::uint32_t>>(n2_, t);
        break;
      default:
        old_ = std::make_unique<Mirror<std::uint64_t>>(w.in->main_codes.words.data(), w.in->main_codes.words.size(), t);
        out_ = std::make_unique<Mirror<std::uint64_t>>(nwords_, t);
        if (!kStr && binsearch_) {
          a_ = std::make_unique<Mirror<T>>(w.in->main_dict.data(), n1_, t);
          b_ = std::make_unique<Mirror<T>>(w.in->delta.data(), nd_, t);
          dict_ = std::make_unique<Mirror<T>>(w.dict.data(), w.dict.size(), t);
        } else {
          xm_ = std::make_unique<Mirror<std::uint32_t>>(w.x_m.data(), w.x_m.size(), t);
          xd_ = std::make_unique<Mirror<std::uint32_t>>(w.x_d.data(), w.x_d.size(), t);
          ids_ = std::make_unique<Mirror<std::uint32_t>>(w.delta_ids.data(), w.delta_ids.size(), t);
        }
    }
  }

  Breakdown pass() override {
    HostTimer all;
    cudaStream_t s = stream_.get();
    marks_.mark(0, s);
    std::string phase;
    switch (v_.step) {
      case MergeStep::DeltaDict:
        a_->up(s);
        marks_.mark(1, s);
        if constexpr (kRadix) {
          if (tuned_) m_ = merge::delta_dict_pairs(scratch_, s, a_->dev.get(), nd_, b_->dev.get(), ids_->dev.get());
        }
        if constexpr (!kStr)
          if (!tuned_) m_ = merge::delta_dict(scratch_, s, a_->dev.get(), nd_, b_->dev.get(), ids_->dev.get());
        marks_.mark(2, s);
        b_->down(s, m_);
        ids_->down(s, nd_);
        phase = "1a";
        break;
      case MergeStep::DictMerge:
        a_->up(s);
        b_->up(s);
        marks_.mark(1, s);
        if constexpr (!kStr)
          m_ = merge::dict_merge(kind_, scratch_, s, a_->dev.get(), n1_, b_->dev.get(), n2_, dict_->dev.get(),
                                 xm_->dev.get(), xd_->dev.get());
        marks_.mark(2, s);
        dict_->down(s, m_);
        xm_->down(s, n1_);
        xd_->down(s, n2_);
        phase = "1b";
        break;
      default:
        old_->up(s);
        if (binsearch_) {
          a_->up(s);
          b_->up(s);
          dict_->up(s);
          marks_.mark(1, s);
          if constexpr (!kStr)
            merge::reencode_binsearch(s, old_->dev.get(), w_.in->main_codes.width, nm_, a_->dev.get(), b_->dev.get(),
                                      dict_->dev.get(), w_.dict.size(), rows_, w_.width, out_->dev.get());
        } else {
          xm_->up(s);
          xd_->up(s);
          ids_->up(s);
          marks_.mark(1, s);
          (tuned_ ? merge::reencode_warp : merge::reencode_lookup)(s, old_->dev.get(), w_.in->main_codes.width, nm_,
                                                                   xm_->dev.get(), ids_->dev.get(), xd_->dev.get(),
                                                                   rows_, w_.width, 0, nwords_, out_->dev.get());
        }
        marks_.mark(2, s);
        out_->down(s, nwords_);
        phase = "2b";
    }
    marks_.mark(3, s);
    stream_.sync();
    return step_breakdown(marks_, phase, all.seconds());
  }

  MergeOutput<T> output() override {
    MergeOutput<T> o;
    switch (v_.step) {
      case MergeStep::DeltaDict:
        o.delta_dict = b_->host_vector(m_);
        o.delta_ids = ids_->host_vector(nd_);
        break;
      case MergeStep::DictMerge:
        o.dict = dict_->host_vector(m_);
        o.x_m = xm_->host_vector(n1_);
        o.x_d = xd_->host_vector(n2_);
        break;
      default:
        o.codes.width = w_.width;
        o.codes.size = rows_;
        o.codes.words = out_->host_vector(nwords_);
    }
    return o;
  }

  std::uint64_t transfer_bytes() const override {
    std::uint64_t v = sizeof(T);
    switch (v_.step) {
      case MergeStep::DeltaDict: return nd_ * v + n2_ * v + nd_ * 4;
      case MergeStep::DictMerge: return (n1_ + n2_ + w_.dict.size()) * v + (n1_ + n2_) * 4;
      default:
        return w_.in->main_codes.words.size() * 8 + nwords_ * 8 +
               (binsearch_ ? (n1_ + nd_ + w_.dict.size()) * v : (n1_ + n2_ + nd_) * 4);
    }
  }

 private:
  MergeVariant v_;
  bool binsearch_;      // 2b by binary search of U'_M (else by X_M/X_D)
  bool tuned_;          // 1a by radix-sorted pairs, 2b by the warp-packing kernel (1b: kind_ Tiles)
  DictMergeKind kind_;  // 1b's algorithm
  const MergeWork<T>& w_;
  std::uint64_t nm_, nd_, n1_, n2_, rows_, nwords_, m_ = 0;
  Stream stream_;
  Scratch scratch_;
  PhaseTimer marks_;  // borders of the pass's segments
  std::unique_ptr<Mirror<T>> a_, b_, dict_;
  std::unique_ptr<Mirror<std::uint32_t>> ids_, xm_, xd_;
  std::unique_ptr<Mirror<std::uint64_t>> old_, out_;
};

// The whole merge: upload main ids, U_M and the delta; 1a (Thrust), 1b (merge path), 2a, 2b
// (X_M/X_D); download U'_M and the new main. "inorder" runs it all on one stream. "overlap" is the
// paper's future work: main ids go up in chunks on a copy stream while 1a and 1b run, 2b runs per
// chunk as soon as its ids are there, and each finished chunk goes down on a third stream.
template <class T>
class WholeCase : public MergeCase<T> {
 public:
  static constexpr int kChunks = 8;
  WholeCase(const MergeVariant& v, CudaMergeVariant id, const MergeWork<T>& w)
      : overlap_(id == CudaMergeVariant::Overlap),
        w_(w),
        nm_(w.in->main_rows()),
        nd_(w.in->delta_rows()),
        n1_(w.in->main_dict.size()),
        rows_(nm_ + nd_),
        max_words_(BitPacked::words_for(rows_, code_width(n1_ + nd_))),
        old_(w.in->main_codes.words.data(), w.in->main_codes.words.size(), v.transfer),
        um_(w.in->main_dict.data(), n1_, v.transfer),
        delta_(w.in->delta.data(), nd_, v.transfer),
        dict_(n1_ + nd_, v.transfer),
        out_(max_words_, v.transfer),
        ud_(nd_),
        ids_(nd_),
        xm_(n1_),
        xd_(nd_),
        marks_(8),
        chunk_up_(kChunks),
        chunk_done_(kChunks) {}

  Breakdown pass() override {
    HostTimer all;
    cudaStream_t s = compute_.get(), up = overlap_ ? upload_.get() : s, down = overlap_ ? download_.get() : s;
    std::size_t old_words = old_.host.size();
    marks_.mark(0, up);
    um_.up(up);
    delta_.up(up);
    up_done_.record(up);
    if (!overlap_)
      old_.up(up);
    else
      for (int c = 0; c < kChunks; ++c) {  // main ids in chunks, each with its own event
        std::size_t b = old_words * c / kChunks, e = old_words * (c + 1) / kChunks;
        if (e > b)
          HDB_CUDA_CHECK(
              cudaMemcpyAsync(old_.dev.get() + b, old_.host.get() + b, (e - b) * 8, cudaMemcpyHostToDevice, up));
        chunk_up_[c].record(up);
      }
    marks_.mark(2, up);
    // In order, compute follows every upload on the one stream; overlapping, it waits only for
    // U_M and the delta.
    if (overlap_) HDB_CUDA_CHECK(cudaStreamWaitEvent(s, up_done_.get(), 0));
    marks_.mark(3, s);
    ud_n_ = merge::delta_dict(scratch_, s, delta_.dev.get(), nd_, ud_.get(), ids_.get());
    marks_.mark(4, s);
    m_ = merge::dict_merge(DictMergeKind::MergePath, scratch_, s, um_.dev.get(), n1_, ud_.get(), ud_n_, dict_.dev.get(),
                           xm_.get(), xd_.get());
    marks_.mark(5, s);
    width_ = code_width(m_);  // 2a: host arithmetic on the merged size
    nwords_ = BitPacked::words_for(rows_, width_);
    if (!overlap_) {
      merge::reencode_lookup(s, old_.dev.get(), w_.in->main_codes.width, nm_, xm_.get(), ids_.get(), xd_.get(), rows_,
                             width_, 0, nwords_, out_.dev.get());
      marks_.mark(6, s);
      dict_.down(s, m_);
      out_.down(s, nwords_);
    } else {
      HDB_CUDA_CHECK(cudaEventRecord(dict_ready_.get(), s));
      HDB_CUDA_CHECK(cudaStreamWaitEvent(down, dict_ready_.get(), 0));
      dict_.down(down, m_);
      std::uint64_t blocks = (rows_ + 63) / 64;
      for (int c = 0; c < kChunks; ++c) {
        // Rows of chunk c start on a 64-row mark, so its output words are its own.
        std::uint64_t r0 = std::min(rows_, blocks * c / kChunks * 64),
                      r1 = std::min(rows_, blocks * (c + 1) / kChunks * 64);
        std::uint64_t wb = r0 * width_ / 64, we = (r1 * width_ + 63) / 64;
        std::uint64_t need = (std::min(r1, nm_) * w_.in->main_codes.width + 63) / 64 + 1;  // old words read
        int last = kChunks - 1;
        while (last > 0 && old_words * last / kChunks >= need) --last;
        HDB_CUDA_CHECK(cudaStreamWaitEvent(s, chunk_up_[last].get(), 0));
        merge::reencode_lookup(s, old_.dev.get(), w_.in->main_codes.width, nm_, xm_.get(), ids_.get(), xd_.get(), rows_,
                               width_, wb, we, out_.dev.get());
        chunk_done_[c].record(s);
        HDB_CUDA_CHECK(cudaStreamWaitEvent(down, chunk_done_[c].get(), 0));
        if (we > wb)
          HDB_CUDA_CHECK(
              cudaMemcpyAsync(out_.host.get() + wb, out_.dev.get() + wb, (we - wb) * 8, cudaMemcpyDeviceToHost, down));
      }
      marks_.mark(6, s);
    }
    marks_.mark(7, down);
    HDB_CUDA_CHECK(cudaDeviceSynchronize());
    return whole_merge_breakdown(marks_.between(0, 2), marks_.between(3, 4), marks_.between(4, 5), marks_.between(5, 6),
                                 marks_.between(3, 6),
                                 overlap_ ? marks_.between(5, 7) : marks_.between(6, 7),  // overlapping: from 1b's end
                                 all.seconds());
  }

  MergeOutput<T> output() override {
    MergeOutput<T> o;
    o.delta_dict = from_device(ud_.get(), ud_n_);
    o.delta_ids = from_device(ids_.get(), nd_);
    o.dict = dict_.host_vector(m_);
    o.x_m = from_device(xm_.get(), n1_);
    o.x_d = from_device(xd_.get(), ud_n_);
    o.codes.width = width_;
    o.codes.size = rows_;
    o.codes.words = out_.host_vector(nwords_);
    return o;
  }
  std::uint64_t transfer_bytes() const override {
    return old_.host.size() * 8 + (n1_ + nd_ + w_.dict.size()) * sizeof(T) + BitPacked::words_for(rows_, w_.width) * 8;
  }

 private:
  bool overlap_;
  const MergeWork<T>& w_;
  std::uint64_t nm_, nd_, n1_, rows_, max_words_, ud_n_ = 0, m_ = 0, nwords_ = 0;
  unsigned width_ = 0;
  Mirror<std::uint64_t> old_;
  Mirror<T> um_, delta_, dict_;
  Mirror<std::uint64_t> out_;
  DeviceBuffer<T> ud_;
  DeviceBuffer<std::uint32_t> ids_, xm_, xd_;
  Stream compute_, upload_, download_;
  Scratch scratch_;
  PhaseTimer marks_;  // borders of the pass's segments
  std::vector<Event> chunk_up_, chunk_done_;
  Event up_done_, dict_ready_;
};

// ---- strings: offsets + bytes, as on OpenCL (see merge_steps.cuh and docs/merge.md) ----

using StrWork = MergeWork<std::string_view>;

// Offsets are 32-bit on the device: every column's bytes must stay below this.
constexpr std::uint64_t kMaxStringBytes = (std::uint64_t{1} << 32) - (std::uint64_t{1} << 16);

// A string column in host memory (pageable or pinned) and on the device: n strings, offs[0..n] and
// the bytes; `n`, `nbytes` what it holds now (filled at set-up, or downloaded).
struct StrMirror {
  StrMirror(std::uint64_t cap, std::uint64_t cap_bytes, Transfer t) : offs(cap + 1, t), bytes(cap_bytes, t) {}
  StrMirror(const std::vector<std::string_view>& v, Transfer t) : StrMirror(v.size(), total_bytes(v), t) {
    n = v.size();
    std::uint32_t* o = offs.host.get();
    o[0] = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!v[i].empty()) std::memcpy(bytes.host.get() + nbytes, v[i].data(), v[i].size());
      nbytes += v[i].size();
      o[i + 1] = static_cast<std::uint32_t>(nbytes);
    }
  }
  merge::DevStrings dev() { return {offs.dev.get(), bytes.dev.get(), n}; }
  void up(cudaStream_t s) {
    offs.up(s, n + 1);
    bytes.up(s, nbytes);
  }
  void down(cudaStream_t s, merge::StrCount c) {
    n = c.n;
    nbytes = c.bytes;
    offs.down(s, c.n ? c.n + 1 : 0);
    bytes.down(s, c.bytes);
  }
  // Views of the strings held into `store` (kept by the caller while the views are used).
  std::vector<std::string_view> views(std::string& store) const {
    if (nbytes)
      store.assign(reinterpret_cast<const char*>(bytes.host.get()), nbytes);
    else
      store.clear();
    std::vector<std::string_view> v(n);
    const std::uint32_t* o = offs.host.get();
    for (std::uint64_t i = 0; i < n; ++i) v[i] = std::string_view(store).substr(o[i], o[i + 1] - o[i]);
    return v;
  }
  Mirror<std::uint32_t> offs;
  Mirror<unsigned char> bytes;
  std::uint64_t n = 0, nbytes = 0;
};

// Steps 1a and 1b on strings: upload, run, download, as StepCase.
class StrStepCase : public MergeCase<std::string_view> {
 public:
  StrStepCase(const MergeVariant& v, const StrWork& w)
      : step_(v.step),
        w_(w),
        nd_(w.in->delta_rows()),
        n1_(w.in->main_dict.size()),
        n2_(w.delta_dict.size()),
        marks_(4) {
    Transfer t = v.transfer;
    if (step_ == MergeStep::DeltaDict) {
      a_ = std::make_unique<StrMirror>(w.in->delta, t);
      out_ = std::make_unique<StrMirror>(nd_, a_->nbytes, t);  // U_D
      x1_ = std::make_unique<Mirror<std::uint32_t>>(nd_, t);   // delta ids
    } else {
      a_ = std::make_unique<StrMirror>(w.in->main_dict, t);
      b_ = std::make_unique<StrMirror>(w.delta_dict, t);
      out_ = std::make_unique<StrMirror>(n1_ + n2_, a_->nbytes + b_->nbytes, t);  // U'_M
      x1_ = std::make_unique<Mirror<std::uint32_t>>(n1_, t);
      x2_ = std::make_unique<Mirror<std::uint32_t>>(n2_, t);
    }
  }
  Breakdown pass() override {
    HostTimer all;
    cudaStream_t s = stream_.get();
    marks_.mark(0, s);
    a_->up(s);
    if (b_) b_->up(s);
    marks_.mark(1, s);
    merge::StrCount c;
    if (step_ == MergeStep::DeltaDict) {
      c = merge::delta_dict_str(scratch_, s, a_->dev(), out_->offs.dev.get(), out_->bytes.dev.get(), x1_->dev.get());
    } else {
      c = merge::dict_merge_str(scratch_, s, a_->dev(), b_->dev(), out_->offs.dev.get(), out_->bytes.dev.get(),
                                x1_->dev.get(), x2_->dev.get());
    }
    marks_.mark(2, s);
    out_->down(s, c);
    x1_->down(s, x1_->host.size());
    if (x2_) x2_->down(s, x2_->host.size());
    marks_.mark(3, s);
    stream_.sync();
    return step_breakdown(marks_, step_ == MergeStep::DeltaDict ? "1a" : "1b", all.seconds());
  }
  MergeOutput<std::string_view> output() override {
    MergeOutput<std::string_view> o;
    if (step_ == MergeStep::DeltaDict) {
      o.delta_dict = out_->views(store_);
      o.delta_ids = x1_->host_vector(nd_);
    } else {
      o.dict = out_->views(store_);
      o.x_m = x1_->host_vector(n1_);
      o.x_d = x2_->host_vector(n2_);
    }
    return o;
  }
  std::uint64_t transfer_bytes() const override {
    if (step_ == MergeStep::DeltaDict) return (nd_ + 1 + n2_ + 1 + nd_) * 4 + a_->nbytes + total_bytes(w_.delta_dict);
    return (n1_ + 1 + n2_ + 1 + w_.dict.size() + 1 + n1_ + n2_) * 4 + a_->nbytes + b_->nbytes + total_bytes(w_.dict);
  }

 private:
  MergeStep step_;
  const StrWork& w_;
  std::uint64_t nd_, n1_, n2_;
  Stream stream_;
  Scratch scratch_;
  PhaseTimer marks_;
  std::unique_ptr<StrMirror> a_, b_, out_;
  std::unique_ptr<Mirror<std::uint32_t>> x1_, x2_;
  std::string store_;
};

// The whole merge on strings, in order on one stream, as WholeCase's "inorder".
class StrWholeCase : public MergeCase<std::string_view> {
 public:
  StrWholeCase(const MergeVariant& v, const StrWork& w)
      : w_(w),
        nm_(w.in->main_rows()),
        nd_(w.in->delta_rows()),
        n1_(w.in->main_dict.size()),
        rows_(nm_ + nd_),
        old_(w.in->main_codes.words.data(), w.in->main_codes.words.size(), v.transfer),
        um_(w.in->main_dict, v.transfer),
        delta_(w.in->delta, v.transfer),
        dict_(n1_ + nd_, um_.nbytes + delta_.nbytes, v.transfer),
        out_(BitPacked::words_for(rows_, code_width(n1_ + nd_)), v.transfer),
        ud_offs_(nd_ + 1),
        ud_bytes_(delta_.nbytes),
        ids_(nd_),
        xm_(n1_),
        xd_(nd_),
        marks_(6) {}
  Breakdown pass() override {
    HostTimer all;
    cudaStream_t s = stream_.get();
    marks_.mark(0, s);
    um_.up(s);
    delta_.up(s);
    old_.up(s);
    marks_.mark(1, s);
    ud_ = merge::delta_dict_str(scratch_, s, delta_.dev(), ud_offs_.get(), ud_bytes_.get(), ids_.get());
    marks_.mark(2, s);
    merge::DevStrings ud{ud_offs_.get(), ud_bytes_.get(), ud_.n};
    merge::StrCount m = merge::dict_merge_str(scratch_, s, um_.dev(), ud, dict_.offs.dev.get(), dict_.bytes.dev.get(),
                                              xm_.get(), xd_.get());
    marks_.mark(3, s);
    width_ = code_width(m.n);  // 2a
    nwords_ = BitPacked::words_for(rows_, width_);
    merge::reencode_lookup(s, old_.dev.get(), w_.in->main_codes.width, nm_, xm_.get(), ids_.get(), xd_.get(), rows_,
                           width_, 0, nwords_, out_.dev.get());
    marks_.mark(4, s);
    dict_.down(s, m);
    out_.down(s, nwords_);
    marks_.mark(5, s);
    stream_.sync();
    return whole_merge_breakdown(marks_.between(0, 1), marks_.between(1, 2), marks_.between(2, 3), marks_.between(3, 4),
                                 marks_.between(1, 4), marks_.between(4, 5), all.seconds());
  }
  MergeOutput<std::string_view> output() override {
    MergeOutput<std::string_view> o;
    std::vector<std::uint32_t> offs = from_device(ud_offs_.get(), ud_.n ? ud_.n + 1 : 0);
    std::vector<unsigned char> bytes = from_device(ud_bytes_.get(), ud_.bytes);
    ud_store_.assign(bytes.begin(), bytes.end());
    for (std::uint64_t i = 0; i < ud_.n; ++i)
      o.delta_dict.push_back(std::string_view(ud_store_).substr(offs[i], offs[i + 1] - offs[i]));
    o.delta_ids = from_device(ids_.get(), nd_);
    o.dict = dict_.views(dict_store_);
    o.x_m = from_device(xm_.get(), n1_);
    o.x_d = from_device(xd_.get(), ud_.n);
    o.codes.width = width_;
    o.codes.size = rows_;
    o.codes.words = out_.host_vector(nwords_);
    return o;
  }
  std::uint64_t transfer_bytes() const override {
    return old_.host.size() * 8 + (n1_ + 1 + nd_ + 1 + w_.dict.size() + 1) * 4 + um_.nbytes + delta_.nbytes +
           total_bytes(w_.dict) + BitPacked::words_for(rows_, w_.width) * 8;
  }

 private:
  const StrWork& w_;
  std::uint64_t nm_, nd_, n1_, rows_, nwords_ = 0;
  unsigned width_ = 0;
  merge::StrCount ud_;
  Mirror<std::uint64_t> old_;
  StrMirror um_, delta_, dict_;
  Mirror<std::uint64_t> out_;
  DeviceBuffer<std::uint32_t> ud_offs_;
  DeviceBuffer<unsigned char> ud_bytes_;
  DeviceBuffer<std::uint32_t> ids_, xm_, xd_;
  Stream stream_;
  Scratch scratch_;
  PhaseTimer marks_;
  std::string ud_store_, dict_store_;
};

// Every device buffer a case of variant v allocates (MemoryPlan): the step's inputs and outputs
// (plan_step_buffers) and the steps' scratch, library temporary storage as CUB reports it for the
// calls the steps make (Thrust runs them on CUB).
template <class T>
void plan_case(MemoryPlan& m, const MergeVariant& v, CudaMergeVariant id, const MergeWork<T>& w) {
  constexpr bool str = std::is_same_v<T, std::string_view>;
  const std::uint64_t nd = w.in->delta_rows(), n1 = w.in->main_dict.size(), n2 = w.delta_dict.size();
  plan_step_buffers(m, v.step, id == CudaMergeVariant::Binsearch, w);
  auto step_1a = [&](std::uint64_t n) {
    if constexpr (str) {
      m.add("1a round buffers and CUB temporary storage", merge::delta_dict_str_scratch(n));
    } else {
      if constexpr (std::is_same_v<T, std::uint32_t> || std::is_same_v<T, std::uint64_t>) {
        if (id == CudaMergeVariant::Tuned) {  // 1a by radix-sorted pairs
          m.add("1a sorted pairs, run ids and CUB temporary storage", merge::delta_dict_pairs_scratch<T>(n));
          return;
        }
      }
      m.add("CUB temporary storage", merge::library_temp_bytes<T>(n));
    }
  };
  auto step_1b = [&](std::uint64_t n) {
    if constexpr (str) {
      m.add("1b merge-path buffers and CUB temporary storage", merge::dict_merge_str_scratch(n));
    } else if (id == CudaMergeVariant::Tuned && v.step == MergeStep::DictMerge) {
      m.add("1b tile splits, counts and CUB temporary storage", merge::dict_merge_tiles_scratch(n));
    } else {
      if (id == CudaMergeVariant::Slice) m.add("1b slice intermediate and counts", n * sizeof(T) + 65537 * 8);
      if (id == CudaMergeVariant::MergePath || v.step == MergeStep::Whole)
        m.add("1b merged values, sources and ids", n * (sizeof(T) + 8));
      m.add("CUB temporary storage", merge::library_temp_bytes<T>(n));
    }
  };
  switch (v.step) {
    case MergeStep::DeltaDict: step_1a(nd); break;
    case MergeStep::DictMerge: step_1b(n1 + n2); break;
    case MergeStep::Reencode: break;
    case MergeStep::Whole:
      step_1a(nd);
      step_1b(n1 + nd);
      break;
  }
}
}  // namespace

// Made from its platform as every backend is; the CUDA runtime itself keeps the device.
CudaMerge::CudaMerge(CudaPlatform& /*platform*/)
    : table_("CUDA merge", {{CudaMergeVariant::Thrust, {"thrust", {"delta_dict"}, ""}},
                            {CudaMergeVariant::Radix, {"radix", {"delta_dict"}, ""}},  // strings
                            {CudaMergeVariant::Slice, {"slice", {"dict_merge"}, ""}},
                            {CudaMergeVariant::Csum, {"csum", {"dict_merge"}, ""}},
                            {CudaMergeVariant::Mum, {"mum", {"dict_merge"}, ""}},
                            {CudaMergeVariant::MergePath, {"merge_path", {"dict_merge"}, ""}},
                            {CudaMergeVariant::Lookup, {"lookup", {"reencode"}, ""}},
                            {CudaMergeVariant::Binsearch, {"binsearch", {"reencode"}, ""}},
                            {CudaMergeVariant::Tuned, {"tuned", {"delta_dict", "dict_merge", "reencode"}, ""}},
                            {CudaMergeVariant::InOrder, {"inorder", {"merge"}, ""}},
                            {CudaMergeVariant::Overlap, {"overlap", {"merge"}, ""}}}) {}

bool CudaMerge::supports(const MergeVariant& v, ValueType t) const {
  // Strings: 1a by radix-sort rounds, 1b by merge path, 2b with X_M/X_D, the whole merge in order
  // (as on OpenCL); 1a "radix" is the strings' only (Thrust sorts the integers). Asynchronous
  // copies overlap only from pinned memory.
  const bool str = t == ValueType::Str;
  switch (table_.id(v.name)) {
    case CudaMergeVariant::Thrust: return !str;
    case CudaMergeVariant::Radix: return str;
    case CudaMergeVariant::Slice:
    case CudaMergeVariant::Csum:
    case CudaMergeVariant::Mum:
    case CudaMergeVariant::Binsearch: return !str;
    case CudaMergeVariant::MergePath:
    case CudaMergeVariant::Lookup:
    case CudaMergeVariant::InOrder: return true;
    // 1a by radix-sorted pairs: 32- and 64-bit values; 1b by tiles: the integers; 2b on ids, any type.
    case CudaMergeVariant::Tuned:
      switch (v.step) {
        case MergeStep::DeltaDict: return t == ValueType::U32 || t == ValueType::U64;
        case MergeStep::DictMerge: return !str;
        case MergeStep::Reencode: return true;
        case MergeStep::Whole: break;
      }
      return false;
    case CudaMergeVariant::Overlap: return !str && v.transfer == Transfer::Pinned;
  }
  return false;
}

template <class T>
void CudaMerge::plan(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const {
  plan_case(plan, v, table_.id(v.name), w);
}

template <class T>
std::unique_ptr<MergeCase<T>> CudaMerge::make(const MergeVariant& v, const MergeWork<T>& w) {
  constexpr bool str = std::is_same_v<T, std::string_view>;
  if (!supports(v, ValueTypeOf<T>::value))
    throw SkipCase(std::string(to_string(v.step)) + "/" + v.name + " is not offered for " +
                   to_string(ValueTypeOf<T>::value));
  // Ids, counts and dictionary positions are 32-bit on the device.
  if (w.in->main_dict.size() + w.in->delta_rows() >= std::numeric_limits<std::uint32_t>::max())
    throw SkipCase("dictionaries of 2^32 entries or more are beyond the 32-bit ids");
  if constexpr (str)
    if (total_bytes(w.in->main_dict) + total_bytes(w.in->delta) >= kMaxStringBytes)
      throw SkipCase("strings of 4 GiB or more in U_M and the delta are beyond the 32-bit byte offsets");
  const CudaMergeVariant id = table_.id(v.name);
  if constexpr (str) {
    if (v.step == MergeStep::Whole) return std::make_unique<StrWholeCase>(v, w);
    if (v.step == MergeStep::Reencode) return std::make_unique<StepCase<T>>(v, id, w);
    return std::make_unique<StrStepCase>(v, w);
  } else {
    if (v.step == MergeStep::Whole) return std::make_unique<WholeCase<T>>(v, id, w);
    return std::make_unique<StepCase<T>>(v, id, w);
  }
}

#define HDB_CUDA_MERGE_PLAN(T) \
  template void CudaMerge::plan(const MergeVariant&, const MergeWork<T>&, MemoryPlan&) const;
HDB_CUDA_MERGE_PLAN(std::uint32_t)
HDB_CUDA_MERGE_PLAN(std::uint64_t)
HDB_CUDA_MERGE_PLAN(U128)
HDB_CUDA_MERGE_PLAN(std::string_view)
#undef HDB_CUDA_MERGE_PLAN
template std::unique_ptr<MergeCase<std::uint32_t>> CudaMerge::make(const MergeVariant&,
                                                                   const MergeWork<std::uint32_t>&);
template std::unique_ptr<MergeCase<std::uint64_t>> CudaMerge::make(const MergeVariant&,
                                                                   const MergeWork<std::uint64_t>&);
template std::unique_ptr<MergeCase<U128>> CudaMerge::make(const MergeVariant&, const MergeWork<U128>&);
template std::unique_ptr<MergeCase<std::string_view>> CudaMerge::make(const MergeVariant&,
                                                                      const MergeWork<std::string_view>&);

}  // namespace hdb::cuda
