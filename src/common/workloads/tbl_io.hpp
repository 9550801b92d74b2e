#pragma once
// Reading (and writing) dbgen's pipe-separated .tbl files (TPC-H's dbgen and SSB's ssb-dbgen write the same
// format): one row per line, fields separated by '|', every row ending with '|'. Shared by the
// TPC-H and SSB loaders, so both apply the same rules (docs/tpch.md, "The loader's rules"):
//   - a file is read in chunks of 1 MiB, never whole; a line longer than 64 MiB is an error;
//   - lines end at '\n', a '\r' before it is dropped, blank lines are skipped, the last line needs
//     no '\n'; a UTF-8 byte order mark at the start is skipped, a UTF-16 one refused by name;
//   - a row with another number of fields, or without the trailing '|', is an error naming file
//     and line; a bad field is an error naming file, line, column number and column name, quoting
//     at most 80 bytes of the field (bytes other than printable ASCII as \xNN).
// Every error is a UsageError.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace hdb::tbl {

// A field as a message shows it: at most 80 bytes, bytes other than printable ASCII as \xNN, and
// the length when cut.
std::string quote_field(const char* s, const char* e);

// A non-negative decimal number "123", "12.3", "12.30": its value in hundredths, or why it is not one.
struct Decimal {
  enum Error { Ok, Empty, NotNumber, Negative, TooLarge, FinerThanHundredths } error = Ok;
  std::uint64_t hundredths = 0;
  int decimals = 0;  // fraction digits written (trailing zeros included)
};
Decimal parse_decimal(const char* s, const char* e);

// A whole number of at most 64 bits: the digits before an optional all-zero fraction ("12", "12.00").
// False when it exceeds 2^64 - 1.
bool whole_u64(const char* s, const char* e, std::uint64_t& out);

// Where a field sits, turned into a message only when the field is bad (the hot path stays free
// of string building).
class FieldError {
 public:
  FieldError(const std::string& path, std::uint64_t line, int field, const char* name, const char* s, const char* e)
      : path_(path), line_(line), field_(field), name_(name), s_(s), e_(e) {}
  // "<path>:<line>: column <n> (<name>) '<field>': <what>"
  [[noreturn]] void fail(const std::string& what) const;

 private:
  const std::string& path_;
  std::uint64_t line_;
  int field_;  // 0-based
  const char* name_;
  const char *s_, *e_;
};

// A non-negative whole number of at most 32 bits ("12" or "12.00"), or the field's error with the
// reason: is empty, is not a non-negative number, is negative, is not a whole number, does not fit
// 32 bits. `what_negative` ends the message for a negative value, `too_large` follows "does not fit
// 32 bits (at most 4294967295)".
std::uint32_t whole_u32(const char* s, const char* e, const FieldError& err,
                        const char* what_negative = "the loader keeps non-negative 32-bit numbers",
                        const char* too_large = "");

// The rows of one .tbl file of `fields` fields, read line by line through one buffer of 1 MiB
// (grown only for a longer line).
class TblRows {
 public:
  // `hint` follows "cannot open <path>" when the file cannot be opened.
  TblRows(std::string path, int fields, const std::string& hint);
  ~TblRows();
  TblRows(const TblRows&) = delete;
  TblRows& operator=(const TblRows&) = delete;
  // The next row (blank lines skipped); false at the end of the file. A row with another field
  // count or without the trailing '|' throws.
  bool next();
  // Field f (0-based) of the current row, without its '|'.
  const char* begin(int f) const { return starts_[static_cast<std::size_t>(f)]; }
  const char* end(int f) const { return starts_[static_cast<std::size_t>(f) + 1] - 1; }
  FieldError error(int f, const char* name) const { return {path_, line_, f, name, begin(f), end(f)}; }
  const std::string& path() const { return path_; }
  std::uint64_t line() const { return line_; }
  // For sizing columns: the file's size and the bytes of the rows returned so far.
  std::uint64_t file_size() const { return size_; }
  std::uint64_t consumed() const { return consumed_; }

 private:
  bool next_line(const char*& s, const char*& e);
  void fill();

  std::string path_;
  int fields_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::uint64_t size_ = 0, line_ = 0, consumed_ = 0;
  std::vector<const char*> starts_;
};

// Rows expected in a file after the first `sampled` rows took `consumed` bytes (+2 %, + 64): what a
// loader reserves so that its columns are not grown (and copied) many times. 0 when unknown.
std::uint64_t expected_rows(const TblRows& rows, std::uint64_t sampled);

// Appends with a growth of 1/4 (not 2x), so that a column never holds much more than it needs.
inline void append(std::vector<std::uint32_t>& v, std::uint32_t x) {
  if (v.size() == v.capacity()) v.reserve(v.capacity() + v.capacity() / 4 + 1024);
  v.push_back(x);
}

// A key that must be unique (a dimension table's key: TPC-H's c_custkey and o_orderkey, SSB's
// d_datekey, c_custkey, s_suppkey and p_partkey) held twice: the key and the two rows (0-based, in
// the file's order, the earlier first). A repeated key would give each backend one answer and SQL
// another (an identical row) or fail every backend's verification (different rows): both blame the
// plan for the data, so the loaders refuse it, naming table, key and both rows.
struct Duplicate {
  std::uint64_t key = 0, first = 0, second = 0;
};
// The first repeated key of the column lo (+ hi << 32 where hi is not empty: a 64-bit key column),
// by the order of the key; nullopt when every key is unique. Keys in increasing order (dbgen's) are
// checked in one pass; others through a sorted copy (4 bytes a row, 8 for a 64-bit column).
std::optional<Duplicate> find_duplicate(const std::vector<std::uint32_t>& lo,
                                        const std::vector<std::uint32_t>& hi = {});
// The error for a duplicate in a .tbl file of `fields` fields: "<path>: <column> <key> is on line
// <a> ('<row>') and on line <b> ('<row>'): the key of <table> must be unique" (lines 1-based, rows
// quoted at most 80 bytes).
[[noreturn]] void fail_duplicate(const std::string& path, int fields, const std::string& table,
                                 const std::string& column, const Duplicate& d);
// The same for tables handed over as columns, for ColumnDir::fail at the later row: "repeats the key
// of row <a> (<column> is the key of <table> and must be unique)" (rows 1-based).
std::string duplicate_what(const std::string& table, const std::string& column, const Duplicate& d);

// Where hdb-tpch-* and hdb-ssb-* take their tables from, one check for both: the generator at --sf,
// dbgen's .tbl files in --tbl-dir (each of `files` present), or --tables (a folder a loader can
// take: raw columns or Parquet files; converted by the run, never here, so --list converts nothing).
// One folder, not two; --sf (`sf_given`: set on the command line) only for the generator: tables read
// from files have the scale factor they were made at. Throws UsageError.
void check_table_source(const std::string& tbl_dir, const std::vector<std::string>& files,
                        const std::string& tables_dir, bool sf_given);

// Writes a .tbl file through a buffer of 1 MiB; UsageError naming the file when it cannot be
// written.
class TblWriter {
 public:
  explicit TblWriter(const std::string& path);
  void line(const std::string& s) {
    buf_ += s;
    if (buf_.size() >= (1u << 20)) flush();
  }
  void close();

 private:
  void flush();
  std::string path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_;
  std::string buf_;
};

}  // namespace hdb::tbl
