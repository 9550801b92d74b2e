#include "bench/tpch_ra.hpp"

#include <algorithm>
#include <numeric>

#include "harness/errors.hpp"

namespace hdb::tpch {
namespace {

// A relation of the plan as RA tuples: plan column j is tuple attribute attr[j] (0 = key).
struct Placed {
  ra::DeviceRel dev;
  std::vector<int> attr;
  bool sorted = false;  // by key
};

bool key_sorted(const std::vector<std::uint32_t>& v) { return std::is_sorted(v.begin(), v.end()); }

class RaRun : public TpchRun {
 public:
  RaRun(ra::RaBackend& b, const Plan& plan, std::string variant, Transfer t)
      : b_(b), plan_(plan), variant_(std::move(variant)), transfer_(t), schemas_(plan_schemas(plan)) {
    for (const auto& in : plan_.inputs) {
      const int width = static_cast<int>(in->cols.size());
      if (width < 1 || width > 1 + ra::kMaxValues) throw SkipCase("an input has more attributes than RA tuples hold");
      ra::Relation h = b_.host_relation(in->rows(), width - 1, t == Transfer::None ? Transfer::Pageable : t);
      for (std::uint64_t i = 0; i < in->rows(); ++i)
        for (int c = 0; c < width; ++c) h.tuple(i)[c] = in->cols[static_cast<std::size_t>(c)].v[i];
      hosts_.push_back(std::move(h));
      inputs_sorted_.push_back(key_sorted(in->cols[0].v));
    }
    for (const auto& s : schemas_)
      if (s.size() > 1 + static_cast<std::size_t>(ra::kMaxValues))
        throw SkipCase("an intermediate relation is wider than the RA tuple limit");
    dev_inputs_.resize(plan_.inputs.size());
    steps_.resize(plan_.steps.size());
    rekeyed_.resize(2 * plan_.steps.size());
    sorted_.resize(2 * plan_.steps.size());
    // The backend's sort of the same variant name, else its first.
    const std::vector<std::string> sorts = b_.variants(ra::Op::Sort);
    if (sorts.empty()) throw SkipCase("the backend offers no sort for the re-keyed joins");
    sort_variant_ = ra::offers(b_, ra::Op::Sort, variant_) ? variant_ : sorts.front();
  }

  Breakdown pass() override {
    HostTimer wall;
    Breakdown b;
    std::vector<Placed> rel;
    for (std::size_t i = 0; i < plan_.inputs.size(); ++i) {
      b.add_copy(b_.upload(hosts_[i], dev_inputs_[i]), transfer_ != Transfer::None);
      std::vector<int> attr(plan_.inputs[i]->cols.size());
      std::iota(attr.begin(), attr.end(), 0);
      rel.push_back({dev_inputs_[i], attr, inputs_sorted_[i]});
    }
    for (std::size_t k = 0; k < plan_.steps.size(); ++k) {
      const Step& s = plan_.steps[k];
      const Placed& in = rel[static_cast<std::size_t>(s.in)];
      Placed out;
      switch (s.op) {
        case Op::Select: {
          ra::Predicate p{in.attr[static_cast<std::size_t>(s.col)], s.lo, s.hi};
          add(b, s.name, b_.select(*in.dev, p, variant_, steps_[k]));
          out = {steps_[k], in.attr, in.sorted};  // select keeps the input order
          break;
        }
        case Op::Join: {
          Placed l = keyed(b, 2 * k, in, s.col, s.name + ".left");
          Placed r = keyed(b, 2 * k + 1, rel[static_cast<std::size_t>(s.right)], s.right_col, s.name + ".right");
          add(b, s.name, b_.join(*l.dev, *r.dev, variant_, steps_[k]));
          // (key, left values, right values): left columns keep their attributes, right values follow.
          const int lw = static_cast<int>(l.attr.size());
          out.attr = l.attr;
          for (std::size_t c = 0; c < r.attr.size(); ++c)
            if (static_cast<int>(c) != s.right_col) out.attr.push_back(lw + r.attr[c] - 1);
          out.dev = steps_[k];
          out.sorted = true;
          break;
        }
        case Op::Project: {
          std::vector<int> cols;
          for (int c : s.cols) cols.push_back(in.attr[static_cast<std::size_t>(c)]);
          add(b, s.name, b_.project(*in.dev, cols, variant_, steps_[k]));
          out.attr.resize(cols.size());
          std::iota(out.attr.begin(), out.attr.end(), 0);
          out.dev = steps_[k];
          out.sorted = in.sorted && cols[0] == 0;
          break;
        }
      }
      rel.push_back(std::move(out));
    }
    const Placed& last = rel.back();
    if (host_out_.capacity_rows() < last.dev->rows() || host_out_.values() != last.dev->values())
      host_out_ = b_.host_relation(last.dev->rows(), last.dev->values(), transfer_ == Transfer::None ? Transfer::Pageable : transfer_);
    b.add_copy(b_.download(*last.dev, host_out_), transfer_ != Transfer::None);
    out_attr_ = last.attr;
    b.total = wall.seconds();
    return b;
  }

