#pragma once
// A micro-kernel as a plan of relational operators executed one at a time (the paper's model):
// Columns are 32-bit, or 64-bit where ColumnInfo::wide (the join keys at --key-bits 64); select
// bounds are 64-bit, and a join compares whole values (both key columns have one width).
// each step reads relations produced earlier and materialises a new one. Relation ids: the inputs
// are 0..inputs-1, step i produces relation inputs+i, and the last step's output is the answer.
// The tpch contract: the benchmark (bench/tpch.cpp), the backends and the serial reference
// (reference/tpch.hpp) all use it; none of them owns it.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "workloads/tpch_relation.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {

enum class Op { Select, Join, Project };

struct Step {
  Op op = Op::Select;
  std::string name;  // phase name, e.g. "1_select_shipdate"
  int in = 0;        // the (left) input relation
  // Select: keep rows with lo <= in[col] <= hi (both inclusive).
  int col = 0;
  std::uint64_t lo = 0, hi = 0xffffffffu;
  // Join: inner equi-join in[col] == right[right_col]; output = all columns of `in`, then the
  // columns of `right` except right_col (equal to in[col] in every output row).
  int right = -1;
  int right_col = 0;
  // Project: these columns of `in`, in this order.
  std::vector<int> cols;
};

struct Plan {
  std::string kernel;  // "A", "B", "C"
  std::vector<std::shared_ptr<const Relation>> inputs;
  std::vector<Step> steps;
  std::uint64_t input_bytes() const;
  std::uint64_t input_rows() const;
};

// Plan vocabulary, for the kernels here and for tests: one step of each kind, and an input of
// two columns <name>_key, <name>_value.
Step select_step(const std::string& name, int in, int col, std::uint64_t lo, std::uint64_t hi);
Step join_step(const std::string& name, int in, int col, int right, int right_col);
Step project_step(const std::string& name, int in, std::vector<int> cols);
std::shared_ptr<const Relation> key_value_relation(const std::string& name, std::vector<std::uint32_t> keys,
                                                   std::vector<std::uint32_t> values);

// Schema of every relation id of the plan (inputs, then one per step); throws std::logic_error for
// an ill-formed plan (bad ids or columns).
std::vector<std::vector<ColumnInfo>> plan_schemas(const Plan& plan);

// Where a column of a relation comes from: (input relation, column of that input). Every column of
// a select/join/project output is a base column carried through.
struct Origin {
  int input = 0;
  int col = 0;
};
std::vector<std::vector<Origin>> plan_lineage(const Plan& plan);

// A plan in the shape a fused (no intermediates) pipeline runs: one probe relation scanned once,
// with its selects; then per join a lookup into a base relation whose key is unique, with that
// relation's selects; then the output columns. Any plan that is a left-deep chain of joins against
// base relations (after selects), starting from input 0, has this shape.
struct FusedPredicate {
  int col = 0;  // column of the base relation
  std::uint64_t lo = 0, hi = 0;
};
struct FusedJoin {
  int build_input = 0;  // the base relation looked up
  int build_key = 0;    // its key column (unique)
  Origin probe;         // the value looked up: a column of input 0 or of an earlier build input
  std::vector<FusedPredicate> build_preds;
  // The build key's smallest and largest value (both 0 for an empty build relation), seen by the
  // planner as it checks the key unique, as a catalog's statistics would: a backend may index an
  // array by key - key_min where the span is dense.
  std::uint64_t key_min = 0, key_max = 0;
};
struct FusedPlan {
  std::vector<FusedPredicate> probe_preds;  // on input 0
  std::vector<FusedJoin> joins;
  std::vector<Origin> outputs;
};
// Rewrites the plan; returns false (with the reason) when it has another shape.
bool fuse_plan(const Plan& plan, FusedPlan& out, std::string& why);

// The 64-bit key standing for a generated key k (< 2^44): injective and order-preserving (so
// sorted inputs stay sorted, joins and range selects keep their rows), at least 2^32 for
// k >= 4096, and keys sharing the high word differ in the low word, so a path that compares or
// keeps only one word fails verification. Equal to ra::wide_key for k < 2^32.
constexpr std::uint64_t widen_key(std::uint64_t k) { return (k << 20) | ((k * 0x9E3779B97F4A7C15ull) >> 44); }

// The kernels on real TPC-H tables (see docs/tpch.md for the SQL they answer). key_bits 64: the
// join keys (c_custkey, o_orderkey, o_custkey, l_orderkey) are wide columns, generated tables'
// keys mapped through widen_key, loaded keys as they are; key_bits 32 needs every key below 2^32
// (std::invalid_argument otherwise: the benchmark skips such tables at 32 bits).
Plan tpch_kernel(const std::string& kernel, const Tables& t, int key_bits = 32);
// The kernels on random key/value relations of `tuples` tuples each (the paper's set-up). At
// key_bits 64 the keys and the foreign key r2_value are wide, mapped through widen_key, with the
// select bounds on them mapped alike: the same rows qualify as at 32 bits.
Plan random_kernel(const std::string& kernel, std::uint64_t tuples, std::uint64_t seed, int threads, int key_bits = 32);

// The Q6 and Q3 constants.
constexpr std::uint32_t kQ6DateLo = 8766;  // 1994-01-01
constexpr std::uint32_t kQ6DateHi = 9130;  // 1994-12-31
constexpr std::uint32_t kQ3Date = 9204;    // 1995-03-15

}  // namespace hdb::tpch
