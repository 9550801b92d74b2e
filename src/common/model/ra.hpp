#pragma once
// The ra contract: the relational-algebra primitives of "OpenCL RA primitives for TPC-H" (Table 1)
// on key/value tuple relations (workloads/relations.hpp), the types they take, and the backend
// interface. The benchmark (bench/ra.cpp), the tpch micro-kernels and the serial reference
// (reference/ra.hpp) all use it; none of them owns it.
//
// Residency: operators work on DeviceRelation handles that live where the backend computes (device
// memory; host memory on the CPU backend). upload()/download() are the only calls that cross the
// bus, so a chain of operators (tpch kernels) pays PCIe once at each end and never in between.
//
// Allocation stays outside timed regions: every call takes its output as `DeviceRel& out`. When out
// is empty, too small, made by another backend or shared with another handle, the backend
// allocates a fresh one (the warm-up pass); later passes reuse it. Output
// sizes of select/unique/join/set operations are found by each algorithm's own counting pass, never
// guessed; the handle's rows() is the exact result size afterwards. Scratch buffers (partition
// counts, offsets) are cached inside the backend the same way.
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/memory_plan.hpp"
#include "harness/timing.hpp"
#include "harness/variants.hpp"
#include "workloads/relations.hpp"

namespace hdb::ra {

// A relation resident on the backend's device. Backends subclass it; passing a handle made by
// another backend throws std::invalid_argument.
class DeviceRelation {
 public:
  virtual ~DeviceRelation() = default;
  std::uint64_t rows() const { return rows_; }
  int values() const { return values_; }
  int key_words() const { return key_words_; }
  int width() const { return key_words_ + values_; }
  std::uint64_t bytes() const { return rows_ * static_cast<std::uint64_t>(width()) * 4; }
  virtual std::uint64_t capacity_words() const = 0;

