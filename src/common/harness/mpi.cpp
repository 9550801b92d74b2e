#include "harness/mpi.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "harness/stats.hpp"

namespace hdb {

MpiEnv::MpiEnv(int* argc, char*** argv) {
  if (!Comm::init(argc, argv)) return;
  world_ = Comm::world();
  Comm node = world_.node();
  local_rank_ = node.rank();
  local_size_ = node.size();
  active_ = true;
}

MpiEnv::~MpiEnv() {
  if (!active_) return;
  world_ = Comm::single();  // frees the communicator while MPI still runs
  Comm::finalize();
}

nlohmann::json MpiEnv::context() const {
  return {{"active", active_},
          {"rank", rank()},
          {"size", size()},
          {"local_rank", local_rank_},
          {"local_size", local_size_}};
}

nlohmann::json merge_rank_documents(const std::vector<nlohmann::json>& docs, const std::string& mode) {
  nlohmann::json merged;
  // Base: the first rank that produced a full document (a rank without a device may not have).
  for (const auto& d : docs)
    if (d.contains("results")) {
      merged = d;
      break;
    }
  if (merged.is_null()) merged = docs.empty() ? nlohmann::json::object() : docs.front();
  merged.erase("rank");
  merged.erase("exit_code");
  merged.erase("skipped");

  // Median kernel seconds of every ok case, per rank.
  std::map<std::string, std::vector<std::pair<int, double>>> per_case;
  std::map<std::string, nlohmann::json> first_record;
  std::vector<std::string> order;
  for (const auto& d : docs) {
    if (!d.contains("results")) continue;
    int rank = d.value("rank", 0);
    for (const auto& r : d["results"]) {
      std::string id = r["id"];
      if (!first_record.count(id)) {
        first_record[id] = r;
        order.push_back(id);
      }
      if (r["status"] == "ok" && r.contains("stats")) per_case[id].push_back({rank, r["stats"]["kernel_s"]["median"]});
    }
  }
  nlohmann::json results = nlohmann::json::array();
  for (const auto& id : order) {
    nlohmann::json r = first_record[id];
    const auto& v = per_case[id];
    std::vector<double> times;
    for (const auto& [rank, t] : v) times.push_back(t);
    Stats s = summarize(times);
    // Outliers: more than 3 scaled median absolute deviations and 10% away from the median rank.
    std::vector<double> dev;
    for (double t : times) dev.push_back(std::abs(t - s.median));
    double mad = 1.4826 * summarize(dev).median;
    nlohmann::json outliers = nlohmann::json::array();
    for (const auto& [rank, t] : v)
      if (std::abs(t - s.median) > std::max(3 * mad, 0.1 * s.median)) outliers.push_back(rank);
    nlohmann::json ranks = nlohmann::json::array();
    for (const auto& [rank, t] : v) ranks.push_back({{"rank", rank}, {"kernel_median_s", t}});
    r["across_ranks"] = {{"n", s.n},
                         {"min", s.min},
                         {"max", s.max},
                         {"mean", s.mean},
                         {"stddev", s.stddev},
                         {"cv", s.cv},
                         {"outlier_ranks", outliers},
                         {"per_rank", ranks}};
    results.push_back(r);
  }
  merged["results"] = results;

  nlohmann::json ranks = nlohmann::json::array();
  int ok = 0, skipped = 0, failed = 0;
  for (const auto& r : results) {
    ok += r["status"] == "ok";
    skipped += r["status"] == "skipped";
  }
  // A case that failed on any rank fails the run, and so does a rank that exited with a failure
  // (any code but 0 and 77, no device) without a failed case to show for it.
  nlohmann::json hosts = nlohmann::json::array();
  for (const auto& d : docs) {
    int rank_failed = 0;
    if (d.contains("results"))
      for (const auto& r : d["results"]) rank_failed += r["status"] == "failed";
    const int code = d.value("exit_code", 0);
    failed += rank_failed > 0 ? rank_failed : (code != 0 && code != 77);
    nlohmann::json entry = {{"rank", d.value("rank", 0)}, {"exit_code", code}};
    if (d.contains("skipped")) entry["skipped"] = d["skipped"];
    if (d.contains("host")) entry["host"] = d["host"];  // sent by ranks that have no context
    if (d.contains("context")) {
      entry["host"] = d["context"].value("host", "");
      if (d["context"].contains("device")) entry["device"] = d["context"]["device"].value("name", "");
    }
    if (entry.contains("host")) {
      auto h =
          std::find_if(hosts.begin(), hosts.end(), [&](const nlohmann::json& x) { return x["host"] == entry["host"]; });
      if (h != hosts.end())
        (*h)["ranks"].push_back(entry["rank"]);
      else
        hosts.push_back({{"host", entry["host"]}, {"ranks", nlohmann::json::array({entry["rank"]})}});
    }
    if (d.contains("summary")) entry["summary"] = d["summary"];
    if (d.contains("results")) entry["results"] = d["results"];
    ranks.push_back(entry);
  }
  merged["summary"] = {{"ok", ok}, {"skipped", skipped}, {"failed", failed}};
  // Complete when every rank that ran completed; else the first incomplete rank's reason.
  merged["complete"] = true;
  merged.erase("incomplete_reason");
  for (const auto& d : docs)
    if (d.contains("results") && d.value("complete", true) == false) {
      merged["complete"] = false;
      merged["incomplete_reason"] =
          "rank " + std::to_string(d.value("rank", 0)) + ": " + d.value("incomplete_reason", std::string("incomplete"));
      break;
    }
  merged["mpi"] = {{"mode", mode}, {"size", docs.size()}, {"hosts", hosts}, {"ranks", ranks}};
  return merged;
}

}  // namespace hdb
