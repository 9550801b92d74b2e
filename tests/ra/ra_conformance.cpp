#include "ra_conformance.hpp"

#include <algorithm>
#include <functional>

#include "reference/ra.hpp"
#include "workloads/random.hpp"

namespace hdb::ra::test {
namespace {

Relation sorted_spec(std::uint64_t rows, int values, std::uint64_t distinct, std::uint64_t min, std::uint64_t max,
                     std::uint64_t seed, std::uint32_t value_mask = 0xffffffffu, int key_words = 1) {
  RelationSpec s;
  s.key_words = key_words;
  s.rows = rows;
  s.values = values;
  s.keys.distinct = distinct;
  s.keys.min = min;
  s.keys.max = max;
  s.sorted = true;
  s.value_mask = value_mask;
  return make_relation(s, seed, 2);
}

DeviceRel up(RaBackend& b, const Relation& r) {
  DeviceRel d;
  b.upload(r, d);
  return d;
}

Relation down(RaBackend& b, const DeviceRel& d) {
  Relation r(d->rows(), d->values(), d->key_words());
  b.download(*d, r);
  return r;
}

// `in` in another order (odd rows backwards, then even rows forwards) with the last value replaced
// by the new row number: every tuple distinct, so an unstable sort of equal keys shows.
Relation shuffled(const Relation& in) {
  Relation out(in.rows(), in.values(), in.key_words());
  const std::uint64_t n = in.rows();
  std::uint64_t o = 0;
  for (std::uint64_t i = n; i-- > 0;)
    if (i % 2) std::copy_n(in.tuple(i), in.width(), out.tuple(o++));
  for (std::uint64_t i = 0; i < n; i += 2) std::copy_n(in.tuple(i), in.width(), out.tuple(o++));
  for (std::uint64_t i = 0; i < n; ++i) out.tuple(i)[in.width() - 1] = static_cast<std::uint32_t>(i);
  return out;
}

void expect_same(const Relation& got, const Relation& want, const std::string& what, bool multiset = false) {
  const Relation g = multiset ? tuple_sorted(got) : got;
  const Relation w = multiset ? tuple_sorted(want) : want;
  std::string diff = first_difference(g, w);
  EXPECT_TRUE(diff.empty()) << what << ": " << diff;
}

}  // namespace

std::vector<Input> edge_inputs(int values, int kw) {
  std::vector<Input> in;
  for (std::uint64_t n : {0ull, 1ull, 2ull, 255ull, 256ull, 257ull, 1000ull, 4099ull}) {
    std::string sz = std::to_string(n);
    // 64-bit keys are wide_key(k) of the same k: above 2^32, runs of keys sharing the high word.
    in.push_back({"uniform" + sz, sorted_spec(n, values, 0, 0, 0xffffffffu, 11 + n, 0xffffffffu, kw)});
    in.push_back({"dups" + sz, sorted_spec(n, values, std::max<std::uint64_t>(1, n / 4), 0, 1000, 23 + n, 3u, kw)});
    in.push_back({"equal" + sz, sorted_spec(n, values, 1, 7, 7, 37 + n, 1u, kw)});
    Relation top = sorted_spec(n, values, 2, 0xfffffffeu, 0xffffffffu, 41 + n, 3u, kw);
    // The largest keys of the width: 2^64 - 2 and 2^64 - 1 for 64-bit keys.
    if (kw == 2)
      for (std::uint64_t i = 0; i < n; ++i) set_key(top.tuple(i), 2, ~std::uint64_t{0} - (top.key(i) & 1));
    sort_tuples(top);
    in.push_back({"maxkeys" + sz, top});
  }
  return in;
}

namespace {
// An any-order variant on `in` shuffled (every tuple made distinct by its last value) and on `in` in
// reverse (equal tuples kept): unique keeps each key's first tuple in input order, and the other
// operators equal the reference on sorted copies.
void check_unsorted(RaBackend& b, const std::string& variant, const Relation& in) {
  Relation reversed(in.rows(), in.values(), in.key_words());
  for (std::uint64_t i = 0; i < in.rows(); ++i) std::copy_n(in.tuple(in.rows() - 1 - i), in.width(), reversed.tuple(i));
  for (const Relation& mixed : {shuffled(in), reversed}) {
    const Relation by_key = ref::sort(mixed);
    const Relation by_tuple = tuple_sorted(mixed);
    DeviceRel dm = up(b, mixed), out;
    if (offers(b, Op::Unique, variant)) {
      b.unique(*dm, variant, out);
      expect_same(down(b, out), ref::unique(by_key), "unique of unsorted input", true);
    }
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
      if (!offers(b, Op::ReduceByKey, variant)) break;
      b.reduce_by_key(*dm, op, variant, out);
      expect_same(down(b, out), ref::reduce_by_key(by_key, op),
                  std::string("reduce_by_key of unsorted input ") + to_string(op), true);
    }
    if (offers(b, Op::Join, variant) && in.rows() <= 300) {
      b.join(*dm, *dm, variant, out);
      expect_same(down(b, out), ref::join(by_key, by_key), "join of unsorted input", true);
    }
    for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
      if (!offers(b, Op::SetUnion, variant)) break;
      DeviceRel other = up(b, in);  // sorted, overlapping the shuffled copy
      b.set_op(*dm, *other, op, variant, out);
      expect_same(down(b, out), ref::set_op(by_tuple, in, op), std::string("set of unsorted input ") + to_string(op),
                  true);
    }
  }
}

