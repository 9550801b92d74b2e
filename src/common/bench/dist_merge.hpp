#pragma once
// table_merge: the whole-table delta merge with its columns spread over the ranks.
#include "bench/dist.hpp"
#include "harness/comm.hpp"

namespace hdb::dist {

void run_table_merge(Session& s, const Comm& comm, MergeBackend& backend, const DistOptions& o);

}  // namespace hdb::dist
