#pragma once
// Serial reference of every relational-algebra primitive: the definition every backend is verified
// against (semantics documented in bench/ra.hpp and docs/ra.md). Plain loops and STL, one core.
#include <vector>

#include "bench/ra.hpp"
#include "workloads/relations.hpp"

namespace hdb::ra::ref {

Relation project(const Relation& in, const std::vector<int>& columns);
Relation select(const Relation& in, const Predicate& pred);
Relation unique(const Relation& in);
Aggregate reduce(const Relation& in, ReduceOp op);
Relation reduce_by_key(const Relation& in, ReduceOp op);
Relation join(const Relation& left, const Relation& right);
Relation set_op(const Relation& a, const Relation& b, SetOp op);
Relation product(const Relation& a, const Relation& b);
Relation arith(const Relation& a, const Relation& b, ArithOp op);
// Stable sort by key: std::stable_sort of whole tuples comparing keys only.
Relation sort(const Relation& in);

// Output rows of join(left, right) without building it (the bench sizes cases with it).
std::uint64_t join_rows(const Relation& left, const Relation& right);

// Throws std::invalid_argument naming the problem when the inputs do not fit the operator
// (widths, sizes, column indices). Backends call these so every backend rejects the same inputs.
void check_project(int values, const std::vector<int>& columns);
void check_predicate(int values, const Predicate& pred);
void check_same_shape(std::uint64_t rows_a, int values_a, std::uint64_t rows_b, int values_b, const char* what);
void check_same_width(int values_a, int values_b, const char* what);
void check_concat(int values_a, int values_b, const char* what);

}  // namespace hdb::ra::ref
