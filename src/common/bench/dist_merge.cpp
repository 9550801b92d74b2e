// table_merge: the GPU delta-merge paper merges a table column after column, one column per core;
// here column c belongs to rank c mod ranks, every rank merges its columns one after another
// through the merge backend, and the table merge ends when the slowest rank is done.
#include "bench/dist_merge.hpp"

#include <algorithm>
#include <memory>
#include <sstream>

#include "bench/dist_collective.hpp"
#include "harness/errors.hpp"

namespace hdb::dist {

namespace {

// The table merge's time is all h2d / kernel / d2h (Breakdown's kinds): no named phases.
const std::vector<Phase> kPhases{};

std::string pct_label(double p) {
  std::ostringstream o;
  o << p << "%";
  return o.str();
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

template <class T>
struct Column {
  int index = 0;
  std::shared_ptr<MergeInput<T>> input;
  std::shared_ptr<MergeWork<T>> work;
  std::unique_ptr<MergeCase<T>> merge;
};

template <class T>
struct TableCase {
  std::vector<Column<T>> columns;  // this rank's

  Breakdown local_pass() {
    Breakdown b;
    for (Column<T>& c : columns) {
      Breakdown x = c.merge->pass();
      b.h2d += x.h2d;
      b.kernel += x.kernel;
      b.d2h += x.d2h;
      b.total += x.total > 0 ? x.total : x.kernel;
    }
    return b;
  }
};

template <class T>
void run_typed(Session& s, const Comm& comm, MergeBackend& backend, const DistOptions& o, ValueType type,
               std::uint64_t size, double unique_pct, double delta_pct) {
  const int nc = o.columns;
  // Weak scaling keeps the columns per rank fixed: the table grows with the ranks.
  const int table_columns = o.weak ? nc * comm.size() : nc;
  const std::uint64_t main_rows = size / 8;
  const auto delta_rows = static_cast<std::uint64_t>(std::llround(static_cast<double>(main_rows) * delta_pct / 100.0));
  for (const MergeVariant& v : merge_variants(backend, s.transfers())) {
    if (v.step != MergeStep::Whole || !backend.supports(v, type)) continue;
    Params p{{"type", to_string(type)}, {"unique", unique_pct}, {"delta", delta_pct}, {"columns", table_columns}};
    add_rank_params(p, comm, o.weak);
    auto tc = std::make_shared<TableCase<T>>();
    CaseSetup setup;
    // The rank's columns are made in the plan: every one is resident at once, so the case plans the
    // sum of their plans; the fit is agreed on by every rank (collectively) before the session's.
    setup.plan = [&, v, tc](MemoryPlan& device) {
      collectively(comm, [&] {
        backend.variant_table().require_available(v.name);
        const std::uint64_t mine =
            static_cast<std::uint64_t>((table_columns - comm.rank() + comm.size() - 1) / comm.size());
        MemoryPlan plan("host memory of one rank");
        plan_columns(plan, type, main_rows, delta_rows, unique_pct / 100.0, mine);
        plan.require(host_memory_bytes(s.platform()));
        const std::string salt =
            std::string("dist.table/") + to_string(type) + "/" + pct_label(unique_pct) + "/" + pct_label(delta_pct);
        for (int c = comm.rank(); c < table_columns; c += comm.size()) {
          Column<T> col;
          col.index = c;
          col.input = std::make_shared<MergeInput<T>>(
              generate_column<T>(column_spec(main_rows, delta_rows, unique_pct / 100.0),
                                 s.seed(salt + "/" + std::to_string(c), size), effective_threads(s.options())));
          col.work = std::make_shared<MergeWork<T>>(prepare_work(*col.input));
          backend.plan_memory(v, *col.work, device);
          tc->columns.push_back(std::move(col));
        }
        device.require(s.platform());
      });
    };
    setup.prepare = [&, v, tc] {
      std::uint64_t in_bytes = 0, moved = 0, xfer = 0;
      collectively(comm, [&] {
        for (Column<T>& col : tc->columns) {
          col.merge = backend.prepare(v, *col.work);
          const MergeInput<T>& in = *col.input;
          const std::uint64_t tuples = in.main_rows() + in.delta_rows();
          const std::uint64_t column_in =
              in.main_codes.words.size() * 8 + total_bytes(in.main_dict) + total_bytes(in.delta);
          in_bytes += column_in;
          moved += column_in + total_bytes(col.work->dict) + BitPacked::words_for(tuples, col.work->width) * 8;
          xfer += col.merge->transfer_bytes();
        }
      });
      Prepared pr;
      pr.elements = static_cast<std::uint64_t>(table_columns) * (main_rows + delta_rows);
      pr.input_bytes = comm.sum(in_bytes);
      pr.min_bytes_moved = comm.max(moved);  // the busiest rank's columns, against one device's ceiling
      pr.transfer_bytes = comm.max(xfer);
      const std::vector<std::uint64_t> per_rank = comm.all_gather(tc->columns.size());
      pr.extra = {{"ranks", comm.size()},     {"scaling", o.weak ? "weak" : "strong"},
                  {"columns", table_columns}, {"columns_per_rank", per_rank},
                  {"main_rows", main_rows},   {"delta_rows", delta_rows}};
      pr.pass = [tc, &comm] {
        return collective_pass(
            comm, [tc] { return tc->local_pass(); }, kPhases);
      };
      pr.verify = [tc, &comm] {
        std::string err;
        for (const Column<T>& c : tc->columns) {
          err = verify_merge_output(MergeStep::Whole, *c.work, c.merge->output());
          if (!err.empty()) {
            err = "column " + std::to_string(c.index) + ": " + err;
            break;
          }
        }
        Comm::Agreement a = comm.first_failure(!err.empty(), err);
        Verification r =
            a.any() ? Verification::fail((comm.size() > 1 ? "rank " + std::to_string(a.rank) + ", " : "") + a.message)
                    : Verification::pass("every column decoded row by row and compared with the reference");
        return r;
      };
      pr.figures = [delta_rows, table_columns](const std::vector<Breakdown>& trials) {
        std::vector<double> table_s;
        for (const Breakdown& b : trials) table_s.push_back(b.total);
        const double t = median(table_s);
        // The paper's update rate: delta rows (one row updates every column) per second of table merge.
        return nlohmann::json{{"table",
                               {{"columns", table_columns},
                                {"merge_s", t},
                                {"update_rate_per_s", t > 0 ? static_cast<double>(delta_rows) / t : 0.0}}}};
      };
      return pr;
    };
    s.run({"table_merge", v.name, p, size, v.transfer}, setup);
  }
}

}  // namespace

void run_table_merge(Session& s, const Comm& comm, MergeBackend& backend, const DistOptions& o) {
  for (std::uint64_t size : s.sizes())
    for (ValueType type : o.types)
      for (double u : o.unique_pct)
        for (double d : o.delta_pct) switch (type) {
            case ValueType::U32: run_typed<std::uint32_t>(s, comm, backend, o, type, size, u, d); break;
            case ValueType::U64: run_typed<std::uint64_t>(s, comm, backend, o, type, size, u, d); break;
            case ValueType::U128: run_typed<U128>(s, comm, backend, o, type, size, u, d); break;
            case ValueType::Str: run_typed<std::string_view>(s, comm, backend, o, type, size, u, d); break;
          }
}

}  // namespace hdb::dist
