#include "workloads/column_files.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "harness/errors.hpp"

namespace fs = std::filesystem;

namespace hdb::columns {

namespace {
bool parquet_in(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file(ec) && e.path().extension() == ".parquet") return true;
  return false;
}
}  // namespace

bool has_manifest(const std::string& dir) { return fs::is_regular_file(fs::path(dir) / kManifest); }

bool has_parquet(const std::string& dir) {
  std::error_code ec;
  if (parquet_in(dir)) return true;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_directory(ec) && parquet_in(e.path())) return true;
  return false;
}

std::string tables_dir_problem(const std::string& benchmark, const std::string& dir) {
  if (!fs::is_directory(dir)) return "--tables " + dir + ": no such folder";
  if (has_manifest(dir)) return "";
  if (has_parquet(dir))
    return "--tables " + dir + " holds Parquet files, which the executables read through the project's converter " +
           "(DuckDB): run `scripts/hdb/python -m hdb.parquet_tables " + benchmark + " " + dir +
           " OUT`, then --tables OUT (docs/ssb.md, \"Parquet input\")";
  return "--tables " + dir + " has no " + kManifest + " (scripts/hdb/parquet_tables.py writes it) and no Parquet files";
}

ColumnDir::ColumnDir(std::string dir, const std::string& benchmark) : dir_(std::move(dir)) {
  const fs::path path = fs::path(dir_) / kManifest;
  std::ifstream f(path);
  if (!f) throw UsageError(path.string() + ": cannot open (" + tables_dir_problem(benchmark, dir_) + ")");
  nlohmann::json m;
  try {
    m = nlohmann::json::parse(f);
    if (m.at("format") != "hdb-columns/1")
      throw UsageError(path.string() + ": format " + m.at("format").dump() + ", expected \"hdb-columns/1\"");
    if (m.at("benchmark") != benchmark)
      throw UsageError(path.string() + ": the tables of " + m.at("benchmark").dump() + ", not of " + benchmark);
    for (const auto& [name, t] : m.at("tables").items()) {
      Table table{name, t.at("rows").get<std::uint64_t>(), {}};
      for (const auto& [cname, c] : t.at("columns").items())
        table.cols.push_back({cname, {c.at("type").get<std::string>(), c.at("file").get<std::string>(),
                                      c.value("offsets", std::string())}});
      tables_.push_back(std::move(table));
    }
  } catch (const nlohmann::json::exception& e) {
    throw UsageError(path.string() + ": not a manifest of scripts/hdb/parquet_tables.py (" + e.what() + ")");
  }
}

std::uint64_t ColumnDir::rows(const std::string& table) const {
  for (const Table& t : tables_)
    if (t.name == table) return t.rows;
  throw UsageError(dir_ + "/" + kManifest + ": no table " + table);
}

const ColumnDir::Col& ColumnDir::col(const std::string& table, const std::string& column, const char* type) const {
  for (const Table& t : tables_)
    if (t.name == table)
      for (const auto& [name, c] : t.cols)
        if (name == column) {
          if (c.type != type)
            throw UsageError(dir_ + "/" + kManifest + ": table " + table + " column " + column + " is of type " + c.type +
                             ", expected " + type);
          return c;
        }
  throw UsageError(dir_ + "/" + kManifest + ": table " + table + " has no column " + column);
}

std::vector<std::uint64_t> ColumnDir::read_u64(const std::string& file, std::uint64_t count, const std::string& what) const {
  const fs::path path = fs::path(dir_) / file;
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (ec || size != count * 8)
    throw UsageError(path.string() + ": " + (ec ? "cannot be read" : std::to_string(size) + " bytes") + ", expected " +
                     std::to_string(count) + " values of 8 bytes (" + what + ")");
  std::vector<std::uint64_t> v(count);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.string().c_str(), "rb"), &std::fclose);
  if (!f || std::fread(v.data(), 8, count, f.get()) != count) throw UsageError(path.string() + ": cannot be read");
  return v;  // little-endian on every platform the suite builds for
}

std::vector<std::uint64_t> ColumnDir::numbers(const std::string& table, const std::string& column) const {
  const Col& c = col(table, column, "i64");
  std::vector<std::uint64_t> v = read_u64(c.file, rows(table), table + "." + column);
  for (std::uint64_t i = 0; i < v.size(); ++i)
    if (v[i] >> 63) fail(table, column, i + 1, std::to_string(static_cast<std::int64_t>(v[i])), "is negative");
  return v;
}

std::vector<std::string> ColumnDir::strings(const std::string& table, const std::string& column) const {
  const Col& c = col(table, column, "str");
  const std::uint64_t n = rows(table);
  const std::vector<std::uint64_t> off = read_u64(c.offsets, n + 1, table + "." + column + " offsets");
  std::ifstream f(fs::path(dir_) / c.file, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (off.front() != 0 || off.back() != bytes.size())
    throw UsageError((fs::path(dir_) / c.file).string() + ": " + std::to_string(bytes.size()) + " bytes, its offsets end at " +
                     std::to_string(off.back()));
  std::vector<std::string> out(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    if (off[i + 1] < off[i]) fail(table, column, i + 1, "", "has offsets that decrease");
    out[i].assign(bytes, off[i], off[i + 1] - off[i]);
  }
  return out;
}

void ColumnDir::fail(const std::string& table, const std::string& column, std::uint64_t row, const std::string& value,
                     const std::string& what) const {
  throw UsageError(dir_ + ": table " + table + " column " + column + " row " + std::to_string(row) + " ('" +
                   value.substr(0, 80) + "'): " + what);
}

}  // namespace hdb::columns