// Select predicates: none, all, about half of the keys (at the 32-bit generator's midpoint, which
// a 64-bit key reaches at wide_key's midpoint), the maximum key alone, and one on a value.
std::vector<Predicate> predicates(int kw) {
  const std::uint64_t max = kw == 2 ? ~std::uint64_t{0} : 0xffffffffu;
  const std::uint64_t half = kw == 2 ? wide_key(0x7fffffffu) : 0x7fffffffu;
  return {Predicate{0, 1, 0},     Predicate{0, 0, max},           Predicate{0, 0, half},
          Predicate{0, max, max}, Predicate{0, max - 1, max - 1}, Predicate{1, 0, 0x7fffffffu}};
}
}  // namespace

void check_backend(RaBackend& b, const std::string& variant, int kw) {
  // A variant that takes its input in any order gives its output in none: compared as a multiset.
  const bool any = b.variant_table().info(variant).any_order;
  for (int values = 1; values <= 3; values += 2) {
    std::vector<Input> inputs = edge_inputs(values, kw);
    for (const Input& a : inputs) {
      SCOPED_TRACE(a.name + " values=" + std::to_string(values));
      DeviceRel da = up(b, a.rel), out;

      for (const std::vector<int>& cols : {std::vector<int>{0}, std::vector<int>{values, 0}}) {
        if (!offers(b, Op::Project, variant)) break;
        b.project(*da, cols, variant, out);
        expect_same(down(b, out), ref::project(a.rel, cols), "project");
      }
      if (values >= 2 && offers(b, Op::Project, variant)) {
        // project_words: values 1 and 2 become a 64-bit key (high, low), the old key follows.
        ProjectLayout l;
        l.key_words = 2;
        l.words = {kw, kw + 1};
        for (int w = 0; w < kw; ++w) l.words.push_back(w);
        b.project_words(*da, l, variant, out);
        Relation want(a.rel.rows(), static_cast<int>(l.words.size()) - 2, 2);
        for (std::uint64_t i = 0; i < a.rel.rows(); ++i)
          for (std::size_t w = 0; w < l.words.size(); ++w) want.tuple(i)[w] = a.rel.tuple(i)[l.words[w]];
        expect_same(down(b, out), want, "project_words to a 64-bit key");
      }
      if (values >= 2 && offers(b, Op::Select, variant)) {
        // A 64-bit value (attributes 1 and 2, high word first) against 64-bit bounds.
        Predicate p{1, 0, 0x7fffffffffffffffull};
        p.key_words = kw;
        p.value_words = 2;
        b.select(*da, p, variant, out);
        expect_same(down(b, out), ref::select(a.rel, p), "select on a 64-bit value");
      }
      for (Predicate p : predicates(kw)) {
        p.key_words = kw;
        if (!offers(b, Op::Select, variant)) break;
        b.select(*da, p, variant, out);
        expect_same(down(b, out), ref::select(a.rel, p),
                    "select attr " + std::to_string(p.attribute) + " in [" + std::to_string(p.lo) + "," +
                        std::to_string(p.hi) + "]");
      }
      // Sort: every input shuffled (equal keys in a known order that a stable sort keeps).
      if (offers(b, Op::Sort, variant)) {
        const Relation mixed = shuffled(a.rel);
        DeviceRel dm = up(b, mixed);
        b.sort(*dm, variant, out);
        expect_same(down(b, out), ref::sort(mixed), "sort");
      }
      if (offers(b, Op::Unique, variant)) {
        b.unique(*da, variant, out);
        expect_same(down(b, out), ref::unique(a.rel), "unique", any);
      }
      if (any) check_unsorted(b, variant, a.rel);
      for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
        if (offers(b, Op::Reduce, variant)) {
          Aggregate got = b.reduce(*da, op, variant).value;
          EXPECT_TRUE(got == ref::reduce(a.rel, op)) << "reduce " << to_string(op);
        }
        if (!offers(b, Op::ReduceByKey, variant)) continue;
        b.reduce_by_key(*da, op, variant, out);
        expect_same(down(b, out), ref::reduce_by_key(a.rel, op), std::string("reduce_by_key ") + to_string(op), any);
      }
      for (ArithOp op : {ArithOp::Add, ArithOp::Subtract, ArithOp::Multiply}) {
        if (!offers(b, Op::Add, variant)) break;
        Relation a2 = a.rel.clone();
        for (std::uint64_t i = 0; i < a2.rows(); ++i)
          for (int v = kw; v < a2.width(); ++v)
            a2.tuple(i)[v] = static_cast<std::uint32_t>(rand_at(5, i * 8 + static_cast<std::uint64_t>(v)));
        DeviceRel db = up(b, a2);
        b.arith(*da, *db, op, variant, out);
        expect_same(down(b, out), ref::arith(a.rel, a2, op), std::string("arith ") + to_string(op));
      }
      // Binary operators against a few partners: itself (many-to-many when keys repeat), and
      // inputs with disjoint or overlapping keys.
      for (const Input& other : inputs) {
        if (other.rel.rows() > 300 && (other.name != a.name || a.rel.rows() > 1000)) continue;
        SCOPED_TRACE("with " + other.name);
        DeviceRel db = up(b, other.rel);
        if (offers(b, Op::Join, variant)) {
          b.join(*da, *db, variant, out);
          expect_same(down(b, out), ref::join(a.rel, other.rel), "join", true);
        }
        for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
          if (!offers(b, Op::SetUnion, variant)) break;
          b.set_op(*da, *db, op, variant, out);
          expect_same(down(b, out), ref::set_op(a.rel, other.rel, op), std::string("set ") + to_string(op), any);
        }
        if (other.rel.rows() <= 3 && a.rel.width() + other.rel.width() <= kMaxWords &&
            offers(b, Op::Product, variant)) {
          b.product(*da, *db, variant, out);
          expect_same(down(b, out), ref::product(a.rel, other.rel), "product");
        }
      }
    }
  }
}

