#include "harness/result.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "harness/errors.hpp"
#include "harness/sizes.hpp"

namespace hdb {

const char* to_string(PhaseKind k) {
  switch (k) {
    case PhaseKind::H2D: return "h2d";
    case PhaseKind::D2H: return "d2h";
    case PhaseKind::Kernel: return "kernel";
    case PhaseKind::Host: return "host";
    case PhaseKind::Network: return "network";
  }
  return "?";
}

const char* to_string(Status s) {
  switch (s) {
    case Status::Ok: return "ok";
    case Status::Skipped: return "skipped";
    case Status::Failed: return "failed";
  }
  return "?";
}

namespace {
double field(const Breakdown& b, const std::string& which) {
  if (which == "kernel") return b.kernel;
  if (which == "total") return b.total;
  if (which == "h2d") return b.h2d;
  return b.d2h;
}
nlohmann::json stats_json(const Stats& s) {
  return {{"n", s.n},     {"min", s.min},       {"median", s.median}, {"mean", s.mean},
          {"max", s.max}, {"stddev", s.stddev}, {"cv", s.cv}};
}
}  // namespace

Stats Record::stat(const char* which) const {
  std::vector<double> v;
  v.reserve(trials.size());
  for (const auto& t : trials) v.push_back(field(t, which));
  return summarize(std::move(v));
}

Throughput throughput(const Record& r, const Ceiling& ceiling) {
  Throughput t;
  if (r.trials.empty()) return t;
  double k = r.stat("kernel").median, tot = r.stat("total").median;
  double xfer = r.stat("h2d").median + r.stat("d2h").median;
  if (xfer > 0) t.transfer_gbps = static_cast<double>(r.transfer_bytes) / xfer / 1e9;
  if (k > 0) {
    t.kernel_gbps = static_cast<double>(r.input_bytes) / k / 1e9;
    t.elements_per_s = static_cast<double>(r.elements) / k;
    t.moved_gbps = static_cast<double>(r.min_bytes_moved) / k / 1e9;
    t.parity = xfer / k;
    if (ceiling.gbps > 0) t.pct_of_peak = 100.0 * t.moved_gbps / ceiling.gbps;
    t.ceiling_gbps = ceiling.gbps;
    t.ceiling_pattern = ceiling.gbps > 0 ? ceiling.pattern : "";
  }
  if (tot > 0) t.total_gbps = static_cast<double>(r.input_bytes) / tot / 1e9;
  return t;
}

const Record& ResultDb::add(Record r) {
  records_.push_back(std::move(r));
  return records_.back();
}

int ResultDb::count(Status s) const {
  int n = 0;
  for (const auto& r : records_) n += r.status == s;
  return n;
}

namespace {
nlohmann::json trial_json(const Breakdown& t) {
  nlohmann::json ph = nlohmann::json::object();
  for (const Phase& p : t.phases) ph[p.name] = p.seconds;
  return {{"h2d_s", t.h2d}, {"kernel_s", t.kernel}, {"d2h_s", t.d2h}, {"total_s", t.total}, {"phases_s", ph}};
}
nlohmann::json protocol_json(const Record& r) {
  nlohmann::json j = {{"cold", r.cold ? trial_json(*r.cold) : nlohmann::json(nullptr)},
                      {"cold_note", r.cold_note},
                      {"warmup_passes", r.warmup_passes},
                      {"timed_as", r.flush.empty() ? "hot" : "warm"}};
  if (!r.flush.empty()) j["flush"] = r.flush;
  if (r.compile_s > 0) j["compile_s"] = r.compile_s;
  if (r.throttled_passes > 0)
    j["throttled"] = {
        {"passes", r.throttled_passes}, {"reasons", r.throttle_reasons}, {"dropped", r.throttled_dropped}};
  return j;
}
}  // namespace

nlohmann::json ResultDb::record_json(const Record& r, const Ceiling& ceiling) {
  nlohmann::json j = {
      {"id", r.key.id()},
      {"test", r.key.test},
      {"variant", r.key.variant},
      {"params", r.key.params_json()},
      {"size_bytes", r.key.size_bytes},
      {"size_label", size_label(r.key.size_bytes)},
      {"transfer", r.transfer()},
      {"status", to_string(r.status)},
      {"reason", r.reason},
      {"verification", {{"checked", r.checked}, {"verified", r.verified}, {"detail", r.verify_detail}}},
      {"elements", r.elements},
      {"bytes", {{"input", r.input_bytes}, {"min_moved", r.min_bytes_moved}, {"transfer", r.transfer_bytes}}},
      {"extra", r.extra},
  };
  if (r.access.declared())
    j["bytes"].update({{"read", r.access.read},
                       {"written", r.access.written},
                       {"random_read", r.access.random_read},
                       {"random_item", r.access.random_item}});
  if (!r.ran.empty()) j["ran"] = r.ran;
  if (!r.memory_plan.is_null()) j["memory_plan"] = r.memory_plan;
  if (r.passes_taken) j["protocol"] = protocol_json(r);
  if (!r.energy.is_null()) j["energy"] = r.energy;
  if (!r.device_state.is_null()) j["device_state"] = r.device_state;
  if (!r.traffic.is_null()) j["traffic"] = r.traffic;
  // Each named phase is declared once, with its kind; trials carry only its seconds.
  std::vector<const Phase*> declared;
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : r.trials) {
    for (const Phase& p : t.phases) {
      bool seen = false;
      for (const Phase* d : declared) seen |= d->name == p.name;
      if (!seen) declared.push_back(&p);
    }
    trials.push_back(trial_json(t));
  }
  nlohmann::json phases = nlohmann::json::array();
  for (const Phase* d : declared) phases.push_back({{"name", d->name}, {"kind", to_string(d->kind)}});
  j["phases"] = phases;
  j["trials"] = trials;
  if (!r.trials.empty()) {
    nlohmann::json st = {{"kernel_s", stats_json(r.stat("kernel"))},
                         {"total_s", stats_json(r.stat("total"))},
                         {"h2d_s", stats_json(r.stat("h2d"))},
                         {"d2h_s", stats_json(r.stat("d2h"))}};
    nlohmann::json phase_stats = nlohmann::json::object();
    for (const Phase* d : declared) {
      std::vector<double> v;
      for (const auto& t : r.trials)
        for (const Phase& p : t.phases)
          if (p.name == d->name) v.push_back(p.seconds);
      phase_stats[d->name] = stats_json(summarize(v));
    }
    st["phases_s"] = phase_stats;
    j["stats"] = st;
    Throughput tp = throughput(r, ceiling);
    j["throughput"] = {{"kernel_gbps", tp.kernel_gbps},
                       {"total_gbps", tp.total_gbps},
                       {"transfer_gbps", tp.transfer_gbps},
                       {"elements_per_s", tp.elements_per_s},
                       {"moved_gbps", tp.moved_gbps},
                       {"pct_of_peak", tp.pct_of_peak},
                       {"ceiling_gbps", tp.ceiling_gbps},
                       {"ceiling_pattern", tp.ceiling_pattern},
                       {"parity", tp.parity}};
    if (r.timed_at_s >= 0) j["timed_at_s"] = r.timed_at_s;
  }
  return j;
}

