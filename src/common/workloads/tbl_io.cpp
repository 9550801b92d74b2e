#include "workloads/tbl_io.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <limits>

#include "harness/errors.hpp"
#include "workloads/column_files.hpp"

namespace hdb::tbl {
namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;
// A line longer than this is no .tbl row (dbgen's longest are about 300 bytes): an error, so that a
// file without line breaks cannot take unbounded memory.
constexpr std::size_t kMaxLine = std::size_t{64} << 20;
// At most this many bytes of a field are quoted in a message.
constexpr std::size_t kShownBytes = 80;

}  // namespace

std::string quote_field(const char* s, const char* e) {
  std::string out;
  const auto n = static_cast<std::size_t>(e - s);
  for (std::size_t i = 0; i < n && i < kShownBytes; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", c);
      out += hex;
    }
  }
  if (n > kShownBytes) out += "... (" + std::to_string(n) + " bytes)";
  return out;
}

Decimal parse_decimal(const char* s, const char* e) {
  Decimal d;
  if (s == e) {
    d.error = Decimal::Empty;
    return d;
  }
  bool negative = *s == '-';
  const char* p = negative ? s + 1 : s;
  const char* digits = p;
  std::uint64_t whole = 0;
  bool big = false;
  for (; p < e && *p >= '0' && *p <= '9'; ++p) {
    whole = whole * 10 + static_cast<std::uint64_t>(*p - '0');
    if (whole > std::numeric_limits<std::uint32_t>::max()) {
      big = true;
      whole = std::numeric_limits<std::uint32_t>::max() + std::uint64_t{1};  // keep it bounded
    }
  }
  if (p == digits) {
    d.error = Decimal::NotNumber;
    return d;
  }
  std::uint64_t frac = 0;
  bool finer = false;
  if (p < e && *p == '.') {
    ++p;
    const char* f = p;
    for (; p < e && *p >= '0' && *p <= '9'; ++p, ++d.decimals) {
      if (d.decimals < 2)
        frac = frac * 10 + static_cast<std::uint64_t>(*p - '0');
      else if (*p != '0')
        finer = true;
    }
    if (p == f) {
      d.error = Decimal::NotNumber;
      return d;
    }
    if (d.decimals == 1) frac *= 10;
  }
  if (p != e)
    d.error = Decimal::NotNumber;
  else if (negative)
    d.error = Decimal::Negative;
  else if (finer)
    d.error = Decimal::FinerThanHundredths;
  else if (big)
    d.error = Decimal::TooLarge;
  d.hundredths = whole * 100 + frac;
  return d;
}

bool whole_u64(const char* s, const char* e, std::uint64_t& out) {
  std::uint64_t x = 0;
  for (const char* p = s; p < e && *p >= '0' && *p <= '9'; ++p) {
    const auto d = static_cast<std::uint64_t>(*p - '0');
    if (x > (std::numeric_limits<std::uint64_t>::max() - d) / 10) return false;
    x = x * 10 + d;
  }
  out = x;
  return true;
}

void FieldError::fail(const std::string& what) const {
  throw UsageError(path_ + ":" + std::to_string(line_) + ": column " + std::to_string(field_ + 1) + " (" + name_ +
                   ") '" + quote_field(s_, e_) + "': " + what);
}

std::uint32_t whole_u32(const char* s, const char* e, const FieldError& err, const char* what_negative,
                        const char* too_large) {
  const std::string big = std::string("does not fit 32 bits (at most 4294967295)") + too_large;
  Decimal d = parse_decimal(s, e);
  switch (d.error) {
    case Decimal::Ok: break;
    case Decimal::Empty: err.fail("is empty, expected a non-negative number");
    case Decimal::NotNumber: err.fail("is not a non-negative number");
    case Decimal::Negative: err.fail(std::string("is negative: ") + what_negative);
    case Decimal::FinerThanHundredths: err.fail("is not a whole number");
    case Decimal::TooLarge: err.fail(big);
  }
  if (d.hundredths % 100) err.fail("is not a whole number");
  if (d.hundredths / 100 > std::numeric_limits<std::uint32_t>::max()) err.fail(big);
  return static_cast<std::uint32_t>(d.hundredths / 100);
}

