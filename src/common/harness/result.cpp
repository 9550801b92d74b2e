#include "harness/result.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "harness/errors.hpp"
#include "harness/sizes.hpp"

namespace hdb {

std::string CaseKey::id() const {
  std::string s = test + "/" + variant;
  if (!params.empty()) {
    s += "[";
    for (std::size_t i = 0; i < params.size(); ++i) s += (i ? "," : "") + params[i].first + "=" + params[i].second;
    s += "]";
  }
  return s + "@" + format_size(size_bytes);
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
  nlohmann::json params = nlohmann::json::object();
  for (const auto& [k, v] : r.key.params) params[k] = v;
  nlohmann::json j = {
      {"id", r.key.id()},
      {"test", r.key.test},
      {"variant", r.key.variant},
      {"params", params},
      {"size_bytes", r.key.size_bytes},
      {"size_label", size_label(r.key.size_bytes)},
      {"transfer", r.transfer},
      {"status", to_string(r.status)},
      {"reason", r.reason},
      {"verification", {{"verified", r.verified}, {"detail", r.verify_detail}}},
      {"elements", r.elements},
      {"bytes", {{"input", r.input_bytes}, {"min_moved", r.min_bytes_moved}, {"transfer", r.transfer_bytes}}},
      {"extra", r.extra},
  };
  nlohmann::json trials = nlohmann::json::array();
  std::vector<std::string> phase_names;
  for (const auto& t : r.trials) {
    nlohmann::json ph = nlohmann::json::object();
    for (const auto& [name, sec] : t.phases) {
      ph[name] = sec;
      bool seen = false;
      for (const auto& n : phase_names) seen |= n == name;
      if (!seen) phase_names.push_back(name);
    }
    trials.push_back({{"h2d_s", t.h2d}, {"kernel_s", t.kernel}, {"d2h_s", t.d2h}, {"total_s", t.total}, {"phases_s", ph}});
  }
  j["trials"] = trials;
  if (!r.trials.empty()) {
    nlohmann::json st = {{"kernel_s", stats_json(r.stat("kernel"))},
                         {"total_s", stats_json(r.stat("total"))},
                         {"h2d_s", stats_json(r.stat("h2d"))},
                         {"d2h_s", stats_json(r.stat("d2h"))}};
    nlohmann::json phases = nlohmann::json::object();
    for (const auto& name : phase_names) {
      std::vector<double> v;
      for (const auto& t : r.trials)
        for (const auto& [n, sec] : t.phases)
          if (n == name) v.push_back(sec);
      phases[name] = stats_json(summarize(v));
    }
    st["phases_s"] = phases;
    j["stats"] = st;
    Throughput tp = throughput(r, ceiling_gbps);
    j["throughput"] = {{"kernel_gbps", tp.kernel_gbps}, {"total_gbps", tp.total_gbps},
                       {"elements_per_s", tp.elements_per_s}, {"moved_gbps", tp.moved_gbps},
                       {"pct_of_peak", tp.pct_of_peak}, {"parity", tp.parity}};
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

std::string ResultDb::to_csv() const {
  std::ostringstream os;
  os << "benchmark,backend,test,variant,params,size_bytes,transfer,status,verified,passes,"
        "kernel_median_s,kernel_cv,total_median_s,h2d_median_s,d2h_median_s,"
        "kernel_gbps,total_gbps,elements_per_s,pct_of_peak,parity,reason\n";
  auto quote = [](std::string s) {
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
  };
  for (const auto& r : records_) {
    std::string params;
    for (std::size_t i = 0; i < r.key.params.size(); ++i)
      params += (i ? ";" : "") + r.key.params[i].first + "=" + r.key.params[i].second;
    Stats k = r.stat("kernel"), t = r.stat("total"), h = r.stat("h2d"), d = r.stat("d2h");
    Throughput tp = throughput(r, ceiling_gbps_);
    os << benchmark_ << ',' << backend_ << ',' << quote(r.key.test) << ',' << quote(r.key.variant) << ','
       << quote(params) << ',' << r.key.size_bytes << ',' << r.transfer << ',' << to_string(r.status) << ','
       << (r.verified ? 1 : 0) << ',' << r.trials.size() << ',' << k.median << ',' << k.cv << ',' << t.median
       << ',' << h.median << ',' << d.median << ',' << tp.kernel_gbps << ',' << tp.total_gbps << ','
       << tp.elements_per_s << ',' << tp.pct_of_peak << ',' << tp.parity << ',' << quote(r.reason) << '\n';
  }
  return os.str();
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
void ResultDb::write_csv(const std::string& path) const { write_file_atomically(path, to_csv()); }

}  // namespace hdb
