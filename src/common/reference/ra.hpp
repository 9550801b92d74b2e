#pragma once
// Serial reference of every relational-algebra primitive: the definition every backend is verified
// against (semantics documented in model/ra.hpp and docs/ra.md). Plain loops and STL, one core.
#include <vector>

#include "model/ra.hpp"
#include "workloads/relations.hpp"

namespace hdb::ra::ref {

Relation project(const Relation& in, const std::vector<int>& columns);
Relation select(const Relation& in, Predicate pred);
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

}  // namespace hdb::ra::ref
