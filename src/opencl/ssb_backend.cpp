#include "ssb_backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "harness/errors.hpp"
#include "harness/variants.hpp"
#include "sort.hpp"

namespace hdb::opencl::kernels {
extern const char ssb[];
}

namespace hdb::ssb::opencl {
namespace {

namespace ocl = hdb::opencl;

enum class Plan { Fused, Operators };

const VariantTable<Plan>& table() {
  static const VariantTable<Plan> t(
      "the opencl ssb backend", {{Plan::Fused, {"fused", tests(), ""}}, {Plan::Operators, {"operators", tests(), ""}}});
  return t;
}

constexpr std::uint32_t kItems = 16;                          // lineorder rows a work-item of the fused kernel takes
constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 28;    // keys a dense dimension array spans at most
constexpr std::uint64_t kMaxGroups = std::uint64_t{1} << 24;  // groups of the dense aggregate at most
constexpr cl_uint kMiss = 0xffffffffu;
constexpr std::size_t kMaxDims = 4, kMaxFact = 2, kMaxDimPreds = 2;

std::pair<std::uint32_t, std::uint32_t> value_range(const Column& c) {
  if (c.empty()) return {1, 0};
  auto [lo, hi] = std::minmax_element(c.begin(), c.end());
  return {*lo, *hi};
}
std::uint64_t span_of(std::pair<std::uint32_t, std::uint32_t> r) {
  return r.second >= r.first ? std::uint64_t{r.second} - r.first + 1 : 0;
}

// One joined dimension of the plan.
struct Dim {
  Table table;
  Col fk, key;
  std::uint32_t min_key = 0;
  std::uint64_t span = 0;  // keys max - min + 1: the dense array's entries
  int slot = -1;           // its group-by column's position in the answer, or -1
  Col group{};
  std::uint32_t group_min = 0;
  std::uint64_t group_span = 1;  // values of the group-by column (max - min + 1); 1 without one
  std::uint32_t stride = 1;
  std::vector<Pred> preds;
  double selectivity = 1;
};

struct FactPred {
  Col col;
  std::uint32_t lo, width;
};

// The plan of a query on tables, the same for plan_scratch and prepare. The planner's statistics
// come from one host scan of each joined dimension (the small tables) while preparing, untimed:
// each dimension's selectivity (dimensions are probed most selective first) and the range of the
// group-by values of its passing rows (a group index's radix: Q3.2 groups 10 x 10 x 6, not
// 250 x 250 x 7). The device's build still evaluates the predicates and writes the arrays.
struct Shape {
  std::vector<FactPred> fact;
  std::vector<Dim> dims;
  std::uint64_t groups = 1;
  std::uint64_t map_bytes() const {
    std::uint64_t b = 0;
    for (const Dim& d : dims) b += d.span * 4;
    return b;
  }
};

Shape make_shape(const Query& q, const Tables& t) {
  Shape s;
  for (const Pred& p : q.preds)
    if (table_of(p.col) == Table::Lineorder) {
      if (p.ranges.size() != 1 || s.fact.size() == kMaxFact)
        throw SkipCase("the opencl plan takes at most two lineorder predicates of one range each");
      s.fact.push_back({p.col, p.ranges[0].first, p.ranges[0].second - p.ranges[0].first});
    }
  for (Table tb : q.dims()) {
    Dim d;
    d.table = tb;
    d.fk = foreign_key(tb);
    d.key = key_of(tb);
    const auto kr = value_range(t[d.key]);
    d.min_key = kr.first;
    d.span = span_of(kr);
    if (d.span > kMaxSpan)
      throw SkipCase(std::string(table_name(tb)) + " keys spread over " + std::to_string(d.span) +
                     " values: more than the opencl plan's dense arrays take (2^28)");
    for (std::size_t g = 0; g < q.group_by.size(); ++g)
      if (table_of(q.group_by[g]) == tb) {
        if (d.slot >= 0) throw SkipCase("the opencl plan takes one group-by column per dimension");
        d.slot = static_cast<int>(g);
        d.group = q.group_by[g];
      }
    for (const Pred& p : q.preds)
      if (table_of(p.col) == tb) {
        if (p.ranges.size() > 2 || d.preds.size() == kMaxDimPreds)
          throw SkipCase("the opencl plan takes at most two predicates of two ranges each per dimension");
        d.preds.push_back(p);
      }
    // The statistics: the passing rows and their group-by values' range.
    const std::uint64_t n = t.rows(tb);
    std::uint64_t passing = 0;
    std::uint32_t gmin = std::numeric_limits<std::uint32_t>::max(), gmax = 0;
    for (std::uint64_t r = 0; r < n; ++r) {
      bool ok = true;
      for (const Pred& p : d.preds) ok = ok && p.test(t[p.col][r]);
      passing += ok;
      if (ok && d.slot >= 0) {
        gmin = std::min(gmin, t[d.group][r]);
        gmax = std::max(gmax, t[d.group][r]);
      }
    }
    if (d.slot >= 0 && passing) {
      d.group_min = gmin;
      d.group_span = std::uint64_t{gmax} - gmin + 1;
    }
    d.selectivity = n ? static_cast<double>(passing) / static_cast<double>(n) : 0;
    s.dims.push_back(d);
  }
  if (s.dims.size() > kMaxDims) throw SkipCase("the opencl plan joins at most four dimensions");
  std::stable_sort(s.dims.begin(), s.dims.end(),
                   [](const Dim& a, const Dim& b) { return a.selectivity < b.selectivity; });
  for (Dim& d : s.dims) {
    d.stride = static_cast<std::uint32_t>(s.groups);
    s.groups *= d.group_span;
    if (s.groups > kMaxGroups)
      throw SkipCase("more than 2^24 groups: more than the opencl plan's dense aggregates take");
  }
  return s;
}

bool has_second_operand(Agg a) { return a != Agg::Revenue; }

// The device scan's block sums and their offsets for n elements (DeviceScan::reserve).
std::uint64_t scan_bytes(std::uint64_t n, std::uint64_t wg) {
  std::uint64_t bytes = 0;
  for (int level = 0; n > 1 || level == 0; ++level) {
    const std::uint64_t b = (std::max<std::uint64_t>(n, 1) + wg - 1) / wg;
    bytes += 2 * b * 4;
    n = b;
  }
  return bytes;
}

std::uint64_t round_up(std::uint64_t n, std::uint64_t m) { return (n + m - 1) / m * m; }

class OpenClSsbRun : public SsbRun {
 public:
  // resident: the columns are uploaded once here, and a pass copies only the answer back (the
  // benchmark's resident=yes; Transfer::None, the tests' way of saying no bus, means the same).
  OpenClSsbRun(ocl::OpenClPlatform& p, const Query& q, const Tables& t, Plan plan, Transfer transfer, bool resident,
               bool int64, std::uint32_t local_groups)
      : p_(p),
        q_(q),
        t_(t),
        plan_(plan),
        transfer_(transfer),
        resident_(resident || transfer == Transfer::None),
        shape_(make_shape(q, t)) {
    n_ = t.rows(Table::Lineorder);
    if (n_ >= std::numeric_limits<std::uint32_t>::max())
      throw SkipCase("lineorder of 2^32 rows or more is beyond the opencl plan's 32-bit row indices");
    int64_ = int64;
    const std::uint64_t local_bytes = p.device().getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
    local_agg_ = plan == Plan::Fused && shape_.groups <= local_groups && shape_.groups * 12 <= local_bytes / 2;
    build_kernels();
    upload_columns();
    allocate();
  }

