#include "ssb_backend.hpp"

#include <algorithm>
#include <array>

#include "harness/errors.hpp"
#include "harness/variants.hpp"
#include "runtime/chunks.hpp"

namespace hdb::cpu {
namespace {

using ssb::Agg;
using ssb::Col;
using ssb::Pred;
using ssb::Query;
using ssb::Table;
using ssb::Tables;

// Rows of lineorder one vector holds: its selection vector and group indices (4 KiB each) and the
// columns' pieces it reads stay in the L1 and L2 caches between the probes.
constexpr std::uint32_t kVector = 1024;
// A dimension whose keys spread over more than this many values (max - min + 1) is not made a
// dense array (4 bytes a value): such a case is skipped with the reason.
constexpr std::uint64_t kMaxSpan = std::uint64_t{1} << 28;
// The most groups the dense aggregate arrays take (per chunk: 9 bytes a group).
constexpr std::uint64_t kMaxGroups = std::uint64_t{1} << 22;

// The smallest and largest key of a dimension.
std::pair<std::uint32_t, std::uint32_t> key_range(const ssb::Column& keys) {
  if (keys.empty()) return {1, 0};
  auto [lo, hi] = std::minmax_element(keys.begin(), keys.end());
  return {*lo, *hi};
}

// The group-by column a dimension provides (at most one in the 13 queries), or none.
int group_slot(const Query& q, Table d) {
  int slot = -1;
  for (std::size_t g = 0; g < q.group_by.size(); ++g)
    if (ssb::table_of(q.group_by[g]) == d) {
      if (slot >= 0) throw SkipCase("the cpu plan takes one group-by column per dimension");
      slot = static_cast<int>(g);
    }
  return slot;
}

// What the plan holds of one dimension.
struct Dim {
  Table table;
  const std::uint32_t* fk = nullptr;  // lineorder's foreign key column
  std::uint32_t min_key = 0;
  std::uint64_t span = 0;             // max key - min key + 1
  int slot = -1;                      // its group-by column's position in the answer, or -1
  std::vector<Pred> preds;            // the query's predicates on this dimension
  std::vector<std::uint32_t> values;  // rank -> group-by value (one entry, 0, without a group-by column)
  std::uint32_t stride = 0;           // rank x stride is its share of a group index
  double selectivity = 1;             // fraction of the dimension's rows that pass
  std::vector<std::int32_t> map;      // key - min_key -> rank, or -1
};

std::uint64_t distinct_count(const ssb::Column& c) {
  std::vector<std::uint32_t> v(c);
  std::sort(v.begin(), v.end());
  return static_cast<std::uint64_t>(std::unique(v.begin(), v.end()) - v.begin());
}

class CpuSsbRun : public ssb::SsbRun {
 public:
  CpuSsbRun(const Query& q, const Tables& t, int threads) : q_(q), t_(t), threads_(threads) {
    for (const Pred& p : q.preds)
      if (ssb::table_of(p.col) == Table::Lineorder) {
        if (p.ranges.size() != 1) throw SkipCase("the cpu plan takes one range per lineorder predicate");
        fact_preds_.push_back({t[p.col].data(), p.ranges[0].first, p.ranges[0].second - p.ranges[0].first});
      }
    for (Table d : q.dims()) {
      Dim dim;
      dim.table = d;
      dim.fk = t[ssb::foreign_key(d)].data();
      auto [lo, hi] = key_range(t[ssb::key_of(d)]);
      dim.min_key = lo;
      dim.span = hi >= lo ? std::uint64_t{hi} - lo + 1 : 0;
      if (dim.span > kMaxSpan)
        throw SkipCase(std::string(ssb::table_name(d)) + " keys spread over " + std::to_string(dim.span) +
                       " values: more than the cpu plan's dense arrays take (2^28)");
      dim.slot = group_slot(q, d);
      for (const Pred& p : q.preds)
        if (ssb::table_of(p.col) == d) dim.preds.push_back(p);
      dim.map.resize(dim.span);
      dims_.push_back(std::move(dim));
    }
  }

  Breakdown pass() override {
    Breakdown b;
    HostTimer timer;
    build();
    b.add_phase("build", timer.seconds());
    timer.reset();
    probe();
    b.add_phase("probe", timer.seconds());
    timer.reset();
    merge();
    b.add_phase("merge", timer.seconds());
    for (const Phase& p : b.phases) b.kernel += p.seconds;
    b.total = b.kernel;
    return b;
  }