void check_output_reuse(RaBackend& b, const std::string& variant) {
  Relation big = sorted_spec(3000, 2, 500, 0, 100000, 3);
  Relation small = sorted_spec(10, 2, 5, 0, 100000, 4);
  DeviceRel dbig = up(b, big), dsmall = up(b, small), out;
  const bool any = b.variant_table().info(variant).any_order;
  for (int round = 0; round < 2; ++round) {
    // A large output, then a small one in the same handle: select where the variant has it, else unique.
    if (offers(b, Op::Select, variant)) {
      b.select(*dbig, Predicate{0, 0, 60000}, variant, out);
      expect_same(down(b, out), ref::select(big, Predicate{0, 0, 60000}), "select big");
      b.select(*dsmall, Predicate{0, 0, 60000}, variant, out);
      expect_same(down(b, out), ref::select(small, Predicate{0, 0, 60000}), "select small");
    } else if (offers(b, Op::Unique, variant)) {
      b.unique(*dbig, variant, out);
      expect_same(down(b, out), ref::unique(big), "unique big", any);
      b.unique(*dsmall, variant, out);
      expect_same(down(b, out), ref::unique(small), "unique small", any);
    }
    // The same handle now holds a wider relation.
    if (!offers(b, Op::Join, variant)) continue;
    b.join(*dbig, *dbig, variant, out);
    expect_same(down(b, out), ref::join(big, big), "join big", true);
  }
}

