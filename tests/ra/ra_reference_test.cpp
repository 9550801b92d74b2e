// The reference is the definition every backend is checked against, so it is checked itself
// against independent formulations: nested-loop join, std::set_* on tuple vectors, and hand-made
// cases with known answers.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "bench/ra.hpp"
#include "reference/ra.hpp"

namespace hdb::ra {
namespace {

Relation from_rows(const std::vector<std::vector<std::uint32_t>>& rows, int values) {
  Relation r(rows.size(), values);
  for (std::size_t i = 0; i < rows.size(); ++i)
    for (int k = 0; k <= values; ++k) r.tuple(i)[k] = rows[i][static_cast<std::size_t>(k)];
  return r;
}

std::vector<std::array<std::uint32_t, 2>> as_vec(const Relation& r) {
  std::vector<std::array<std::uint32_t, 2>> v;
  for (std::uint64_t i = 0; i < r.rows(); ++i) v.push_back({r.tuple(i)[0], r.tuple(i)[1]});
  return v;
}

Relation random_sorted(std::uint64_t n, std::uint64_t distinct, std::uint64_t seed) {
  RelationSpec s;
  s.rows = n;
  s.values = 1;
  s.keys.distinct = distinct;
  s.keys.max = 50;
  s.value_mask = 3;
  return make_relation(s, seed, 1);
}

TEST(RaReference, HandMadeCases) {
  Relation a = from_rows({{1, 10}, {1, 11}, {2, 20}, {4, 40}}, 1);
  Relation b = from_rows({{1, 5}, {3, 6}, {4, 7}, {4, 8}}, 1);
  Relation j = ref::join(a, b);
  EXPECT_TRUE(same_tuples(j, from_rows({{1, 10, 5}, {1, 11, 5}, {4, 40, 7}, {4, 40, 8}}, 2)));
  EXPECT_TRUE(same_tuples(ref::unique(a), from_rows({{1, 10}, {2, 20}, {4, 40}}, 1)));
  EXPECT_TRUE(same_tuples(ref::reduce_by_key(a, ReduceOp::Sum), from_rows({{1, 21}, {2, 20}, {4, 40}}, 1)));
  EXPECT_TRUE(same_tuples(ref::select(a, Predicate{0, 2, 4}), from_rows({{2, 20}, {4, 40}}, 1)));
  EXPECT_TRUE(same_tuples(ref::project(a, {1}), from_rows({{10}, {11}, {20}, {40}}, 0)));
  Aggregate s = ref::reduce(a, ReduceOp::Sum);
  EXPECT_EQ(s.value[0], 81u);
  EXPECT_EQ(ref::reduce(a, ReduceOp::Min).value[0], 10u);
  EXPECT_EQ(ref::reduce(a, ReduceOp::Max).value[0], 40u);
  Relation p = ref::product(from_rows({{1, 2}}, 1), from_rows({{3, 4}, {5, 6}}, 1));
  EXPECT_TRUE(same_tuples(p, from_rows({{1, 2, 3, 4}, {1, 2, 5, 6}}, 3)));
  Relation m = ref::arith(from_rows({{1, 7}}, 1), from_rows({{9, 3}}, 1), ArithOp::Subtract);
  EXPECT_TRUE(same_tuples(m, from_rows({{1, 4}}, 1)));
  Aggregate e = ref::reduce(Relation(0, 2), ReduceOp::Min);
  EXPECT_EQ(e.value[0], 0xffffffffu);
}

TEST(RaReference, JoinEqualsNestedLoops) {
  for (std::uint64_t seed = 1; seed < 20; ++seed) {
    Relation l = random_sorted(40 + seed, 10, seed), r = random_sorted(30, 12, seed + 100);
    Relation j = ref::join(l, r);
    Relation nl(l.rows() * r.rows(), 2);
    std::uint64_t o = 0;
    for (std::uint64_t i = 0; i < l.rows(); ++i)
      for (std::uint64_t k = 0; k < r.rows(); ++k)
        if (l.key(i) == r.key(k)) {
          nl.tuple(o)[0] = l.key(i);
          nl.tuple(o)[1] = l.tuple(i)[1];
          nl.tuple(o)[2] = r.tuple(k)[1];
          ++o;
        }
    nl.set_rows(o);
    EXPECT_EQ(ref::join_rows(l, r), o);
    sort_tuples(j);
    sort_tuples(nl);
    EXPECT_TRUE(same_tuples(j, nl)) << first_difference(j, nl);
  }
}

TEST(RaReference, SetOperationsEqualStdAlgorithms) {
  for (std::uint64_t seed = 1; seed < 20; ++seed) {
    Relation a = random_sorted(60, 15, seed), b = random_sorted(50, 15, seed + 7);
    auto va = as_vec(a), vb = as_vec(b);
    std::vector<std::array<std::uint32_t, 2>> u, in, d;
    std::set_union(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(u));
    std::set_intersection(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(in));
    std::set_difference(va.begin(), va.end(), vb.begin(), vb.end(), std::back_inserter(d));
    EXPECT_EQ(as_vec(ref::set_op(a, b, SetOp::Union)), u);
    EXPECT_EQ(as_vec(ref::set_op(a, b, SetOp::Intersection)), in);
    EXPECT_EQ(as_vec(ref::set_op(a, b, SetOp::Difference)), d);
  }
}

// Sort is stable: std::stable_sort of tuple vectors by key, on hand-made and random inputs (empty,
// one tuple, every key equal, keys at 2^32 - 1, more than 65536 tuples), three values per tuple so
// that equal keys carry distinguishable tuples.
TEST(RaReference, SortEqualsStdStableSort) {
  Relation hand = from_rows({{5, 1}, {3, 2}, {5, 0}, {0xffffffffu, 7}, {3, 1}, {0, 9}, {5, 2}}, 1);
  EXPECT_TRUE(
      same_tuples(ref::sort(hand), from_rows({{0, 9}, {3, 2}, {3, 1}, {5, 1}, {5, 0}, {5, 2}, {0xffffffffu, 7}}, 1)));
  struct Case {
    std::uint64_t rows, distinct, min, max;
  };
  for (const Case& c : {Case{0, 0, 0, 0xffffffffu}, Case{1, 0, 0, 0xffffffffu}, Case{1000, 1, 9, 9},
                        Case{999, 2, 0xfffffffeu, 0xffffffffu}, Case{4099, 0, 0, 0xffffffffu},
                        Case{70001, 300, 0, 1000}, Case{100003, 0, 0, 0xffffffffu}}) {
    SCOPED_TRACE(std::to_string(c.rows) + " rows, keys " + std::to_string(c.min) + ".." + std::to_string(c.max));
    RelationSpec s;
    s.rows = c.rows;
    s.values = 3;
    s.keys.distinct = c.distinct;
    s.keys.min = c.min;
    s.keys.max = c.max;
    s.sorted = false;
    Relation in = make_relation(s, 31 + c.rows, 1);
    std::vector<std::array<std::uint32_t, 4>> v;
    for (std::uint64_t i = 0; i < in.rows(); ++i)
      v.push_back({in.tuple(i)[0], in.tuple(i)[1], in.tuple(i)[2], static_cast<std::uint32_t>(i)});
    std::stable_sort(v.begin(), v.end(), [](const auto& x, const auto& y) { return x[0] < y[0]; });
    Relation want(in.rows(), 3);
    for (std::uint64_t i = 0; i < in.rows(); ++i) {
      const auto& t = v[static_cast<std::size_t>(i)];
      std::copy_n(in.tuple(t[3]), 4, want.tuple(i));
    }
    Relation got = ref::sort(in);
    EXPECT_EQ(got.rows(), in.rows());
    EXPECT_EQ(first_difference(got, want), "");
  }
}

TEST(RaReference, RejectsMismatchedInputs) {
  Relation a(3, 1), b(4, 1), w(3, 2);
  EXPECT_THROW(ref::arith(a, b, ArithOp::Add), std::invalid_argument);
  EXPECT_THROW(ref::set_op(a, w, SetOp::Union), std::invalid_argument);
  EXPECT_THROW(ref::project(a, {2}), std::invalid_argument);
  EXPECT_THROW(ref::select(a, Predicate{2, 0, 1}), std::invalid_argument);
  EXPECT_THROW(ref::join(Relation(1, 4), Relation(1, 4)), std::invalid_argument);
}

TEST(RaReference, SixtyFourBitKeysAndShapes) {
  // Keys sharing the high word, ordered by the low word; the width travels with every result.
  Relation a(4, 1, 2);
  const std::uint64_t keys[] = {(1ull << 32) | 5, (1ull << 32) | 5, (1ull << 32) | 7, ~0ull};
  for (std::uint64_t i = 0; i < 4; ++i) {
    set_key(a.tuple(i), 2, keys[i]);
    a.tuple(i)[2] = static_cast<std::uint32_t>(10 + i);
  }
  EXPECT_EQ(a.key(3), ~0ull);
  Relation u = ref::unique(a);
  ASSERT_EQ(u.rows(), 3u);
  EXPECT_EQ(u.key_bits(), 64);
  EXPECT_EQ(ref::reduce_by_key(a, ReduceOp::Sum).tuple(0)[2], 21u);
  EXPECT_EQ(ref::reduce(a, ReduceOp::Max).value[0], 13u);
  Relation j = ref::join(a, a);
  EXPECT_EQ(j.rows(), 4u + 1 + 1);
  EXPECT_EQ(j.width(), 4);
  EXPECT_EQ(ref::select(a, Predicate{0, (1ull << 32) | 6, ~0ull}).rows(), 2u);
  // project: a value first makes a 32-bit key; the 64-bit key after it becomes two values.
  Relation p = ref::project(a, {1, 0});
  EXPECT_EQ(p.key_words(), 1);
  EXPECT_EQ(p.values(), 2);
  EXPECT_EQ(p.tuple(3)[1], 0xffffffffu);
  EXPECT_EQ(project_layout(2, {1, 0}).words, (std::vector<int>{2, 0, 1}));
  // product: b's 64-bit key becomes two values of a 64-bit-keyed tuple.
  EXPECT_EQ(ref::product(a, a).width(), 6);
  EXPECT_THROW(ref::join(a, Relation(1, 1)), std::invalid_argument);  // keys of two widths
  EXPECT_THROW(ref::set_op(a, Relation(1, 2), SetOp::Union), std::invalid_argument);
  EXPECT_THROW(Relation(1, 7, 2), std::invalid_argument);  // 9 words
}

TEST(RaReference, SixtyFourBitValuesAndWordLayouts) {
  // A 64-bit value held as attributes 1 and 2 (high word first), selected as one number.
  Relation a(3, 3);
  const std::uint64_t v[] = {(5ull << 32) | 1, (4ull << 32) | 9, 7};
  for (std::uint64_t i = 0; i < 3; ++i) {
    a.tuple(i)[0] = static_cast<std::uint32_t>(i);
    a.tuple(i)[1] = static_cast<std::uint32_t>(v[i] >> 32);
    a.tuple(i)[2] = static_cast<std::uint32_t>(v[i]);
  }
  Predicate p{1, 5ull << 32, ~0ull};
  p.value_words = 2;
  EXPECT_EQ(ref::select(a, p).rows(), 1u);
  p.attribute = 3;  // its low word would be past the tuple
  EXPECT_THROW(ref::select(a, p), std::invalid_argument);
  ProjectLayout ok{{1, 2, 0}, 2};
  EXPECT_NO_THROW(check_layout(a.width(), ok));
  EXPECT_THROW(check_layout(a.width(), ProjectLayout{{1, 4}, 1}), std::invalid_argument);  // no word 4
  EXPECT_THROW(check_layout(a.width(), ProjectLayout{{1}, 2}), std::invalid_argument);     // key of 2 words
  EXPECT_THROW(check_layout(a.width(), ProjectLayout{{0, 0, 0, 0, 0, 0, 0, 0, 0}, 1}), std::invalid_argument);
}

TEST(RaReference, JoinCountBeyondThirtyTwoBits) {
  // 65537 x 65537 tuples of one key: 4295098369 pairs, more than a 32-bit count holds (it would
  // wrap to 131073). The count is exact without building the output.
  Relation l(65537, 1);
  for (std::uint64_t i = 0; i < l.rows(); ++i) l.tuple(i)[0] = 9;
  EXPECT_EQ(ref::join_rows(l, l), 65537ull * 65537ull);
  EXPECT_GT(ref::join_rows(l, l), 0xffffffffull);
}

TEST(RaRelations, GeneratedDataIsDeterministicSortedAndNotZero) {
  RelationSpec s;
  s.rows = 100000;
  s.values = 3;
  Relation a = make_relation(s, 9, 1), b = make_relation(s, 9, 4);
  EXPECT_TRUE(same_tuples(a, b));
  bool nonzero = false;
  for (std::uint64_t i = 1; i < a.rows(); ++i) {
    ASSERT_LE(compare_tuples(a.tuple(i - 1), a.tuple(i), a.width()), 0);
    nonzero = nonzero || a.tuple(i)[1] != 0;
  }
  EXPECT_TRUE(nonzero);
}

}  // namespace
}  // namespace hdb::ra
