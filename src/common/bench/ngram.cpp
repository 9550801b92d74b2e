#include "bench/ngram.hpp"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>

#include "algorithms/ngram_search.hpp"
#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "harness/parallel.hpp"
#include "reference/ngram_reference.hpp"
#include "workloads/text_queries.hpp"

namespace hdb {

using ngram::NgramIndex;
using ngram::QueryPlan;

namespace {
// A query as one field of --output's tab-separated lines: backslash, TAB, newline and carriage
// return are written as \\, \t, \n and \r (the header line says so), so a line is always one query.
std::string escape_field(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      default: out += c;
    }
  }
  return out;
}
}  // namespace

void plan_index_copy(MemoryPlan& plan, const NgramIndex& ix) {
  plan.add("posting articles", 4 * ix.post_article.size())
      .add("posting maps", 4 * ix.post_map.size())
      .add("list offsets", 4 * ix.list_offsets.size())
      .add("directory offsets", 4 * ix.dir_offsets.size())
      .add("directory bins", 4 * ix.dir_bin.size())
      .add("directory starts", 4 * ix.dir_start.size());
}

void plan_dense_work(MemoryPlan& plan, const NgramIndex& ix) {
  std::uint64_t a = ix.articles;
  plan.add("per-article maps", 4 * a)
      .add("per-article counter planes", 4 * ngram::kPlanes * a)
      .add("alive flags", a)
      .add("hit bitmap", std::uint64_t{ix.bins()} * ngram::kBinSize / 8);
}

void plan_packed_queries(MemoryPlan& plan, const std::vector<QueryPlan>& plans) {
  std::uint64_t lists = 0;
  for (const QueryPlan& p : plans) lists += p.lists.size();
  // The device copies hold at least one element each.
  plan.add("packed query lists", 4 * std::max<std::uint64_t>(lists, 1))
      .add("query offsets", 4 * (plans.size() + 1))
      .add("query thresholds", 4 * std::max<std::size_t>(plans.size(), 1));
}

std::vector<NgramVariant> ngram_variants(const NgramBackend& backend) {
  std::vector<NgramVariant> out;
  for (bool batch : {false, true})
    for (const std::string& name : backend.variant_table().names(batch ? "batch" : "search"))
      out.push_back({name, batch, backend.on_device()});
  return out;
}

std::vector<int> parse_error_levels(const std::string& text) {
  std::vector<int> out;
  auto num = [&](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 3)
      throw UsageError("--errors: '" + s + "' is not an error level (0.." + std::to_string(ngram::kMaxQueryTrigrams) +
                       ")");
    int v = std::stoi(s);
    if (v > ngram::kMaxQueryTrigrams)
      throw UsageError("--errors: " + s + " is above the maximum " + std::to_string(ngram::kMaxQueryTrigrams));
    return v;
  };
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    std::string item = text.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    std::size_t dash = item.find('-');
    if (dash == std::string::npos) {
      out.push_back(num(item));
    } else {
      int a = num(item.substr(0, dash)), b = num(item.substr(dash + 1));
      if (a > b) throw UsageError("--errors: range '" + item + "' is empty");
      for (int v = a; v <= b; ++v) out.push_back(v);
    }
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

namespace {

struct NgramOptions {
  std::string corpus = "auto";  // auto | gcide | synthetic | <file>
  std::string gcide_dir = "/usr/share/dictd";
  std::string queries_file;
  std::string output;
  std::string errors = "0-12";
  std::size_t query_count = 100;
  std::size_t query_min = 7, query_max = 110;
  int words_per_segment = 9;
  std::uint64_t vocabulary = 50000;
  double zipf_s = 1.0;
  std::vector<int> levels;
};

// What ngram::build_ngram_index allocates besides the index it returns, for `postings` postings:
// every chunk's (3-gram, map) pairs and pairs per article, per-chunk counts and write positions per
// 3-gram, and the list totals.
std::uint64_t index_build_scratch(std::uint64_t postings, std::uint64_t articles, int threads) {
  auto t = static_cast<std::uint64_t>(std::max(threads, 1));
  std::uint64_t chunks = std::min<std::uint64_t>(t, articles / 64 + 1);
  return 8 * postings + 4 * articles + 16 * std::uint64_t{ngram::kTrigrams} * chunks + 8 * (ngram::kTrigrams + 1);
}

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Everything one corpus size shares across error levels and variants.
struct SizeState {
  std::uint64_t size = 0;
  TextCorpus corpus;
  NgramIndex index;
  double build_seconds = 0;
  std::vector<std::string> base_queries;
  std::map<int, std::vector<std::string>> queries;
  std::map<int, std::vector<QueryPlan>> plans;
  std::map<int, std::vector<std::vector<std::uint32_t>>> reference;
  std::map<int, std::vector<double>> baseline_seconds;  // per-query medians
  bool loaded = false;
  nlohmann::json device;
  std::string skip_reason;
};

class NgramRun {
 public:
  NgramRun(Session& s, NgramBackend& b, const NgramOptions& o) : s_(s), b_(b), o_(o) {}

