// hdb-export: writes the exact inputs of the suite's cases and the serial reference's answers as
// NumPy files, for the peers (scripts/hdb/peers, docs/peers.md) to run on the same data.
//
//   hdb-export ra|tpch|ssb --out DIR [the benchmark's own options: --sizes, --seed, --only, --dist, ...]
//
// It runs the benchmark's own logic (bench/ra.cpp, bench/tpch.cpp, bench/ssb.cpp: case enumeration, seeded
// generation, the TPC-H generator and .tbl loader, the expected answer) through an "export"
// backend, so ids, parameters, seeds and data are the suite's by construction. The export backend
// keeps the inputs it is handed, answers with the serial reference (the session then verifies that
// answer against the benchmark's expected output, as for every backend) and writes
//   DIR/case-<k>/manifest.json   the operator and its arguments (predicate bounds, reduce op, plan)
//   DIR/case-<k>/in<i>.npy       input i as a (columns, rows) '<u4' array, column 0 the key
//   DIR/case-<k>/out.npy         the reference answer, same layout
//   DIR/cases.json               every case the benchmark declared: the suite's result entry (id,
//                                test, params, size, elements, bytes, status, reason) and its folder
// One pass per case (the timings of this run mean nothing); a case the suite skips is listed with
// its reason and has no folder.
//
// --stream: a case at a time, so that the reader can delete each folder before the next is made
// (peak disk and memory of one case): before it makes the folder of a case, hdb-export rewrites
// cases.json with every case recorded so far, prints "@ready N" (N cases listed) and waits for a line
// on its standard input; at the end it writes the final cases.json and prints "@done N".
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "bench/ra.hpp"
#include "bench/ssb.hpp"
#include "bench/tpch.hpp"
#include "harness/errors.hpp"
#include "npy.hpp"
#include "reference/ra.hpp"
#include "reference/ssb.hpp"
#include "reference/tpch.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace hdb::tools {
namespace {

void write_json(const fs::path& path, const json& j) {
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << j.dump(1) << "\n";
    if (!f) throw std::runtime_error("cannot write '" + tmp.string() + "'");
  }
  fs::rename(tmp, path);  // a reader never sees half a file
}

// The cases' folders, in the order the operators were called (one call per case that runs).
struct Exporter {
  fs::path out;
  std::string bench;
  bool stream = false;
  std::vector<std::string> dirs;

  fs::path suite() const { return out / "suite.json"; }

  fs::path next() {
    if (stream && !dirs.empty()) publish(false);  // every case before this one is recorded now
    std::string name = "case-" + std::to_string(dirs.size());
    fs::create_directories(out / name);
    dirs.push_back(name);
    return out / name;
  }

  // cases.json: the suite's results so far (ok ones paired with the operator calls, in order).
  void publish(bool final) {
    std::ifstream f(suite());
    json doc = json::parse(f);
    json cases = json::array();
    std::size_t k = 0;
    for (json r : doc.at("results")) {
      for (const char* drop : {"trials", "stats", "throughput", "phases", "verification"}) r.erase(drop);
      if (r.at("status") == "ok") {
        if (k >= dirs.size()) throw std::runtime_error("more cases than operator calls");
        r["dir"] = dirs[k++];
      }
      cases.push_back(r);
    }
    if (k != dirs.size()) throw std::runtime_error("operator calls and cases do not pair up");
    write_json(out / "cases.json",
               {{"benchmark", bench}, {"context", doc.at("context")}, {"cases", cases}, {"complete", final}});
    if (!stream) return;
    std::printf("%s %zu\n", final ? "@done" : "@ready", cases.size());
    std::fflush(stdout);
    std::string line;
    if (!final && !std::getline(std::cin, line)) throw std::runtime_error("--stream: the reader went away");
  }
};

// --- ra -----------------------------------------------------------------------------------------

void write_relation(const fs::path& path, const ra::Relation& r) {
  const int w = r.width();
  write_npy_columns(path.string(), static_cast<std::uint64_t>(w), r.rows(),
                    [&r, w](std::uint64_t c, std::vector<std::uint32_t>& col) {
                      col.resize(r.rows());
                      for (std::uint64_t i = 0; i < r.rows(); ++i)
                        col[i] = r.data()[i * static_cast<std::uint64_t>(w) + c];
                      return col.data();
                    });
}

