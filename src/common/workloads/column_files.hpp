#pragma once
// Tables handed over as raw binary columns (`--tables DIR` of hdb-tpch-* and hdb-ssb-*): DIR holds
// `columns.json` (format hdb-columns/1, written by scripts/hdb/parquet_tables.py from Parquet files
// through DuckDB) and per column a file of little-endian signed 64-bit numbers (`.i64`: keys, whole
// numbers, hundredths, days or yyyymmdd, as the converter's kind says) or, for strings, the bytes
// (`.str`) and rows + 1 offsets into them (`.off`, unsigned 64-bit). No text is parsed: the loaders
// (tpch_load.cpp, ssb_load.cpp) apply the .tbl loader's rules to the values (32 bits, keys, dates,
// dictionaries), every error naming table, column and row. Every error is a UsageError (exit 2).
#include <cstdint>
#include <string>
#include <vector>

namespace hdb::columns {

constexpr const char* kManifest = "columns.json";

// Whether DIR holds a converter's manifest.
bool has_manifest(const std::string& dir);
// The usage error for `--tables DIR` before the converter is asked: "" for a folder; whether it holds
// columns or Parquet tables the converter decides (column_dir_for).
std::string tables_dir_problem(const std::string& dir);
// The folder of columns `--tables DIR` loads, as the project's converter decides it (scripts/hdb/python
// -m hdb.parquet_tables cache BENCHMARK DIR; no C++ Parquet reader is packaged for this suite's
// machines, and one function there decides which files are a table, for the conversion and for its
// fingerprint alike): DIR itself where it holds a manifest (checked against the fingerprint it
// records where Parquet tables lie beside it); for a folder of Parquet tables, a cache folder under
// $TMPDIR named after DIR, the fingerprint of exactly the files the converter reads (path, size,
// modification time) and the converter itself, converted once and reused while they are unchanged.
// Where the project's Python is not there, a folder with a manifest is loaded as it is. A UsageError
// (exit 2) with the converter's message where it refuses the files or the setting (TMPDIR); a
// runtime_error (exit 1) naming how it ended where it failed otherwise (killed by a signal, ...).
std::string column_dir_for(const std::string& benchmark, const std::string& dir);

class ColumnDir {
 public:
  // Reads DIR/columns.json; a manifest of another format or benchmark is an error.
  ColumnDir(std::string dir, const std::string& benchmark);
  std::uint64_t rows(const std::string& table) const;
  // A column of numbers (type i64), every value checked non-negative.
  std::vector<std::uint64_t> numbers(const std::string& table, const std::string& column) const;
  // A column of strings (type str).
  std::vector<std::string> strings(const std::string& table, const std::string& column) const;
  // "DIR: table T column C row R (value V): what" as a UsageError (row 1-based, in the files' order).
  [[noreturn]] void fail(const std::string& table, const std::string& column, std::uint64_t row,
                         const std::string& value, const std::string& what) const;
  const std::string& dir() const { return dir_; }

 private:
  struct Col {
    std::string type, file, offsets;
  };
  const Col& col(const std::string& table, const std::string& column, const char* type) const;
  std::vector<std::uint64_t> read_u64(const std::string& file, std::uint64_t count, const std::string& what) const;

  std::string dir_;
  struct Table {
    std::string name;
    std::uint64_t rows = 0;
    std::vector<std::pair<std::string, Col>> cols;
  };
  std::vector<Table> tables_;
};

}  // namespace hdb::columns