  void run() {
    if (!o_.output.empty() && !s_.listing()) {
      out_.open(o_.output, std::ios::trunc);
      if (!out_) throw UsageError("--output: cannot write '" + o_.output + "'");
      out_ << "# size_bytes\terror_level\tquery_index\tquery (escaped: \\\\ backslash, \\t tab, \\n newline, \\r "
              "carriage "
              "return)\thits (article ids)\n";
    }
    // The host baseline every speed-up is relative to, then the backend's table.
    std::vector<NgramVariant> vars{{NgramVariant::kBaseline, false, false}};
    for (const NgramVariant& v : ngram_variants(b_)) vars.push_back(v);
    for (std::uint64_t size : s_.sizes()) {
      // The last size's index leaves the device before this size's memory-fit checks (on CUDA they
      // compare with free device memory), and the backend lets go of the host index it points to.
      b_.release_index();
      state_.reset();
      s_.run(CaseKey{"index", "build", {}, size},
             CaseSetup{[&](MemoryPlan& plan) { plan_index_case(size, plan); }, [&] { return index_case(size); }});
      for (bool batch : {false, true})
        for (int k : o_.levels)
          for (const auto& v : vars)
            if (v.batch == batch)
              for (Transfer t : v.device ? s_.transfers() : std::vector<Transfer>{Transfer::None}) {
                CaseKey key{batch ? "batch" : "search", v.name, {{"k", k}}, size, t};
                if (t == Transfer::Pageable)
                  s_.skip(key, NgramVariant::kPinnedOnly);
                else
                  s_.run(key, CaseSetup{[&](MemoryPlan& plan) { plan_search_case(size, k, v, plan); },
                                        [&] { return search_case(size, k, v); }});
              }
    }
  }

 private:
  const TextCorpus& full_corpus() {
    if (!full_) {
      std::uint64_t most = *std::max_element(s_.sizes().begin(), s_.sizes().end());
      full_ = std::make_unique<TextCorpus>(kind() == "gcide" ? load_gcide(o_.gcide_dir, most)
                                                             : load_text_lines(o_.corpus, most));
    }
    return *full_;
  }
  std::string kind() const {
    if (o_.corpus == "auto") return gcide_present(o_.gcide_dir) ? "gcide" : "synthetic";
    if (o_.corpus == "gcide" || o_.corpus == "synthetic") return o_.corpus;
    return "file";
  }