TblRows::TblRows(std::string path, int fields, const std::string& hint)
    : path_(std::move(path)),
      fields_(fields),
      f_(std::fopen(path_.c_str(), "rb"), &std::fclose),
      starts_(static_cast<std::size_t>(fields) + 1) {
  if (!f_) throw UsageError("cannot open " + path_ + (hint.empty() ? "" : " " + hint));
  struct stat st {};
  if (fstat(fileno(f_.get()), &st) == 0 && S_ISREG(st.st_mode)) size_ = static_cast<std::uint64_t>(st.st_size);
  buf_.resize(kChunk);
  fill();
  // A UTF-8 byte order mark (an editor's, never dbgen's) is skipped; UTF-16 is refused by name.
  if (end_ >= 3 && std::memcmp(buf_.data(), "\xEF\xBB\xBF", 3) == 0) {
    begin_ = 3;
    consumed_ = 3;
  } else if (end_ >= 2 &&
             (std::memcmp(buf_.data(), "\xFF\xFE", 2) == 0 || std::memcmp(buf_.data(), "\xFE\xFF", 2) == 0)) {
    throw UsageError(path_ + ": starts with a UTF-16 byte order mark: .tbl files are ASCII (dbgen's format)");
  }
}

TblRows::~TblRows() = default;

bool TblRows::next() {
  const char *p, *eol;
  while (next_line(p, eol)) {
    ++line_;
    const char* le = eol;
    if (le > p && le[-1] == '\r') --le;
    if (le == p) continue;  // blank lines (a final newline) carry no row
    // Split on '|': dbgen ends every row with '|', so fields == separators.
    int n = 0;
    starts_[0] = p;
    for (const char* q = p; q < le; ++q) {
      if (*q != '|') continue;
      ++n;
      if (n > fields_) break;
      starts_[static_cast<std::size_t>(n)] = q + 1;
    }
    bool trailing = le[-1] == '|';
    if (n != fields_ || !trailing)
      throw UsageError(path_ + ":" + std::to_string(line_) + ": expected " + std::to_string(fields_) +
                       " '|'-terminated columns, found " +
                       (trailing ? std::to_string(n) : "a row without the trailing '|'") +
                       (n > fields_ ? " or more" : ""));
    return true;
  }
  return false;
}