  Relation result() override {
    Relation r;
    r.name = plan_.kernel;
    const auto& schema = schemas_.back();
    for (std::size_t j = 0; j < schema.size(); ++j) {
      Column c{schema[j], std::vector<std::uint32_t>(host_out_.rows())};
      for (std::uint64_t i = 0; i < host_out_.rows(); ++i) c.v[i] = host_out_.tuple(i)[out_attr_[j]];
      r.cols.push_back(std::move(c));
    }
    return r;
  }

 private:
  static void add(Breakdown& b, const std::string& phase, const Breakdown& op) {
    b.kernel += op.kernel;
    b.add_copy(op, true);  // an operator's own copies (a count read back) cross the bus when there is one
    b.add_phase(phase, op.kernel);
  }

  // The relation with plan column `col` as its key, sorted by it: as it is, or re-keyed by
  // project() and sorted by the backend's sort(), on the device.
  Placed keyed(Breakdown& b, std::size_t k, const Placed& in, int col, const std::string& name) {  // k: buffer slot
    const int a = in.attr[static_cast<std::size_t>(col)];
    if (a == 0 && in.sorted) return in;
    Placed out;
    out.dev = in.dev;
    out.attr = in.attr;
    if (a != 0) {
      std::vector<int> cols{a};
      for (int x = 0; x < static_cast<int>(in.attr.size()); ++x)
        if (x != a) cols.push_back(x);
      add(b, name + ".rekey", b_.project(*in.dev, cols, variant_, rekeyed_[k]));
      for (int& x : out.attr) x = x == a ? 0 : (x < a ? x + 1 : x);
      out.dev = rekeyed_[k];
    }
    out.sorted = true;
    add(b, name + ".sort", b_.sort(*out.dev, sort_variant_, sorted_[k]));
    out.dev = sorted_[k];
    return out;
  }

  ra::RaBackend& b_;
  const Plan& plan_;
  std::string variant_;
  std::string sort_variant_;
  Transfer transfer_;
  std::vector<std::vector<ColumnInfo>> schemas_;
  std::vector<ra::Relation> hosts_;
  std::vector<bool> inputs_sorted_;
  // Device relations kept across passes, so that only the warm-up pass allocates.
  std::vector<ra::DeviceRel> dev_inputs_, steps_, rekeyed_, sorted_;
  ra::Relation host_out_;
  std::vector<int> out_attr_;
};

}  // namespace

std::vector<std::string> RaComposed::variants() const {
  std::vector<std::string> out;
  for (const std::string& v : b_.variants(ra::Op::Select))
    if (ra::offers(b_, ra::Op::Join, v) && ra::offers(b_, ra::Op::Project, v)) out.push_back("ra-" + v);
  return out;
}

std::unique_ptr<TpchRun> RaComposed::prepare(const Plan& plan, const std::string& variant, Transfer transfer) {
  if (variant.rfind("ra-", 0) != 0) throw SkipCase("unknown variant " + variant);
  return std::make_unique<RaRun>(b_, plan, variant.substr(3), transfer);
}

std::vector<std::string> MultiBackend::variants() const {
  std::vector<std::string> out;
  for (TpchBackend* b : backends_)
    for (const std::string& v : b->variants()) out.push_back(v);
  return out;
}

std::unique_ptr<TpchRun> MultiBackend::prepare(const Plan& plan, const std::string& variant, Transfer transfer) {
  for (TpchBackend* b : backends_) {
    auto vs = b->variants();
    if (std::find(vs.begin(), vs.end(), variant) != vs.end()) return b->prepare(plan, variant, transfer);
  }
  throw SkipCase("unknown variant " + variant);
}

}  // namespace hdb::tpch
