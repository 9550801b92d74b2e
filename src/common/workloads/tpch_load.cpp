// Loader for dbgen's .tbl files: one row per line, fields separated by '|', with a trailing '|'.
// Only the columns the micro-kernels use are converted; every error names file, line and column.
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

std::string read_file(const std::string& path) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) throw UsageError("cannot open " + path + " (--tbl-dir needs customer.tbl, orders.tbl, lineitem.tbl)");
  std::string data;
  char buf[1 << 16];
  std::size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, f.get())) > 0) data.append(buf, got);
  if (std::ferror(f.get())) throw UsageError("reading " + path + " failed");
  return data;
}

// Where a field sits, turned into a message only when the field is bad (the hot path stays free
// of string building).
class FieldError {
 public:
  FieldError(const std::string& path, std::uint64_t line, const Wanted& w, const char* s, const char* e)
      : path_(path), line_(line), w_(w), s_(s), e_(e) {}
  [[noreturn]] void fail(const std::string& what) const {
    throw UsageError(path_ + ":" + std::to_string(line_) + ": column " + std::to_string(w_.field + 1) + " (" +
                     w_.name + ") '" + std::string(s_, e_) + "': " + what);
  }

 private:
  const std::string& path_;
  std::uint64_t line_;
  const Wanted& w_;
  const char *s_, *e_;
};

// Unsigned decimal with at most two fraction digits, scaled by 100 ("12.3" -> 1230).
bool parse_fixed2(const char* s, const char* e, std::uint64_t& out) {
  if (s == e) return false;
  std::uint64_t whole = 0;
  const char* p = s;
  for (; p < e && *p >= '0' && *p <= '9'; ++p) {
    whole = whole * 10 + static_cast<std::uint64_t>(*p - '0');
    if (whole > std::numeric_limits<std::uint32_t>::max()) return false;
  }
  if (p == s) return false;
  std::uint64_t frac = 0;
  int digits = 0;
  if (p < e && *p == '.') {
    ++p;
    for (; p < e && *p >= '0' && *p <= '9'; ++p, ++digits) {
      if (digits >= 2) {
        if (*p != '0') return false;  // finer than cents cannot be represented exactly
        continue;
      }
      frac = frac * 10 + static_cast<std::uint64_t>(*p - '0');
    }
    if (digits == 0) return false;
  }
  if (p != e) return false;
  if (digits == 1) frac *= 10;
  out = whole * 100 + frac;
  return true;
}

std::uint32_t convert(const Wanted& w, const char* s, const char* e, const FieldError& err) {
  switch (w.parse) {
    case Parse::Key:
    case Parse::Integer: {
      std::uint64_t v;
      if (!parse_fixed2(s, e, v)) err.fail("is not a non-negative number");
      if (v % 100) err.fail("is not a whole number");
      v /= 100;
      if (v > std::numeric_limits<std::uint32_t>::max()) err.fail("does not fit 32 bits");
      return static_cast<std::uint32_t>(v);
    }
    case Parse::Money:
    case Parse::Hundredths: {
      std::uint64_t v;
      if (!parse_fixed2(s, e, v)) err.fail("is not a non-negative decimal number");
      if (v > std::numeric_limits<std::uint32_t>::max()) err.fail("does not fit 32 bits");
      return static_cast<std::uint32_t>(v);
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
      int code = segment_code(std::string(s, e));
      if (code < 0) err.fail("is not a TPC-H market segment");
      return static_cast<std::uint32_t>(code);
    }
  }
  err.fail("has an unknown column kind");
}

Relation load_table(const std::string& dir, const TableFormat& fmt) {
  const std::string path = dir + "/" + fmt.file;
  const std::string data = read_file(path);
  Relation r;
  r.name = fmt.relation;
  for (const Wanted& w : fmt.wanted) r.cols.push_back({{w.name, w.type}, {}});
  std::vector<const char*> starts(static_cast<std::size_t>(fmt.fields) + 1);
  const char* p = data.data();
  const char* end = p + data.size();
  std::uint64_t line = 0;
  while (p < end) {
    ++line;
    const char* eol = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
    if (!eol) eol = end;
    const char* le = eol;
    if (le > p && le[-1] == '\r') --le;
    if (le == p) {  // blank lines (a final newline) carry no row
      p = eol + 1;
      continue;
    }
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
      r.cols[c].v.push_back(convert(w, s, e, FieldError(path, line, w, s, e)));
    }
    p = eol + 1;
  }
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