  ssb::Result result() override { return result_; }

 private:
  // The dimension arrays: ranks of the group-by values of the passing rows, then key -> rank.
  void build() {
    for (Dim& d : dims_) {
      const ssb::Column& keys = t_[ssb::key_of(d.table)];
      const std::uint64_t n = keys.size();
      const ssb::Column* group = d.slot >= 0 ? &t_[q_.group_by[static_cast<std::size_t>(d.slot)]] : nullptr;
      auto passes = [&d, this](std::uint64_t row) {
        for (const Pred& p : d.preds)
          if (!p.test(t_[p.col][row])) return false;
        return true;
      };
      d.values.clear();
      std::uint64_t passing = 0;
      for (std::uint64_t r = 0; r < n; ++r) {
        if (!passes(r)) continue;
        ++passing;
        if (group) d.values.push_back((*group)[r]);
      }
      if (group) {
        std::sort(d.values.begin(), d.values.end());
        d.values.erase(std::unique(d.values.begin(), d.values.end()), d.values.end());
      } else {
        d.values.assign(1, 0);
      }
      d.selectivity = n ? static_cast<double>(passing) / static_cast<double>(n) : 0;
      std::fill(d.map.begin(), d.map.end(), -1);
      const int chunks = chunk_count(n, threads_);
      for_chunks(chunks, threads_, [&](int c) {
        for (std::uint64_t r = chunk_begin(n, chunks, c); r < chunk_begin(n, chunks, c + 1); ++r) {
          if (!passes(r)) continue;
          const std::uint32_t v = group ? (*group)[r] : 0;
          d.map[keys[r] - d.min_key] =
              static_cast<std::int32_t>(std::lower_bound(d.values.begin(), d.values.end(), v) - d.values.begin());
        }
      });
    }
    // Probe the most selective dimension first; group index = sum of rank x stride.
    std::stable_sort(dims_.begin(), dims_.end(),
                     [](const Dim& a, const Dim& b) { return a.selectivity < b.selectivity; });
    groups_ = 1;
    for (Dim& d : dims_) {
      d.stride = static_cast<std::uint32_t>(groups_);
      groups_ *= std::max<std::uint64_t>(1, d.values.size());
      if (groups_ > kMaxGroups) throw SkipCase("more than 2^22 groups: more than the cpu plan's dense aggregates take");
    }
    chunks_ = chunk_count(t_.rows(Table::Lineorder), threads_);
    sums_.assign(static_cast<std::size_t>(chunks_) * groups_, 0);
    seen_.assign(static_cast<std::size_t>(chunks_) * groups_, 0);
  }

  void probe() {
    switch (q_.agg) {
      case Agg::DiscountedPrice: return probe_with<Agg::DiscountedPrice>();
      case Agg::Revenue: return probe_with<Agg::Revenue>();
      case Agg::Profit: return probe_with<Agg::Profit>();
    }
  }

  template <Agg A>
  void probe_with() {
    const std::uint64_t n = t_.rows(Table::Lineorder);
    const std::uint32_t* price = t_[Col::lo_extendedprice].data();
    const std::uint32_t* discount = t_[Col::lo_discount].data();
    const std::uint32_t* revenue = t_[Col::lo_revenue].data();
    const std::uint32_t* cost = t_[Col::lo_supplycost].data();
    for_chunks(chunks_, threads_, [&](int c) {
      std::int64_t* sums = sums_.data() + static_cast<std::size_t>(c) * groups_;
      std::uint8_t* seen = seen_.data() + static_cast<std::size_t>(c) * groups_;
      std::array<std::uint32_t, kVector> sel, grp;
      const std::uint64_t end = chunk_begin(n, chunks_, c + 1);
      for (std::uint64_t base = chunk_begin(n, chunks_, c); base < end; base += kVector) {
        const auto len = static_cast<std::uint32_t>(std::min<std::uint64_t>(kVector, end - base));
        std::uint32_t m = 0;
        if (fact_preds_.empty()) {
          for (std::uint32_t j = 0; j < len; ++j) sel[j] = j;
          m = len;
        } else {
          for (std::uint32_t j = 0; j < len; ++j) {  // branch-free: every row is written, kept rows advance
            bool keep = true;
            for (const FactPred& p : fact_preds_) keep &= p.col[base + j] - p.lo <= p.width;
            sel[m] = j;
            m += keep;
          }
        }
        for (std::uint32_t j = 0; j < m; ++j) grp[j] = 0;
        for (const Dim& d : dims_) {
          const std::uint32_t* fk = d.fk + base;
          const std::int32_t* map = d.map.data();
          std::uint32_t k = 0;
          for (std::uint32_t j = 0; j < m; ++j) {
            const std::uint32_t off = fk[sel[j]] - d.min_key;
            const std::int32_t rank = off < d.span ? map[off] : -1;
            sel[k] = sel[j];
            grp[k] = grp[j] + static_cast<std::uint32_t>(rank) * d.stride;
            k += rank >= 0;
          }
          m = k;
          if (m == 0) break;
        }
        for (std::uint32_t j = 0; j < m; ++j) {
          const std::uint64_t i = base + sel[j];
          std::int64_t v;
          if constexpr (A == Agg::DiscountedPrice)
            v = static_cast<std::int64_t>(price[i]) * discount[i];
          else if constexpr (A == Agg::Revenue)
            v = revenue[i];
          else
            v = static_cast<std::int64_t>(revenue[i]) - static_cast<std::int64_t>(cost[i]);
          sums[grp[j]] += v;
          seen[grp[j]] = 1;
        }
      }
    });
  }

