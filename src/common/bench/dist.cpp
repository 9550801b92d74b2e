#include "bench/dist.hpp"

#include <CLI/CLI.hpp>

#include <memory>

#include "bench/dist_merge.hpp"
#include "bench/dist_ra.hpp"
#include "harness/comm.hpp"
#include "harness/errors.hpp"
#include "harness/repeats.hpp"

namespace hdb::dist {

using ra::number_text;

int dist_main(int argc, char** argv, Platform& platform, ra::RaBackend& ra, MergeBackend& merge) {
  auto o = std::make_shared<DistOptions>();
  auto type_text = std::make_shared<std::vector<std::string>>();
  BenchmarkDef def;
  def.collective = true;
  def.name = "dist";
  def.description =
      "True-parallel distributed operators over MPI ranks (run under mpirun; one rank without it): dist_unique and "
      "dist_join (hash partition, MPI_Alltoallv, local sort, local RA primitive), table_merge (delta merge with "
      "the table's columns spread over the ranks). Size = bytes per input, global (strong scaling) or per rank "
      "(--weak)";
  def.add_options = [o, type_text](CLI::App& app) {
    app.add_flag("--weak", o->weak,
                 "Weak scaling: the size (and table_merge's --columns) is per rank, the global input grows with the "
                 "ranks; default strong scaling: the size is the global input");
    ra::add_workload_options(app, *o, {"dist_unique", "dist_join"});
    app.add_option("--columns", o->columns, "table_merge: columns of the table (per rank with --weak), default 8");
    app.add_option("--types", *type_text, "table_merge: value types u32,u64,u128,str (default u32)")->delimiter(',');
    app.add_option("--unique", o->unique_pct, "table_merge: percent of unique values, list (default 10)")
        ->delimiter(',');
    app.add_option("--delta", o->delta_pct, "table_merge: delta rows as percent of main rows, list (default 1)")
        ->delimiter(',');
  };
  def.validate = [o, type_text] {
    ra::validate_workload_options(*o);
    if (o->columns < 1 || o->columns > 100000)
      throw UsageError("--columns must be 1..100000, got " + std::to_string(o->columns));
    if (!type_text->empty()) {
      o->types.clear();
      for (const std::string& t : *type_text) o->types.push_back(parse_value_type(t));
    }
    for (double u : o->unique_pct)
      if (!(u > 0 && u <= 100)) throw UsageError("--unique values must be in (0, 100], got " + number_text(u));
    for (double d : o->delta_pct)
      if (!(d >= 0 && d <= 100)) throw UsageError("--delta values must be in [0, 100], got " + number_text(d));
    refuse_repeats(*type_text, "--types");
    refuse_repeats(o->unique_pct, "--unique");
    refuse_repeats(o->delta_pct, "--delta");
  };
  def.run = [o, &ra, &merge](Session& s) {
    // Listing runs on rank 0 alone, so it must not touch MPI.
    const Comm comm = s.listing() ? Comm::single() : Comm::world();
    run_dist_ra(s, comm, ra, *o);
    run_table_merge(s, comm, merge, *o);
  };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb::dist