class ExportRel : public ra::DeviceRelation {
 public:
  explicit ExportRel(ra::Relation r) : rel(std::move(r)) {
    rows_ = rel.rows();
    values_ = rel.values();
  }
  std::uint64_t capacity_words() const override { return rel.words(); }
  ra::Relation rel;
};

const ra::Relation& host(const ra::DeviceRelation& d) {
  auto* e = dynamic_cast<const ExportRel*>(&d);
  if (!e) throw std::invalid_argument("hdb-export: a relation of another backend");
  return e->rel;
}

class ExportRa : public ra::RaBackend {
 public:
  explicit ExportRa(Exporter& x) : x_(x) {}
  const VariantList& variant_table() const override {
    static const VariantTable<int> t = [] {
      std::vector<std::string> every;
      for (ra::Op op : ra::all_ops()) every.push_back(ra::test_name(op));
      // any_order: a case from unsorted input hands its inputs over as they are (no sort calls to
      // pair with cases); the answers below come from sorted copies, and for sorted input they are
      // the same.
      return VariantTable<int>("hdb-export", {{0, {"export", every, "", true}}});
    }();
    return t;
  }
  Breakdown upload(const ra::Relation& h, ra::DeviceRel& out) override {
    // The peers read one 32-bit column per word; a 64-bit key would be two columns they take apart.
    if (h.key_words() != 1) throw SkipCase("the peers are given 32-bit keys only");
    out = std::make_shared<ExportRel>(h.clone());
    return {};
  }
  Breakdown download(const ra::DeviceRelation& dev, ra::Relation& h) override {
    const ra::Relation& src = host(dev);
    if (h.values() != src.values() || h.capacity_rows() < src.rows()) h = ra::Relation(src.rows(), src.values());
    h.set_rows(src.rows());
    if (src.words()) std::memcpy(h.data(), src.data(), src.bytes());
    return {};
  }

 protected:
  using In = std::vector<const ra::DeviceRelation*>;
  Breakdown run_project(const ra::DeviceRelation& in, const ra::ProjectLayout& layout, const std::string&,
                        ra::DeviceRel& out) override {
    // 32-bit keys only (upload): words and attributes coincide.
    const std::vector<int>& columns = layout.words;
    return answer("project", {&in}, {{"columns", columns}}, ra::ref::project(host(in), columns), out);
  }
  Breakdown run_select(const ra::DeviceRelation& in, const ra::Predicate& p, const std::string&,
                       ra::DeviceRel& out) override {
    return answer("select", {&in}, {{"attribute", p.attribute}, {"lo", p.lo32()}, {"hi", p.hi32()}},
                  ra::ref::select(host(in), p), out);
  }
  Breakdown run_unique(const ra::DeviceRelation& in, const std::string&, ra::DeviceRel& out) override {
    return answer("unique", {&in}, json::object(), ra::ref::unique(ra::ref::sort(host(in))), out, "multiset");
  }
  Timed<ra::Aggregate> run_reduce(const ra::DeviceRelation& in, ra::ReduceOp op, const std::string&) override {
    HostTimer t;
    ra::Aggregate a = ra::ref::reduce(host(in), op);
    double s = t.seconds();
    json values = json::array();
    for (int v = 0; v < a.values; ++v) values.push_back(a.value[static_cast<std::size_t>(v)]);
    fs::path dir = begin("reduce", {&in}, {{"op", ra::to_string(op)}});
    manifest_["aggregate"] = values;
    manifest_["order"] = "none";
    write_json(dir / "manifest.json", manifest_);
    Timed<ra::Aggregate> r{a, {}};
    r.time.kernel = r.time.total = s;
    return r;
  }
  Breakdown run_reduce_by_key(const ra::DeviceRelation& in, ra::ReduceOp op, const std::string&,
                              ra::DeviceRel& out) override {
    return answer("reduce_by_key", {&in}, {{"op", ra::to_string(op)}},
                  ra::ref::reduce_by_key(ra::ref::sort(host(in)), op), out, "multiset");
  }
  Breakdown run_join(const ra::DeviceRelation& l, const ra::DeviceRelation& r, const std::string&,
                     ra::DeviceRel& out) override {
    return answer("join", {&l, &r}, json::object(), ra::ref::join(ra::ref::sort(host(l)), ra::ref::sort(host(r))), out,
                  "multiset");
  }
  Breakdown run_set_op(const ra::DeviceRelation& a, const ra::DeviceRelation& b, ra::SetOp op, const std::string&,
                       ra::DeviceRel& out) override {
    return answer(ra::test_name(ra::set_op_of(op)), {&a, &b}, json::object(),
                  ra::ref::set_op(ra::tuple_sorted(host(a)), ra::tuple_sorted(host(b)), op), out, "multiset");
  }
  Breakdown run_product(const ra::DeviceRelation& a, const ra::DeviceRelation& b, const std::string&,
                        ra::DeviceRel& out) override {
    return answer("product", {&a, &b}, json::object(), ra::ref::product(host(a), host(b)), out);
  }
  Breakdown run_arith(const ra::DeviceRelation& a, const ra::DeviceRelation& b, ra::ArithOp op, const std::string&,
                      ra::DeviceRel& out) override {
    return answer(ra::test_name(ra::arith_op_of(op)), {&a, &b}, json::object(), ra::ref::arith(host(a), host(b), op),
                  out);
  }
  Breakdown run_sort(const ra::DeviceRelation& in, const std::string&, ra::DeviceRel& out) override {
    return answer("sort", {&in}, json::object(), ra::ref::sort(host(in)), out);
  }

