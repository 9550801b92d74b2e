#include "workloads/column_files.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iterator>
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

std::string tables_dir_problem(const std::string& dir) {
  if (!fs::is_directory(dir)) return "--tables " + dir + ": no such folder";
  if (has_manifest(dir) || has_parquet(dir)) return "";
  return "--tables " + dir + " has no " + kManifest + " (scripts/hdb/parquet_tables.py writes it) and no Parquet files";
}

namespace {
// Names, sizes and modification times of DIR's Parquet files (one level of table folders too), as
// one hash: a changed file gets a new cache folder.
std::string parquet_fingerprint(const fs::path& dir, const std::string& benchmark) {
  std::string all = benchmark + "\n" + dir.string() + "\n";
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 1 || !it->is_regular_file(ec) || it->path().extension() != ".parquet") continue;
    all += it->path().string() + " " + std::to_string(it->file_size(ec)) + " " +
           std::to_string(it->last_write_time(ec).time_since_epoch().count()) + "\n";
  }
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(std::hash<std::string>{}(all)));
  return hex;
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}
}  // namespace

std::string column_dir_for(const std::string& benchmark, const std::string& dir) {
  if (const std::string why = tables_dir_problem(dir); !why.empty()) throw UsageError(why);
  if (has_manifest(dir)) return dir;
  const fs::path src = fs::absolute(dir);
  const fs::path cache = fs::temp_directory_path() / ("hdb-columns-" + benchmark + "-" + parquet_fingerprint(src, benchmark));
  if (has_manifest(cache.string())) return cache.string();
  // Converted into a folder of this process's own, then renamed: two executables converting the same
  // files at once (MPI ranks) never read each other's half-written columns.
  const fs::path part = cache.string() + ".part" + std::to_string(std::hash<std::string>{}(
                                                        std::to_string(std::chrono::steady_clock::now().time_since_epoch().count())));
  const fs::path log = part.string() + ".log";
  const std::string cmd = shell_quoted(std::string(HDB_SOURCE_DIR) + "/scripts/hdb/python") + " -m hdb.parquet_tables " +
                          benchmark + " " + shell_quoted(src.string()) + " " + shell_quoted(part.string());
  const int rc = std::system((cmd + " > " + shell_quoted(log.string()) + " 2>&1").c_str());
  std::ifstream lf(log);
  std::string said((std::istreambuf_iterator<char>(lf)), std::istreambuf_iterator<char>());
  std::error_code ec;
  fs::remove(log, ec);
  if (rc != 0 || !has_manifest(part.string())) {
    fs::remove_all(part, ec);
    while (!said.empty() && said.back() == '\n') said.pop_back();
    throw UsageError("--tables " + dir + ": its Parquet files could not be converted (" + cmd + "): " +
                     (said.empty() ? "exit status " + std::to_string(rc) : said));
  }
  fs::rename(part, cache, ec);
  if (ec) fs::remove_all(part, ec);  // another process made the cache folder first: its columns are the same
  if (!has_manifest(cache.string())) throw UsageError("--tables " + dir + ": cannot make " + cache.string());
  std::printf("# --tables %s: its Parquet files converted by scripts/hdb/parquet_tables.py (DuckDB) into %s\n",
              dir.c_str(), cache.string().c_str());
  return cache.string();
}

ColumnDir::ColumnDir(std::string dir, const std::string& benchmark) : dir_(std::move(dir)) {
  const fs::path path = fs::path(dir_) / kManifest;
  std::ifstream f(path);
  if (!f) throw UsageError(path.string() + ": cannot open (" + tables_dir_problem(dir_) + ")");
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
