#pragma once
// A writer of NumPy .npy files (format version 1.0) holding 32-bit unsigned integers, little-endian:
// numpy.load() maps them without any conversion. Used by hdb-export to hand the suite's inputs and
// reference answers to the peers (docs/peers.md) without a text round trip.
#include <cstdint>
#include <functional>
#include <vector>
#include <string>

namespace hdb::tools {

// Writes a (columns, rows) array of '<u4' in C order: row c of the array is column c of the data,
// so every column is one contiguous run of words. value(c, r) gives column c's word at row r.
// Throws std::runtime_error naming the file when it cannot be written.
void write_npy_columns(
    const std::string& path, std::uint64_t columns, std::uint64_t rows,
    const std::function<const std::uint32_t*(std::uint64_t column, std::vector<std::uint32_t>& scratch)>& column);

}  // namespace hdb::tools