  // The chunks' partial sums into one answer, rows sorted by group key.
  void merge() {
    result_.rows.clear();
    for (std::uint64_t g = 0; g < groups_; ++g) {
      std::int64_t sum = 0;
      bool any = false;
      for (int c = 0; c < chunks_; ++c) {
        sum += sums_[static_cast<std::size_t>(c) * groups_ + g];
        any |= seen_[static_cast<std::size_t>(c) * groups_ + g] != 0;
      }
      if (!any && !q_.group_by.empty()) continue;
      ssb::ResultRow row;
      row.value = sum;
      for (const Dim& d : dims_)
        if (d.slot >= 0) row.key[static_cast<std::size_t>(d.slot)] = d.values[(g / d.stride) % d.values.size()];
      result_.rows.push_back(row);
    }
    std::sort(result_.rows.begin(), result_.rows.end());
  }

  const Query& q_;
  const Tables& t_;
  int threads_;
  struct FactPred {
    const std::uint32_t* col;
    std::uint32_t lo, width;  // lo <= value <= lo + width, as one unsigned comparison
  };
  std::vector<FactPred> fact_preds_;
  std::vector<Dim> dims_;
  std::uint64_t groups_ = 1;
  int chunks_ = 1;
  std::vector<std::int64_t> sums_;  // per chunk, per group
  std::vector<std::uint8_t> seen_;  // per chunk, per group: whether a row reached it
  ssb::Result result_;
};

enum class Plan { Serial, Parallel };

const VariantTable<Plan>& table() {
  static const VariantTable<Plan> t("the cpu ssb backend", {{Plan::Serial, {"serial", ssb::tests(), ""}},
                                                            {Plan::Parallel, {"parallel", ssb::tests(), ""}}});
  return t;
}

}  // namespace

const VariantList& CpuSsb::variant_table() const { return table(); }

// The tables are in the CPU's memory whatever the residency: both are the same run.
std::unique_ptr<ssb::SsbRun> CpuSsb::prepare(const Query& q, const Tables& t, const std::string& variant, Transfer,
                                             ssb::Residency) {
  int threads = 1;
  switch (table().id(variant)) {
    case Plan::Serial: threads = 1; break;
    case Plan::Parallel: threads = platform_.threads(); break;
  }
  return std::make_unique<CpuSsbRun>(q, t, threads);
}

void CpuSsb::plan_scratch(const Query& q, const Tables& t, const std::string& variant, MemoryPlan& memory) const {
  std::uint64_t maps = 0, groups = 1;
  for (Table d : q.dims()) {
    auto [lo, hi] = key_range(t[ssb::key_of(d)]);
    maps += hi >= lo ? (std::uint64_t{hi} - lo + 1) * sizeof(std::int32_t) : 0;
    const int slot = group_slot(q, d);
    if (slot >= 0) groups *= distinct_count(t[q.group_by[static_cast<std::size_t>(slot)]]);
  }
  const int threads = table().id(variant) == Plan::Serial ? 1 : platform_.threads();
  const auto chunks = static_cast<std::uint64_t>(chunk_count(t.rows(Table::Lineorder), threads));
  memory.add("dimension arrays (4 bytes per key between the smallest and largest)", maps)
      .add("partial aggregates (9 bytes per group and chunk)", chunks * std::min(groups, kMaxGroups) * 9);
}

}  // namespace hdb::cpu
