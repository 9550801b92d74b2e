#pragma once
// The relational-algebra data model: a relation is a densely packed array of tuples, each a 32-bit
// key followed by 0..7 32-bit value attributes (generated relations carry 1..3 values; joins and
// products concatenate attributes). Tuples are stored row after row ("array of tuples"), as in the
// paper, so one tuple is `width()` consecutive words.
#include <cstdint>
#include <memory>
#include <string>

#include "harness/options.hpp"
#include "workloads/keys.hpp"

namespace hdb::ra {

inline constexpr int kMaxValues = 7;  // key + 7 values = 8 words, the widest join/product output

// Host memory that holds tuples: plain (pageable) or pinned by a device runtime. Backends that
// pin memory subclass it; the base class owns ordinary heap memory.
class HostMemory {
 public:
  explicit HostMemory(std::uint64_t words);
  virtual ~HostMemory();
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  std::uint32_t* words() const { return words_; }
  std::uint64_t capacity_words() const { return capacity_; }
  virtual Transfer kind() const { return Transfer::Pageable; }

 protected:
  HostMemory() = default;
  std::uint32_t* words_ = nullptr;
  std::uint64_t capacity_ = 0;
};

// A relation in host memory. Copies share the memory (cheap handles); clone() copies the tuples.
class Relation {
 public:
  Relation() = default;
  // `rows` tuples of 1 + values words in pageable memory, zero-filled.
  Relation(std::uint64_t rows, int values);
  // Tuples kept in `memory` (its capacity must hold rows * (1 + values) words).
  Relation(std::shared_ptr<HostMemory> memory, std::uint64_t rows, int values);

  std::uint64_t rows() const { return rows_; }
  int values() const { return values_; }
  int width() const { return 1 + values_; }
  std::uint64_t words() const { return rows_ * static_cast<std::uint64_t>(width()); }
  std::uint64_t bytes() const { return words() * 4; }
  std::uint64_t capacity_rows() const;
  Transfer memory_kind() const { return memory_ ? memory_->kind() : Transfer::Pageable; }

  std::uint32_t* data() { return memory_ ? memory_->words() : nullptr; }
  const std::uint32_t* data() const { return memory_ ? memory_->words() : nullptr; }
  std::uint32_t* tuple(std::uint64_t i) { return data() + i * static_cast<std::uint64_t>(width()); }
  const std::uint32_t* tuple(std::uint64_t i) const { return data() + i * static_cast<std::uint64_t>(width()); }
  std::uint32_t key(std::uint64_t i) const { return tuple(i)[0]; }

  // Shrinks or grows within capacity (throws std::length_error beyond it).
  void set_rows(std::uint64_t rows);
  // Same shape and tuples, in fresh pageable memory.
  Relation clone() const;

 private:
  std::shared_ptr<HostMemory> memory_;
  std::uint64_t rows_ = 0;
  int values_ = 1;
};

// True when every tuple equals, in order.
bool same_tuples(const Relation& a, const Relation& b);
// Sorts the tuples lexicographically (key, then values): the canonical order for comparing
// relations as multisets.
void sort_tuples(Relation& r, int threads = 1);
// Lexicographic tuple order; returns <0, 0, >0.
int compare_tuples(const std::uint32_t* a, const std::uint32_t* b, int width);
// A short text naming the first difference between two relations compared in order ("" if equal).
std::string first_difference(const Relation& got, const Relation& want);

// How a relation is generated: keys from a KeySpec (uniform or Zipf over `distinct` values), values
// from a counter-based stream (never all zero), optionally sorted by key then values (the order
// join, set operations, unique and reduce-by-key expect).
struct RelationSpec {
  std::uint64_t rows = 0;
  int values = 1;
  KeySpec keys;
  bool sorted = true;
  std::uint32_t value_mask = 0xffffffffu;  // small masks make whole tuples repeat (set operations)
};
void fill_relation(Relation& out, const RelationSpec& spec, std::uint64_t seed, int threads);
Relation make_relation(const RelationSpec& spec, std::uint64_t seed, int threads);

}  // namespace hdb::ra