  SizeState& state(std::uint64_t size) {
    if (state_ && state_->size == size) {
      if (!state_->skip_reason.empty()) throw SkipCase(state_->skip_reason);
      return *state_;
    }
    state_ = std::make_unique<SizeState>();
    SizeState& st = *state_;
    st.size = size;
    try {
      if (kind() == "synthetic") {
        SyntheticTextSpec spec;
        spec.vocabulary = o_.vocabulary;
        spec.zipf_s = o_.zipf_s;
        st.corpus = synthetic_corpus(size, s_.seed("ngram-corpus", size), spec);
      } else {
        // Size S takes the leading documents up to S bytes; a size beyond the corpus takes all of
        // it, once: larger sizes after that would repeat the same case.
        const TextCorpus& full = full_corpus();
        if (!full.truncated && full.raw_bytes < size) {
          if (whole_used_ && whole_used_ != size)
            throw SkipCase("the corpus (" + full.source + ") holds only " + std::to_string(full.raw_bytes) +
                           " bytes of text, all used at size " + std::to_string(whole_used_));
          whole_used_ = size;
        }
        st.corpus = full.prefix(size);
      }
      if (st.corpus.size() == 0) throw SkipCase("no document fits in " + std::to_string(size) + " bytes");
      int threads = effective_threads(s_.options());
      if (memory_is_host()) {
        // The postings are not known before the build: at most one per 3-gram of the text (a
        // document's distinct 3-grams), and at most one directory entry per posting.
        std::uint64_t most = 0;
        for (std::size_t d = 0; d < st.corpus.size(); ++d)
          most += std::max<std::size_t>(st.corpus.doc(d).size(), 2) - 2;
        MemoryPlan plan = MemoryPlan::for_platform(s_.platform());
        plan_corpus(plan, st);
        plan.add("index (at most one posting per 3-gram of the text)",
                 16 * most + 8 * (std::uint64_t{ngram::kTrigrams} + 1))
            .add("index build scratch", index_build_scratch(most, st.corpus.size(), threads));
        plan.require(s_.platform());
      }
      HostTimer t;
      st.index = ngram::build_ngram_index(st.corpus, o_.words_per_segment, threads);
      st.build_seconds = t.seconds();
      st.base_queries =
          o_.queries_file.empty()
              ? draw_queries(st.corpus, o_.query_count, s_.seed("ngram-queries", size), o_.query_min, o_.query_max)
              : load_queries(o_.queries_file);
    } catch (const SkipCase& e) {
      st.skip_reason = e.what();
      throw;
    }
    return st;
  }

  const std::vector<QueryPlan>& plans(SizeState& st, int k) {
    auto it = st.plans.find(k);
    if (it != st.plans.end()) return it->second;
    auto& qs = st.queries[k];
    for (std::size_t j = 0; j < st.base_queries.size(); ++j)
      qs.push_back(
          o_.queries_file.empty()
              ? mutate_query(st.base_queries[j], k, s_.seed("ngram-mutate", j * 256 + static_cast<std::uint64_t>(k)))
              : st.base_queries[j]);
    auto& ps = st.plans[k];
    for (const auto& q : qs) ps.push_back(ngram::plan_query(st.index, q, k));
    return ps;
  }

  const std::vector<std::vector<std::uint32_t>>& reference(SizeState& st, int k) {
    auto it = st.reference.find(k);
    if (it != st.reference.end()) return it->second;
    auto& ref = st.reference[k];
    const auto& ps = plans(st, k);
    // The brute force takes seconds per error level at 64 MB, longer than every variant's timed
    // passes together: queries are shared out among the threads (each result its query's alone).
    ref.resize(ps.size());
    parallel_each(ps.size(), effective_threads(s_.options()),
                  [&](std::size_t q) { ref[q] = ngram::reference_search(st.index, ps[q]); });
    if (out_) {
      for (std::size_t q = 0; q < ref.size(); ++q) {
        out_ << st.size << '\t' << k << '\t' << q << '\t' << escape_field(st.queries[k][q]) << '\t';
        for (std::size_t h = 0; h < ref[q].size(); ++h) out_ << (h ? " " : "") << ref[q][h];
        out_ << '\n';
      }
      out_.flush();
    }
    return ref;
  }

  nlohmann::json corpus_figures(const SizeState& st) const {
    return {{"corpus", st.corpus.source},
            {"articles", st.index.articles},
            {"text_bytes", st.corpus.raw_bytes},
            {"normalized_bytes", st.corpus.text.size()},
            {"postings", st.index.postings()},
            {"index_bytes", st.index.bytes()},
            {"index_build_s", st.build_seconds},
            {"words_per_segment", st.index.words_per_segment},
            {"bins", st.index.bins()}};
  }

  // On the cpu backend the platform's memory is the host's: the corpus and index the common code
  // keeps count against it (on a device only the backend's buffers do).
  bool memory_is_host() const { return s_.platform().name() == "cpu"; }
  // The size's corpus, and the loaded source corpus its prefixes are taken from (a file or GCIDE).
  void plan_corpus(MemoryPlan& plan, const SizeState& st) const {
    plan.add("corpus text", st.corpus.text.size()).add("corpus offsets", 8 * st.corpus.offsets.size());
    if (full_) plan.add("source corpus", full_->text.size() + 8 * full_->offsets.size());
  }

