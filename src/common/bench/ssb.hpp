#pragma once
// ssb: the Star Schema Benchmark's 13 queries (Q1.1 .. Q4.3), whole queries on SSB tables held as
// Crystal holds them (workloads/ssb_tables.hpp): the built-in generator at a scale factor, or
// ssb-dbgen's .tbl files. A case is one query on one variant and one data set; its answer is
// verified against the serial reference (reference/ssb.hpp) before its numbers count.
#include <memory>
#include <string>
#include <vector>

#include "harness/main.hpp"
#include "harness/memory_plan.hpp"
#include "harness/session.hpp"
#include "model/ssb_query.hpp"

namespace hdb::ssb {

// A query's test name in a case id: "q1.1" .. "q4.3".
std::string test_name(const Query& q);
// The tests every variant implements, in the order a run takes them.
const std::vector<std::string>& tests();

// One prepared query on one backend (harness CaseRun): the tables it reads live (on the device)
// as long as the object. A pass is one execution of the query: the columns it reads to the device
// (h2d, device backends), the query (kernel, with phases), the answer back (d2h).
// Where the tables are when a pass starts (case parameter `resident`, on backends with a bus):
// in host memory, so every pass first copies the columns the query reads to the device (h2d), or
// already on the device, as Crystal measures (prepare() uploads them once; a pass has no h2d). A
// backend without a bus (cpu) holds them in its own memory either way: always Device there.
enum class Residency { Host, Device };

class SsbRun : public CaseRun {
 public:
  // The answer of the last pass, rows sorted by group key (untimed).
  virtual Result result() = 0;
};

class SsbBackend {
 public:
  virtual ~SsbBackend() = default;
  // The backend's variants; each implements every query (tests()).
  virtual const VariantList& variant_table() const = 0;
  std::vector<std::string> variants() const { return variant_table().names(tests().front()); }
  // Throws SkipCase when the variant cannot run the query on these tables.
  virtual std::unique_ptr<SsbRun> prepare(const Query& q, const Tables& t, const std::string& variant,
                                          Transfer transfer, Residency residency) = 0;
  // Adds to `memory` what `variant` allocates for `q` beyond the columns it reads (which the
  // benchmark counts): dimension arrays, partial aggregates. Called before prepare(). Default: none.
  virtual void plan_scratch(const Query& q, const Tables& t, const std::string& variant, MemoryPlan& memory) const;
};

// The same rows (group keys and sums) as the reference's; the first difference otherwise.
Verification compare_result(const Query& q, const Result& got, const Result& want);

int ssb_main(int argc, char** argv, Platform& platform, SsbBackend& backend);

}  // namespace hdb::ssb
