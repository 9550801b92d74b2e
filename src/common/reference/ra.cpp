#include "reference/ra.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>

namespace hdb::ra::ref {

Relation project(const Relation& in, const std::vector<int>& columns) {
  check_project(in.values(), in.key_words(), columns);
  // Attribute by attribute (not through ProjectLayout, which the backends use), so the reference
  // checks the layout too.
  int key_words = columns[0] == 0 ? in.key_words() : 1, words = 0;
  for (int c : columns) words += c == 0 ? in.key_words() : 1;
  Relation out(in.rows(), words - key_words, key_words);
  for (std::uint64_t i = 0; i < in.rows(); ++i) {
    int o = 0;
    for (int c : columns) {
      if (c == 0)
        for (int w = 0; w < in.key_words(); ++w) out.tuple(i)[o++] = in.tuple(i)[w];
      else
        out.tuple(i)[o++] = in.tuple(i)[in.key_words() + c - 1];
    }
  }
  return out;
}

Relation select(const Relation& in, Predicate pred) {
  pred.key_words = in.key_words();
  check_predicate(in.values(), in.key_words(), pred);
  std::uint64_t n = 0;
  for (std::uint64_t i = 0; i < in.rows(); ++i) n += pred(in.tuple(i));
  Relation out(n, in.values(), in.key_words());
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
  Relation out(s.size(), in.values(), in.key_words());
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
      std::uint64_t x = in.tuple(i)[in.key_words() + v];
      acc = op == ReduceOp::Sum ? acc + x : op == ReduceOp::Min ? std::min(acc, x) : std::max(acc, x);
    }
    a.value[static_cast<std::size_t>(v)] = acc;
  }
  return a;
}

Relation reduce_by_key(const Relation& in, ReduceOp op) {
  std::vector<std::uint64_t> s = run_starts(in);
  Relation out(s.size(), in.values(), in.key_words());
  for (std::size_t r = 0; r < s.size(); ++r) {
    std::uint64_t end = r + 1 < s.size() ? s[r + 1] : in.rows();
    std::uint32_t* t = out.tuple(r);
    std::memcpy(t, in.tuple(s[r]), static_cast<std::size_t>(in.width()) * 4);
    for (std::uint64_t i = s[r] + 1; i < end; ++i)
      for (int v = in.key_words(); v < in.width(); ++v) t[v] = combine(op, t[v], in.tuple(i)[v]);
  }
  return out;
}

namespace {
// Calls group(i, i2, j, j2) for every key shared by l[i, i2) and r[j, j2) (both sorted by key).
template <class F>
void for_each_key_group(const Relation& l, const Relation& r, F&& group) {
  std::uint64_t i = 0, j = 0;
  while (i < l.rows() && j < r.rows()) {
    std::uint64_t kl = l.key(i), kr = r.key(j);
    if (kl < kr)
      ++i;
    else if (kr < kl)
      ++j;
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
  if (l.key_words() != r.key_words()) throw std::invalid_argument("join needs keys of one width");
  std::uint64_t n = 0;
  for_each_key_group(
      l, r, [&](std::uint64_t i, std::uint64_t i2, std::uint64_t j, std::uint64_t j2) { n += (i2 - i) * (j2 - j); });
  return n;
}

Relation join(const Relation& l, const Relation& r) {
  check_concat(l.key_words(), l.values(), r.values(), "join");
  Relation out(join_rows(l, r), l.values() + r.values(), l.key_words());
  std::uint64_t o = 0;
  for_each_key_group(l, r, [&](std::uint64_t i, std::uint64_t i2, std::uint64_t j, std::uint64_t j2) {
    for (std::uint64_t a = i; a < i2; ++a)
      for (std::uint64_t b = j; b < j2; ++b) {
        std::uint32_t* t = out.tuple(o++);
        std::memcpy(t, l.tuple(a), static_cast<std::size_t>(l.width()) * 4);
        std::memcpy(t + l.width(), r.tuple(b) + r.key_words(), static_cast<std::size_t>(r.values()) * 4);
      }
  });
  return out;
}

Relation set_op(const Relation& a, const Relation& b, SetOp op) {
  check_same_width(a.values(), a.key_words(), b.values(), b.key_words(), "set operation");
  const int w = a.width();
  const std::size_t tb = static_cast<std::size_t>(w) * 4;
  Relation out(op == SetOp::Union ? a.rows() + b.rows() : a.rows(), a.values(), a.key_words());
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
  check_concat(a.key_words(), a.values(), b.width(), "product");
  Relation out(a.rows() * b.rows(), a.values() + b.width(), a.key_words());
  for (std::uint64_t i = 0; i < a.rows(); ++i)
    for (std::uint64_t j = 0; j < b.rows(); ++j) {
      std::uint32_t* t = out.tuple(i * b.rows() + j);
      std::memcpy(t, a.tuple(i), static_cast<std::size_t>(a.width()) * 4);
      std::memcpy(t + a.width(), b.tuple(j), static_cast<std::size_t>(b.width()) * 4);
    }
  return out;
}

Relation arith(const Relation& a, const Relation& b, ArithOp op) {
  check_same_shape(a.rows(), a.values(), a.key_words(), b.rows(), b.values(), b.key_words(), "arithmetic");
  Relation out(a.rows(), a.values(), a.key_words());
  for (std::uint64_t i = 0; i < a.rows(); ++i) {
    set_key(out.tuple(i), a.key_words(), a.key(i));
    for (int v = a.key_words(); v < a.width(); ++v) {
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
  Relation out(in.rows(), in.values(), in.key_words());
  for (std::uint64_t i = 0; i < in.rows(); ++i)
    std::memcpy(out.tuple(i), in.tuple(order[i]), static_cast<std::size_t>(in.width()) * 4);
  return out;
}

}  // namespace hdb::ra::ref
