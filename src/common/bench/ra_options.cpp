#include "bench/ra_options.hpp"

#include <CLI/CLI.hpp>

#include <sstream>

#include "harness/errors.hpp"
#include "harness/repeats.hpp"

namespace hdb::ra {

std::string number_text(double x) {
  std::ostringstream s;
  s << x;
  return s.str();
}

void add_workload_options(CLI::App& app, WorkloadOptions& o, const WorkloadTests& tests) {
  const std::string unique = tests.unique, join = tests.join;
  app.add_option("--values", o.values, "Value attributes per tuple, 1..3 (tuples of 8..16 bytes)");
  app.add_option("--duplicates", o.duplicates, unique + ": duplicate rate in [0, 1)")->delimiter(',');
  app.add_option("--match-rate", o.match_rate, join + ": fraction of right tuples whose key occurs on the left")
      ->delimiter(',');
  app.add_option("--fanout", o.fanout, join + ": tuples per key on each side (1..1024)")->delimiter(',');
  app.add_option("--dist", o.dists, "Key distribution(s): uniform, zipf")->delimiter(',');
  app.add_option("--zipf-s", o.zipf_s, "Zipf exponent for --dist zipf");
  app.add_option("--max-output-ratio", o.max_output_ratio,
                 "Skip cases whose output exceeds this many times the input size");
}

void validate_workload_options(const WorkloadOptions& o) {
  if (o.values < 1 || o.values > 3) throw UsageError("--values must be 1..3, got " + std::to_string(o.values));
  for (double d : o.duplicates)
    if (!(d >= 0 && d < 1)) throw UsageError("--duplicates must lie in [0, 1), got " + number_text(d));
  for (double m : o.match_rate)
    if (!(m >= 0 && m <= 1)) throw UsageError("--match-rate must lie in [0, 1], got " + number_text(m));
  for (int f : o.fanout)
    if (f < 1 || f > 1024) throw UsageError("--fanout must be 1..1024, got " + std::to_string(f));
  for (const std::string& d : o.dists) parse_key_dist(d);
  refuse_repeats(o.duplicates, "--duplicates");
  refuse_repeats(o.match_rate, "--match-rate");
  refuse_repeats(o.fanout, "--fanout");
  refuse_repeats(o.dists, "--dist");
  if (!(o.zipf_s > 0)) throw UsageError("--zipf-s must be positive");
  if (!(o.max_output_ratio > 0)) throw UsageError("--max-output-ratio must be positive");
}

KeySpec key_spec(const WorkloadOptions& o, const std::string& dist, std::uint64_t distinct) {
  KeySpec k;
  k.dist = parse_key_dist(dist);
  k.zipf_s = o.zipf_s;
  k.distinct = distinct;
  return k;
}

}  // namespace hdb::ra