ResultDb::Kept& ResultDb::kept(std::size_t i) const {
  if (kept_.size() < records_.size()) kept_.resize(records_.size());
  Kept& k = kept_[i];
  Ceiling ceiling = ceiling_for(records_[i]);
  if (k.made && k.ceiling.gbps == ceiling.gbps && k.ceiling.pattern == ceiling.pattern) return k;
  k.made = true, k.ceiling = ceiling;
  k.json = record_json(records_[i], ceiling);
  k.text = "  " + k.json.dump(1);
  for (std::size_t at = k.text.find('\n'); at != std::string::npos; at = k.text.find('\n', at + 3))
    k.text.insert(at + 1, "  ");
  k.csv.clear(), k.csv_for.clear();
  return k;
}

nlohmann::json ResultDb::to_json() const {
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t i = 0; i < records_.size(); ++i) results.push_back(kept(i).json);
  return document(std::move(results));
}

std::string ResultDb::json_text() const {
  // The document without its results, whose empty array is then replaced by the kept texts. Only a
  // key of the document itself has one space of indent.
  const std::string head = document(nlohmann::json::array()).dump(1);
  const std::string slot = "\n \"results\": []";
  const std::size_t at = head.find(slot);
  std::string out = head.substr(0, at + slot.size() - 2);
  if (records_.empty())
    out += "[]";
  else {
    out += "[\n";
    for (std::size_t i = 0; i < records_.size(); ++i) (out += i ? ",\n" : "") += kept(i).text;
    out += "\n ]";
  }
  return out + head.substr(at + slot.size()) + "\n";
}

