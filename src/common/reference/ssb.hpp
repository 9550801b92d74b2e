#pragma once
// The serial reference of the 13 SSB queries: each written out from the specification's SQL (joins
// by hash lookups on the dimension keys, the WHERE clause as written, GROUP BY into an ordered
// map, 64-bit sums), independent of the plans in model/ssb_query.hpp that the backends run.
#include <string>

#include "model/ssb_query.hpp"
#include "workloads/ssb_tables.hpp"

namespace hdb::ssb {

// The answer of query `name` ("1.1" .. "4.3") on `t`: rows sorted by group key. `threads` > 1 splits
// the lineorder rows into that many ranges, each evaluated by the same row-at-a-time code, and adds
// their groups' sums: 64-bit integer sums, so the answer is the same for any count. At SF 20 one
// thread takes minutes per executable (hash lookups per row), longer than all of its timed passes.
Result reference_query(const std::string& name, const Tables& t, int threads = 1);

}  // namespace hdb::ssb
