#include "reference/ra.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace hdb::ra::ref {

Relation project(const Relation& in, const std::vector<int>& columns) {
  check_project(in.values(), columns);
  Relation out(in.rows(), static_cast<int>(columns.size()) - 1);
  for (std::uint64_t i = 0; i < in.rows(); ++i)
    for (std::size_t c = 0; c < columns.size(); ++c) out.tuple(i)[c] = in.tuple(i)[columns[c]];
  return out;
}

Relation select(const Relation& in, const Predicate& pred) {
  check_predicate(in.values(), pred);
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < in.rows(); ++i) n += pred(in.tuple(i));
  Relation out(n, in.values());
  std::uint64_t o = 0;
  for (std::uint64_t i = 0; i < in.rows(); ++i)
    if (pred(in.tuple(i))) std::memcpy(out.tuple(o++), in.tuple(i), static_cast<std::size_t>(in.width()) * 4);
  return out;
}

namespace {
// Starts of runs of consecutive equal keys.
std::vector<std::uint64_t> run_starts(const Relation& in) {
  std::vector<std::uint64_t> s;
  for (std::uint64_t i = 0; i < in.rows(); ++i)
    if (i == 0 || in.key(i) != in.key(i - 1)) s.push_back(i);
  return s;
}

std::uint32_t combine(ReduceOp op, std::uint32_t a, std::uint32_t b) {
  switch (op) {
    case ReduceOp::Sum: return a + b;
    case ReduceOp::Min: return std::min(a, b);
    case ReduceOp::Max: return std::max(a, b);
  }
  return 0;
}
}  // namespace

Relation unique(const Relation& in) {
  std::vector<std::uint64_t> s = run_starts(in);
  Relation out(s.size(), in.values());
  for (std::size_t i = 0; i < s.size(); ++i)
    std::memcpy(out.tuple(i), in.tuple(s[i]), static_cast<std::size_t>(in.width()) * 4);
  return out;
}

Aggregate reduce(const Relation& in, ReduceOp op) {
  Aggregate a;
  a.values = in.values();
  for (int v = 0; v < in.values(); ++v) {
    std::uint64_t acc = op == ReduceOp::Min ? 0xffffffffull : 0;
    for (std::uint64_t i = 0; i < in.rows(); ++i) {
      std::uint64_t x = in.tuple(i)[1 + v];
      acc = op == ReduceOp::Sum ? acc + x : op == ReduceOp::Min ? std::min(acc, x) : std::max(acc, x);
    }
    a.value[static_cast<std::size_t>(v)] = acc;
  }
  return a;
}

Relation reduce_by_key(const Relation& in, ReduceOp op) {
  std::vector<std::uint64_t> s = run_starts(in);
  Relation out(s.size(), in.values());
  for (std::size_t r = 0; r < s.size(); ++r) {
    std::uint64_t end = r + 1 < s.size() ? s[r + 1] : in.rows();
    std::uint32_t* t = out.tuple(r);
    std::memcpy(t, in.tuple(s[r]), static_cast<std::size_t>(in.width()) * 4);
    for (std::uint64_t i = s[r] + 1; i < end; ++i)
      for (int v = 1; v < in.width(); ++v) t[v] = combine(op, t[v], in.tuple(i)[v]);
  }
  return out;
}

namespace {
// Calls group(i, i2, j, j2) for every key shared by l[i, i2) and r[j, j2) (both sorted by key).
template <class F>
void for_each_key_group(const Relation& l, const Relation& r, F&& group) {
  std::uint64_t i = 0, j = 0;
  while (i < l.rows() && j < r.rows()) {
    std::uint32_t kl = l.key(i), kr = r.key(j);
    if (kl < kr) ++i;
    else if (kr < kl) ++j;
    else {
      std::uint64_t i2 = i, j2 = j;
      while (i2 < l.rows() && l.key(i2) == kl) ++i2;
      while (j2 < r.rows() && r.key(j2) == kl) ++j2;
      group(i, i2, j, j2);
      i = i2;
      j = j2;
    }
  }
}
}  // namespace

