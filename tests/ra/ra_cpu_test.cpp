// The cpu backend's serial and parallel variants against the reference, on edge cases.
#include <gtest/gtest.h>

#include <functional>

#include "ra_backend.hpp"
#include "ra_library.hpp"
#include "ra_conformance.hpp"
#include "reference/ra.hpp"
#include "workloads/random.hpp"

namespace hdb::ra {
namespace {

TEST(RaCpu, SerialMatchesReference) {
  hdb::cpu::CpuPlatform b_cores(1);
  cpu::CpuRa b(b_cores);
  test::check_backend(b, "serial");
}

// Variants come from the backend's table: a name it never registered, or one registered for other
// operators, is refused before any code runs; the select records which code path ran.
TEST(RaCpu, VariantsAreLookedUpAndWhatRanIsRecorded) {
  hdb::cpu::CpuPlatform one(1);
  cpu::CpuRa b(one);
  EXPECT_EQ(b.variants(Op::Join), (std::vector<std::string>{"serial", "parallel", "hash"}));
  EXPECT_TRUE(b.variant_table().info("hash").any_order);
  EXPECT_FALSE(b.variant_table().info("parallel").any_order);
  EXPECT_EQ(b.variants(Op::Sort), (std::vector<std::string>{"serial", "parallel", "tbb", "pstl"}));
  Relation r(1000, 1);
  for (std::uint64_t i = 0; i < r.rows(); ++i) r.tuple(i)[0] = static_cast<std::uint32_t>(i), r.tuple(i)[1] = 7;
  DeviceRel d, o;
  b.upload(r, d);
  const Predicate p{0, 0, 499};
  EXPECT_THROW(b.select(*d, p, "simd", o), std::invalid_argument);
  EXPECT_THROW(b.join(*d, *d, "pstl", o), std::invalid_argument);  // registered, not for join
  b.select(*d, p, "serial", o);
  EXPECT_EQ(o->rows(), 500u);
  const std::string impl = b.last_ran().impl;
  EXPECT_TRUE(impl == "avx512" || impl == "scalar") << impl;
  if (!__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(impl, "scalar");
  }
  b.project(*d, {0}, "serial", o);
  EXPECT_TRUE(b.last_ran().empty()) << "an operator call clears what the last one ran";
}

TEST(RaCpu, ParallelMatchesReference) {
  // More threads than cores, so chunk edges fall inside key runs of the small inputs too.
  hdb::cpu::CpuPlatform b_cores(4);
  cpu::CpuRa b(b_cores);
  test::check_backend(b, "parallel");
  test::check_output_reuse(b, "parallel");
}

TEST(RaCpu, SixtyFourBitKeysMatchReference) {
  hdb::cpu::CpuPlatform one(1), four(4);
  cpu::CpuRa serial(one), parallel(four);
  test::check_backend(serial, "serial", 2);
  test::check_backend(parallel, "parallel", 2);
  if (cpu::library::available()) {
    for (const char* v : {"tbb", "pstl"}) test::check_backend(parallel, v, 2);
  }
  // Many staged pieces and radix passes over both words, runs of equal 64-bit keys across pieces.
  RelationSpec s;
  s.rows = 300000;
  s.values = 1;
  s.keys.distinct = 20000;
  s.key_words = 2;
  s.value_mask = 3u;
  const Relation big = make_relation(s, 9, 2);
  DeviceRel d, o;
  parallel.upload(big, d);
  auto got = [&] {
    Relation r(o->rows(), o->values(), o->key_words());
    parallel.download(*o, r);
    return r;
  };
  parallel.unique(*d, "parallel", o);
  EXPECT_TRUE(same_tuples(got(), ref::unique(big))) << "unique";
  parallel.reduce_by_key(*d, ReduceOp::Sum, "parallel", o);
  EXPECT_TRUE(same_tuples(got(), ref::reduce_by_key(big, ReduceOp::Sum))) << "reduce_by_key";
  parallel.set_op(*d, *d, SetOp::Union, "parallel", o);
  EXPECT_TRUE(same_tuples(got(), ref::set_op(big, big, SetOp::Union))) << "union";
  s.sorted = false;
  const Relation mixed = make_relation(s, 10, 2);
  DeviceRel dm;
  parallel.upload(mixed, dm);
  parallel.sort(*dm, "parallel", o);
  EXPECT_TRUE(same_tuples(got(), ref::sort(mixed))) << "sort";
  parallel.join(*d, *d, "parallel", o);
  Relation j = got(), want = ref::join(big, big);
  sort_tuples(j);
  sort_tuples(want);
  EXPECT_TRUE(same_tuples(j, want)) << "join: " << first_difference(j, want);
}

TEST(RaCpu, ThreeWordSelectMatchesReference) {
  // Three-word tuples take the AVX-512 select where the processor has it (sixteen tuples a step):
  // a 64-bit key and one value, and a 32-bit key and two values (a 64-bit value over both), at
  // row counts around the step, on every attribute, with bounds inside, at and beyond each width.
  hdb::cpu::CpuPlatform one(1), two(2);
  cpu::CpuRa serial(one), parallel(two);
  for (int kw : {1, 2})
    for (std::uint64_t n : {0ull, 1ull, 15ull, 16ull, 17ull, 47ull, 1000ull, 200003ull}) {
      RelationSpec s;
      s.rows = n;
      s.values = 3 - kw;
      s.key_words = kw;
      s.sorted = false;
      s.keys.distinct = n / 3 + 1;
      const Relation in = make_relation(s, 31 + n, 2);
      const std::uint64_t mid = in.rows() ? in.key(in.rows() / 2) : 0;
      std::vector<Predicate> ps = {Predicate{0, 0, mid},
                                   Predicate{0, mid, mid},
                                   Predicate{0, mid + 1, ~0ull},
                                   Predicate{0, 1ull << 32, ~0ull},
                                   Predicate{1, 0, 0x7fffffffu},
                                   Predicate{1, 0x80000000u, 0xffffffffu},
                                   Predicate{3 - kw, 5, 1ull << 33}};
      if (kw == 1) {
        Predicate wide{1, 0, 0x7fffffffffffffffull};
        wide.value_words = 2;
        ps.push_back(wide);
      }
      DeviceRel d, o;
      serial.upload(in, d);
      for (cpu::CpuRa* b : {&serial, &parallel})
        for (Predicate p : ps) {
          p.key_words = kw;
          b->select(*d, p, b == &serial ? "serial" : "parallel", o);
          Relation got(o->rows(), o->values(), o->key_words());
          b->download(*o, got);
          const Relation want = ref::select(in, p);
          EXPECT_TRUE(same_tuples(got, want)) << "kw " << kw << " n " << n << " attr " << p.attribute << " [" << p.lo
                                              << ", " << p.hi << "]: " << first_difference(got, want);
        }
    }
}

TEST(RaCpu, ParallelSplitsLargeInputsAtRunBoundaries) {
  // Large enough for several chunks, with long runs of equal keys crossing the chunk bounds.
  RelationSpec s;
  s.rows = 200000;
  s.values = 1;
  s.keys.distinct = 7;
  s.value_mask = 1;
  Relation a = make_relation(s, 3, 2);
  s.keys.distinct = 5000;
  s.value_mask = 3;
  Relation c = make_relation(s, 4, 2);
  hdb::cpu::CpuPlatform three_cores(3), one_core(1);
  cpu::CpuRa par(three_cores), ser(one_core);
  DeviceRel da, dc, o1, o2;
  par.upload(a, da);
  par.upload(c, dc);
  Relation h1(0, 1), h2(0, 1);
  par.unique(*da, "parallel", o1);
  ser.unique(*da, "serial", o2);
  EXPECT_EQ(o1->rows(), o2->rows());
  par.reduce_by_key(*dc, ReduceOp::Sum, "parallel", o1);
  ser.reduce_by_key(*dc, ReduceOp::Sum, "serial", o2);
  par.download(*o1, h1);
  ser.download(*o2, h2);
  EXPECT_TRUE(same_tuples(h1, h2)) << first_difference(h1, h2);
  for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
    par.set_op(*dc, *da, op, "parallel", o1);
    ser.set_op(*dc, *da, op, "serial", o2);
    par.download(*o1, h1);
    ser.download(*o2, h2);
    EXPECT_TRUE(same_tuples(h1, h2)) << to_string(op) << ": " << first_difference(h1, h2);
  }
}

using test::skewed;

Relation run(cpu::CpuRa& b, const std::function<void(DeviceRel&)>& op) {
  DeviceRel out;
  op(out);
  Relation h(0, out->values());
  b.download(*out, h);
  return h;
}

void expect_equal(Relation got, Relation want, bool multiset, const std::string& what) {
  if (multiset) {
    sort_tuples(got);
    sort_tuples(want);
  }
  EXPECT_TRUE(same_tuples(got, want)) << what << ": " << first_difference(got, want);
}

// The library variants (oneTBB, the C++17 parallel algorithms) on the same edge cases.
TEST(RaCpu, LibraryVariantsMatchReference) {
  if (!cpu::library::available()) GTEST_SKIP() << "built without oneTBB";
  hdb::cpu::CpuPlatform b_cores(3);
  cpu::CpuRa b(b_cores);
  for (const char* v : {"tbb", "pstl"}) {
    SCOPED_TRACE(v);
    test::check_backend(b, v);
  }
  // Beyond one piece of the libraries' own splitting, with the key 0xffffffff.
  Relation big = skewed(300000, 1, 1000, 0.3, 0xffffffffu, 0xffffffffu, 41);
  DeviceRel d;
  b.upload(big, d);
  for (const char* v : {"tbb", "pstl"}) {
    expect_equal(run(b, [&](DeviceRel& o) { b.sort(*d, v, o); }), ref::sort(big), false, std::string("sort ") + v);
    const Aggregate g = b.reduce(*d, ReduceOp::Sum, v).value;
    EXPECT_TRUE(g == ref::reduce(big, ReduceOp::Sum)) << "reduce " << v;
  }
}

// Merge-path pieces and equal chunks split runs of equal keys (and of equal whole tuples) between
// threads: check every split-sensitive operator on skewed and all-equal inputs, for several thread
// counts, against the reference.
TEST(RaCpu, ParallelSplitsInsideRunsMatchReference) {
  const std::uint64_t n = 300000;  // pieces of kMinChunkRows and several staged pieces (kStagedPieceRows)
  struct Case {
    std::string name;
    Relation a, b;
  };
  std::vector<Case> cases;
  // One key holds most rows of a (and a few of b): splits fall inside its runs.
  cases.push_back({"heavy-left", skewed(n, 1, n, 0.8, 777, 3, 11), skewed(n, 1, n, 0.00005, 777, 3, 12)});
  cases.push_back({"heavy-right", skewed(n, 1, n, 0.00005, 777, 3, 13), skewed(n, 1, n, 0.8, 777, 3, 14)});
  // Few distinct whole tuples, long equal runs on both sides with different copy counts.
  cases.push_back({"few-tuples", skewed(n, 2, 3, 0, 0, 1, 15), skewed(n / 2 + 17, 2, 3, 0, 0, 1, 16)});
  // Every tuple equal (and at the largest key) on both sides.
  Relation same_a(n, 1), same_b(n - 999, 1);
  for (std::uint64_t i = 0; i < same_a.rows(); ++i) same_a.tuple(i)[0] = 0xffffffffu, same_a.tuple(i)[1] = 5;
  for (std::uint64_t i = 0; i < same_b.rows(); ++i) same_b.tuple(i)[0] = 0xffffffffu, same_b.tuple(i)[1] = 5;
  cases.push_back({"all-equal", same_a, same_b});
  for (int threads : {2, 3, 7}) {
    hdb::cpu::CpuPlatform b_cores(threads);
    cpu::CpuRa b(b_cores);
    for (const Case& c : cases) {
      const std::string what = c.name + " threads=" + std::to_string(threads);
      DeviceRel da, db;
      b.upload(c.a, da);
      b.upload(c.b, db);
      expect_equal(run(b, [&](DeviceRel& o) { b.unique(*da, "parallel", o); }), ref::unique(c.a), false,
                   "unique " + what);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max})
        expect_equal(run(b, [&](DeviceRel& o) { b.reduce_by_key(*da, op, "parallel", o); }),
                     ref::reduce_by_key(c.a, op), false, std::string("reduce_by_key ") + to_string(op) + " " + what);
      for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
        expect_equal(run(b, [&](DeviceRel& o) { b.set_op(*da, *db, op, "parallel", o); }), ref::set_op(c.a, c.b, op),
                     false, std::string(to_string(op)) + " " + what);
        expect_equal(run(b, [&](DeviceRel& o) { b.set_op(*db, *da, op, "parallel", o); }), ref::set_op(c.b, c.a, op),
                     false, std::string(to_string(op)) + " swapped " + what);
      }
      // Joins whose output stays small enough to build: one heavy side against a light one.
      if (ref::join_rows(c.a, c.b) < 20 * n) {
        expect_equal(run(b, [&](DeviceRel& o) { b.join(*da, *db, "parallel", o); }), ref::join(c.a, c.b), true,
                     "join " + what);
        expect_equal(run(b, [&](DeviceRel& o) { b.join(*db, *da, "parallel", o); }), ref::join(c.b, c.a), true,
                     "join swapped " + what);
      }
    }
  }
}