Relation skewed(std::uint64_t rows, int values, std::uint64_t distinct, double heavy_share, std::uint32_t heavy,
                std::uint32_t value_mask, std::uint64_t seed) {
  RelationSpec s;
  s.rows = rows;
  s.values = values;
  s.keys.distinct = distinct;
  s.keys.min = 0;
  s.keys.max = distinct - 1;
  s.value_mask = value_mask;
  Relation r = make_relation(s, seed, 2);
  const auto heavy_rows = static_cast<std::uint64_t>(heavy_share * static_cast<double>(rows));
  for (std::uint64_t i = 0; i < heavy_rows; ++i) r.tuple((i * 7919) % rows)[0] = heavy;
  sort_tuples(r);
  return r;
}

void check_shuffled_large(RaBackend& b, const std::string& variant, std::uint64_t n) {
  Relation same(n, 1);
  for (std::uint64_t i = 0; i < n; ++i)
    same.tuple(i)[0] = 0xffffffffu, same.tuple(i)[1] = static_cast<std::uint32_t>(i % 5);
  const std::vector<Input> inputs = {{"heavy key", skewed(n, 1, n, 0.8, 777, 3, 11)},
                                     {"few distinct tuples", skewed(n, 2, 3, 0, 0, 1, 15)},
                                     {"all keys 0xffffffff", same}};
  for (Input in : inputs) {
    SCOPED_TRACE(in.name);
    Relation& a = in.rel;
    // Fisher-Yates with a fixed stream: the rows in an order no sort left.
    for (std::uint64_t i = n - 1; i > 0; --i)
      std::swap_ranges(a.tuple(i), a.tuple(i) + a.width(), a.tuple(rand_at(77, i) % (i + 1)));
    const Relation by_key = ref::sort(a);
    const Relation by_tuple = tuple_sorted(a);
    DeviceRel da = up(b, a), out;
    if (offers(b, Op::Unique, variant)) {
      b.unique(*da, variant, out);
      expect_same(down(b, out), ref::unique(by_key), "unique", true);
    }
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max}) {
      if (!offers(b, Op::ReduceByKey, variant)) break;
      b.reduce_by_key(*da, op, variant, out);
      expect_same(down(b, out), ref::reduce_by_key(by_key, op), std::string("reduce_by_key ") + to_string(op), true);
    }
    for (SetOp op : {SetOp::Union, SetOp::Intersection, SetOp::Difference}) {
      if (!offers(b, Op::SetUnion, variant)) break;
      b.set_op(*da, *da, op, variant, out);
      expect_same(down(b, out), ref::set_op(by_tuple, by_tuple, op), to_string(op), true);
    }
    if (offers(b, Op::Join, variant) && ref::join_rows(by_key, by_key) < 20 * n) {
      b.join(*da, *da, variant, out);
      expect_same(down(b, out), ref::join(by_key, by_key), "join", true);
    }
  }
}

}  // namespace hdb::ra::test
