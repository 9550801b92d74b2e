#pragma once
// The CPU backend's library variants: the same operations written with oneTBB (`tbb`) and the
// C++17 parallel algorithms of libstdc++ on oneTBB (`pstl`), so the hand-written `parallel`
// variant is measured against what a user would get from a well-kept library on the same data.
// Present only when the build found oneTBB (HDB_HAVE_TBB); tuples of 2..5 words (a 32- or 64-bit
// key and 1..3 values, every width the benchmark generates). key_words: the key's words (1 or 2).
#include <cstdint>
#include <string>
#include <vector>

#include "model/ra.hpp"

namespace hdb::ra::cpu::library {

enum class Library { Tbb, Pstl };

// Whether this build has the library variants.
bool available();
// The operations a library variant implements (whether or not this build has it).
std::vector<Op> ops(Library lib);

// Stable sort by key. tbb: tbb::parallel_sort (not stable) of (key, row) pairs packed into one
// 64-bit word (32-bit keys) or 128 bits (64-bit keys), then a gather, which makes it stable; pstl:
// std::stable_sort(std::execution::par) of the tuples.
void sort(Library lib, const std::uint32_t* in, std::uint64_t rows, int width, int key_words, std::uint32_t* out,
          std::vector<std::uint64_t>& scratch, int threads);
// tbb::parallel_reduce (tbb) or std::transform_reduce(par) (pstl) of the value attributes.
Aggregate reduce(Library lib, const std::uint32_t* in, std::uint64_t rows, int width, int key_words, ReduceOp op,
                 int threads);
// std::copy_if(par): the tuples the predicate keeps; returns their count.
std::uint64_t select(const std::uint32_t* in, std::uint64_t rows, int width, const Predicate& pred, std::uint32_t* out,
                     int threads);
// std::unique_copy(par) with keys compared: the first tuple of each key; returns the count.
std::uint64_t unique(const std::uint32_t* in, std::uint64_t rows, int width, int key_words, std::uint32_t* out,
                     int threads);
// std::set_union / set_intersection / set_difference(par) on whole tuples; returns the count.
std::uint64_t set_op(SetOp op, const std::uint32_t* a, std::uint64_t na, const std::uint32_t* b, std::uint64_t nb,
                     int width, std::uint32_t* out, int threads);
// std::transform(par): keys of x, values x op y.
void arith(ArithOp op, const std::uint32_t* x, const std::uint32_t* y, std::uint64_t rows, int width, int key_words,
           std::uint32_t* z, int threads);

}  // namespace hdb::ra::cpu::library