 private:
  fs::path begin(const std::string& op, const In& in, json args) {
    fs::path dir = x_.next();
    manifest_ = {{"benchmark", "ra"}, {"op", op}, {"args", std::move(args)}, {"inputs", json::array()}};
    for (std::size_t i = 0; i < in.size(); ++i) {
      std::string f = "in" + std::to_string(i) + ".npy";
      write_relation(dir / f, host(*in[i]));
      manifest_["inputs"].push_back({{"file", f}, {"rows", in[i]->rows()}, {"values", in[i]->values()}});
    }
    return dir;
  }
  // order: "exact" (the reference's order is the only correct one) or "multiset" (the operators that
  // take input in any order: their output's order is the algorithm's).
  Breakdown answer(const std::string& op, const In& in, json args, ra::Relation result, ra::DeviceRel& out,
                   const char* order = "exact") {
    fs::path dir = begin(op, in, std::move(args));
    write_relation(dir / "out.npy", result);
    manifest_["answer"] = {{"file", "out.npy"}, {"rows", result.rows()}, {"values", result.values()}};
    manifest_["order"] = order;
    write_json(dir / "manifest.json", manifest_);
    out = std::make_shared<ExportRel>(std::move(result));
    Breakdown b;
    b.kernel = b.total = 1e-9;  // nothing is measured here
    return b;
  }

  Exporter& x_;
  json manifest_;
};

// --- tpch ---------------------------------------------------------------------------------------

void write_table(const fs::path& path, const tpch::Relation& r) {
  write_npy_columns(path.string(), r.cols.size(), r.rows(),
                    [&r](std::uint64_t c, std::vector<std::uint32_t>&) { return r.cols[c].v.data(); });
}

json schema_json(const std::vector<tpch::ColumnInfo>& cols) {
  json a = json::array();
  for (const tpch::ColumnInfo& c : cols) a.push_back({{"name", c.name}, {"type", static_cast<int>(c.type)}});
  return a;
}

// A prepared case of a whole-plan benchmark (tpch, ssb) that answers with the reference's result.
template <class Run, class Answer>
class ExportRun : public Run {
 public:
  explicit ExportRun(Answer r) : r_(std::move(r)) {}
  Breakdown pass() override {
    Breakdown b;
    b.kernel = b.total = 1e-9;  // nothing is measured here
    return b;
  }
  Answer result() override { return r_; }

 private:
  Answer r_;
};
using ExportTpchRun = ExportRun<tpch::TpchRun, tpch::Relation>;