 protected:
  std::uint64_t rows_ = 0;
  int values_ = 1;
  int key_words_ = 1;
};
using DeviceRel = std::shared_ptr<DeviceRelation>;

// select: tuples whose attribute `attribute` (0 = key, 1.. = values) lies in [lo, hi]. The key
// compares as a number of its width (64 bits over two words); a value is 32-bit, or with
// value_words = 2 the 64-bit number its attribute and the next one hold (high word first: what a
// 64-bit key becomes when project moves it away from the front).
struct Predicate {
  int attribute = 0;
  std::uint64_t lo = 0;
  std::uint64_t hi = ~std::uint64_t{0};
  int key_words = 1;    // of the relation it is applied to: RaBackend::select sets it from the input
  int value_words = 1;  // of a value attribute: 1, or 2 for a 64-bit value
  // The word the attribute starts at, and whether it is 64-bit (two words).
  int word() const { return attribute == 0 ? 0 : key_words - 1 + attribute; }
  bool wide() const { return attribute == 0 ? key_words == 2 : value_words == 2; }
  // The bounds on a 32-bit attribute (device kernels take uints): a bound beyond 2^32 - 1 selects
  // nothing (lo) or everything from lo up (hi).
  std::uint32_t lo32() const { return lo > 0xffffffffu ? 1u : static_cast<std::uint32_t>(lo); }
  std::uint32_t hi32() const {
    if (lo > 0xffffffffu) return 0u;
    return hi > 0xffffffffu ? 0xffffffffu : static_cast<std::uint32_t>(hi);
  }
  bool operator()(const std::uint32_t* tuple) const {
    const int w = word();
    const std::uint64_t x = wide() ? (std::uint64_t{tuple[w]} << 32) | tuple[w + 1] : tuple[w];
    return x >= lo && x <= hi;
  }
};

enum class ReduceOp { Sum, Min, Max };
enum class ArithOp { Add, Subtract, Multiply };
enum class SetOp { Union, Intersection, Difference };
const char* to_string(ReduceOp op);
const char* to_string(ArithOp op);
const char* to_string(SetOp op);

// reduce: one figure per value attribute. Sums are exact 64-bit sums of the 32-bit values; min/max
// are the 32-bit extremes (an empty relation gives the identity: 0, 0xffffffff, 0).
struct Aggregate {
  int values = 0;
  std::array<std::uint64_t, kMaxValues> value{};
  bool operator==(const Aggregate& o) const;
};

// Operator semantics (the serial reference, reference/ra.hpp, is the definition):
//  project(in, columns)     tuple -> its attributes `columns` in that order (0 = key); at most 8
//                           words, the first column becomes the key (a 64-bit key elsewhere
//                           becomes two values, high word first). Backends see the source word of
//                           each output word (ProjectLayout).
//  select(in, pred)         tuples satisfying pred, input order kept (stable).
//  unique(in)               first tuple of every run of consecutive equal keys.
//  reduce(in, op)           Aggregate over all tuples.
//  reduce_by_key(in, op)    one tuple per run of consecutive equal keys: key, op over each value
//                           (sums wrap modulo 2^32).
//  join(l, r)               inputs sorted by key, keys of one width: for every pair with equal
//                           keys, (key, l values, r values); output sorted by key, order within a
//                           key unspecified (verified as a multiset). Counts and offsets are 64-bit.
//  set_op(a, b, op)         inputs sorted lexicographically by whole tuple, same width: the
//                           multiset semantics of std::set_union / set_intersection /
//                           set_difference on whole tuples; output sorted.
//  product(a, b)            every (a[i], b[j]) as a's tuple followed by b's (b's key becomes one
//                           or two values), a-major: row i * |b| + j.
//  arith(a, b, op)          |a| == |b|, same width: key of a, a.value op b.value per attribute
//                           (modulo 2^32).
//  sort(in)                 the tuples ordered by key, stable: tuples with equal keys keep their
//                           input order (std::stable_sort by key of whole tuples); |out| == |in|.
enum class Op {
  Project,
  Select,
  Unique,
  Reduce,
  ReduceByKey,
  Join,
  SetUnion,
  SetIntersection,
  SetDifference,
  Product,
  Add,
  Subtract,
  Multiply,
  Sort
};

// The inputs each operator accepts (widths, sizes, column indices): throws std::invalid_argument
// naming the problem. RaBackend's operators apply them before a backend runs, so every backend
// rejects the same inputs.
// Shapes are (values, key_words) of the relations involved.
void check_project(int values, int key_words, const std::vector<int>& columns);
void check_predicate(int values, int key_words, const Predicate& pred);
void check_same_shape(std::uint64_t rows_a, int values_a, int key_words_a, std::uint64_t rows_b, int values_b,
                      int key_words_b, const char* what);
void check_same_width(int values_a, int key_words_a, int values_b, int key_words_b, const char* what);
// The output of key_words + values_a + words_b words must fit a tuple.
void check_concat(int key_words, int values_a, int words_b, const char* what);

// project's columns as words: output word i copies input word words[i]; the output key has
// key_words words (the first column's width).
struct ProjectLayout {
  std::vector<int> words;
  int key_words = 1;
  int values() const { return static_cast<int>(words.size()) - key_words; }
};
ProjectLayout project_layout(int key_words, const std::vector<int>& columns);
// A layout over tuples of in_width words: words within them, 1..8 of them, a key of 1 or 2 words
// that the layout holds.
void check_layout(int in_width, const ProjectLayout& layout);

Op set_op_of(SetOp op);
Op arith_op_of(ArithOp op);

// One operator call's shape, for planning its memory before anything is allocated: the inputs
// (b: the second input of binary operators, else 0 rows), the output the call will produce, in
// rows and words per tuple.
struct OpShape {
  Op op = Op::Project;
  std::string variant;
  std::uint64_t rows_a = 0, rows_b = 0;
  int width_a = 0, width_b = 0, key_words = 1;
  std::uint64_t out_rows = 0;
  int out_width = 0;
};
// The shape of `op` over relations a (and b, for binary operators) making out_rows tuples of
// out_width words.
OpShape op_shape(Op op, std::string variant, const Relation& a, const Relation* b, std::uint64_t out_rows,
                 int out_width);

// Test names used in results and --only filters, e.g. "select", "join", "set_union", "add".
const char* test_name(Op op);

class RaBackend {
 public:
  virtual ~RaBackend() = default;