nlohmann::json ResultDb::document(nlohmann::json results) const {
  nlohmann::json j = {
      {"schema", kSchema},
      {"benchmark", benchmark_},
      {"backend", backend_},
      {"context", context_},
      {"ceiling", ceiling_.to_json()},
      {"results", results},
      {"summary", {{"ok", count(Status::Ok)}, {"skipped", count(Status::Skipped)}, {"failed", count(Status::Failed)}}},
      {"complete", complete_}};
  if (!complete_) j["incomplete_reason"] = incomplete_reason_;
  return j;
}

const std::vector<std::string> kCsvColumns = {
    "id",          "benchmark",       "backend",         "rank",           "device",
    "test",        "variant",         "params",          "size_bytes",     "transfer",
    "status",      "checked",         "verified",        "passes",         "kernel_median_s",
    "kernel_cv",   "total_median_s",  "total_cv",        "h2d_median_s",   "d2h_median_s",
    "kernel_gbps", "total_gbps",      "transfer_gbps",   "elements_per_s", "moved_gbps",
    "pct_of_peak", "ceiling_gbps",    "ceiling_pattern", "parity",         "elements",
    "input_bytes", "min_moved_bytes", "transfer_bytes",  "reason"};

namespace {

std::string csv_field(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_boolean()) return v.get<bool>() ? "1" : "0";
  std::string s = v.is_string() ? v.get<std::string>() : v.is_number_float() ? param_text(v) : v.dump();
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// Figures whose 0 in a document means "does not apply" (no such phase, no transfer, no ceiling, no
// kernel time to divide by): an empty CSV cell, never a 0 (contract.py NOT_APPLICABLE_WHEN_ZERO).
const char* const kNotApplicableWhenZero[] = {"kernel_median_s", "h2d_median_s",  "d2h_median_s",   "kernel_gbps",
                                              "total_gbps",      "transfer_gbps", "elements_per_s", "moved_gbps",
                                              "pct_of_peak",     "ceiling_gbps",  "parity"};

// One row's fields, read from the result's JSON by name; a figure that does not apply is empty.
nlohmann::json csv_row(const nlohmann::json& doc, const nlohmann::json& r, int rank, const std::string& device) {
  auto at = [&r](const char* a, const char* b, const char* c = nullptr) -> nlohmann::json {
    if (!r.contains(a) || !r[a].contains(b)) return nullptr;
    const nlohmann::json& v = r[a][b];
    if (!c) return v;
    return v.contains(c) ? v[c] : nlohmann::json(nullptr);
  };
  std::string params;  // k=v;k=v in the document's key order
  for (const auto& [k, v] : r["params"].items()) params += (params.empty() ? "" : ";") + k + "=" + param_text(v);
  const std::string id = r.value("id", "");
  nlohmann::json row = {{"id", id},
                        {"benchmark", doc.value("benchmark", "")},
                        {"backend", doc.value("backend", "")},
                        {"rank", rank},
                        {"device", device},
                        {"test", r.value("test", "")},
                        {"variant", r.value("variant", "")},
                        {"params", params},
                        {"size_bytes", r.value("size_bytes", 0ull)},
                        {"transfer", r.value("transfer", "none")},
                        {"status", r.value("status", "")},
                        {"checked", at("verification", "checked")},
                        {"verified", at("verification", "verified")},
                        {"passes", r.contains("trials") ? r["trials"].size() : 0},
                        {"kernel_median_s", at("stats", "kernel_s", "median")},
                        {"kernel_cv", at("stats", "kernel_s", "cv")},
                        {"total_median_s", at("stats", "total_s", "median")},
                        {"total_cv", at("stats", "total_s", "cv")},
                        {"h2d_median_s", at("stats", "h2d_s", "median")},
                        {"d2h_median_s", at("stats", "d2h_s", "median")},
                        {"kernel_gbps", at("throughput", "kernel_gbps")},
                        {"total_gbps", at("throughput", "total_gbps")},
                        {"transfer_gbps", at("throughput", "transfer_gbps")},
                        {"elements_per_s", at("throughput", "elements_per_s")},
                        {"moved_gbps", at("throughput", "moved_gbps")},
                        {"pct_of_peak", at("throughput", "pct_of_peak")},
                        {"ceiling_gbps", at("throughput", "ceiling_gbps")},
                        {"ceiling_pattern", at("throughput", "ceiling_pattern")},
                        {"parity", at("throughput", "parity")},
                        {"elements", r.value("elements", 0ull)},
                        {"input_bytes", at("bytes", "input")},
                        {"min_moved_bytes", at("bytes", "min_moved")},
                        {"transfer_bytes", at("bytes", "transfer")},
                        {"reason", r.value("reason", "")}};
  for (const char* k : kNotApplicableWhenZero)
    if (row[k].is_number() && row[k].get<double>() == 0) row[k] = nullptr;
  return row;
}

std::string csv_header() {
  std::string out;
  for (std::size_t i = 0; i < kCsvColumns.size(); ++i) out += (i ? "," : "") + kCsvColumns[i];
  return out + "\n";
}

std::string csv_line(const nlohmann::json& doc, const nlohmann::json& r, int rank, const std::string& device) {
  nlohmann::json row = csv_row(doc, r, rank, device);
  std::string out;
  for (std::size_t i = 0; i < kCsvColumns.size(); ++i) out += (i ? "," : "") + csv_field(row[kCsvColumns[i]]);
  return out + "\n";
}

// The device named in a document's context (the backend where it has no name), "" where none is.
std::string csv_device(const nlohmann::json& ctx, const std::string& backend) {
  return ctx.contains("device") ? ctx["device"].value("name", backend) : "";
}

}  // namespace

