// Loader for dbgen's .tbl files: one row per line, fields separated by '|', with a trailing '|'.
// Only the columns the micro-kernels use are converted; every error names file, line and column.
// Keys are whole numbers up to 2^64 - 1: a key column whose values reach 2^32 is loaded wide (64-bit).
// Each file is read in chunks of 1 MiB (never whole): memory is the kept columns plus one chunk
// (or the longest line, when a line is longer than a chunk).
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>

#include "harness/errors.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {
namespace {

enum class Parse { Key, Integer, Money, Hundredths, Date, Segment };

struct Wanted {
  int field;  // 0-based position in the .tbl line
  const char* name;
  Parse parse;
  ColType type;
};

struct TableFormat {
  const char* file;
  const char* relation;
  int fields;
  std::vector<Wanted> wanted;
};

constexpr std::size_t kChunk = std::size_t{1} << 20;
// A line longer than this is no .tbl row (dbgen's longest are about 300 bytes): an error, so that a
// file without line breaks cannot take unbounded memory.
constexpr std::size_t kMaxLine = std::size_t{64} << 20;
// At most this many bytes of a field are quoted in a message.
constexpr std::size_t kShownBytes = 80;

// A field as a message shows it: at most kShownBytes bytes, bytes other than printable ASCII as
// \xNN, and the length when cut.
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

// Reads a file line by line through one buffer of kChunk bytes (grown only for a longer line).
class LineReader {
 public:
  explicit LineReader(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "rb"), &std::fclose) {
    if (!f_) throw UsageError("cannot open " + path + " (--tbl-dir needs customer.tbl, orders.tbl, lineitem.tbl)");
    struct stat st {};
    if (fstat(fileno(f_.get()), &st) == 0 && S_ISREG(st.st_mode)) size_ = static_cast<std::uint64_t>(st.st_size);
    buf_.resize(kChunk);
    fill();
  }
  // The bytes read so far that are not consumed (for a look at the start of the file).
  const char* peek() const { return buf_.data() + begin_; }
  std::size_t available() const { return end_ - begin_; }
  void skip(std::size_t n) {
    begin_ += n;
    consumed_ += n;
  }
  std::uint64_t file_size() const { return size_; }

  // The next line without its '\n'; false at the end of the file.
  bool next(const char*& s, const char*& e) {
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
          throw UsageError(path_ + ":" + std::to_string(lines_before_partial()) + ": a line longer than " +
                           std::to_string(kMaxLine >> 20) + " MiB is no .tbl row");
        buf_.resize(std::min(kMaxLine, buf_.size() * 2));
      }
      fill();
    }
  }
  void count_line() { ++line_; }
  std::uint64_t line() const { return line_; }
  std::uint64_t consumed() const { return consumed_; }  // bytes of the lines returned so far

 private:
  std::uint64_t lines_before_partial() const { return line_ + 1; }
  void fill() {
    while (end_ < buf_.size() && !eof_) {
      std::size_t got = std::fread(buf_.data() + end_, 1, buf_.size() - end_, f_.get());
      end_ += got;
      if (got == 0) {
        if (std::ferror(f_.get())) throw UsageError("reading " + path_ + " failed");
        eof_ = true;
      }
    }
  }

  const std::string& path_;
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f_;
  std::vector<char> buf_;
  std::size_t begin_ = 0, end_ = 0;
  bool eof_ = false;
  std::uint64_t size_ = 0, line_ = 0, consumed_ = 0;
};

// Where a field sits, turned into a message only when the field is bad (the hot path stays free
// of string building).
class FieldError {
 public:
  FieldError(const std::string& path, std::uint64_t line, const Wanted& w, const char* s, const char* e)
      : path_(path), line_(line), w_(w), s_(s), e_(e) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(path_ + ":" + std::to_string(line_) + ": column " + std::to_string(w_.field + 1) + " (" +
                     w_.name + ") '" + quote_field(s_, e_) + "': " + what);
  }

 private:
  const std::string& path_;
  std::uint64_t line_;
  const Wanted& w_;
  const char *s_, *e_;
};

// A non-negative decimal number "123", "12.3", "12.30": its value in hundredths, or why it is not one.
struct Decimal {
  enum Error { Ok, Empty, NotNumber, Negative, TooLarge, FinerThanHundredths } error = Ok;
  std::uint64_t hundredths = 0;
  int decimals = 0;  // fraction digits written (trailing zeros included)
};

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
      if (d.decimals < 2) frac = frac * 10 + static_cast<std::uint64_t>(*p - '0');
      else if (*p != '0') finer = true;
    }
    if (p == f) {
      d.error = Decimal::NotNumber;
      return d;
    }
    if (d.decimals == 1) frac *= 10;
  }
  if (p != e) d.error = Decimal::NotNumber;
  else if (negative) d.error = Decimal::Negative;
  else if (finer) d.error = Decimal::FinerThanHundredths;
  else if (big) d.error = Decimal::TooLarge;
  d.hundredths = whole * 100 + frac;
  return d;
}