  void plan_index_case(std::uint64_t size, MemoryPlan& plan) {
    SizeState& st = state(size);
    if (!memory_is_host()) return;  // the build runs on the host: nothing on the device
    // A pass builds a new index while the last one is kept (and the verification a one-thread
    // index beside it): two at a time besides the size's own.
    plan_corpus(plan, st);
    plan.add("index", st.index.bytes())
        .add("rebuilt indexes (two at a time)", 2 * st.index.bytes())
        .add("index build scratch",
             index_build_scratch(st.index.postings(), st.index.articles, effective_threads(s_.options())));
  }

  Prepared index_case(std::uint64_t size) {
    SizeState& st = state(size);
    auto built = std::make_shared<NgramIndex>();
    int threads = effective_threads(s_.options());
    Prepared p;
    p.pass = [&st, built, threads, this] {
      HostTimer t;
      *built = ngram::build_ngram_index(st.corpus, o_.words_per_segment, threads);
      return Breakdown::compute_only(t.seconds());
    };
    p.verify = [&st, built, this] {
      // The parallel build must equal a one-thread build, posting for posting.
      NgramIndex serial = ngram::build_ngram_index(st.corpus, o_.words_per_segment, 1);
      bool same = serial.list_offsets == built->list_offsets && serial.post_article == built->post_article &&
                  serial.post_map == built->post_map && serial.dir_bin == built->dir_bin &&
                  serial.dir_start == built->dir_start && serial.dir_offsets == built->dir_offsets;
      if (!same) return Verification::fail("the parallel index differs from the one-thread index");
      return Verification::pass("parallel index equals the one-thread index (" + std::to_string(serial.postings()) +
                                " postings)");
    };
    p.elements = st.index.articles;
    p.input_bytes = st.corpus.raw_bytes;
    p.moves(st.corpus.text.size(), st.index.bytes());
    p.extra = corpus_figures(st);
    return p;
  }

  // Before the device copy of the index (load_index) and the search's buffers. Hit lists are not
  // counted: their size is the search's result.
  void plan_search_case(std::uint64_t size, int k, const NgramVariant& v, MemoryPlan& plan) {
    SizeState& st = state(size);
    const auto& ps = plans(st, k);
    if (!v.baseline()) b_.variant_table().require_available(v.name);
    if (memory_is_host()) {
      plan_corpus(plan, st);
      std::uint64_t lists = 0;
      for (const QueryPlan& q : ps) lists += q.lists.size();
      plan.add("index", st.index.bytes()).add("query plans", 4 * lists);
    }
    if (v.baseline()) return;
    b_.plan_memory(plan, st.index, v, ps);
    if (st.loaded && plan.total() > s_.platform().memory_bytes()) {
      // The plan counts the index and the buffers the backend keeps with it, which it holds now: on
      // a platform that reports free memory (CUDA) they would count twice. The session's check is
      // against the device without them; the index is loaded again (search_case) when the case fits.
      b_.release_index();
      st.loaded = false;
    }
  }

  Prepared search_case(std::uint64_t size, int k, const NgramVariant& v) {
    SizeState& st = state(size);
    const auto& ps = plans(st, k);
    if (!v.baseline() && !st.loaded) {
      st.device = b_.load_index(st.index);
      st.loaded = true;
    }
    auto passes = std::make_shared<std::vector<std::vector<double>>>();
    auto out = std::make_shared<NgramSearchOut>();
    Prepared p;
    p.pass = [this, &st, &ps, v, passes, out] {
      Breakdown b = run_variant(st, v, ps, *out);
      if (!v.batch) passes->push_back(out->seconds);
      return b;
    };
    p.verify = [this, &st, &ps, k, v, passes, out] { return verify(st, k, v.name, v.batch, ps, *passes, *out); };
    p.elements = ps.size();
    std::uint64_t bytes = 0;
    double mean_n = 0;
    for (const auto& q : ps) {
      bytes += q.posting_bytes;
      mean_n += q.n;
    }
    p.input_bytes = bytes;  // 0 when no query 3-gram has postings: the queries are still searched
    p.moves(bytes, 0);
    if (v.device) {
      p.transfer_bytes = ps.size() * (std::uint64_t{st.index.bins()} * ngram::kBinSize / 8);
      for (const auto& q : ps) p.transfer_bytes += 8 * q.lists.size();
    }
    p.extra = corpus_figures(st);
    p.extra["error_level"] = k;
    p.extra["queries"] = ps.size();
    p.extra["mean_query_trigrams"] = ps.empty() ? 0.0 : mean_n / static_cast<double>(ps.size());
    if (v.device) p.extra["device_index"] = st.device;
    return p;
  }

