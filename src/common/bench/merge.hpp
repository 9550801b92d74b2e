#pragma once
// merge: the delta merge of a dictionary-compressed column (gpu-delta-merge.txt). Steps, each a
// test: delta_dict (1a: U_D and the delta rows' ids in it), dict_merge (1b: U'_M with the position
// maps X_M, X_D), reencode (2b: new bit-packed main at the width of step 2a), and merge (the whole
// 1a+1b+2a+2b, each a phase). Whole-table figures (NC columns, update rate) derive from merge.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/main.hpp"
#include "harness/memory_plan.hpp"
#include "harness/session.hpp"
#include "workloads/columns.hpp"

namespace hdb {

enum class MergeStep { DeltaDict, DictMerge, Reencode, Whole };
const char* to_string(MergeStep s);  // the test name

// One case's variant: the step (test), the name the backend registered, the transfer mode.
struct MergeVariant {
  MergeStep step = MergeStep::Whole;
  std::string name;                    // "serial", "parallel", "slice", "csum", ...
  Transfer transfer = Transfer::None;  // host memory the inputs come from (device backends)
};

// What a step starts from: the column, and the results of the earlier steps (from the reference,
// so every step is timed on its own with identical inputs).
template <class T>
struct MergeWork {
  const MergeInput<T>* in = nullptr;
  std::vector<T> delta_dict;             // U_D (1a)
  std::vector<std::uint32_t> delta_ids;  // id in U_D of every delta row (1a)
  std::vector<T> dict;                   // U'_M (1b)
  std::vector<std::uint32_t> x_m, x_d;   // positions of U_M and U_D entries in U'_M (1b)
  unsigned width = 0;                    // 2a
};
template <class T>
MergeWork<T> prepare_work(const MergeInput<T>& in);

// Advises the kernel to back [p, p + bytes) with huge pages (Linux, transparent huge pages in
// "madvise" mode); memory not touched yet then faults in 2 MB at a time. reserve_huge reserves a
// vector's capacity in such memory (no-op when it already has the capacity).
void advise_huge_pages(void* p, std::uint64_t bytes);
void reserve_huge(std::vector<std::uint32_t>& v, std::uint64_t n);

// What a step produced (the fields of its step; the whole merge fills all of them).
template <class T>
struct MergeOutput {
  std::vector<T> delta_dict;
  std::vector<std::uint32_t> delta_ids;
  std::vector<T> dict;
  std::vector<std::uint32_t> x_m, x_d;
  BitPacked codes;
};

// A prepared merge case (harness CaseRun: pass, transfer bytes, what ran) and its output.
template <class T>
class MergeCase : public CaseRun {
 public:
  // Copies the last pass's output to the host (untimed).
  virtual MergeOutput<T> output() = 0;
  // Host threads the case runs on (CPU backends: 1 for serial variants); 0 for device cases, which
  // then carry no per-core figure.
  virtual int threads() const { return 0; }
};

class MergeBackend {
 public:
  virtual ~MergeBackend() = default;
  // The backend's variants, each with the steps (tests: delta_dict, dict_merge, reencode, merge) it
  // implements; merge_variants() makes the cases from it.
  virtual const VariantList& variant_table() const = 0;
  // False for a value type or transfer mode a variant does not offer (strings on devices, the
  // overlapped merge from pageable memory): such a case is not offered at all.
  virtual bool supports(const MergeVariant& v, ValueType t) const = 0;
  // Adds, by name, every buffer prepare(v, w) allocates in the platform's memory (harness CaseSetup's
  // plan; the session checks the fit before prepare). `work` outlives the case.
  virtual void plan_memory(const MergeVariant& v, const MergeWork<std::uint32_t>& w, MemoryPlan& plan) const = 0;
  virtual void plan_memory(const MergeVariant& v, const MergeWork<std::uint64_t>& w, MemoryPlan& plan) const = 0;
  virtual void plan_memory(const MergeVariant& v, const MergeWork<U128>& w, MemoryPlan& plan) const = 0;
  virtual void plan_memory(const MergeVariant& v, const MergeWork<std::string_view>& w, MemoryPlan& plan) const = 0;
  // Allocates and uploads what the variant keeps resident; throws SkipCase for a case beyond the
  // variant's limits (32-bit ids, an allocation limit).
  virtual std::unique_ptr<MergeCase<std::uint32_t>> prepare(const MergeVariant& v,
                                                            const MergeWork<std::uint32_t>& w) = 0;
  virtual std::unique_ptr<MergeCase<std::uint64_t>> prepare(const MergeVariant& v,
                                                            const MergeWork<std::uint64_t>& w) = 0;
  virtual std::unique_ptr<MergeCase<U128>> prepare(const MergeVariant& v, const MergeWork<U128>& w) = 0;
  virtual std::unique_ptr<MergeCase<std::string_view>> prepare(const MergeVariant& v,
                                                               const MergeWork<std::string_view>& w) = 0;
};

// The cases of a backend, from its table: per step, the variants that implement it (registration
// order), per transfer mode.
std::vector<MergeVariant> merge_variants(const MergeBackend& backend, const std::vector<Transfer>& transfers);

// Routes the typed overloads to Impl::plan<T>(variant, work, plan) and Impl::make<T>(variant, work).
template <class Impl>
class MergeBackendFor : public MergeBackend {
 public:
#define HDB_MERGE_ROUTE(T)                                                                          \
  void plan_memory(const MergeVariant& v, const MergeWork<T>& w, MemoryPlan& plan) const override { \
    static_cast<const Impl&>(*this).template plan<T>(v, w, plan);                                   \
  }                                                                                                 \
  std::unique_ptr<MergeCase<T>> prepare(const MergeVariant& v, const MergeWork<T>& w) override {    \
    return static_cast<Impl&>(*this).template make<T>(v, w);                                        \
  }
  HDB_MERGE_ROUTE(std::uint32_t)
  HDB_MERGE_ROUTE(std::uint64_t)
  HDB_MERGE_ROUTE(U128)
  HDB_MERGE_ROUTE(std::string_view)
#undef HDB_MERGE_ROUTE
};

// Verifies a step's output against the reference: "" when right, else the first difference.
template <class T>
std::string verify_merge_output(MergeStep step, const MergeWork<T>& w, const MergeOutput<T>& out);

// The whole merge's breakdown on a device: the transfers, the kernel span, and each step a phase
// (2a is host arithmetic on |U'_M|: no device time).
Breakdown whole_merge_breakdown(double h2d, double step_1a, double step_1b, double step_2b, double kernel, double d2h,
                                double total);

// The device buffers of a step's inputs and outputs, added by name to `plan` (device backends add
// their scratch): strings as 4-byte offsets plus their characters, `binsearch` 2b with the values.
template <class T>
void plan_step_buffers(MemoryPlan& plan, MergeStep step, bool binsearch, const MergeWork<T>& w);

// Host memory a generated column and its reference results (prepare_work) take, `columns` times,
// added by name to `plan` before anything is generated; strings at their longest (35 characters)
// plus a 16-byte view per value.
void plan_columns(MemoryPlan& plan, ValueType type, std::uint64_t main_rows, std::uint64_t delta_rows,
                  double unique_fraction, std::uint64_t columns = 1);
// The host memory the columns may take: the platform's memory on the cpu backend (its host RAM),
// elsewhere the machine's RAM; either capped by --memory-limit, so that under a small limit a case
// too large for it is skipped on every backend before its column is generated.
std::uint64_t host_memory_bytes(const Platform& p);

struct MergeParams {
  std::vector<ValueType> types{ValueType::U32, ValueType::U64, ValueType::U128, ValueType::Str};
  std::vector<double> unique_pct{1, 10, 100};
  std::vector<double> delta_pct{1};
  int columns = 300;  // NC of the whole-table figures
};

int merge_main(int argc, char** argv, Platform& platform, MergeBackend& backend);

}  // namespace hdb