// A whole number of at most 64 bits: the digits before an optional all-zero fraction ("12", "12.00").
// False when it exceeds 2^64 - 1.
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

// A field's value: 32 bits for every column but keys, which may take 64 (the column becomes wide).
std::uint64_t convert(const Wanted& w, const char* s, const char* e, const FieldError& err) {
  constexpr std::uint64_t kMax = std::numeric_limits<std::uint32_t>::max();
  switch (w.parse) {
    case Parse::Key:
    case Parse::Integer: {
      const bool key = w.parse == Parse::Key;
      Decimal d = parse_decimal(s, e);
      switch (d.error) {
        case Decimal::Ok: break;
        case Decimal::Empty: err.fail("is empty, expected a non-negative number");
        case Decimal::NotNumber: err.fail("is not a non-negative number");
        case Decimal::Negative:
          err.fail(key ? "is negative: keys are non-negative 64-bit numbers" : "is negative: the loader keeps non-negative 32-bit numbers");
        case Decimal::FinerThanHundredths: err.fail("is not a whole number");
        case Decimal::TooLarge:
          if (!key) err.fail("does not fit 32 bits (at most 4294967295)");
          break;
      }
      if (d.hundredths % 100) err.fail("is not a whole number");
      if (!key) {
        if (d.hundredths / 100 > kMax) err.fail("does not fit 32 bits (at most 4294967295)");
        return d.hundredths / 100;
      }
      std::uint64_t x = 0;
      if (!whole_u64(s, e, x)) err.fail("does not fit 64 bits (at most 18446744073709551615)");
      return x;
    }
    case Parse::Money:
    case Parse::Hundredths: {
      Decimal d = parse_decimal(s, e);
      const char* unit = w.parse == Parse::Money ? "cents" : "hundredths";
      switch (d.error) {
        case Decimal::Ok: break;
        case Decimal::Empty: err.fail("is empty, expected a non-negative decimal number");
        case Decimal::NotNumber: err.fail("is not a non-negative decimal number");
        case Decimal::Negative: err.fail("is negative: the loader keeps non-negative values");
        case Decimal::FinerThanHundredths:
          err.fail("has " + std::to_string(d.decimals) + " decimal places: values are kept in " + unit +
                   ", so at most 2 non-zero decimals can be represented exactly");
        case Decimal::TooLarge: break;
      }
      if (d.error == Decimal::TooLarge || d.hundredths > kMax)
        err.fail(std::string("does not fit 32 bits in ") + unit + " (at most 42949672.95)");
      return static_cast<std::uint32_t>(d.hundredths);
    }
    case Parse::Date: {
      int y = 0, m = 0, d = 0;
      if (e - s != 10 || s[4] != '-' || s[7] != '-') err.fail("is not a date YYYY-MM-DD");
      for (int i : {0, 1, 2, 3, 5, 6, 8, 9})
        if (s[i] < '0' || s[i] > '9') err.fail("is not a date YYYY-MM-DD");
      y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
      m = (s[5] - '0') * 10 + (s[6] - '0');
      d = (s[8] - '0') * 10 + (s[9] - '0');
      static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
      if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1] || y < 1970) err.fail("is not a valid date after 1970");
      std::int64_t days = days_from_civil(y, m, d);
      int yy, mm, dd;
      civil_from_days(days, yy, mm, dd);
      if (mm != m || dd != d) err.fail("is not a valid date");  // 29 February of a common year
      return static_cast<std::uint32_t>(days);
    }
    case Parse::Segment: {
      int code = e - s <= 16 ? segment_code(std::string(s, e)) : -1;
      if (code < 0) err.fail("is not a TPC-H market segment (AUTOMOBILE, BUILDING, FURNITURE, HOUSEHOLD, MACHINERY)");
      return static_cast<std::uint32_t>(code);
    }
  }
  err.fail("has an unknown column kind");
}

// Appends with a growth of 1/4 (not 2x), so that a column never holds much more than it needs.
void append(std::vector<std::uint32_t>& v, std::uint32_t x) {
  if (v.size() == v.capacity()) v.reserve(v.capacity() + v.capacity() / 4 + 1024);
  v.push_back(x);
}