  Breakdown pass() override {
    HostTimer wall;
    Breakdown b;
    cl::CommandQueue& queue = p_.queue();
    ocl::Trace tr;
    std::vector<cl::Event> writes;
    ocl::checked("an ssb pass", [&] {
      if (!resident_) {
        for (std::size_t i = 0; i < cols_.size(); ++i) {
          if (col_bytes(i) == 0) continue;  // an empty table: OpenCL 2.0+ refuses a write of no bytes
          writes.emplace_back();
          queue.enqueueWriteBuffer(col_buf_[i], CL_FALSE, 0, col_bytes(i), host_ptr(i), nullptr, &writes.back());
        }
      }
      build(tr);
      init(tr);
      if (plan_ == Plan::Fused)
        fused(tr);
      else
        operators(tr);
      cl::Event r1, r2;
      sums_host_.resize(shape_.groups);
      seen_host_.resize(shape_.groups);
      queue.enqueueReadBuffer(sums_, CL_FALSE, 0, shape_.groups * 8, sums_host_.data(), nullptr, &r1);
      queue.enqueueReadBuffer(seen_, CL_FALSE, 0, shape_.groups * 4, seen_host_.data(), nullptr, &r2);
      r2.wait();
      queue.finish();
      b.d2h = ocl::event_seconds(r1) + ocl::event_seconds(r2);
      return 0;
    });
    for (const cl::Event& e : writes) b.h2d += ocl::event_seconds(e);
    b.kernel = tr.span();
    tr.add_phases(b);
    b.total = wall.seconds();
    return b;
  }