class ExportTpch : public tpch::TpchBackend {
 public:
  explicit ExportTpch(Exporter& x) : x_(x) {}
  const VariantList& variant_table() const override { return table_; }
  std::unique_ptr<tpch::TpchRun> prepare(const tpch::Plan& plan, const std::string&, Transfer) override {
    // The peers read one 32-bit column per plan column: a 64-bit column would lose its high word.
    // (Before next(): a skipped case has no folder.)
    for (const auto& in : plan.inputs)
      for (const tpch::Column& c : in->cols)
        if (c.info.wide) throw SkipCase("the peers are given 32-bit keys only");
    fs::path dir = x_.next();
    const auto schemas = tpch::plan_schemas(plan);
    json m = {{"benchmark", "tpch"},    {"kernel", plan.kernel},    {"inputs", json::array()},
              {"steps", json::array()}, {"schemas", json::array()}, {"order", "multiset"}};
    for (std::size_t i = 0; i < plan.inputs.size(); ++i) {
      std::string f = "in" + std::to_string(i) + ".npy";
      write_table(dir / f, *plan.inputs[i]);
      m["inputs"].push_back({{"file", f}, {"name", plan.inputs[i]->name}, {"rows", plan.inputs[i]->rows()}});
    }
    for (const auto& s : schemas) m["schemas"].push_back(schema_json(s));
    for (const tpch::Step& s : plan.steps) {
      const char* op = s.op == tpch::Op::Select ? "select" : s.op == tpch::Op::Join ? "join" : "project";
      m["steps"].push_back({{"op", op},
                            {"name", s.name},
                            {"in", s.in},
                            {"col", s.col},
                            {"lo", s.lo},
                            {"hi", s.hi},
                            {"right", s.right},
                            {"right_col", s.right_col},
                            {"cols", s.cols}});
    }
    tpch::Relation want = tpch::reference_execute(plan);
    write_table(dir / "out.npy", want);
    m["answer"] = {{"file", "out.npy"}, {"rows", want.rows()}, {"columns", schema_json(want.schema())}};
    write_json(dir / "manifest.json", m);
    return std::make_unique<ExportTpchRun>(std::move(want));
  }

 private:
  Exporter& x_;
  VariantTable<int> table_{"the export tpch backend", {{0, {"export", tpch::kKernels, ""}}}};
};

// --- ssb ----------------------------------------------------------------------------------------
// The five tables are written once, to DIR/tables/<table>.npy (a (columns, rows) '<u4' array of the
// columns the suite keeps, in its order: dictionary codes, yyyymmdd dates, cents), and every case's
// manifest names them: the 13 queries read the same tables, which the peer loads once. The answer
// (a few hundred rows at most, signed 64-bit sums) is in the manifest as [group values..., sum].

using ExportSsbRun = ExportRun<ssb::SsbRun, ssb::Result>;

class ExportSsb : public ssb::SsbBackend {
 public:
  explicit ExportSsb(Exporter& x) : x_(x) {}
  const VariantList& variant_table() const override { return table_; }
  std::unique_ptr<ssb::SsbRun> prepare(const ssb::Query& q, const ssb::Tables& t, const std::string&, Transfer,
                                       ssb::Residency) override {
    if (tables_.is_null()) tables_ = write_tables(t);
    fs::path dir = x_.next();
    ssb::Result want = ssb::reference_query(q.name, t);
    json group = json::array(), rows = json::array();
    for (ssb::Col c : q.group_by) group.push_back(ssb::col_name(c));
    for (const ssb::ResultRow& r : want.rows) {
      json row = json::array();
      for (std::size_t i = 0; i < q.group_by.size(); ++i) row.push_back(r.key[i]);
      row.push_back(r.value);
      rows.push_back(row);
    }
    json m = {{"benchmark", "ssb"},         {"query", q.name},    {"tables", tables_}, {"group_by", group},
              {"answer", {{"rows", rows}}}, {"order", "multiset"}};
    write_json(dir / "manifest.json", m);
    return std::make_unique<ExportSsbRun>(std::move(want));
  }

 private:
  json write_tables(const ssb::Tables& t) {
    fs::create_directories(x_.out / "tables");
    json out = json::object();
    for (int ti = 0; ti < ssb::kTables; ++ti) {
      const auto table = static_cast<ssb::Table>(ti);
      std::vector<ssb::Col> cols;
      json names = json::array();
      for (int c = 0; c < ssb::kCols; ++c)
        if (ssb::table_of(static_cast<ssb::Col>(c)) == table) {
          cols.push_back(static_cast<ssb::Col>(c));
          names.push_back(ssb::col_name(static_cast<ssb::Col>(c)));
        }
      const std::string file = std::string("tables/") + ssb::table_name(table) + ".npy";
      write_npy_columns((x_.out / file).string(), cols.size(), t.rows(table),
                        [&t, &cols](std::uint64_t c, std::vector<std::uint32_t>&) { return t[cols[c]].data(); });
      out[ssb::table_name(table)] = {{"file", "../" + file}, {"rows", t.rows(table)}, {"columns", names}};
    }
    return out;
  }

