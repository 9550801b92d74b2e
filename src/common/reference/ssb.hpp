#pragma once
// The serial reference of the 13 SSB queries: each written out from the specification's SQL (joins
// by hash lookups on the dimension keys, the WHERE clause as written, GROUP BY into an ordered
// map, 64-bit sums), independent of the plans in model/ssb_query.hpp that the backends run.
#include <string>

#include "model/ssb_query.hpp"
#include "workloads/ssb_tables.hpp"

namespace hdb::ssb {

// The answer of query `name` ("1.1" .. "4.3") on `t`: rows sorted by group key.
Result reference_query(const std::string& name, const Tables& t);

}  // namespace hdb::ssb
