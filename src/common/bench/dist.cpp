#include "bench/dist.hpp"

#include <CLI/CLI.hpp>

#include <memory>
#include <sstream>

#include "bench/dist_merge.hpp"
#include "bench/dist_ra.hpp"
#include "harness/comm.hpp"
#include "harness/errors.hpp"

namespace hdb::dist {

namespace {
std::string fmt(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}
}  // namespace

int dist_main(int argc, char** argv, Platform& platform, const DistBackends& backends) {
  auto o = std::make_shared<DistOptions>();
  auto type_text = std::make_shared<std::vector<std::string>>();
  BenchmarkDef def;
  def.collective = true;
  def.name = "dist";
  def.description =
      "True-parallel distributed operators over MPI ranks (run under mpirun; one rank without it): dist_unique and "
      "dist_join (hash partition, MPI_Alltoallv, local sort, local RA primitive), table_merge (delta merge with "
      "the table's columns spread over the ranks). Size = bytes per input, global (strong scaling) or per rank (--weak)";
  def.add_options = [o, type_text](CLI::App& app) {
    app.add_flag("--weak", o->weak,
                 "Weak scaling: the size (and table_merge's --columns) is per rank, the global input grows with the "
                 "ranks; default strong scaling: the size is the global input");
    app.add_option("--values", o->values, "Value attributes per tuple, 1..3 (tuples of 8..16 bytes)");
    app.add_option("--duplicates", o->duplicates, "dist_unique: duplicate rate in [0, 1)")->delimiter(',');
    app.add_option("--match-rate", o->match_rate, "dist_join: fraction of right tuples whose key occurs on the left")
        ->delimiter(',');
    app.add_option("--fanout", o->fanout, "dist_join: tuples per key on each side (1..1024)")->delimiter(',');
    app.add_option("--dist", o->dists, "Key distribution(s): uniform, zipf")->delimiter(',');
    app.add_option("--zipf-s", o->zipf_s, "Zipf exponent for --dist zipf");
    app.add_option("--max-output-ratio", o->max_output_ratio,
                   "Skip join cases whose output on one rank exceeds this many times its input");
    app.add_option("--columns", o->columns, "table_merge: columns of the table (per rank with --weak), default 8");
    app.add_option("--types", *type_text, "table_merge: value types u32,u64,u128,str (default u32)")->delimiter(',');
    app.add_option("--unique", o->unique_pct, "table_merge: percent of unique values, list (default 10)")->delimiter(',');
    app.add_option("--delta", o->delta_pct, "table_merge: delta rows as percent of main rows, list (default 1)")
        ->delimiter(',');
  };
  def.validate = [o, type_text] {
    if (o->values < 1 || o->values > 3) throw UsageError("--values must be 1..3, got " + std::to_string(o->values));
    for (double d : o->duplicates)
      if (!(d >= 0 && d < 1)) throw UsageError("--duplicates must lie in [0, 1), got " + fmt(d));
    for (double m : o->match_rate)
      if (!(m >= 0 && m <= 1)) throw UsageError("--match-rate must lie in [0, 1], got " + fmt(m));
    for (int f : o->fanout)
      if (f < 1 || f > 1024) throw UsageError("--fanout must be 1..1024, got " + std::to_string(f));
    for (const std::string& d : o->dists) parse_key_dist(d);
    if (!(o->zipf_s > 0)) throw UsageError("--zipf-s must be positive");
    if (!(o->max_output_ratio > 0)) throw UsageError("--max-output-ratio must be positive");
    if (o->columns < 1 || o->columns > 100000) throw UsageError("--columns must be 1..100000, got " + std::to_string(o->columns));
    if (!type_text->empty()) {
      o->types.clear();
      for (const std::string& t : *type_text) o->types.push_back(parse_value_type(t));
    }
    for (double u : o->unique_pct)
      if (!(u > 0 && u <= 100)) throw UsageError("--unique values must be in (0, 100], got " + fmt(u));
    for (double d : o->delta_pct)
      if (!(d >= 0 && d <= 100)) throw UsageError("--delta values must be in [0, 100], got " + fmt(d));
  };
  def.run = [o, backends](Session& s) {
    // Listing runs on rank 0 alone, so it must not touch MPI.
    const Comm comm = s.listing() ? Comm::single() : Comm::world();
    if (backends.ra) run_dist_ra(s, comm, *backends.ra, *o);
    if (backends.merge) run_table_merge(s, comm, *backends.merge, *o);
  };
  return run_main(argc, argv, def, platform);
}

}  // namespace hdb::dist