  // The backend's variants, registered once (harness/variants.hpp): each names the operators (their
  // test names) it implements, and why it cannot run where it cannot. Operators look the variant up
  // there before a backend's run_<op> sees it, so a run_<op> switches on a registered name only.
  virtual const VariantList& variant_table() const = 0;
  // The variants that implement an operator, in registration order, e.g. {"serial", "parallel"} or
  // {"paper", "cub", "tuned"}. An operator with no variants is not offered.
  std::vector<std::string> variants(Op op) const { return variant_table().names(test_name(op)); }

  // What ran in the last operator call, where a variant has several code paths or tuned parameters
  // (harness/variants.hpp's Ran; the benchmark records it with each result): what the backend's
  // run_<op> set in ran_, which every operator call clears first.
  const Ran& last_ran() const { return ran_; }

  // Adds to `plan` every buffer the operator will allocate besides its inputs and its output:
  // scratch, staging, sort buffers, a library's temporary storage as the library reports it. The
  // benchmark adds inputs and output and skips a case whose plan does not fit. Default: none.
  virtual void plan_scratch(const OpShape& shape, MemoryPlan& plan) const;
  // Frees the scratch kept from earlier operators (it only grows within a case, so timed passes
  // allocate nothing), so that what a case's plan counts is all it holds. The benchmarks call it
  // before planning each case. Default: the backend keeps none.
  virtual void release_scratch() {}

  // Host memory of the given kind for `rows` tuples of key_words + values words (pinned where the backend
  // can pin; the base implementation returns pageable memory).
  virtual Relation host_relation(std::uint64_t rows, int values, Transfer kind, int key_words = 1);

  // Host -> device. The copy time is h2d (device events where the backend has them).
  virtual Breakdown upload(const Relation& host, DeviceRel& out) = 0;
  // Device -> host into `host` (allocate it with host_relation() before timing, large enough for
  // dev.rows() tuples; a host relation of another width or too small is replaced by new pageable
  // memory, untimed callers only); sets host's rows. The copy time is d2h.
  virtual Breakdown download(const DeviceRelation& dev, Relation& host) = 0;

