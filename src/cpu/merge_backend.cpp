#include "merge_backend.hpp"

#include "harness/errors.hpp"
#include "harness/memory_plan.hpp"
#include "merge_algorithms.hpp"

namespace hdb::cpu {
namespace {

bool is_serial(CpuMergeVariant v) {
  switch (v) {
    case CpuMergeVariant::Serial:
    case CpuMergeVariant::SerialBinsearch: return true;
    case CpuMergeVariant::Parallel:
    case CpuMergeVariant::ParallelBinsearch: return false;
  }
  return false;
}

bool is_binsearch(CpuMergeVariant v) {
  switch (v) {
    case CpuMergeVariant::SerialBinsearch:
    case CpuMergeVariant::ParallelBinsearch: return true;
    case CpuMergeVariant::Serial:
    case CpuMergeVariant::Parallel: return false;
  }
  return false;
}

template <class T>
class CpuMergeCase : public MergeCase<T> {
 public:
  CpuMergeCase(MergeStep step, CpuMergeVariant v, const MergeWork<T>& w, int threads)
      : step_(step), threads_(is_serial(v) ? 1 : threads), binsearch_(is_binsearch(v)), w_(w) {
    // The whole merge's X_M (written by 1b, gathered by 2b) in huge pages, as prepare_work's.
    if (step_ == MergeStep::Whole) reserve_huge(out_.x_m, w.in->main_dict.size());
  }

  Breakdown pass() override {
    const MergeInput<T>& in = *w_.in;
    Breakdown b;
    HostTimer all;
    switch (step_) {
      case MergeStep::DeltaDict: step_1a(b, out_); break;
      case MergeStep::DictMerge: step_1b(b, in.main_dict, w_.delta_dict, out_); break;
      case MergeStep::Reencode:
        b.add_phase("2b", time_host([&] { step_2b(w_.dict, w_.delta_ids, w_.x_m, w_.x_d, w_.width, out_.codes); }));
        break;
      case MergeStep::Whole: {
        step_1a(b, out_);
        step_1b(b, in.main_dict, out_.delta_dict, out_);
        unsigned width = 0;
        b.add_phase("2a", time_host([&] { width = code_width(out_.dict.size()); }));
        b.add_phase("2b",
                    time_host([&] { step_2b(out_.dict, out_.delta_ids, out_.x_m, out_.x_d, width, out_.codes); }));
        break;
      }
    }
    b.kernel = b.total = all.seconds();
    return b;
  }
  MergeOutput<T> output() override { return out_; }
  int threads() const override { return threads_; }

 private:
  void step_1a(Breakdown& b, MergeOutput<T>& o) {
    const std::vector<T>& delta = w_.in->delta;
    b.add_phase("1a_sort_unique", time_host([&] {
                  if (threads_ == 1)
                    delta_dict_serial(delta, o.delta_dict);
                  else
                    delta_dict_parallel(delta, o.delta_dict, tmp_, threads_);
                }));
    b.add_phase("1a_ids", time_host([&] { ids_of(o.delta_dict, delta, o.delta_ids, threads_); }));
  }
  void step_1b(Breakdown& b, const std::vector<T>& um, const std::vector<T>& ud, MergeOutput<T>& o) {
    b.add_phase("1b", time_host([&] {
                  if (threads_ == 1)
                    dict_merge_serial(um, ud, o.dict, o.x_m, o.x_d);
                  else
                    dict_merge_parallel(um, ud, o.dict, o.x_m, o.x_d, threads_);
                }));
  }
  void step_2b(const std::vector<T>& dict, const std::vector<std::uint32_t>& ids, const std::vector<std::uint32_t>& xm,
               const std::vector<std::uint32_t>& xd, unsigned width, BitPacked& codes) {
    if (binsearch_)
      reencode_binsearch(*w_.in, dict, width, codes, threads_);
    else
      reencode_lookup(*w_.in, ids, xm, xd, width, codes, threads_, kGrain, &shift_);
  }

