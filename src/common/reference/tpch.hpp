#pragma once
// Serial reference for the tpch micro-kernels: the plan executed operator at a time with the
// plainest algorithms (a filtering loop, a hash multimap join, a column copy). Every backend's
// answer is compared with this one.
#include "model/tpch_plan.hpp"

namespace hdb::tpch {

Relation reference_execute(const Plan& plan);

}  // namespace hdb::tpch