// The hash variant on the edge cases (32- and 64-bit keys, sorted and unsorted input), then on inputs
// large enough for many partitions, shuffled: one heavy key, few distinct tuples, all equal.
TEST(RaCpu, HashMatchesReference) {
  hdb::cpu::CpuPlatform four(4);
  cpu::CpuRa b(four);
  test::check_backend(b, "hash");
  test::check_backend(b, "hash", 2);
  test::check_output_reuse(b, "hash");
  test::check_shuffled_large(b, "hash");
}

// The parallel compactions and merges stage each piece and copy it to an offset learnt from the
// pieces before it (ra_staged.hpp): none kept, all kept, a piece with nothing kept between full
// ones, empty sides, and sizes that are not a multiple of the piece.
TEST(RaCpu, StagedPiecesMatchReference) {
  const std::uint64_t n = 5 * 65536 + 123;
  Relation a = skewed(n, 2, n / 3, 0.1, 0xffffffffu, 0xffffffffu, 31), empty(0, 2);
  struct Sel {
    std::string name;
    Predicate pred;
  };
  std::vector<Sel> sels = {{"none", {0, 1, 0}},
                           {"all", {0, 0, 0xffffffffu}},
                           {"half", {1, 0, 0x7fffffffu}},
                           {"heavy only", {0, 0xffffffffu, 0xffffffffu}}};
  for (int threads : {2, 3}) {
    hdb::cpu::CpuPlatform cores(threads);
    cpu::CpuRa b(cores);
    DeviceRel da, de;
    b.upload(a, da);
    b.upload(empty, de);
    const std::string t = " threads=" + std::to_string(threads);
    for (const Sel& s : sels)
      expect_equal(run(b, [&](DeviceRel& o) { b.select(*da, s.pred, "parallel", o); }), ref::select(a, s.pred), false,
                   "select " + s.name + t);
    expect_equal(run(b, [&](DeviceRel& o) { b.unique(*da, "parallel", o); }), ref::unique(a), false, "unique" + t);
    for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
      expect_equal(run(b, [&](DeviceRel& o) { b.set_op(*da, *de, op, "parallel", o); }), ref::set_op(a, empty, op),
                   false, std::string(to_string(op)) + " empty right" + t);
      expect_equal(run(b, [&](DeviceRel& o) { b.set_op(*de, *da, op, "parallel", o); }), ref::set_op(empty, a, op),
                   false, std::string(to_string(op)) + " empty left" + t);
    }
    expect_equal(run(b, [&](DeviceRel& o) { b.join(*da, *de, "parallel", o); }), ref::join(a, empty), true,
                 "join empty right" + t);
    expect_equal(run(b, [&](DeviceRel& o) { b.join(*de, *da, "parallel", o); }), ref::join(empty, a), true,
                 "join empty left" + t);
    Relation light = skewed(n / 2, 1, n / 3, 0.0001, 0xffffffffu, 7, 32);
    DeviceRel dl;
    b.upload(light, dl);
    ASSERT_LT(ref::join_rows(a, light), 20 * n);
    expect_equal(run(b, [&](DeviceRel& o) { b.join(*da, *dl, "parallel", o); }), ref::join(a, light), true,
                 "join heavy x light" + t);
  }
}

