#include "bench/tpch_ra.hpp"

#include <algorithm>
#include <numeric>

#include "harness/errors.hpp"

namespace hdb::tpch {
namespace {

// A relation of the plan as RA tuples: plan column j is tuple attribute attr[j] (0 = key). A wide
// (64-bit) plan column is the key (two key words) or two value attributes, high word first (as RA
// makes of a 64-bit key that project moves away from the key): attr[j] is the high word's.
struct Placed {
  ra::DeviceRel dev;
  std::vector<int> attr;
  std::vector<bool> wide;
  bool sorted = false;  // by key
};

bool key_sorted(const Column& c) {
  for (std::uint64_t i = 1; i < c.v.size(); ++i)
    if (c.at(i) < c.at(i - 1)) return false;
  return true;
}

// `in`'s plan columns `cols` laid out anew, in that order, the first becoming the key (of its
// width: a 64-bit value's two words make a 64-bit key): the word layout for project_words and the
// attribute each of those columns then has.
struct Relaid {
  ra::ProjectLayout layout;
  std::vector<int> attr;  // per entry of cols
};
Relaid relay(const Placed& in, int key_words, const std::vector<int>& cols) {
  Relaid r;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const auto j = static_cast<std::size_t>(cols[i]);
    const int a = in.attr[j];
    const int first = a == 0 ? 0 : key_words - 1 + a, words = a == 0 ? key_words : in.wide[j] ? 2 : 1;
    if (i == 0) r.layout.key_words = words;
    const int at = static_cast<int>(r.layout.words.size());
    for (int w = 0; w < words; ++w) r.layout.words.push_back(first + w);
    r.attr.push_back(i == 0 ? 0 : at - r.layout.key_words + 1);
  }
  return r;
}

class RaRun : public TpchRun {
 public:
  RaRun(ra::RaBackend& b, const Plan& plan, std::string variant, Transfer t)
      : b_(b), plan_(plan), variant_(std::move(variant)), transfer_(t), schemas_(plan_schemas(plan)) {
    b_.release_scratch();  // what earlier cases grew
    for (const auto& in : plan_.inputs) {
      if (in->cols.empty()) throw SkipCase("an input has no attributes");
      const int kw = in->cols[0].info.words();
      int words = 0;
      for (const Column& c : in->cols) words += c.info.words();
      if (words > ra::kMaxWords) throw SkipCase("an input has more words than RA tuples hold");
      ra::Relation h = b_.host_relation(in->rows(), words - kw, t == Transfer::None ? Transfer::Pageable : t, kw);
      for (std::uint64_t i = 0; i < in->rows(); ++i) {
        std::uint32_t* tuple = h.tuple(i);
        ra::set_key(tuple, kw, in->cols[0].at(i));
        int w = kw;
        for (std::size_t c = 1; c < in->cols.size(); ++c) {
          const Column& col = in->cols[c];
          if (col.info.wide) tuple[w++] = col.hi[i];
          tuple[w++] = col.v[i];
        }
      }
      hosts_.push_back(std::move(h));
      inputs_sorted_.push_back(key_sorted(in->cols[0]));
    }
    for (const auto& s : schemas_) {
      int words = 0;
      for (const ColumnInfo& c : s) words += c.words();
      if (words > ra::kMaxWords)
        throw SkipCase("an intermediate relation is wider than the RA tuple limit of " + std::to_string(ra::kMaxWords) +
                       " words");
    }
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
      std::vector<int> attr;
      std::vector<bool> wide;
      int a = 0;
      for (const Column& c : plan_.inputs[i]->cols) {
        attr.push_back(a);
        wide.push_back(c.info.wide);
        a += (a > 0 && c.info.wide) ? 2 : 1;  // a 64-bit value takes two attributes, the key one
      }
      rel.push_back({dev_inputs_[i], attr, wide, inputs_sorted_[i]});
    }
    for (std::size_t k = 0; k < plan_.steps.size(); ++k) {
      const Step& s = plan_.steps[k];
      const Placed& in = rel[static_cast<std::size_t>(s.in)];
      Placed out;
      switch (s.op) {
        case Op::Select: {
          ra::Predicate p{in.attr[static_cast<std::size_t>(s.col)], s.lo, s.hi};
          if (p.attribute != 0 && in.wide[static_cast<std::size_t>(s.col)]) p.value_words = 2;  // 64-bit value
          add(b, s.name, b_.select(*in.dev, p, variant_, steps_[k]));
          out = {steps_[k], in.attr, in.wide, in.sorted};  // select keeps the input order
          break;
        }
        case Op::Join: {
          Placed l = keyed(b, 2 * k, in, s.col, s.name + ".left");
          Placed r = keyed(b, 2 * k + 1, rel[static_cast<std::size_t>(s.right)], s.right_col, s.name + ".right");
          add(b, s.name, b_.join(*l.dev, *r.dev, variant_, steps_[k]));
          // (key, left values, right values): left columns keep their attributes, right values follow.
          const int lw = l.dev->values() + 1;
          out.attr = l.attr;
          out.wide = l.wide;
          for (std::size_t c = 0; c < r.attr.size(); ++c)
            if (static_cast<int>(c) != s.right_col) {
              out.attr.push_back(lw + r.attr[c] - 1);
              out.wide.push_back(r.wide[c]);
            }
          out.dev = steps_[k];
          out.sorted = true;
          break;
        }
        case Op::Project: {
          const Relaid r = relay(in, in.dev->key_words(), s.cols);
          add(b, s.name, b_.project_words(*in.dev, r.layout, variant_, steps_[k]));
          out.attr = r.attr;
          for (int c : s.cols) out.wide.push_back(in.wide[static_cast<std::size_t>(c)]);
          out.dev = steps_[k];
          out.sorted = in.sorted && in.attr[static_cast<std::size_t>(s.cols[0])] == 0;
          break;
        }
      }
      rel.push_back(std::move(out));
    }
    const Placed& last = rel.back();
    if (host_out_.capacity_rows() < last.dev->rows() || host_out_.values() != last.dev->values() ||
        host_out_.key_words() != last.dev->key_words())
      host_out_ = b_.host_relation(last.dev->rows(), last.dev->values(),
                                   transfer_ == Transfer::None ? Transfer::Pageable : transfer_, last.dev->key_words());
    b.add_copy(b_.download(*last.dev, host_out_), transfer_ != Transfer::None);
    out_attr_ = last.attr;
    b.total = wall.seconds();
    return b;
  }