std::string csv_text(const nlohmann::json& doc) {
  std::string out = csv_header();
  const nlohmann::json& ctx = doc.contains("context") ? doc["context"] : nlohmann::json::object();
  const std::string device = csv_device(ctx, doc.value("backend", ""));
  auto emit = [&](const nlohmann::json& results, int rank, const std::string& dev) {
    for (const auto& r : results) out += csv_line(doc, r, rank, dev);
  };
  // An MPI (EP) document carries every rank's results; any other document is one rank.
  if (doc.contains("mpi") && doc["mpi"].contains("ranks")) {
    for (const auto& e : doc["mpi"]["ranks"])
      if (e.contains("results")) emit(e["results"], e.value("rank", 0), e.value("device", device));
  } else if (doc.contains("results")) {
    int rank = ctx.contains("mpi") ? ctx["mpi"].value("rank", 0) : 0;
    emit(doc["results"], rank, device);
  }
  return out;
}

namespace {

std::string dir_of(const std::string& p) {
  std::size_t slash = p.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

std::string base_of(const std::string& p) {
  std::size_t slash = p.find_last_of('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

bool starts_with(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// /dev/fd/N, /proc/self/fd/N, /proc/<pid of this process>/fd/N: the descriptor N, else -1.
int descriptor_of(const std::string& p) {
  std::string rest;
  std::string self = "/proc/" + std::to_string(::getpid()) + "/fd/";
  if (starts_with(p, "/dev/fd/"))
    rest = p.substr(8);
  else if (starts_with(p, "/proc/self/fd/"))
    rest = p.substr(14);
  else if (starts_with(p, self.c_str()))
    rest = p.substr(self.size());
  else
    return -1;
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::stoi(rest);
}

std::string errno_text(int e) { return std::strerror(e); }

// "'FILE'" or "'FILE' (-> 'TARGET')".
std::string named(const std::string& path, const OutputTarget& t) {
  std::string s = "'" + path + "'";
  if (t.fd < 0 && t.path != path) s += " (-> '" + t.path + "')";
  return s;
}

// Writes all of `text` to `fd`; returns 0 or the errno of the failure.
int write_all(int fd, const std::string& text) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return 0;
}

// A temporary name beside `target`, unique in this process and across processes.
std::string temp_name(const std::string& target) {
  static std::atomic<unsigned> counter{0};
  return dir_of(target) + "/." + base_of(target) + "." + std::to_string(::getpid()) + "." + std::to_string(counter++) +
         ".tmp";
}

}  // namespace

OutputTarget resolve_output(const std::string& path) {
  if (path.empty()) throw UsageError("an empty output path");
  OutputTarget t;
  std::string p = path;
  for (int hop = 0; hop < 40; ++hop) {
    int fd = descriptor_of(p);
    if (fd >= 0) {
      t.path = p;
      t.in_place = true;
      t.fd = fd;
      return t;
    }
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) {
      t.path = p;  // a new file (or a directory that is not there: the write says so)
      return t;
    }
    if (S_ISLNK(st.st_mode)) {
      std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 4096) + 1, '\0');
      ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
      if (n < 0) throw UsageError("cannot read the symbolic link '" + p + "': " + errno_text(errno));
      target.resize(static_cast<std::size_t>(n));
      // /proc/<pid>/fd/N of another process, or a pipe's "pipe:[123]": write through the link.
      if (starts_with(p, "/proc/")) {
        t.path = p;
        t.in_place = true;
        return t;
      }
      p = (!target.empty() && target[0] == '/') ? target : dir_of(p) + "/" + target;
      continue;
    }
    if (S_ISDIR(st.st_mode)) throw UsageError("'" + path + "' is a directory");
    t.path = p;
    t.in_place = !S_ISREG(st.st_mode);
    return t;
  }
  throw UsageError("'" + path + "': too many levels of symbolic links");
}