std::uint64_t join_rows(const Relation& l, const Relation& r) {
  std::uint64_t n = 0;
  for_each_key_group(l, r, [&](std::uint64_t i, std::uint64_t i2, std::uint64_t j, std::uint64_t j2) { n += (i2 - i) * (j2 - j); });
  return n;
}

Relation join(const Relation& l, const Relation& r) {
  check_concat(l.values(), r.values(), "join");
  Relation out(join_rows(l, r), l.values() + r.values());
  std::uint64_t o = 0;
  for_each_key_group(l, r, [&](std::uint64_t i, std::uint64_t i2, std::uint64_t j, std::uint64_t j2) {
    for (std::uint64_t a = i; a < i2; ++a)
      for (std::uint64_t b = j; b < j2; ++b) {
        std::uint32_t* t = out.tuple(o++);
        std::memcpy(t, l.tuple(a), static_cast<std::size_t>(l.width()) * 4);
        std::memcpy(t + l.width(), r.tuple(b) + 1, static_cast<std::size_t>(r.values()) * 4);
      }
  });
  return out;
}

Relation set_op(const Relation& a, const Relation& b, SetOp op) {
  check_same_width(a.values(), b.values(), "set operation");
  const int w = a.width();
  const std::size_t tb = static_cast<std::size_t>(w) * 4;
  Relation out(op == SetOp::Union ? a.rows() + b.rows() : a.rows(), a.values());
  std::uint64_t i = 0, j = 0, o = 0;
  auto emit = [&](const std::uint32_t* t) { std::memcpy(out.tuple(o++), t, tb); };
  // The merge loops of std::set_union / set_intersection / set_difference on whole tuples.
  while (i < a.rows() && j < b.rows()) {
    int c = compare_tuples(a.tuple(i), b.tuple(j), w);
    if (c < 0) {
      if (op != SetOp::Intersection) emit(a.tuple(i));
      ++i;
    } else if (c > 0) {
      if (op == SetOp::Union) emit(b.tuple(j));
      ++j;
    } else {
      if (op != SetOp::Difference) emit(a.tuple(i));
      ++i;
      ++j;
    }
  }
  if (op != SetOp::Intersection)
    for (; i < a.rows(); ++i) emit(a.tuple(i));
  if (op == SetOp::Union)
    for (; j < b.rows(); ++j) emit(b.tuple(j));
  out.set_rows(o);
  return out;
}

Relation product(const Relation& a, const Relation& b) {
  check_concat(a.values(), b.width(), "product");
  Relation out(a.rows() * b.rows(), a.values() + b.width());
  for (std::uint64_t i = 0; i < a.rows(); ++i)
    for (std::uint64_t j = 0; j < b.rows(); ++j) {
      std::uint32_t* t = out.tuple(i * b.rows() + j);
      std::memcpy(t, a.tuple(i), static_cast<std::size_t>(a.width()) * 4);
      std::memcpy(t + a.width(), b.tuple(j), static_cast<std::size_t>(b.width()) * 4);
    }
  return out;
}

Relation arith(const Relation& a, const Relation& b, ArithOp op) {
  check_same_shape(a.rows(), a.values(), b.rows(), b.values(), "arithmetic");
  Relation out(a.rows(), a.values());
  for (std::uint64_t i = 0; i < a.rows(); ++i) {
    out.tuple(i)[0] = a.key(i);
    for (int v = 1; v < a.width(); ++v) {
      std::uint32_t x = a.tuple(i)[v], y = b.tuple(i)[v];
      out.tuple(i)[v] = op == ArithOp::Add ? x + y : op == ArithOp::Subtract ? x - y : x * y;
    }
  }
  return out;
}

Relation sort(const Relation& in) {
  std::vector<std::uint64_t> order(in.rows());
  std::iota(order.begin(), order.end(), std::uint64_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::uint64_t x, std::uint64_t y) { return in.key(x) < in.key(y); });
  Relation out(in.rows(), in.values());
  for (std::uint64_t i = 0; i < in.rows(); ++i)
    std::memcpy(out.tuple(i), in.tuple(order[i]), static_cast<std::size_t>(in.width()) * 4);
  return out;
}

}  // namespace hdb::ra::ref
