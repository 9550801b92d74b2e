#pragma once
// The distributed relational operators (dist_unique, dist_join) of the dist benchmark.
#include "bench/dist.hpp"
#include "harness/comm.hpp"

namespace hdb::dist {

void run_dist_ra(Session& s, const Comm& comm, ra::RaBackend& backend, const DistOptions& o);

}  // namespace hdb::dist