  Relation result() override {
    Relation r;
    r.name = plan_.kernel;
    const auto& schema = schemas_.back();
    const int kw = host_out_.key_words();
    for (std::size_t j = 0; j < schema.size(); ++j) {
      Column c{schema[j], std::vector<std::uint32_t>(host_out_.rows()),
               std::vector<std::uint32_t>(schema[j].wide ? host_out_.rows() : 0)};
      const int a = out_attr_[j];
      const int word = a == 0 ? 0 : kw - 1 + a;  // a 64-bit value: high word, then low word
      for (std::uint64_t i = 0; i < host_out_.rows(); ++i) {
        const std::uint32_t* t = host_out_.tuple(i);
        c.set(i, a == 0 ? ra::key_at(t, kw) : schema[j].wide ? (std::uint64_t{t[word]} << 32) | t[word + 1] : t[word]);
      }
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
  // A 64-bit column re-keyed from a value becomes a 64-bit key (project_words).
  Placed keyed(Breakdown& b, std::size_t k, const Placed& in, int col, const std::string& name) {  // k: buffer slot
    const int a = in.attr[static_cast<std::size_t>(col)];
    if (a == 0 && in.sorted) return in;
    Placed out;
    out.dev = in.dev;
    out.attr = in.attr;
    out.wide = in.wide;
    if (a != 0) {
      // The join column first, then every other plan column in order.
      std::vector<int> cols{col};
      for (int j = 0; j < static_cast<int>(in.attr.size()); ++j)
        if (j != col) cols.push_back(j);
      const Relaid r = relay(in, in.dev->key_words(), cols);
      add(b, name + ".rekey", b_.project_words(*in.dev, r.layout, variant_, rekeyed_[k]));
      for (std::size_t i = 0; i < cols.size(); ++i) out.attr[static_cast<std::size_t>(cols[i])] = r.attr[i];
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

namespace {
std::vector<Variant<std::string>> composed_variants(const ra::RaBackend& b) {
  std::vector<Variant<std::string>> out;
  for (const std::string& v : b.variants(ra::Op::Select))
    if (ra::offers(b, ra::Op::Join, v) && ra::offers(b, ra::Op::Project, v))
      out.push_back({v, {"ra-" + v, kKernels, b.variant_table().info(v).unavailable}});
  return out;
}

std::vector<Variant<std::size_t>> owned_variants(const std::vector<TpchBackend*>& backends) {
  std::vector<Variant<std::size_t>> out;
  for (std::size_t i = 0; i < backends.size(); ++i)
    for (const VariantInfo& v : backends[i]->variant_table().all()) out.push_back({i, v});
  return out;
}
}  // namespace

RaComposed::RaComposed(ra::RaBackend& backend)
    : b_(backend), table_("the composed tpch backend", composed_variants(backend)) {}

std::unique_ptr<TpchRun> RaComposed::prepare(const Plan& plan, const std::string& variant, Transfer transfer) {
  return std::make_unique<RaRun>(b_, plan, table_.id(variant), transfer);
}

void RaComposed::plan_scratch(const Plan& plan, const std::string& variant, std::uint64_t join_rows,
                              MemoryPlan& memory) const {
  const std::string ra_variant = table_.id(variant);
  // The widest tuple any relation of the plan has, in RA words (a 64-bit column two).
  int width = 1, key_words = 1;
  for (const auto& schema : plan_schemas(plan)) {
    int words = 0;
    for (const ColumnInfo& c : schema) words += c.words();
    width = std::max(width, words);
  }
  for (const auto& in : plan.inputs)
    if (!in->cols.empty()) key_words = std::max(key_words, in->cols[0].info.words());
  const std::uint64_t rows = max_input_rows(plan), joins = join_steps(plan);
  // Each join may re-key and sort both sides into buffers of its own (kept across passes: a
  // project's copy and a sort's output per side), and the backend's scratch for a sort and a join.
  memory.add("re-keyed and sorted join sides (at most)", joins * 4 * rows * static_cast<std::uint64_t>(width) * 4);
  ra::OpShape s;
  s.variant = ra_variant;
  s.key_words = key_words;
  s.rows_a = s.rows_b = rows;
  s.width_a = s.width_b = width;
  s.op = ra::Op::Sort;
  s.out_rows = rows;
  s.out_width = width;
  const std::vector<std::string> sorts = b_.variants(ra::Op::Sort);
  if (!ra::offers(b_, ra::Op::Sort, s.variant) && !sorts.empty()) s.variant = sorts.front();
  b_.plan_scratch(s, memory);
  s.variant = ra_variant;
  s.op = ra::Op::Join;
  s.out_rows = join_rows;
  s.out_width = std::min(width, ra::kMaxWords);
  b_.plan_scratch(s, memory);
}

MultiBackend::MultiBackend(std::vector<TpchBackend*> backends)
    : backends_(std::move(backends)), table_("the tpch backends of this executable", owned_variants(backends_)) {}

std::unique_ptr<TpchRun> MultiBackend::prepare(const Plan& plan, const std::string& variant, Transfer transfer) {
  return owner(variant).prepare(plan, variant, transfer);
}

void MultiBackend::plan_scratch(const Plan& plan, const std::string& variant, std::uint64_t join_rows,
                                MemoryPlan& memory) const {
  owner(variant).plan_scratch(plan, variant, join_rows, memory);
}

}  // namespace hdb::tpch