  // Operators: device-resident in and out; the Breakdown's kernel time covers all kernels and
  // its phases name the paper's sub-kernels (partition, compute, scan, gather, ...). Each checks
  // that the backend offers the variant and that the inputs fit the operator, then runs the
  // backend's run_<op>. reduce's aggregate crosses the bus; its tiny copy is part of the kernel time.
  Breakdown project(const DeviceRelation& in, const std::vector<int>& columns, const std::string& variant,
                    DeviceRel& out) {
    begin_op(Op::Project, variant);
    check_project(in.values(), in.key_words(), columns);
    return run_project(in, project_layout(in.key_words(), columns), variant, out);
  }
  // project by words: output word i is input word layout.words[i], the first layout.key_words of
  // them the key. Builds what attributes cannot name: a 64-bit key from a 64-bit value's two words.
  Breakdown project_words(const DeviceRelation& in, const ProjectLayout& layout, const std::string& variant,
                          DeviceRel& out) {
    begin_op(Op::Project, variant);
    check_layout(in.width(), layout);
    return run_project(in, layout, variant, out);
  }
  Breakdown select(const DeviceRelation& in, Predicate pred, const std::string& variant, DeviceRel& out) {
    begin_op(Op::Select, variant);
    pred.key_words = in.key_words();
    check_predicate(in.values(), in.key_words(), pred);
    return run_select(in, pred, variant, out);
  }
  Breakdown unique(const DeviceRelation& in, const std::string& variant, DeviceRel& out) {
    begin_op(Op::Unique, variant);
    return run_unique(in, variant, out);
  }
  Timed<Aggregate> reduce(const DeviceRelation& in, ReduceOp op, const std::string& variant) {
    begin_op(Op::Reduce, variant);
    return run_reduce(in, op, variant);
  }
  Breakdown reduce_by_key(const DeviceRelation& in, ReduceOp op, const std::string& variant, DeviceRel& out) {
    begin_op(Op::ReduceByKey, variant);
    return run_reduce_by_key(in, op, variant, out);
  }
  Breakdown join(const DeviceRelation& left, const DeviceRelation& right, const std::string& variant, DeviceRel& out) {
    begin_op(Op::Join, variant);
    if (left.key_words() != right.key_words()) throw std::invalid_argument("join needs keys of one width");
    check_concat(left.key_words(), left.values(), right.values(), "join");
    return run_join(left, right, variant, out);
  }
  Breakdown set_op(const DeviceRelation& a, const DeviceRelation& b, SetOp op, const std::string& variant,
                   DeviceRel& out) {
    begin_op(set_op_of(op), variant);
    check_same_width(a.values(), a.key_words(), b.values(), b.key_words(), "set operation");
    return run_set_op(a, b, op, variant, out);
  }
  Breakdown product(const DeviceRelation& a, const DeviceRelation& b, const std::string& variant, DeviceRel& out) {
    begin_op(Op::Product, variant);
    check_concat(a.key_words(), a.values(), b.width(), "product");
    return run_product(a, b, variant, out);
  }
  Breakdown arith(const DeviceRelation& a, const DeviceRelation& b, ArithOp op, const std::string& variant,
                  DeviceRel& out) {
    begin_op(arith_op_of(op), variant);
    check_same_shape(a.rows(), a.values(), a.key_words(), b.rows(), b.values(), b.key_words(), "arithmetic");
    return run_arith(a, b, op, variant, out);
  }
  Breakdown sort(const DeviceRelation& in, const std::string& variant, DeviceRel& out) {
    begin_op(Op::Sort, variant);
    return run_sort(in, variant, out);
  }

 protected:
  // What a backend implements: called with a variant it offers and inputs of the right shape.
  virtual Breakdown run_project(const DeviceRelation& in, const ProjectLayout& layout, const std::string& variant,
                                DeviceRel& out) = 0;
  virtual Breakdown run_select(const DeviceRelation& in, const Predicate& pred, const std::string& variant,
                               DeviceRel& out) = 0;
  virtual Breakdown run_unique(const DeviceRelation& in, const std::string& variant, DeviceRel& out) = 0;
  virtual Timed<Aggregate> run_reduce(const DeviceRelation& in, ReduceOp op, const std::string& variant) = 0;
  virtual Breakdown run_reduce_by_key(const DeviceRelation& in, ReduceOp op, const std::string& variant,
                                      DeviceRel& out) = 0;
  virtual Breakdown run_join(const DeviceRelation& left, const DeviceRelation& right, const std::string& variant,
                             DeviceRel& out) = 0;
  virtual Breakdown run_set_op(const DeviceRelation& a, const DeviceRelation& b, SetOp op, const std::string& variant,
                               DeviceRel& out) = 0;
  virtual Breakdown run_product(const DeviceRelation& a, const DeviceRelation& b, const std::string& variant,
                                DeviceRel& out) = 0;
  virtual Breakdown run_arith(const DeviceRelation& a, const DeviceRelation& b, ArithOp op, const std::string& variant,
                              DeviceRel& out) = 0;
  virtual Breakdown run_sort(const DeviceRelation& in, const std::string& variant, DeviceRel& out) = 0;

  Ran ran_;  // what the running operator call took: run_<op> fills it where there is a choice

 private:
  // Checks that the backend registered `variant` for op and that it can run here; clears ran_.
  void begin_op(Op op, const std::string& variant);
};

// Whether variants(op) lists `variant`.
bool offers(const RaBackend& backend, Op op, const std::string& variant);

std::vector<Op> all_ops();
// Every operator but sort: what the paper's kernels implement (the device backends' `paper` variant).
std::vector<Op> paper_ops();
// The tests of `ops` (test_name each), for a variant table's rows.
std::vector<std::string> test_names(const std::vector<Op>& ops);

}  // namespace hdb::ra