// More threads than rows: pieces of no rows must produce nothing and break nothing.
TEST(RaCpu, MoreThreadsThanRows) {
  hdb::cpu::CpuPlatform b_cores(64);
  cpu::CpuRa b(b_cores);
  Relation a = skewed(40, 1, 5, 0.5, 2, 1, 21), c = skewed(30, 1, 5, 0.5, 2, 1, 22);
  DeviceRel da, dc;
  b.upload(a, da);
  b.upload(c, dc);
  expect_equal(run(b, [&](DeviceRel& o) { b.join(*da, *dc, "parallel", o); }), ref::join(a, c), true, "join");
  expect_equal(run(b, [&](DeviceRel& o) { b.set_op(*da, *dc, SetOp::Union, "parallel", o); }),
               ref::set_op(a, c, SetOp::Union), false, "union");
  expect_equal(run(b, [&](DeviceRel& o) { b.reduce_by_key(*da, ReduceOp::Sum, "parallel", o); }),
               ref::reduce_by_key(a, ReduceOp::Sum), false, "reduce_by_key");
}

// Sort with several chunks per digit pass: equal keys spread over every chunk must keep their input
// order (the value numbers the rows), whatever the thread count; 0xffffffff and 0 among the keys.
TEST(RaCpu, ParallelSortIsStableAcrossChunks) {
  const std::uint64_t n = 200003;
  Relation r(n, 1);
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t h = i * 2654435761u % 1009;
    r.tuple(i)[0] = h < 5 ? 0xffffffffu : static_cast<std::uint32_t>(h % 7) << (h % 3 * 12);
    r.tuple(i)[1] = static_cast<std::uint32_t>(i);
  }
  const Relation want = ref::sort(r);
  for (int threads : {1, 2, 3, 7}) {
    SCOPED_TRACE(threads);
    hdb::cpu::CpuPlatform b_cores(threads);
    cpu::CpuRa b(b_cores);
    DeviceRel d;
    b.upload(r, d);
    expect_equal(run(b, [&](DeviceRel& o) { b.sort(*d, "parallel", o); }), want, false, "sort");
  }
}

TEST(RaCpu, UnknownVariantIsRejected) {
  hdb::cpu::CpuPlatform b_cores(1);
  cpu::CpuRa b(b_cores);
  DeviceRel d, o;
  b.upload(Relation(1, 1), d);
  EXPECT_THROW(b.unique(*d, "tuned", o), std::invalid_argument);
}

}  // namespace
}  // namespace hdb::ra