  Exporter& x_;
  json tables_;
  VariantTable<int> table_{"the export ssb backend", {{0, {"export", ssb::tests(), ""}}}};
};

// --- the platform and main ------------------------------------------------------------------------

class ExportPlatform : public Platform {
 public:
  std::string name() const override { return "export"; }
  void init(const Options&) override {}
  json context() const override { return {{"device", {{"kind", "export"}, {"name", "hdb-export"}}}}; }
  bool has_transfers() const override { return false; }
  double measure_copy_ceiling() override { return 0; }

 protected:
  std::uint64_t device_memory_bytes() const override {
    long pages = ::sysconf(_SC_PHYS_PAGES), size = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(size) : (1ull << 34);
  }
};

int usage(const char* msg) {
  std::fprintf(
      stderr,
      "hdb-export: error: %s\n"
      "usage: hdb-export ra|tpch|ssb --out DIR [--stream] [the benchmark's options: --sizes, --seed, --only, ...]\n",
      msg);
  return 2;
}

// Options of the harness that this tool sets itself (one untimed pass, its own JSON); a value given
// for them is dropped, so the driver can pass the benchmark's whole option list.
bool own_option(const std::string& a) {
  for (const char* o : {"--warmup", "--passes", "--max-passes", "--max-time", "--target-noise", "--json", "--csv",
                        "--transfer", "--device", "--platform"})
    if (a == o) return true;
  return false;
}

int run(int argc, char** argv) {
  if (argc < 2) return usage("name the benchmark: ra, tpch or ssb");
  const std::string bench = argv[1];
  if (bench != "ra" && bench != "tpch" && bench != "ssb")
    return usage(("unknown benchmark '" + bench + "' (ra, tpch, ssb)").c_str());
  std::vector<std::string> args{"hdb-export-" + bench};
  std::string out;
  Exporter x;
  x.bench = bench;
  for (int i = 2; i < argc; ++i) {
    std::string a = argv[i];
    std::string name = a.substr(0, a.find('='));
    bool inline_value = a.find('=') != std::string::npos;
    if (name == "--stream") {
      x.stream = true;
      continue;
    }
    if (name == "--out") {
      if (inline_value)
        out = a.substr(a.find('=') + 1);
      else if (i + 1 < argc)
        out = argv[++i];
      continue;
    }
    if (own_option(name)) {
      if (!inline_value) ++i;
      continue;
    }
    args.push_back(a);
  }
  if (out.empty()) return usage("--out DIR is required");
  x.out = out;
  std::error_code ec;
  fs::create_directories(x.out, ec);
  if (!fs::is_directory(x.out)) return usage(("--out: cannot make '" + out + "'").c_str());
  const fs::path suite = x.suite();
  for (const char* a : {"--warmup", "0", "--passes", "1", "--max-passes", "1", "--quiet"}) args.push_back(a);
  args.push_back("--json");
  args.push_back(suite.string());
  std::vector<char*> cargv;
  for (std::string& a : args) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  ExportPlatform platform;
  int rc;
  if (bench == "ra") {
    ExportRa backend(x);
    rc = ra::ra_main(static_cast<int>(args.size()), cargv.data(), platform, backend);
  } else if (bench == "ssb") {
    ExportSsb backend(x);
    rc = ssb::ssb_main(static_cast<int>(args.size()), cargv.data(), platform, backend);
  } else {
    ExportTpch backend(x);
    rc = tpch::tpch_main(static_cast<int>(args.size()), cargv.data(), platform, backend);
  }
  if (rc != 0) return rc;
  if (!fs::exists(suite) || fs::file_size(suite) == 0) return 0;  // --list, --help: nothing ran
  x.publish(true);
  return 0;
}

}  // namespace
}  // namespace hdb::tools

int main(int argc, char** argv) {
  try {
    return hdb::tools::run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hdb-export: error: %s\n", e.what());
    return 1;
  }
}