  Result result() override {
    Result r;
    for (std::uint64_t g = 0; g < shape_.groups; ++g) {
      if (!seen_host_[g] && !q_.group_by.empty()) continue;
      ResultRow row;
      row.value = static_cast<std::int64_t>(sum_of(g));
      for (const Dim& d : shape_.dims)
        if (d.slot >= 0)
          row.key[static_cast<std::size_t>(d.slot)] =
              d.group_min + static_cast<std::uint32_t>((g / d.stride) % d.group_span);
      r.rows.push_back(row);
    }
    std::sort(r.rows.begin(), r.rows.end());
    return r;
  }

  std::uint64_t transfer_bytes() const override {
    if (transfer_ == Transfer::None) return 0;
    std::uint64_t in = 0;
    if (!resident_)
      for (std::size_t i = 0; i < cols_.size(); ++i) in += col_bytes(i);
    return in + shape_.groups * 12;
  }

  Ran ran() const override {
    Ran r;
    r.work_group = static_cast<int>(wg_);
    if (plan_ == Plan::Fused) {
      r.items_per_thread = static_cast<int>(kItems);
      r.impl = local_agg_ ? "local-memory aggregation (32-bit halves), flushed with " : "global aggregation with ";
    } else {
      r.impl = "operator at a time, group-by with ";
    }
    r.impl += int64_ ? "64-bit atomics (cl_khr_int64_base_atomics)" : "32-bit halves with carry (no 64-bit atomics)";
    return r;
  }

 private:
  std::uint64_t sum_of(std::uint64_t g) const {
    if (int64_) return sums_host_[g];
    // Two 32-bit halves, low first, in the 8 bytes of the group.
    std::uint32_t w[2];
    std::memcpy(w, &sums_host_[g], 8);
    return (std::uint64_t{w[1]} << 32) | w[0];
  }

  std::string options() const {
    std::string o = " -DITEMS=" + std::to_string(kItems) + " -DNDIMS=" + std::to_string(shape_.dims.size()) +
                    " -DNFACT=" + std::to_string(shape_.fact.size()) +
                    " -DAGG=" + std::to_string(static_cast<int>(q_.agg)) + " -DGROUPS=" + std::to_string(shape_.groups);
    if (local_agg_) o += " -DLOCAL_AGG";
    if (int64_) o += " -DINT64_ATOMICS";
    return o;
  }

  void build_kernels() {
    wg_ = ocl::preferred_work_group(p_);
    const std::string o = options();
    ocl::checked("building the ssb kernels", [&] {
      cl::Program& prog = ocl::build_for_work_group(p_, "ssb" + o, ocl::kernels::ssb, o,
                                                    {"ssb_dim_build", "ssb_fused", "ssb_op_select", "ssb_op_gather",
                                                     "ssb_op_probe", "ssb_op_compact", "ssb_op_value", "ssb_op_group"},
                                                    wg_);
      dim_build_ = cl::Kernel(prog, "ssb_dim_build");
      fused_ = cl::Kernel(prog, "ssb_fused");
      select_ = cl::Kernel(prog, "ssb_op_select");
      gather_ = cl::Kernel(prog, "ssb_op_gather");
      probe_ = cl::Kernel(prog, "ssb_op_probe");
      compact_ = cl::Kernel(prog, "ssb_op_compact");
      value_ = cl::Kernel(prog, "ssb_op_value");
      group_ = cl::Kernel(prog, "ssb_op_group");
      return 0;
    });
    if (plan_ == Plan::Operators) {
      scan_ = std::make_unique<ocl::DeviceScan>(p_);
      scan_->reserve(n_);
    }
  }

  std::uint64_t col_bytes(std::size_t i) const { return t_[cols_[i]].size() * 4; }
  const void* host_ptr(std::size_t i) const {
    if (staging_) return static_cast<const char*>(staging_->data()) + staging_off_[i];
    return t_[cols_[i]].data();
  }
  const cl::Buffer& col(Col c) const {
    for (std::size_t i = 0; i < cols_.size(); ++i)
      if (cols_[i] == c) return col_buf_[i];
    throw std::logic_error(std::string("the ssb plan reads a column it did not upload: ") + col_name(c));
  }