  MergeStep step_;
  int threads_;
  bool binsearch_;
  std::vector<std::uint16_t> shift_;  // 2b's 16-bit form of X_M, kept between passes
  const MergeWork<T>& w_;
  MergeOutput<T> out_;
  std::vector<T> tmp_;
};

}  // namespace

CpuMerge::CpuMerge(const CpuPlatform& p)
    : platform_(p),
      table_("CPU merge",
             {{CpuMergeVariant::Serial, {"serial", {"delta_dict", "dict_merge", "reencode", "merge"}, ""}},
              {CpuMergeVariant::Parallel, {"parallel", {"delta_dict", "dict_merge", "reencode", "merge"}, ""}},
              {CpuMergeVariant::SerialBinsearch, {"serial_binsearch", {"reencode"}, ""}},
              {CpuMergeVariant::ParallelBinsearch, {"parallel_binsearch", {"reencode"}, ""}}}) {}

template <class T>
void CpuMerge::plan(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const {
  // What the case's outputs and scratch take of host memory (strings: views into the column's
  // characters, 16 bytes each), beside the column and its reference results.
  const std::uint64_t vb = sizeof(T), nd = w.in->delta_rows(), n1 = w.in->main_dict.size();
  const std::uint64_t rows = w.in->main_rows() + nd, codes = BitPacked::words_for(rows, w.width) * 8;
  const bool parallel = !is_serial(table_.id(v.name));
  // The column and the reference results live beside the case.
  plan.add("column and reference results",
           w.in->main_codes.words.size() * 8 + (n1 + nd + w.delta_dict.size() + w.dict.size()) * vb +
               (w.in->arena ? w.in->arena->size() : 0) + (w.delta_ids.size() + w.x_m.size() + w.x_d.size()) * 4);
  auto step_1a = [&] {
    plan.add("U_D", nd * vb).add("delta ids", nd * 4);
    if (parallel) plan.add("1a merge buffer", nd * vb);
  };
  auto step_1b = [&](std::uint64_t n2) { plan.add("U'_M", (n1 + n2) * vb).add("X_M and X_D", (n1 + n2) * 4); };
  switch (v.step) {
    case MergeStep::DeltaDict: step_1a(); break;
    case MergeStep::DictMerge: step_1b(w.delta_dict.size()); break;
    case MergeStep::Reencode: plan.add("new main ids", codes).add("2b 16-bit X_M", n1 * 2); break;
    case MergeStep::Whole:
      step_1a();
      step_1b(nd);
      plan.add("new main ids", BitPacked::words_for(rows, code_width(n1 + nd)) * 8).add("2b 16-bit X_M", n1 * 2);
      break;
  }
}

template <class T>
std::unique_ptr<MergeCase<T>> CpuMerge::make(const MergeVariant& v, const MergeWork<T>& w) {
  return std::make_unique<CpuMergeCase<T>>(v.step, table_.id(v.name), w, platform_.threads());
}

#define HDB_CPU_MERGE_PLAN(T) template void CpuMerge::plan(const MergeVariant&, const MergeWork<T>&, MemoryPlan&) const;
HDB_CPU_MERGE_PLAN(std::uint32_t)
HDB_CPU_MERGE_PLAN(std::uint64_t)
HDB_CPU_MERGE_PLAN(U128)
HDB_CPU_MERGE_PLAN(std::string_view)
#undef HDB_CPU_MERGE_PLAN
template std::unique_ptr<MergeCase<std::uint32_t>> CpuMerge::make(const MergeVariant&, const MergeWork<std::uint32_t>&);
template std::unique_ptr<MergeCase<std::uint64_t>> CpuMerge::make(const MergeVariant&, const MergeWork<std::uint64_t>&);
template std::unique_ptr<MergeCase<U128>> CpuMerge::make(const MergeVariant&, const MergeWork<U128>&);
template std::unique_ptr<MergeCase<std::string_view>> CpuMerge::make(const MergeVariant&,
                                                                     const MergeWork<std::string_view>&);

}  // namespace hdb::cpu
