#pragma once
// Backend conformance: every primitive of a RaBackend variant against the serial reference, on
// random inputs and the edge cases (empty, one tuple, all keys equal, keys at the 32- or 64-bit
// maximum, 64-bit keys sharing their high word,
// nothing / everything selected, sizes around the work-group size, joins with no match and
// many-to-many matches; sort on shuffled copies). Shared by the cpu, opencl and cuda test executables.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/ra.hpp"

namespace hdb::ra::test {

// Named input relations covering the edge cases, sorted by whole tuple (as join, unique and set
// operations require); `values` value attributes each, keys of key_words words.
struct Input {
  std::string name;
  Relation rel;
};
std::vector<Input> edge_inputs(int values, int key_words = 1);

// Runs every operator that offers `variant` on every input (and pairs of inputs) and compares with the
// reference; reports each difference as a gtest failure naming the operator and the inputs. An
// operator the backend does not offer in `variant` (not in its variants()) is skipped, not failed.
void check_backend(RaBackend& backend, const std::string& variant, int key_words = 1);

// Output handles are reused across calls with larger and smaller results (the warm-up contract).
void check_output_reuse(RaBackend& backend, const std::string& variant);

// Sorted relation of `rows` tuples: keys in [0, distinct) except that `heavy_share` of the rows
// carry key `heavy` (a skewed key with most rows), values masked by value_mask.
Relation skewed(std::uint64_t rows, int values, std::uint64_t distinct, double heavy_share, std::uint32_t heavy,
                std::uint32_t value_mask, std::uint64_t seed);

// An any-order variant (a hash variant) on `rows`-row inputs shuffled out of any sorted order, large
// enough for many partitions or a large table: one heavy key, few distinct tuples, all equal (the
// key 0xffffffff). Unique, reduce-by-key, set operations (a with itself) and join (where its output
// stays below 20 x rows) against the reference on sorted copies, compared as multisets.
void check_shuffled_large(RaBackend& backend, const std::string& variant, std::uint64_t rows = 300000);

}  // namespace hdb::ra::test