  // Device buffers of the columns the query reads; pinned: their copy in staging memory; resident:
  // uploaded here, once.
  void upload_columns() {
    cols_ = q_.columns();
    std::uint64_t total = 0;
    for (std::size_t i = 0; i < cols_.size(); ++i) {
      col_buf_.push_back(ocl::scratch_buffer(p_, col_bytes(i), std::string("column ") + col_name(cols_[i])));
      staging_off_.push_back(total);
      total += col_bytes(i);
    }
    if (transfer_ == Transfer::Pinned && !resident_) {
      staging_ = std::make_unique<ocl::HostStaging>(p_, total, Transfer::Pinned);
      for (std::size_t i = 0; i < cols_.size(); ++i)
        std::memcpy(static_cast<char*>(staging_->data()) + staging_off_[i], t_[cols_[i]].data(), col_bytes(i));
    }
    if (resident_)
      ocl::checked("uploading the ssb columns", [&] {
        for (std::size_t i = 0; i < cols_.size(); ++i)
          if (col_bytes(i)) p_.queue().enqueueWriteBuffer(col_buf_[i], CL_TRUE, 0, col_bytes(i), host_ptr(i));
        return 0;
      });
  }

  void allocate() {
    for (const Dim& d : shape_.dims) maps_.push_back(ocl::scratch_buffer(p_, d.span * 4, "dimension array"));
    sums_ = ocl::scratch_buffer(p_, shape_.groups * 8, "group sums");
    seen_ = ocl::scratch_buffer(p_, shape_.groups * 4, "group seen flags");
    dummy_ = ocl::scratch_buffer(p_, 4, "unused argument");
    if (plan_ == Plan::Operators) {
      const std::uint64_t b = n_ * 4;
      flags_ = ocl::scratch_buffer(p_, b, "row flags");
      offs_ = ocl::scratch_buffer(p_, b, "flag offsets");
      for (int i = 0; i < 2; ++i) {
        rows_[i] = ocl::scratch_buffer(p_, b, "row list");
        grp_[i] = ocl::scratch_buffer(p_, b, "group indices");
      }
      gathered_ = ocl::scratch_buffer(p_, b, "gathered column");
      vals_ = ocl::scratch_buffer(p_, b, "looked-up values");
      rowval_ = ocl::scratch_buffer(p_, n_ * 8, "row values");
    }
  }

  void launch(ocl::Trace& tr, const std::string& phase, cl::Kernel& k, std::uint64_t items) {
    if (items == 0) return;
    cl::Event e;
    p_.queue().enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(round_up(items, wg_)), cl::NDRange(wg_), nullptr, &e);
    tr.add(phase, e);
  }

  static cl_uint4 ranges_of(const Dim& d, std::size_t i) {
    cl_uint4 r{{1, 0, 1, 0}};  // empty ranges
    if (i < d.preds.size())
      for (std::size_t j = 0; j < d.preds[i].ranges.size(); ++j) {
        r.s[2 * j] = d.preds[i].ranges[j].first;
        r.s[2 * j + 1] = d.preds[i].ranges[j].second;
      }
    return r;
  }

  // The dense dimension arrays: MISS everywhere, then each dimension row's entry.
  void build(ocl::Trace& tr) {
    for (std::size_t i = 0; i < shape_.dims.size(); ++i) {
      const Dim& d = shape_.dims[i];
      if (d.span == 0) continue;
      cl::Event fill;
      p_.queue().enqueueFillBuffer(maps_[i], kMiss, 0, d.span * 4, nullptr, &fill);
      tr.add("build", fill);
      const auto n = static_cast<cl_uint>(t_.rows(d.table));
      const cl::Buffer& pc0 = d.preds.size() > 0 ? col(d.preds[0].col) : dummy_;
      const cl::Buffer& pc1 = d.preds.size() > 1 ? col(d.preds[1].col) : dummy_;
      ocl::set_args("ssb_dim_build", dim_build_, n, col(d.key), cl_uint{d.min_key}, d.slot >= 0 ? col(d.group) : dummy_,
                    cl_uint{d.group_min}, cl_uint{d.slot >= 0}, static_cast<cl_uint>(d.preds.size()), pc0,
                    ranges_of(d, 0), pc1, ranges_of(d, 1), maps_[i]);
      launch(tr, "build", dim_build_, n);
    }
  }

