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

}  // namespace hdb::ra::test