  Breakdown run_variant(SizeState& st, const NgramVariant& v, const std::vector<QueryPlan>& ps, NgramSearchOut& out) {
    if (v.baseline())
      return time_each_query(ps.size(), out,
                             [&](std::size_t q) { out.hits[q] = ngram::search_baseline(st.index, ps[q]); });
    return b_.search(v, ps, out);
  }

  const std::vector<double>& baseline_seconds(SizeState& st, int k) {
    auto it = st.baseline_seconds.find(k);
    if (it != st.baseline_seconds.end()) return it->second;
    // The baseline case was filtered out: time it once here so speed-ups can still be reported.
    NgramSearchOut o;
    run_variant(st, NgramVariant{NgramVariant::kBaseline, false, false}, plans(st, k), o);
    return st.baseline_seconds[k] = o.seconds;
  }

  Verification verify(SizeState& st, int k, const std::string& name, bool batch, const std::vector<QueryPlan>& ps,
                      const std::vector<std::vector<double>>& passes, const NgramSearchOut& out) {
    const auto& ref = reference(st, k);
    if (out.hits.size() != ref.size())
      return Verification::fail("returned " + std::to_string(out.hits.size()) + " hit lists for " +
                                std::to_string(ref.size()) + " queries");
    std::uint64_t hits = 0, with_hits = 0;
    for (std::size_t q = 0; q < ref.size(); ++q) {
      if (out.hits[q] != ref[q])
        return Verification::fail("query " + std::to_string(q) + " ('" + st.queries[k][q] +
                                  "', k=" + std::to_string(k) + "): " + std::to_string(out.hits[q].size()) +
                                  " hits, brute force has " + std::to_string(ref[q].size()));
      hits += ref[q].size();
      with_hits += !ref[q].empty();
    }
    Verification v = Verification::pass("hits of all " + std::to_string(ref.size()) +
                                        " queries equal the brute-force search on the same index");
    v.extra["hits_total"] = hits;
    v.extra["queries_with_hits"] = with_hits;
    v.extra["mean_hits_per_query"] = ref.empty() ? 0.0 : static_cast<double>(hits) / static_cast<double>(ref.size());
    if (batch || passes.empty() || ps.empty()) return v;
    // Per-query time: the median over the timed passes.
    std::vector<double> t(ps.size());
    for (std::size_t q = 0; q < ps.size(); ++q) {
      std::vector<double> xs;
      for (const auto& pass : passes) xs.push_back(pass[q]);
      t[q] = median_of(xs);
    }
    if (name == NgramVariant::kBaseline) st.baseline_seconds[k] = t;
    double total = std::accumulate(t.begin(), t.end(), 0.0);
    v.extra["query_mean_s"] = total / static_cast<double>(t.size());
    v.extra["query_median_s"] = median_of(t);
    const auto& base = baseline_seconds(st, k);
    double sum_ratio = 0, base_total = std::accumulate(base.begin(), base.end(), 0.0);
    std::size_t faster = 0;
    for (std::size_t q = 0; q < t.size(); ++q) {
      double ti = std::max(t[q], 1e-9);
      sum_ratio += base[q] / ti;
      faster += t[q] < base[q];
    }
    v.extra["speedup_mean_of_queries"] = sum_ratio / static_cast<double>(t.size());
    v.extra["speedup_ratio_of_totals"] = total > 0 ? base_total / total : 0.0;
    v.extra["share_accelerated"] = static_cast<double>(faster) / static_cast<double>(t.size());
    v.extra["baseline_query_mean_s"] = base_total / static_cast<double>(t.size());
    return v;
  }