  void init(ocl::Trace& tr) {
    cl::Event a, b;
    p_.queue().enqueueFillBuffer(sums_, cl_uint{0}, 0, shape_.groups * 8, nullptr, &a);
    p_.queue().enqueueFillBuffer(seen_, cl_uint{0}, 0, shape_.groups * 4, nullptr, &b);
    tr.add("init", a);
    tr.add("init", b);
  }

  const cl::Buffer& fact_col(std::size_t i) const { return i < shape_.fact.size() ? col(shape_.fact[i].col) : dummy_; }
  cl_uint fact_lo(std::size_t i) const { return i < shape_.fact.size() ? shape_.fact[i].lo : 0; }
  cl_uint fact_width(std::size_t i) const { return i < shape_.fact.size() ? shape_.fact[i].width : 0; }
  const cl::Buffer& operand(int i) const {
    switch (q_.agg) {
      case Agg::DiscountedPrice: return col(i == 0 ? Col::lo_extendedprice : Col::lo_discount);
      case Agg::Revenue: return col(Col::lo_revenue);
      case Agg::Profit: return col(i == 0 ? Col::lo_revenue : Col::lo_supplycost);
    }
    throw std::logic_error("unknown aggregate");
  }

  void fused(ocl::Trace& tr) {
    cl_uint idx = 0;
    auto arg = [&](const auto& v) { fused_.setArg(idx++, v); };
    arg(static_cast<cl_uint>(n_));
    for (std::size_t i = 0; i < kMaxFact; ++i) {
      arg(fact_col(i));
      arg(fact_lo(i));
      arg(fact_width(i));
    }
    for (std::size_t i = 0; i < kMaxDims; ++i) {
      const bool used = i < shape_.dims.size();
      arg(used ? col(shape_.dims[i].fk) : dummy_);
      arg(used ? maps_[i] : dummy_);
      arg(cl_uint{used ? shape_.dims[i].min_key : 0});
      arg(static_cast<cl_uint>(used ? shape_.dims[i].span : 0));
      arg(cl_uint{used ? shape_.dims[i].stride : 0});
    }
    arg(operand(0));
    arg(operand(1));
    arg(sums_);
    arg(seen_);
    const std::uint64_t tile = wg_ * kItems;
    if (n_ == 0) return;
    cl::Event e;
    p_.queue().enqueueNDRangeKernel(fused_, cl::NullRange, cl::NDRange((n_ + tile - 1) / tile * wg_), cl::NDRange(wg_),
                                    nullptr, &e);
    tr.add("probe", e);
  }

  // Exclusive scan of flags into offs over m rows; returns the kept rows (a blocking read).
  std::uint32_t scan(ocl::Trace& tr, std::uint32_t m) {
    std::vector<cl::Event> evs;
    scan_->run(flags_, offs_, m, evs);
    tr.take("compact", evs);
    return static_cast<std::uint32_t>(scan_->total());
  }

