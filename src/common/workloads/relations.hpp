#pragma once
// The relational-algebra data model: a relation is a densely packed array of tuples, each a key of
// 32 or 64 bits followed by 32-bit value attributes, at most 8 words in all (generated relations
// carry 1..3 values; joins and products concatenate attributes). Tuples are stored row after row
// ("array of tuples"), as in the paper, so one tuple is `width()` consecutive words.
//
// A 64-bit key takes the first two words, high word first: comparing tuples word by word (set
// operations, sorting whole tuples) then orders 64-bit keys numerically with no special case, and
// key-based operators compare the first key_words() words.
#include <cstdint>
#include <memory>
#include <string>

#include "harness/options.hpp"
#include "workloads/keys.hpp"

namespace hdb::ra {

inline constexpr int kMaxWords = 8;   // the widest tuple (join/product output)
inline constexpr int kMaxValues = 7;  // a 32-bit key + 7 values
// Key width in 32-bit words: 1 (32-bit keys) or 2 (64-bit keys).
inline int key_words_of_bits(int bits) { return bits == 64 ? 2 : 1; }
// Values a tuple with this key width can carry (8 words in all).
inline int max_values(int key_words) { return kMaxWords - key_words; }
// A 64-bit key from its two words (high first), and back.
inline std::uint64_t key_at(const std::uint32_t* t, int key_words) {
  return key_words == 2 ? (std::uint64_t{t[0]} << 32) | t[1] : t[0];
}
inline void set_key(std::uint32_t* t, int key_words, std::uint64_t key) {
  if (key_words == 2) {
    t[0] = static_cast<std::uint32_t>(key >> 32);
    t[1] = static_cast<std::uint32_t>(key);
  } else {
    t[0] = static_cast<std::uint32_t>(key);
  }
}

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
  // `rows` tuples of key_words + values words in pageable memory, zero-filled.
  Relation(std::uint64_t rows, int values, int key_words = 1);
  // Tuples kept in `memory` (its capacity must hold rows * (key_words + values) words).
  Relation(std::shared_ptr<HostMemory> memory, std::uint64_t rows, int values, int key_words = 1);

  std::uint64_t rows() const { return rows_; }
  int values() const { return values_; }
  int key_words() const { return key_words_; }
  int key_bits() const { return 32 * key_words_; }
  int width() const { return key_words_ + values_; }
  std::uint64_t words() const { return rows_ * static_cast<std::uint64_t>(width()); }
  std::uint64_t bytes() const { return words() * 4; }
  std::uint64_t capacity_rows() const;
  Transfer memory_kind() const { return memory_ ? memory_->kind() : Transfer::Pageable; }

  std::uint32_t* data() { return memory_ ? memory_->words() : nullptr; }
  const std::uint32_t* data() const { return memory_ ? memory_->words() : nullptr; }
  std::uint32_t* tuple(std::uint64_t i) { return data() + i * static_cast<std::uint64_t>(width()); }
  const std::uint32_t* tuple(std::uint64_t i) const { return data() + i * static_cast<std::uint64_t>(width()); }
  std::uint64_t key(std::uint64_t i) const { return key_at(tuple(i), key_words_); }

  // Shrinks or grows within capacity (throws std::length_error beyond it).
  void set_rows(std::uint64_t rows);
  // Same shape and tuples, in fresh pageable memory.
  Relation clone() const;

 private:
  std::shared_ptr<HostMemory> memory_;
  std::uint64_t rows_ = 0;
  int values_ = 1;
  int key_words_ = 1;
};

// Throws std::invalid_argument unless key_words is 1 or 2 and values fits beside it.
void check_shape(int values, int key_words);

// True when every tuple equals, in order.
bool same_tuples(const Relation& a, const Relation& b);
// Sorts the tuples lexicographically (key, then values): the canonical order for comparing
// relations as multisets. Threads sort parts at once and merge them; the order is the same for any count.
void sort_tuples(Relation& r, int threads = 1);
// A copy of r in that order.
Relation tuple_sorted(const Relation& r, int threads = 1);
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
  int key_words = 1;                       // 2: each generated key k becomes the 64-bit wide_key(k)
};
// The 64-bit key standing for generated key k: injective and order-preserving, at least 2^32 for
// k >= 4096, and keys that share the high word differ in the low word — so an implementation that
// compares only one of the two words fails verification.
inline std::uint64_t wide_key(std::uint32_t k) {
  std::uint64_t h = (std::uint64_t{k} * 0x9E3779B97F4A7C15ull) >> 44;  // 20 bits of k's hash
  return (std::uint64_t{k} << 20) | h;
}
void fill_relation(Relation& out, const RelationSpec& spec, std::uint64_t seed, int threads);
Relation make_relation(const RelationSpec& spec, std::uint64_t seed, int threads);

}  // namespace hdb::ra