bool TblRows::next_line(const char*& s, const char*& e) {
  for (;;) {
    const char* b = buf_.data() + begin_;
    const char* nl = static_cast<const char*>(std::memchr(b, '\n', end_ - begin_));
    if (nl) {
      s = b;
      e = nl;
      begin_ = static_cast<std::size_t>(nl - buf_.data()) + 1;
      consumed_ += static_cast<std::uint64_t>(e - s) + 1;
      return true;
    }
    if (eof_) {
      if (begin_ == end_) return false;
      s = b;
      e = buf_.data() + end_;
      begin_ = end_;
      consumed_ += static_cast<std::uint64_t>(e - s);
      return true;
    }
    // Keep the partial line, then read more behind it.
    std::memmove(buf_.data(), b, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (end_ == buf_.size()) {
      if (buf_.size() >= kMaxLine)
        throw UsageError(path_ + ":" + std::to_string(line_ + 1) + ": a line longer than " +
                         std::to_string(kMaxLine >> 20) + " MiB is no .tbl row");
      buf_.resize(std::min(kMaxLine, buf_.size() * 2));
    }
    fill();
  }
}

void TblRows::fill() {
  while (end_ < buf_.size() && !eof_) {
    std::size_t got = std::fread(buf_.data() + end_, 1, buf_.size() - end_, f_.get());
    end_ += got;
    if (got == 0) {
      if (std::ferror(f_.get())) throw UsageError("reading " + path_ + " failed");
      eof_ = true;
    }
  }
}

std::uint64_t expected_rows(const TblRows& rows, std::uint64_t sampled) {
  if (sampled == 0 || rows.file_size() <= rows.consumed()) return 0;
  std::uint64_t n = rows.file_size() / std::max<std::uint64_t>(1, rows.consumed() / sampled);
  return n + n / 50 + 64;
}

TblWriter::TblWriter(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb"), &std::fclose) {
  if (!f_) throw UsageError("cannot write " + path);
}

void TblWriter::close() {
  flush();
  if (std::fflush(f_.get()) != 0) throw UsageError("writing " + path_ + " failed");
}

void TblWriter::flush() {
  if (!buf_.empty() && std::fwrite(buf_.data(), 1, buf_.size(), f_.get()) != buf_.size())
    throw UsageError("writing " + path_ + " failed");
  buf_.clear();
}

std::optional<Duplicate> find_duplicate(const std::vector<std::uint32_t>& lo, const std::vector<std::uint32_t>& hi) {
  const std::size_t n = lo.size();
  auto key = [&](std::size_t i) { return std::uint64_t{lo[i]} | (hi.empty() ? 0 : std::uint64_t{hi[i]} << 32); };
  bool increasing = true;
  for (std::size_t i = 1; i < n && increasing; ++i) increasing = key(i - 1) < key(i);
  if (increasing) return std::nullopt;
  // A sorted copy of the keys: 4 bytes a row for a 32-bit column, 8 for a 64-bit one.
  auto repeated = [](auto sorted) -> std::optional<std::uint64_t> {
    std::sort(sorted.begin(), sorted.end());
    const auto twice = std::adjacent_find(sorted.begin(), sorted.end());
    if (twice == sorted.end()) return std::nullopt;
    return std::uint64_t{*twice};
  };
  std::optional<std::uint64_t> k;
  if (hi.empty()) {
    k = repeated(lo);
  } else {
    std::vector<std::uint64_t> wide(n);
    for (std::size_t i = 0; i < n; ++i) wide[i] = key(i);
    k = repeated(std::move(wide));
  }
  if (!k) return std::nullopt;
  Duplicate d;
  d.key = *k;
  bool seen = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (key(i) != d.key) continue;
    if (seen) {
      d.second = i;
      break;
    }
    d.first = i;
    seen = true;
  }
  return d;
}

void fail_duplicate(const std::string& path, int fields, const std::string& table, const std::string& column,
                    const Duplicate& d) {
  // Read again, only for the message: the lines of the two rows and their text.
  std::uint64_t line[2] = {0, 0};
  std::string text[2];
  TblRows in(path, fields, "");
  for (std::uint64_t row = 0; row <= d.second && in.next(); ++row) {
    const int k = row == d.first ? 0 : row == d.second ? 1 : -1;
    if (k < 0) continue;
    line[k] = in.line();
    text[k] = quote_field(in.begin(0), in.end(fields - 1) + 1);
  }
  throw UsageError(path + ": " + column + " " + std::to_string(d.key) + " is on line " + std::to_string(line[0]) +
                   " ('" + text[0] + "') and on line " + std::to_string(line[1]) + " ('" + text[1] + "'): " + column +
                   " is the key of " + table + " and must be unique");
}

std::string duplicate_what(const std::string& table, const std::string& column, const Duplicate& d) {
  return "repeats the key of row " + std::to_string(d.first + 1) + " (" + column + " is the key of " + table +
         " and must be unique)";
}

void check_table_source(const std::string& tbl_dir, const std::vector<std::string>& files,
                        const std::string& tables_dir, bool sf_given) {
  if (!tbl_dir.empty() && !tables_dir.empty()) throw UsageError("--tbl-dir and --tables: give one of them");
  if (!tbl_dir.empty())
    for (const std::string& f : files)
      if (!std::filesystem::is_regular_file(std::filesystem::path(tbl_dir) / f))
        throw UsageError("--tbl-dir " + tbl_dir + " has no " + f);
  if (!tables_dir.empty())
    if (const std::string why = columns::tables_dir_problem(tables_dir); !why.empty()) throw UsageError(why);
  if (sf_given && !(tbl_dir.empty() && tables_dir.empty()))
    throw UsageError(std::string("--sf: the tables come from ") + (tbl_dir.empty() ? "--tables" : "--tbl-dir") +
                     ", at the scale factor they were made at; --sf is the built-in generator's");
}

}  // namespace hdb::tbl