  void operators(ocl::Trace& tr) {
    auto m = static_cast<std::uint32_t>(n_);
    bool identity = true, has_grp = false;
    int cur = 0;
    if (!shape_.fact.empty()) {
      ocl::set_args("ssb_op_select", select_, cl_uint{m}, fact_col(0), fact_lo(0), fact_width(0), fact_col(1),
                    fact_lo(1), fact_width(1), static_cast<cl_uint>(shape_.fact.size()), flags_);
      launch(tr, "select", select_, m);
      const std::uint32_t kept = scan(tr, m);
      ocl::set_args("ssb_op_compact", compact_, cl_uint{m}, flags_, offs_, cl_uint{1}, dummy_, cl_uint{0}, dummy_,
                    cl_uint{0}, dummy_, cl_uint{0}, rows_[cur], grp_[cur]);
      launch(tr, "compact", compact_, m);
      m = kept;
      identity = false;
      has_grp = true;  // written as 0
    }
    for (std::size_t i = 0; i < shape_.dims.size(); ++i) {
      const Dim& d = shape_.dims[i];
      const cl::Buffer* fk = &col(d.fk);
      if (!identity) {
        ocl::set_args("ssb_op_gather", gather_, cl_uint{m}, col(d.fk), rows_[cur], gathered_);
        launch(tr, "gather", gather_, m);
        fk = &gathered_;
      }
      ocl::set_args("ssb_op_probe", probe_, cl_uint{m}, *fk, maps_[i], cl_uint{d.min_key}, static_cast<cl_uint>(d.span),
                    vals_, flags_);
      launch(tr, "probe", probe_, m);
      const std::uint32_t kept = m ? scan(tr, m) : 0;
      ocl::set_args("ssb_op_compact", compact_, cl_uint{m}, flags_, offs_, cl_uint{identity},
                    identity ? dummy_ : rows_[cur], cl_uint{has_grp}, has_grp ? grp_[cur] : dummy_, cl_uint{1}, vals_,
                    cl_uint{d.stride}, rows_[1 - cur], grp_[1 - cur]);
      launch(tr, "compact", compact_, m);
      cur = 1 - cur;
      m = kept;
      identity = false;
      has_grp = true;
    }
    if (identity) throw std::logic_error("an ssb query without a predicate or a join");
    // The aggregate's columns gathered into the buffers the probes are done with.
    ocl::set_args("ssb_op_gather", gather_, cl_uint{m}, operand(0), rows_[cur], gathered_);
    launch(tr, "gather", gather_, m);
    const bool second = has_second_operand(q_.agg);
    if (second) {
      ocl::set_args("ssb_op_gather", gather_, cl_uint{m}, operand(1), rows_[cur], vals_);
      launch(tr, "gather", gather_, m);
    }
    ocl::set_args("ssb_op_value", value_, cl_uint{m}, gathered_, second ? vals_ : gathered_, rowval_);
    launch(tr, "aggregate", value_, m);
    ocl::set_args("ssb_op_group", group_, cl_uint{m}, grp_[cur], rowval_, sums_, seen_);
    launch(tr, "aggregate", group_, m);
  }

  ocl::OpenClPlatform& p_;
  const Query& q_;
  const Tables& t_;
  Plan plan_;
  Transfer transfer_;
  bool resident_;
  Shape shape_;
  std::uint64_t n_ = 0;
  bool int64_ = false, local_agg_ = false;
  std::size_t wg_ = 1;
  cl::Kernel dim_build_, fused_, select_, gather_, probe_, compact_, value_, group_;
  std::unique_ptr<ocl::DeviceScan> scan_;
  std::vector<Col> cols_;
  std::vector<cl::Buffer> col_buf_;
  std::vector<std::uint64_t> staging_off_;
  std::unique_ptr<ocl::HostStaging> staging_;
  std::vector<cl::Buffer> maps_;
  cl::Buffer sums_, seen_, dummy_;
  cl::Buffer flags_, offs_, rows_[2], grp_[2], gathered_, vals_, rowval_;
  std::vector<std::uint64_t> sums_host_;
  std::vector<std::uint32_t> seen_host_;
};

}  // namespace

const VariantList& OpenClSsb::variant_table() const { return table(); }

bool OpenClSsb::device_has_int64_atomics() const {
  const std::string ext = p_.device().getInfo<CL_DEVICE_EXTENSIONS>();
  return ext.find("cl_khr_int64_base_atomics") != std::string::npos;
}

std::unique_ptr<SsbRun> OpenClSsb::prepare(const Query& q, const Tables& t, const std::string& variant,
                                           Transfer transfer, Residency residency) {
  const Plan plan = table().id(variant);
  return std::make_unique<OpenClSsbRun>(p_, q, t, plan, transfer, residency == Residency::Device,
                                        allow_int64_ && device_has_int64_atomics(), local_groups_);
}

void OpenClSsb::plan_scratch(const Query& q, const Tables& t, const std::string& variant, MemoryPlan& memory) const {
  const Plan plan = table().id(variant);
  const Shape s = make_shape(q, t);
  memory.add("dimension arrays (4 bytes per key between the smallest and largest)", s.map_bytes())
      .add("group sums (8 bytes a group)", s.groups * 8)
      .add("group seen flags (4 bytes a group)", s.groups * 4);
  if (plan == Plan::Operators) {
    const std::uint64_t n = t.rows(Table::Lineorder), b = n * 4;
    memory.add("row flags", b)
        .add("flag offsets", b)
        .add("row lists (two)", 2 * b)
        .add("group indices (two)", 2 * b)
        .add("gathered column", b)
        .add("looked-up values", b)
        .add("row values (64-bit)", n * 8)
        .add("scan block sums", scan_bytes(n, ocl::preferred_work_group(p_)));
  }
}

}  // namespace hdb::ssb::opencl
