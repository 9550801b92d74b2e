#pragma once
// dist: true-parallel (TP) distributed operators over MPI ranks, each rank on its own device.
//  dist_unique, dist_join  every rank generates its share of a global input, hash-partitions the
//                          tuples by key, exchanges them with MPI_Alltoallv, sorts its part by key
//                          (stable) and runs the local RA primitive on its device (bench/ra.hpp).
//  table_merge             the delta merge of a whole table (bench/merge.hpp) with its columns
//                          spread over the ranks: table merge time and update rate vs ranks.
// Every pass reports each time as the maximum over ranks, so all ranks take the same passes.
// Without mpirun (or without MPI support) the executables run as one rank.
#include <cstdint>
#include <string>
#include <vector>

#include "bench/merge.hpp"
#include "bench/ra.hpp"
#include "bench/ra_options.hpp"
#include "harness/main.hpp"

namespace hdb::dist {

struct DistOptions : ra::WorkloadOptions {
  bool weak = false;  // --weak: the size is per rank (global input = size x ranks)
  // table_merge
  int columns = 8;
  std::vector<ValueType> types{ValueType::U32};
  std::vector<double> unique_pct{10};
  std::vector<double> delta_pct{1};
};

// Runs the tests: dist_unique and dist_join on `ra`'s primitives, table_merge on `merge`'s.
int dist_main(int argc, char** argv, Platform& platform, ra::RaBackend& ra, MergeBackend& merge);

// The whole main of hdb-dist-<backend>: its platform, and its RA and merge backend classes
// (constructed from the platform).
template <class BackendPlatform, class RaClass, class MergeClass>
int dist_main_for(int argc, char** argv) {
  BackendPlatform platform;
  RaClass ra(platform);
  MergeClass merge(platform);
  return dist_main(argc, argv, platform, ra, merge);
}

}  // namespace hdb::dist
