#include "workloads/tpch_relation.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "harness/errors.hpp"
#include "harness/parallel.hpp"
#include "workloads/random.hpp"

namespace hdb::tpch {

std::vector<ColumnInfo> Relation::schema() const {
  std::vector<ColumnInfo> s;
  for (const Column& c : cols) s.push_back(c.info);
  return s;
}

std::uint64_t Relation::bytes() const {
  std::uint64_t b = 0;
  for (const Column& c : cols) b += rows() * 4u * static_cast<std::uint64_t>(c.info.words());
  return b;
}

Column widened(const Column& c, std::uint64_t (*map)(std::uint64_t)) {
  Column w{c.info, {}, {}};
  w.info.wide = true;
  const std::size_t n = c.v.size();
  w.v.resize(n);
  w.hi.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t x = map ? map(c.at(i)) : c.at(i);
    w.v[i] = static_cast<std::uint32_t>(x);
    w.hi[i] = static_cast<std::uint32_t>(x >> 32);
  }
  return w;
}

WordLayout word_layout(const std::vector<ColumnInfo>& schema) {
  WordLayout l;
  for (const ColumnInfo& c : schema) {
    l.first.push_back(l.total);
    l.wide.push_back(c.wide);
    l.total += c.words();
  }
  return l;
}

std::uint64_t max_value(const Column& c) {
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < c.v.size(); ++i) m = std::max(m, c.at(i));
  return m;
}

int Relation::index(const std::string& n) const {
  for (std::size_t i = 0; i < cols.size(); ++i)
    if (cols[i].info.name == n) return static_cast<int>(i);
  throw std::out_of_range("relation " + name + " has no column " + n);
}

// Howard Hinnant's civil-date algorithms (public domain), exact for all Gregorian dates.
std::string format_date(std::uint32_t days) {
  int y, m, d;
  civil_from_days(days, y, m, d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", y, m, d);
  return buf;
}

const std::vector<std::string>& market_segments() {
  static const std::vector<std::string> s = {"AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"};
  return s;
}

int segment_code(const std::string& name) {
  const auto& s = market_segments();
  auto it = std::find(s.begin(), s.end(), name);
  return it == s.end() ? -1 : static_cast<int>(it - s.begin());
}

std::string format_value(ColType t, std::uint64_t v) {
  char buf[32];
  switch (t) {
    case ColType::Date: return format_date(static_cast<std::uint32_t>(v));
    case ColType::Money:
    case ColType::Hundredths:
      std::snprintf(buf, sizeof buf, "%llu.%02u", static_cast<unsigned long long>(v / 100),
                    static_cast<unsigned>(v % 100));
      return buf;
    case ColType::Segment:
      if (v < market_segments().size()) return market_segments()[v];
      return std::to_string(v);
    case ColType::Int: break;
  }
  return std::to_string(v);
}

std::uint64_t row_hash(const std::uint32_t* values, std::size_t count) {
  std::uint64_t h = 0x51ed2701u + count;
  for (std::size_t i = 0; i < count; ++i) h = splitmix64(h ^ values[i]);
  return h;
}

std::uint64_t checksum(const Relation& r, int threads) {
  const std::size_t nc = r.cols.size();
  std::atomic<std::uint64_t> total{0};
  // No allocation in the workers (a std::bad_alloc there would end the process): row_hash's
  // steps inline, column by column.
  parallel_for(r.rows(), std::max(1, threads), [&](std::uint64_t b, std::uint64_t e) {
    std::uint64_t sum = 0;
    for (std::uint64_t i = b; i < e; ++i) {
      std::uint64_t h = 0x51ed2701u + nc;
      for (std::size_t j = 0; j < nc; ++j) h = splitmix64(h ^ r.cols[j].at(i));
      sum += h;
    }
    total += sum;  // wrap-around addition is commutative: any chunking gives the same sum
  });
  return total.load();
}

void write_rows(const Relation& r, const std::string& path) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw UsageError("cannot write --output file " + path);
  std::string line;
  for (std::uint64_t i = 0; i < r.rows(); ++i) {
    line.clear();
    for (std::size_t j = 0; j < r.cols.size(); ++j) {
      if (j) line += '|';
      line += format_value(r.cols[j].info.type, r.cols[j].at(i));
    }
    line += '\n';
    out << line;
  }
  if (!out.flush()) throw UsageError("writing --output file " + path + " failed");
}

}  // namespace hdb::tpch
