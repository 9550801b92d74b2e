#include "harness/result.hpp"

#include <cstdio>
#include <fstream>
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
  return {{"n", s.n}, {"min", s.min}, {"median", s.median}, {"mean", s.mean},
          {"max", s.max}, {"stddev", s.stddev}, {"cv", s.cv}};
}
}  // namespace

Stats Record::stat(const char* which) const {
  std::vector<double> v;
  v.reserve(trials.size());
  for (const auto& t : trials) v.push_back(field(t, which));
  return summarize(std::move(v));
}

Throughput throughput(const Record& r, double ceiling_gbps) {
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
    if (ceiling_gbps > 0) t.pct_of_peak = 100.0 * t.moved_gbps / ceiling_gbps;
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

nlohmann::json ResultDb::record_json(const Record& r, double ceiling_gbps) {
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
  // Each named phase is declared once, with its kind; trials carry only its seconds.
  std::vector<const Phase*> declared;
  nlohmann::json trials = nlohmann::json::array();
  for (const auto& t : r.trials) {
    nlohmann::json ph = nlohmann::json::object();
    for (const Phase& p : t.phases) {
      ph[p.name] = p.seconds;
      bool seen = false;
      for (const Phase* d : declared) seen |= d->name == p.name;
      if (!seen) declared.push_back(&p);
    }
    trials.push_back({{"h2d_s", t.h2d}, {"kernel_s", t.kernel}, {"d2h_s", t.d2h}, {"total_s", t.total}, {"phases_s", ph}});
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
    Throughput tp = throughput(r, ceiling_gbps);
    j["throughput"] = {{"kernel_gbps", tp.kernel_gbps}, {"total_gbps", tp.total_gbps},
                       {"transfer_gbps", tp.transfer_gbps}, {"elements_per_s", tp.elements_per_s},
                       {"moved_gbps", tp.moved_gbps}, {"pct_of_peak", tp.pct_of_peak}, {"parity", tp.parity}};
  }
  return j;
}

nlohmann::json ResultDb::to_json() const {
  nlohmann::json results = nlohmann::json::array();
  for (const auto& r : records_) results.push_back(record_json(r, ceiling_gbps_));
  nlohmann::json j = {{"schema", kSchema},
                      {"benchmark", benchmark_},
                      {"backend", backend_},
                      {"context", context_},
                      {"ceiling", {{"memory_copy_gbps", ceiling_gbps_},
                                   {"definition", "measured copy bandwidth, bytes read + bytes written"}}},
                      {"results", results},
                      {"summary", {{"ok", count(Status::Ok)}, {"skipped", count(Status::Skipped)},
                                   {"failed", count(Status::Failed)}}}};
  if (!mpi_.is_null()) j["mpi"] = mpi_;
  return j;
}

const std::vector<std::string> kCsvColumns = {
    "id", "benchmark", "backend", "rank", "device", "test", "variant", "params", "size_bytes", "transfer",
    "status", "checked", "verified", "passes", "kernel_median_s", "kernel_cv", "total_median_s", "total_cv",
    "h2d_median_s", "d2h_median_s", "kernel_gbps", "total_gbps", "transfer_gbps", "elements_per_s", "moved_gbps",
    "pct_of_peak", "parity", "elements", "input_bytes", "min_moved_bytes", "transfer_bytes", "reason"};

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

// One row's fields, read from the result's JSON by name.
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
  return {{"id", id}, {"benchmark", doc.value("benchmark", "")}, {"backend", doc.value("backend", "")},
          {"rank", rank}, {"device", device}, {"test", r.value("test", "")}, {"variant", r.value("variant", "")},
          {"params", params}, {"size_bytes", r.value("size_bytes", 0ull)}, {"transfer", r.value("transfer", "none")},
          {"status", r.value("status", "")}, {"checked", at("verification", "checked")},
          {"verified", at("verification", "verified")}, {"passes", r.contains("trials") ? r["trials"].size() : 0},
          {"kernel_median_s", at("stats", "kernel_s", "median")}, {"kernel_cv", at("stats", "kernel_s", "cv")},
          {"total_median_s", at("stats", "total_s", "median")}, {"total_cv", at("stats", "total_s", "cv")},
          {"h2d_median_s", at("stats", "h2d_s", "median")}, {"d2h_median_s", at("stats", "d2h_s", "median")},
          {"kernel_gbps", at("throughput", "kernel_gbps")}, {"total_gbps", at("throughput", "total_gbps")},
          {"transfer_gbps", at("throughput", "transfer_gbps")}, {"elements_per_s", at("throughput", "elements_per_s")},
          {"moved_gbps", at("throughput", "moved_gbps")}, {"pct_of_peak", at("throughput", "pct_of_peak")},
          {"parity", at("throughput", "parity")}, {"elements", r.value("elements", 0ull)},
          {"input_bytes", at("bytes", "input")}, {"min_moved_bytes", at("bytes", "min_moved")},
          {"transfer_bytes", at("bytes", "transfer")}, {"reason", r.value("reason", "")}};
}

}  // namespace

std::string csv_text(const nlohmann::json& doc) {
  std::string out;
  for (std::size_t i = 0; i < kCsvColumns.size(); ++i) out += (i ? "," : "") + kCsvColumns[i];
  out += "\n";
  const nlohmann::json& ctx = doc.contains("context") ? doc["context"] : nlohmann::json::object();
  const std::string device = ctx.contains("device") ? ctx["device"].value("name", doc.value("backend", "")) : "";
  auto emit = [&](const nlohmann::json& results, int rank, const std::string& dev) {
    for (const auto& r : results) {
      nlohmann::json row = csv_row(doc, r, rank, dev);
      for (std::size_t i = 0; i < kCsvColumns.size(); ++i) out += (i ? "," : "") + csv_field(row[kCsvColumns[i]]);
      out += "\n";
    }
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

void write_file_atomically(const std::string& path, const std::string& text) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw UsageError("cannot write '" + tmp + "'");
    f << text;
    if (!f.flush()) throw UsageError("cannot write '" + tmp + "'");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) throw UsageError("cannot rename '" + tmp + "' to '" + path + "'");
}

void ResultDb::write_json(const std::string& path) const { write_file_atomically(path, to_json().dump(1) + "\n"); }
void ResultDb::write_csv(const std::string& path) const { write_file_atomically(path, csv_text(to_json())); }

}  // namespace hdb