  Session& s_;
  NgramBackend& b_;
  const NgramOptions& o_;
  std::unique_ptr<SizeState> state_;
  std::unique_ptr<TextCorpus> full_;
  std::uint64_t whole_used_ = 0;  // the size that took the whole (smaller) corpus
  std::ofstream out_;
};

}  // namespace

int ngram_main(int argc, char** argv, Platform& platform, NgramBackend& backend) {
  auto o = std::make_shared<NgramOptions>();
  BenchmarkDef def;
  def.name = "ngram";
  def.description = "nsearch approximate text search: 3-gram index with 32-segment maps, error levels 0..12";
  def.add_options = [o](CLI::App& app) {
    app.add_option(
        "--corpus", o->corpus,
        "auto (GCIDE when installed, else synthetic), gcide, synthetic, or a text file (one document per line)");
    app.add_option("--gcide-dir", o->gcide_dir, "folder with gcide.index and gcide.dict.dz")->check(not_empty);
    app.add_option("--queries", o->queries_file, "query file, one query per line (used unmutated at every error level)")
        ->check(not_empty);
    app.add_option("--query-count", o->query_count, "queries drawn from the corpus per error level")
        ->check(whole_number);
    app.add_option("--query-min", o->query_min, "shortest drawn query in characters")->check(whole_number);
    app.add_option("--query-max", o->query_max, "longest drawn query in characters")->check(whole_number);
    app.add_option("--errors", o->errors,
                   "allowed errors k (missing 3-grams): list and ranges, e.g. 0-12 or 0,3,6,9,12");
    app.add_option("--words-per-segment", o->words_per_segment, "W: minimum words per segment of an article");
    app.add_option("--vocabulary", o->vocabulary, "synthetic corpus: distinct words")->check(whole_number);
    app.add_option("--zipf", o->zipf_s, "synthetic corpus: Zipf exponent of word frequencies");
    app.add_option("--output", o->output, "write every query's hit list (tab-separated) to this file")
        ->check(not_empty);
  };
  def.validate = [o] {
    o->levels = parse_error_levels(o->errors);
    if (o->query_count == 0) throw UsageError("--query-count: must be at least 1");
    if (o->query_count > kMaxQueries)
      throw UsageError("--query-count: at most " + std::to_string(kMaxQueries) +
                       " (every query's hits are kept per level)");
    if (o->query_min < 3) throw UsageError("--query-min: queries need at least 3 characters (one 3-gram)");
    if (o->query_max < o->query_min) throw UsageError("--query-max: below --query-min");
    if (o->query_max > 250) throw UsageError("--query-max: at most 250 characters");
    if (o->words_per_segment < 1) throw UsageError("--words-per-segment: must be at least 1");
    if (o->vocabulary == 0) throw UsageError("--vocabulary: must be at least 1");
    if (!(o->zipf_s > 0)) throw UsageError("--zipf: must be positive");
    if (o->corpus == "gcide" && !gcide_present(o->gcide_dir))
      throw UsageError("--corpus gcide: no readable gcide.index and gcide.dict.dz in '" + o->gcide_dir +
                       "' (or a build without zlib)");
    if (o->corpus != "auto" && o->corpus != "gcide" && o->corpus != "synthetic" && !std::ifstream(o->corpus))
      throw UsageError("--corpus: cannot open '" + o->corpus + "'");
    if (!o->queries_file.empty()) load_queries(o->queries_file);
  };
  def.paths = [o] {
    std::vector<PathUse> uses{{"--output", o->output, true}, {"--queries", o->queries_file, false}};
    if (o->corpus != "auto" && o->corpus != "gcide" && o->corpus != "synthetic")
      uses.push_back({"--corpus", o->corpus, false});
    if (o->corpus == "auto" || o->corpus == "gcide")
      for (const char* f : {"gcide.index", "gcide.dict.dz"})
        uses.push_back({"--gcide-dir", (std::filesystem::path(o->gcide_dir) / f).string(), false});
    return uses;
  };
  def.run = [o, &backend](Session& s) { NgramRun(s, backend, *o).run(); };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb
