#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>
#include <fstream>

#include "harness/errors.hpp"
#include "harness/result.hpp"
#include "scratch.hpp"

using namespace hdb;

namespace {
Record sample_record() {
  Record r;
  r.key = {"select", "tuned", {{"dist", "uniform"}, {"selectivity", 0.5}}, 1 << 20, Transfer::Pinned};
  r.elements = 1 << 17;
  r.input_bytes = 1 << 20;
  r.min_bytes_moved = 3 << 19;
  r.transfer_bytes = 3 << 19;
  r.checked = true;
  r.verified = true;
  r.verify_detail = "equal";
  for (double k : {1e-3, 2e-3, 3e-3}) {
    Breakdown b;
    b.h2d = 1e-3;
    b.kernel = k;
    b.d2h = 1e-3;
    b.total = k + 2e-3;
    b.add_phase("partition", k / 2);
    b.add_phase("gather", k / 2);
    b.add_phase("sync", 1e-6, PhaseKind::Host);
    r.trials.push_back(b);
  }
  return r;
}
}  // namespace

TEST(Results, ThroughputAndParityFromMedians) {
  Record r = sample_record();
  Throughput t = throughput(r, {1.5, "copy"});
  EXPECT_NEAR(t.kernel_gbps, (1 << 20) / 2e-3 / 1e9, 1e-9);
  EXPECT_NEAR(t.total_gbps, (1 << 20) / 4e-3 / 1e9, 1e-9);
  EXPECT_NEAR(t.parity, 2e-3 / 2e-3, 1e-12);
  EXPECT_NEAR(t.pct_of_peak, 100.0 * (3 << 19) / 2e-3 / 1e9 / 1.5, 1e-9);
  EXPECT_NEAR(t.elements_per_s, (1 << 17) / 2e-3, 1e-6);
  EXPECT_NEAR(t.transfer_gbps, (3 << 19) / 2e-3 / 1e9, 1e-9);
}

TEST(Results, ABusCopyIsTransferTimeNotKernelTime) {
  Record r;
  r.key = {"h2d", "copy", {}, 1 << 20, Transfer::Pinned};
  r.input_bytes = r.transfer_bytes = 1 << 20;
  for (double s : {1e-4, 2e-4, 3e-4}) r.trials.push_back(Breakdown::transfer_only(true, s));
  EXPECT_EQ(r.stat("kernel").median, 0);
  EXPECT_EQ(r.stat("h2d").median, 2e-4);
  Throughput t = throughput(r, {10, "copy"});
  EXPECT_EQ(t.kernel_gbps, 0);
  EXPECT_NEAR(t.transfer_gbps, (1 << 20) / 2e-4 / 1e9, 1e-9);
  EXPECT_EQ(r.trials[0].measured(), 1e-4);  // the stopping rule watches the copy
}

TEST(Results, IdsAreMadeOnceFromTypedParams) {
  CaseKey k{"join", "paper", {{"dist", "zipf"}, {"match", 0.25}, {"fanout", 4}}, 1 << 25, Transfer::Pageable};
  EXPECT_EQ(k.id(), "join/paper[dist=zipf,match=0.25,fanout=4,transfer=pageable]@32M");
  EXPECT_EQ(CaseKey({"memcpy", "serial", {}, 32768}).id(), "memcpy/serial@32K");
  EXPECT_EQ(CaseKey({"A", "ra", {{"data", "tpch"}, {"sf", 0.1}}, 0}).id(), "A/ra[data=tpch,sf=0.1]");
  EXPECT_EQ(param_text(ParamValue(1.0 / 3)), "0.3333333333333333");
  EXPECT_EQ(param_text(ParamValue(100.0)), "100");
  EXPECT_EQ(param_text(ParamValue(1e-5)), "1e-05");
  EXPECT_EQ(param_text(ParamValue(0.1)), "0.1");
  EXPECT_TRUE(k.params_json()["match"].is_number());
}

TEST(Results, OnlyMatchesTestVariantOrWholeId) {
  CaseKey k{"select", "paper", {{"dist", "uniform"}, {"selectivity", 0.5}}, 1 << 20, Transfer::Pinned};
  auto sel = [&](std::vector<std::string> p) { return CaseFilter(std::move(p)).selects(k); };
  EXPECT_TRUE(sel({"select"}));
  EXPECT_TRUE(sel({"select/paper"}));
  EXPECT_TRUE(sel({"sel*"}));
  EXPECT_TRUE(sel({k.id()}));  // an id from --list, brackets and all
  EXPECT_TRUE(sel({"select/*[*selectivity=0.5*]@1M"}));
  EXPECT_FALSE(sel({"select/paper[dist=uniform,selectivity=0.5,transfer=pageable]@1M"}));
  EXPECT_FALSE(sel({"select/*@2M"}));
  EXPECT_FALSE(sel({"join"}));
  EXPECT_TRUE(CaseFilter({k.id()}).may_select("select", "paper"));
  EXPECT_FALSE(CaseFilter({k.id()}).may_select("select", "cub"));
  EXPECT_TRUE(CaseFilter({"*@1M"}).may_select("join", "cub"));
}

TEST(Results, JsonFollowsTheSchema) {
  ResultDb db("ra", "cuda");
  db.set_context({{"host", "h"}});
  db.ceiling().add(0, 2.0);
  db.add(sample_record());
  Record skipped;
  skipped.key = {"join", "paper", {}, 1ull << 30};
  skipped.status = Status::Skipped;
  skipped.reason = "out of device memory";
  db.add(skipped);
  nlohmann::json j = db.to_json();
  EXPECT_EQ(j["schema"], "hetdb-bench/2");
  EXPECT_EQ(j["benchmark"], "ra");
  EXPECT_EQ(j["backend"], "cuda");
  EXPECT_EQ(j["ceiling"]["memory_copy_gbps"], 2.0);
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& r = j["results"][0];
  EXPECT_EQ(r["id"], "select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]@1M");
  EXPECT_EQ(r["size_label"], "2^20");
  EXPECT_EQ(r["params"]["selectivity"], 0.5);
  EXPECT_FALSE(r["params"].contains("transfer"));  // stored once, in "transfer"
  EXPECT_EQ(r["transfer"], "pinned");
  EXPECT_EQ(r["verification"]["checked"], true);
  ASSERT_EQ(r["phases"].size(), 3u);
  EXPECT_EQ(r["phases"][0], (nlohmann::json{{"name", "partition"}, {"kind", "kernel"}}));
  EXPECT_EQ(r["phases"][2], (nlohmann::json{{"name", "sync"}, {"kind", "host"}}));
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["trials"].size(), 3u);
  EXPECT_EQ(r["trials"][0]["phases_s"]["partition"], 0.5e-3);
  EXPECT_EQ(r["stats"]["kernel_s"]["median"], 2e-3);
  EXPECT_EQ(r["stats"]["phases_s"]["gather"]["n"], 3);
  EXPECT_GT(r["throughput"]["pct_of_peak"].get<double>(), 0);
  EXPECT_EQ(r["bytes"]["min_moved"], 3 << 19);
  EXPECT_EQ(j["results"][1]["status"], "skipped");
  EXPECT_EQ(j["results"][1]["reason"], "out of device memory");
  EXPECT_FALSE(j["results"][1].contains("stats"));
  EXPECT_EQ(j["summary"]["ok"], 1);
  EXPECT_EQ(j["summary"]["skipped"], 1);
}

TEST(Results, CsvHasAHeaderAndOneRowPerRecord) {
  ResultDb db("bus", "cpu");
  db.add(sample_record());
  db.set_context({{"device", {{"name", "Some CPU"}}}});
  db.add(sample_record());
  std::string csv = db.to_csv();
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  std::string header;
  for (const auto& c : kCsvColumns) header += (header.empty() ? "" : ",") + c;
  EXPECT_EQ(csv.substr(0, csv.find('\n')), header);
  EXPECT_NE(
      csv.find("\"select/tuned[dist=uniform,selectivity=0.5,transfer=pinned]@1M\",bus,cpu,0,Some CPU,select,tuned,"
               "dist=uniform;selectivity=0.5,1048576,pinned,ok,1,1,3,0.002,"),
      std::string::npos);
}

// The files are written from each record's kept JSON and CSV row: they must read exactly as the
// document rebuilt whole, also after a later ceiling sample moves a record's nearest ceiling and
// after the context names another device.
TEST(Results, KeptRecordsWriteWhatTheWholeDocumentSays) {
  ResultDb db("ra", "cuda");
  auto same = [&db] {
    EXPECT_EQ(db.json_text(), db.to_json().dump(1) + "\n");
    EXPECT_EQ(db.to_csv(), csv_text(db.to_json()));
  };
  same();  // no results: "results": []
  db.set_context({{"host", "h"}, {"results", nlohmann::json::array()}});
  db.ceiling().add(0, 2.0);
  Record early = sample_record();
  early.timed_at_s = 1;
  db.add(early);
  same();
  Record late = sample_record();
  late.key.size_bytes = 2 << 20;
  late.timed_at_s = 9;
  db.add(late);
  const double before = db.to_json()["results"][1]["throughput"]["ceiling_gbps"];
  same();
  db.ceiling().add(10, 4.0);  // nearer to the second record: its figures change
  EXPECT_NE(db.to_json()["results"][1]["throughput"]["ceiling_gbps"], before);
  same();
  db.set_context({{"device", {{"name", "Another"}}}, {"mpi", {{"rank", 3}}}});
  same();
  EXPECT_NE(db.to_csv().find(",3,Another,"), std::string::npos);
  db.set_incomplete("interrupted by signal 15");
  same();
}

// A figure that does not apply is 0 in the document and an empty cell in the CSV: a CPU result has no
// transfers (h2d, d2h, transfer_gbps, parity) and, without a ceiling sample, no % of peak.
TEST(Results, CsvLeavesFiguresThatDoNotApplyEmpty) {
  ResultDb db("ra", "cpu");
  Record r = sample_record();
  for (auto& t : r.trials) t.h2d = t.d2h = 0, t.total = t.kernel;
  db.add(r);
  const nlohmann::json j = db.to_json()["results"][0];
  EXPECT_EQ(j["stats"]["h2d_s"]["median"], 0.0);
  EXPECT_EQ(j["throughput"]["parity"], 0.0);
  EXPECT_EQ(j["throughput"]["pct_of_peak"], 0.0);
  const std::string csv = db.to_csv();
  const std::string row = csv.substr(csv.find('\n') + 1);
  std::vector<std::string> cells;
  for (std::size_t b = 0, e; b <= row.size(); b = e + 1) {
    e = row.find_first_of(",\n", b);
    if (row[b] == '"') e = row.find('"', b + 1) + 1;  // a quoted id holds commas
    if (e == std::string::npos) e = row.size();
    cells.push_back(row.substr(b, e - b));
    if (row[e] == '\n') break;
  }
  ASSERT_EQ(cells.size(), kCsvColumns.size());
  auto cell = [&](const char* name) {
    return cells[std::find(kCsvColumns.begin(), kCsvColumns.end(), name) - kCsvColumns.begin()];
  };
  for (const char* empty : {"h2d_median_s", "d2h_median_s", "transfer_gbps", "parity", "pct_of_peak", "ceiling_gbps"})
    EXPECT_EQ(cell(empty), "") << empty;
  EXPECT_EQ(cell("kernel_median_s"), "0.002");
  EXPECT_EQ(cell("total_cv"), cell("kernel_cv"));
}

TEST(Results, FilesAreWrittenAtomically) {
  std::string path = test::scratch("results.json");
  ResultDb db("bus", "cpu");
  db.add(sample_record());
  db.write_json(path);
  std::ifstream f(path);
  nlohmann::json j = nlohmann::json::parse(f);
  EXPECT_EQ(j["results"].size(), 1u);
  // Nothing but the file itself is left beside it.
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(test::scratch_dir()))
    files += e.path().filename() != "results.json";
  EXPECT_EQ(files, 0);
  std::remove(path.c_str());
}

TEST(Results, CasesAreTheProductOfDeclaredAxes) {
  std::vector<Params> states = axis_product({{"dist", {"uniform", "zipf"}}, {"match", {0.5, 1.0}}, {"fanout", {4}}});
  ASSERT_EQ(states.size(), 4u);
  EXPECT_EQ(states[0], (Params{{"dist", "uniform"}, {"match", 0.5}, {"fanout", 4}}));
  EXPECT_EQ(states[1], (Params{{"dist", "uniform"}, {"match", 1.0}, {"fanout", 4}}));  // the last axis varies fastest
  EXPECT_EQ(states[3], (Params{{"dist", "zipf"}, {"match", 1.0}, {"fanout", 4}}));
  EXPECT_EQ(param(states[2], "dist"), "zipf");
  EXPECT_THROW(param(states[0], "k"), std::logic_error);
  EXPECT_EQ(axis_product({}).size(), 1u);          // no axes: one case
  EXPECT_TRUE(axis_product({{"k", {}}}).empty());  // an empty axis: no case
}

namespace {
std::string read_all(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}
}  // namespace

TEST(Results, DocumentsSayWhetherTheRunCompleted) {
  ResultDb db("bus", "cpu");
  db.add(sample_record());
  nlohmann::json j = db.to_json();
  EXPECT_EQ(j["complete"], false);  // a new database is a running one
  EXPECT_EQ(j["incomplete_reason"], "running");
  db.set_incomplete("interrupted by signal 15");
  EXPECT_EQ(db.to_json()["incomplete_reason"], "interrupted by signal 15");
  db.set_complete();
  j = db.to_json();
  EXPECT_EQ(j["complete"], true);
  EXPECT_FALSE(j.contains("incomplete_reason"));
}

TEST(Results, SymlinksAreFollowedAndTheirTargetReplaced) {
  std::string target = test::scratch("target.json"), link = test::scratch("link.json");
  { std::ofstream(target) << "old"; }
  ::chmod(target.c_str(), 0640);
  ASSERT_EQ(::symlink("target.json", link.c_str()), 0);  // relative to the link's folder
  write_output(link, "new\n");
  struct stat st;
  ASSERT_EQ(::lstat(link.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));  // the link stays a link
  EXPECT_EQ(read_all(target), "new\n");
  ASSERT_EQ(::stat(target.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);  // the replaced file keeps its permissions
  // A dangling link: the file it names is made.
  std::string dangling = test::scratch("dangling.json");
  ASSERT_EQ(::symlink(test::scratch("made.json").c_str(), dangling.c_str()), 0);
  write_output(dangling, "made\n");
  EXPECT_EQ(read_all(test::scratch("made.json")), "made\n");
  ASSERT_EQ(::lstat(dangling.c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_FALSE(resolve_output(link).in_place);
  EXPECT_EQ(resolve_output(link).path, target);
}

TEST(Results, FifosAreWrittenInPlace) {
  std::string fifo = test::scratch("results.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_TRUE(resolve_output(fifo).in_place);
  std::string got;
  std::thread reader([&] { got = read_all(fifo); });
  ResultDb db("bus", "cpu");
  db.add(sample_record());
  db.write_json(fifo, /*progress=*/true);  // special files get one document, at the end
  db.set_complete();
  db.write_json(fifo);
  reader.join();
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));  // still a FIFO, never replaced
  nlohmann::json j = nlohmann::json::parse(got);
  EXPECT_EQ(j["complete"], true);
  // A FIFO nobody reads is not waited for when asked so.
  EXPECT_THROW(write_output(fifo, "x", /*nonblocking=*/true), OutputError);
}

TEST(Results, DescriptorsAreWrittenAsTheyAre) {
  EXPECT_EQ(resolve_output("/dev/stdout").fd, 1);
  EXPECT_EQ(resolve_output("/dev/fd/2").fd, 2);
  EXPECT_EQ(resolve_output("/proc/self/fd/1").fd, 1);
  ::testing::internal::CaptureStdout();
  write_output("/dev/stdout", "{\"to\": \"stdout\"}\n");
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "{\"to\": \"stdout\"}\n");
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(resolve_output("/dev/null").in_place);
  write_output("/dev/null", "nothing");
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));  // still the device
}

TEST(Results, UnwritablePathsAreToldUpFront) {
  EXPECT_THROW(check_output(test::scratch("no-such-dir/x.json"), "--json"), UsageError);
  EXPECT_THROW(check_output(test::scratch_dir(), "--json"), UsageError);  // a directory
  try {
    check_output(test::scratch("no-such-dir/x.json"), "--json");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--json: cannot write"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no-such-dir"), std::string::npos) << e.what();
  }
  check_output(test::scratch("fine.json"), "--json");
  EXPECT_FALSE(std::filesystem::exists(test::scratch("fine.json")));  // the check writes nothing there
  // A later write error keeps the previous file and names it.
  std::string path = test::scratch("kept.json");
  write_output(path, "first\n");
  std::string file_as_dir = test::scratch("kept.json/x.json");
  try {
    write_output(file_as_dir, "second\n");
    ADD_FAILURE() << "no OutputError";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find(file_as_dir), std::string::npos) << e.what();
  }
  EXPECT_EQ(read_all(path), "first\n");
}