bool writes_in_place(const std::string& path) { return resolve_output(path).in_place; }

void check_output(const std::string& path, const std::string& option) {
  OutputTarget t;
  try {
    t = resolve_output(path);
  } catch (const UsageError& e) {
    throw UsageError(option + ": " + e.what());
  }
  if (t.fd >= 0) {
    if (::fcntl(t.fd, F_GETFL) < 0)
      throw UsageError(option + ": '" + path + "': descriptor " + std::to_string(t.fd) + " is not open");
    return;
  }
  if (t.in_place) {
    if (::access(t.path.c_str(), W_OK) != 0)
      throw UsageError(option + ": cannot write " + named(path, t) + ": " + errno_text(errno));
    return;
  }
  // A regular file is replaced through a new file beside it: try making one.
  std::string probe = temp_name(t.path);
  int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    int e = errno;
    std::string dir = dir_of(t.path);
    if (e == ENOENT) throw UsageError(option + ": cannot write " + named(path, t) + ": no directory '" + dir + "'");
    throw UsageError(option + ": cannot write " + named(path, t) + ": cannot create a file in '" + dir +
                     "': " + errno_text(e));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void write_output(const std::string& path, const std::string& text, bool nonblocking) {
  OutputTarget t;
  try {
    t = resolve_output(path);
  } catch (const UsageError& e) {
    throw OutputError(std::string("cannot write results: ") + e.what());
  }
  if (t.fd >= 0) {
    if (t.fd == 1) std::fflush(stdout);
    if (t.fd == 2) std::fflush(stderr);
    if (int e = write_all(t.fd, text)) throw OutputError("cannot write results to '" + path + "': " + errno_text(e));
    return;
  }
  if (t.in_place) {
    int flags = O_WRONLY | O_CLOEXEC | O_NOCTTY | (nonblocking ? O_NONBLOCK : 0);
    int fd = ::open(t.path.c_str(), flags);
    if (fd < 0) throw OutputError("cannot write results to " + named(path, t) + ": " + errno_text(errno));
    if (nonblocking) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    int e = write_all(fd, text);
    if (::close(fd) != 0 && e == 0 && errno != EINTR) e = errno;
    if (e) throw OutputError("cannot write results to " + named(path, t) + ": " + errno_text(e));
    return;
  }
  // A regular file: a new file beside the target, renamed over it only when all of it is written.
  std::string tmp = temp_name(t.path);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0)
    throw OutputError("cannot write results to " + named(path, t) + ": cannot create '" + tmp +
                      "': " + errno_text(errno));
  struct stat old;
  if (::stat(t.path.c_str(), &old) == 0) (void)::fchmod(fd, old.st_mode & 07777);
  int e = write_all(fd, text);
  if (::close(fd) != 0 && e == 0 && errno != EINTR) e = errno;
  if (e == 0 && ::rename(tmp.c_str(), t.path.c_str()) != 0) e = errno;
  if (e) {
    ::unlink(tmp.c_str());
    throw OutputError("cannot write results to " + named(path, t) + ": " + errno_text(e) +
                      " (its previous contents are kept)");
  }
}

std::timed_mutex& output_mutex() {
  static std::timed_mutex m;
  return m;
}

std::string ResultDb::to_csv() const {
  // As csv_text(to_json()) reads a one-rank document.
  const int rank = context_.contains("mpi") ? context_["mpi"].value("rank", 0) : 0;
  const std::string device = csv_device(context_, backend_);
  const std::string made_for = device + '\n' + std::to_string(rank);
  const nlohmann::json names = {{"benchmark", benchmark_}, {"backend", backend_}};
  std::string out = csv_header();
  for (std::size_t i = 0; i < records_.size(); ++i) {
    Kept& k = kept(i);
    if (k.csv.empty() || k.csv_for != made_for) k.csv = csv_line(names, k.json, rank, device), k.csv_for = made_for;
    out += k.csv;
  }
  return out;
}

void ResultDb::write_json(const std::string& path, bool progress) const {
  if (progress && writes_in_place(path)) return;
  write_output(path, json_text());
}
void ResultDb::write_csv(const std::string& path, bool progress) const {
  if (progress && writes_in_place(path)) return;
  write_output(path, to_csv());
}

}  // namespace hdb