// Appends a value; a key that reaches 2^32 turns its column wide (the high words of the rows
// before it are zero), the first time it happens.
void append(Column& c, std::uint64_t x) {
  if (x > 0xffffffffull && !c.info.wide) {
    c.info.wide = true;
    c.hi.reserve(c.v.capacity());
    c.hi.assign(c.v.size(), 0u);
  }
  append(c.v, static_cast<std::uint32_t>(x));
  if (c.info.wide) append(c.hi, static_cast<std::uint32_t>(x >> 32));
}

Relation load_table(const std::string& dir, const TableFormat& fmt) {
  const std::string path = dir + "/" + fmt.file;
  LineReader in(path);
  // A UTF-8 byte order mark (an editor's, never dbgen's) is skipped; UTF-16 is refused by name.
  if (in.available() >= 3 && std::memcmp(in.peek(), "\xEF\xBB\xBF", 3) == 0) in.skip(3);
  else if (in.available() >= 2 && (std::memcmp(in.peek(), "\xFF\xFE", 2) == 0 || std::memcmp(in.peek(), "\xFE\xFF", 2) == 0))
    throw UsageError(path + ": starts with a UTF-16 byte order mark: .tbl files are ASCII (dbgen's format)");
  Relation r;
  r.name = fmt.relation;
  for (const Wanted& w : fmt.wanted) r.cols.push_back({{w.name, w.type}, {}});
  // After the first kSample rows, room for the rows the whole file holds at their mean length
  // (+2 %), so the columns are not grown (and copied) many times.
  constexpr std::uint64_t kSample = 4096;
  std::vector<const char*> starts(static_cast<std::size_t>(fmt.fields) + 1);
  const char *p, *eol;
  while (in.next(p, eol)) {
    in.count_line();
    const std::uint64_t line = in.line();
    const char* le = eol;
    if (le > p && le[-1] == '\r') --le;
    if (le == p) continue;  // blank lines (a final newline) carry no row
    // Split on '|': dbgen ends every row with '|', so fields == separators.
    int n = 0;
    starts[0] = p;
    for (const char* q = p; q < le; ++q) {
      if (*q != '|') continue;
      ++n;
      if (n > fmt.fields) break;
      starts[static_cast<std::size_t>(n)] = q + 1;
    }
    bool trailing = le > p && le[-1] == '|';
    if (n != fmt.fields || !trailing)
      throw UsageError(path + ":" + std::to_string(line) + ": expected " + std::to_string(fmt.fields) +
                       " '|'-terminated columns, found " + (trailing ? std::to_string(n) : "a row without the trailing '|'") +
                       (n > fmt.fields ? " or more" : ""));
    for (std::size_t c = 0; c < fmt.wanted.size(); ++c) {
      const Wanted& w = fmt.wanted[c];
      const char* s = starts[static_cast<std::size_t>(w.field)];
      const char* e = starts[static_cast<std::size_t>(w.field) + 1] - 1;
      append(r.cols[c], convert(w, s, e, FieldError(path, line, w, s, e)));
    }
    if (r.rows() == kSample && in.file_size() > in.consumed()) {
      std::uint64_t rows = in.file_size() / std::max<std::uint64_t>(1, in.consumed() / kSample);
      rows += rows / 50 + 64;
      for (Column& c : r.cols) {
        c.v.reserve(rows);
        if (c.info.wide) c.hi.reserve(rows);
      }
    }
  }
  if (r.rows() == 0)
    throw UsageError(path + ": no rows (the file is empty or holds only blank lines); every table needs at least one");
  return r;
}

}  // namespace

Tables load_tables(const std::string& dir) {
  // Field positions from the specification's table layouts (clause 1.4.1).
  static const TableFormat customer{"customer.tbl", "customer", 8,
                                    {{0, "c_custkey", Parse::Key, ColType::Int},
                                     {6, "c_mktsegment", Parse::Segment, ColType::Segment}}};
  static const TableFormat orders{"orders.tbl", "orders", 9,
                                  {{0, "o_orderkey", Parse::Key, ColType::Int},
                                   {1, "o_custkey", Parse::Key, ColType::Int},
                                   {4, "o_orderdate", Parse::Date, ColType::Date},
                                   {7, "o_shippriority", Parse::Integer, ColType::Int}}};
  static const TableFormat lineitem{"lineitem.tbl", "lineitem", 16,
                                    {{0, "l_orderkey", Parse::Key, ColType::Int},
                                     {4, "l_quantity", Parse::Integer, ColType::Int},
                                     {5, "l_extendedprice", Parse::Money, ColType::Money},
                                     {6, "l_discount", Parse::Hundredths, ColType::Hundredths},
                                     {10, "l_shipdate", Parse::Date, ColType::Date}}};
  Tables t;
  t.source = dir;
  t.customer = load_table(dir, customer);
  t.orders = load_table(dir, orders);
  t.lineitem = load_table(dir, lineitem);
  return t;
}

}  // namespace hdb::tpch
