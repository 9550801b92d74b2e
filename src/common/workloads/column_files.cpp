#include "workloads/column_files.hpp"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "harness/errors.hpp"

namespace fs = std::filesystem;

extern char** environ;

namespace hdb::columns {

bool has_manifest(const std::string& dir) { return fs::is_regular_file(fs::path(dir) / kManifest); }

std::string tables_dir_problem(const std::string& dir) {
  return fs::is_directory(dir) ? "" : "--tables " + dir + ": no such folder";
}

namespace {
// How a child process ended, in words ("exited with status 3", "was killed by signal 9 (Killed)").
std::string ended(int status) {
  if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "was killed by signal " + std::to_string(WTERMSIG(status)) + " (" + ::strsignal(WTERMSIG(status)) + ")";
  return "ended with wait status " + std::to_string(status);
}

// Runs argv (no shell), its stdout and stderr together into `said`; returns its wait status.
int run_capture(const std::vector<std::string>& argv, std::string& said) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int err = ::posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  ::close(fds[1]);
  if (err != 0) {
    ::close(fds[0]);
    throw UsageError("cannot run " + argv[0] + ": " + std::strerror(err));
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0)
      said.append(buf, static_cast<std::size_t>(n));
    else if (n == 0 || errno != EINTR)
      break;
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  return status;
}
}  // namespace

std::string column_dir_for(const std::string& benchmark, const std::string& dir) {
  if (const std::string why = tables_dir_problem(dir); !why.empty()) throw UsageError(why);
  const std::string python = std::string(HDB_SOURCE_DIR) + "/scripts/hdb/python";
  // A folder of columns where the project's Python is not there (a machine that was given the columns
  // only): loaded as it is; whether Parquet files beside it still match is the converter's to decide.
  const char* hdb_python = std::getenv("HDB_PYTHON");
  if (has_manifest(dir) && (hdb_python == nullptr || *hdb_python == '\0') &&
      !fs::exists(fs::path(HDB_SOURCE_DIR) / ".venv" / "bin" / "python"))
    return dir;
  // The converter decides which files are the tables, fingerprints exactly those, and answers with
  // the folder to load: DIR itself (its columns, checked against any Parquet tables beside them) or
  // a cache folder it converted DIR's Parquet tables into (once; later runs reuse it).
  const std::vector<std::string> argv = {python,  "-m",      "hdb.parquet_tables",
                                         "cache", benchmark, fs::absolute(dir).string()};
  std::string cmd;
  for (const std::string& a : argv) cmd += (cmd.empty() ? "" : " ") + a;
  std::string said;
  const int status = run_capture(argv, said);
  const std::string result_tag = "hdb-columns: ";
  std::string result;
  std::size_t at = 0;
  while (at < said.size()) {
    std::size_t end = said.find('\n', at);
    if (end == std::string::npos) end = said.size();
    if (said.compare(at, result_tag.size(), result_tag) == 0)
      result = said.substr(at + result_tag.size(), end - at - result_tag.size());
    at = end + 1;
  }
  while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && !result.empty()) {
    try {
      const nlohmann::json r = nlohmann::json::parse(result);
      const std::string columns = r.at("columns").get<std::string>();
      if (r.at("converted").get<bool>())
        std::printf("# --tables %s: its Parquet files converted by scripts/hdb/parquet_tables.py (DuckDB) into %s\n",
                    dir.c_str(), columns.c_str());
      return columns;
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error("--tables " + dir + ": " + cmd + " answered '" + result + "' (" + e.what() + ")");
    }
  }
  const std::string prefix = "parquet_tables: error: ";
  if (said.rfind(prefix, 0) == 0) said.erase(0, prefix.size());
  // Exit 2: the converter refused the files (or a setting such as TMPDIR), a usage error naming why.
  if (WIFEXITED(status) && WEXITSTATUS(status) == 2)
    throw UsageError("--tables " + dir + ": its Parquet files could not be converted: " + said + " (" + cmd + ")");
  throw std::runtime_error("--tables " + dir + ": the converter (" + cmd + ") " + ended(status) +
                           (said.empty() ? "" : ": " + said));
}

ColumnDir::ColumnDir(std::string dir, const std::string& benchmark) : dir_(std::move(dir)) {
  const fs::path path = fs::path(dir_) / kManifest;
  std::ifstream f(path);
  if (!f) throw UsageError(path.string() + ": cannot open (scripts/hdb/parquet_tables.py writes it)");
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
        table.cols.push_back(
            {cname,
             {c.at("type").get<std::string>(), c.at("file").get<std::string>(), c.value("offsets", std::string())}});
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
            throw UsageError(dir_ + "/" + kManifest + ": table " + table + " column " + column + " is of type " +
                             c.type + ", expected " + type);
          return c;
        }
  throw UsageError(dir_ + "/" + kManifest + ": table " + table + " has no column " + column);
}

std::vector<std::uint64_t> ColumnDir::read_u64(const std::string& file, std::uint64_t count,
                                               const std::string& what) const {
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
    throw UsageError((fs::path(dir_) / c.file).string() + ": " + std::to_string(bytes.size()) +
                     " bytes, its offsets end at " + std::to_string(off.back()));
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
