#include "model/ra.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace hdb::ra {

const char* to_string(ReduceOp op) {
  switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Min: return "min";
    case ReduceOp::Max: return "max";
  }
  return "?";
}
const char* to_string(ArithOp op) {
  switch (op) {
    case ArithOp::Add: return "add";
    case ArithOp::Subtract: return "subtract";
    case ArithOp::Multiply: return "multiply";
  }
  return "?";
}
const char* to_string(SetOp op) {
  switch (op) {
    case SetOp::Union: return "union";
    case SetOp::Intersection: return "intersection";
    case SetOp::Difference: return "difference";
  }
  return "?";
}

bool Aggregate::operator==(const Aggregate& o) const {
  if (values != o.values) return false;
  for (int v = 0; v < values; ++v)
    if (value[static_cast<std::size_t>(v)] != o.value[static_cast<std::size_t>(v)]) return false;
  return true;
}

const char* test_name(Op op) {
  switch (op) {
    case Op::Project: return "project";
    case Op::Select: return "select";
    case Op::Unique: return "unique";
    case Op::Reduce: return "reduce";
    case Op::ReduceByKey: return "reduce_by_key";
    case Op::Join: return "join";
    case Op::SetUnion: return "set_union";
    case Op::SetIntersection: return "set_intersection";
    case Op::SetDifference: return "set_difference";
    case Op::Product: return "product";
    case Op::Add: return "add";
    case Op::Subtract: return "subtract";
    case Op::Multiply: return "multiply";
    case Op::Sort: return "sort";
  }
  return "?";
}

std::vector<Op> all_ops() {
  return {Op::Project,         Op::Select,        Op::Unique,  Op::Reduce, Op::ReduceByKey, Op::Join,     Op::SetUnion,
          Op::SetIntersection, Op::SetDifference, Op::Product, Op::Add,    Op::Subtract,    Op::Multiply, Op::Sort};
}

std::vector<Op> paper_ops() {
  std::vector<Op> ops = all_ops();
  ops.erase(std::remove(ops.begin(), ops.end(), Op::Sort), ops.end());
  return ops;
}

std::vector<std::string> test_names(const std::vector<Op>& ops) {
  std::vector<std::string> t;
  for (Op op : ops) t.push_back(test_name(op));
  return t;
}

Relation RaBackend::host_relation(std::uint64_t rows, int values, Transfer, int key_words) {
  return Relation(rows, values, key_words);
}

void RaBackend::plan_scratch(const OpShape&, MemoryPlan&) const {}

OpShape op_shape(Op op, std::string variant, const Relation& a, const Relation* b, std::uint64_t out_rows,
                 int out_width) {
  OpShape s;
  s.op = op;
  s.variant = std::move(variant);
  s.key_words = a.key_words();
  s.rows_a = a.rows();
  s.width_a = a.width();
  s.rows_b = b ? b->rows() : 0;
  s.width_b = b ? b->width() : 0;
  s.out_rows = out_rows;
  s.out_width = out_width;
  return s;
}

bool offers(const RaBackend& backend, Op op, const std::string& variant) {
  const std::vector<std::string> vs = backend.variants(op);
  return std::find(vs.begin(), vs.end(), variant) != vs.end();
}

Op set_op_of(SetOp op) {
  return op == SetOp::Union ? Op::SetUnion : op == SetOp::Intersection ? Op::SetIntersection : Op::SetDifference;
}

Op arith_op_of(ArithOp op) {
  return op == ArithOp::Add ? Op::Add : op == ArithOp::Subtract ? Op::Subtract : Op::Multiply;
}

void RaBackend::begin_op(Op op, const std::string& variant) {
  const VariantInfo& v = variant_table().info(variant);  // throws for a name never registered
  if (std::find(v.tests.begin(), v.tests.end(), test_name(op)) == v.tests.end()) {
    std::string offered;
    for (const std::string& o : variants(op)) offered += (offered.empty() ? "" : ", ") + o;
    throw std::invalid_argument(std::string(test_name(op)) + " has no variant '" + variant +
                                "' on this backend (offered: " + (offered.empty() ? "none" : offered) + ")");
  }
  if (!v.unavailable.empty()) throw std::invalid_argument("variant '" + variant + "' cannot run: " + v.unavailable);
  ran_ = {};
}

void check_project(int values, int key_words, const std::vector<int>& columns) {
  if (columns.empty()) throw std::invalid_argument("project keeps at least one column");
  int words = 0;
  for (int c : columns) {
    if (c < 0 || c > values)
      throw std::invalid_argument("project column " + std::to_string(c) + " outside 0.." + std::to_string(values));
    words += c == 0 ? key_words : 1;
  }
  if (words > kMaxWords)
    throw std::invalid_argument("project output would have " + std::to_string(words) + " words, at most " +
                                std::to_string(kMaxWords));
}

ProjectLayout project_layout(int key_words, const std::vector<int>& columns) {
  ProjectLayout l;
  for (int c : columns) {
    if (c == 0)
      for (int w = 0; w < key_words; ++w) l.words.push_back(w);
    else
      l.words.push_back(key_words - 1 + c);
  }
  l.key_words = !columns.empty() && columns[0] == 0 ? key_words : 1;
  return l;
}

void check_layout(int in_width, const ProjectLayout& layout) {
  const int n = static_cast<int>(layout.words.size());
  if (n < 1 || n > kMaxWords) throw std::invalid_argument("project keeps 1.." + std::to_string(kMaxWords) + " words");
  if (layout.key_words < 1 || layout.key_words > 2 || layout.key_words > n)
    throw std::invalid_argument("project's key is 1 or 2 of its words");
  for (int w : layout.words)
    if (w < 0 || w >= in_width)
      throw std::invalid_argument("project word " + std::to_string(w) + " outside 0.." + std::to_string(in_width - 1));
}

void check_predicate(int values, int key_words, const Predicate& pred) {
  if (pred.attribute < 0 || pred.attribute > values)
    throw std::invalid_argument("select attribute " + std::to_string(pred.attribute) + " outside 0.." +
                                std::to_string(values));
  if (pred.value_words != 1 && pred.value_words != 2) throw std::invalid_argument("a value is 1 or 2 words");
  if (pred.attribute > 0 && pred.value_words == 2 && pred.attribute + 1 > values)
    throw std::invalid_argument("select's 64-bit value at attribute " + std::to_string(pred.attribute) +
                                " needs the next attribute too");
  if (pred.key_words != key_words) throw std::invalid_argument("select predicate made for another key width");
}

void check_same_shape(std::uint64_t rows_a, int values_a, int key_words_a, std::uint64_t rows_b, int values_b,
                      int key_words_b, const char* what) {
  if (rows_a != rows_b) throw std::invalid_argument(std::string(what) + " needs inputs of equal length");
  check_same_width(values_a, key_words_a, values_b, key_words_b, what);
}

void check_same_width(int values_a, int key_words_a, int values_b, int key_words_b, const char* what) {
  if (key_words_a != key_words_b) throw std::invalid_argument(std::string(what) + " needs keys of one width");
  if (values_a != values_b) throw std::invalid_argument(std::string(what) + " needs inputs of equal width");
}

void check_concat(int key_words, int values_a, int words_b, const char* what) {
  if (key_words + values_a + words_b > kMaxWords)
    throw std::invalid_argument(std::string(what) + " output would have " +
                                std::to_string(key_words + values_a + words_b) + " words, at most " +
                                std::to_string(kMaxWords));
}

}  // namespace hdb::ra
