#include "reference/tpch.hpp"

#include <unordered_map>

namespace hdb::tpch {

Relation reference_execute(const Plan& plan) {
  const auto schemas = plan_schemas(plan);
  std::vector<Relation> made;  // step outputs
  auto rel = [&](int id) -> const Relation& {
    return id < static_cast<int>(plan.inputs.size()) ? *plan.inputs[static_cast<std::size_t>(id)]
                                                     : made[static_cast<std::size_t>(id) - plan.inputs.size()];
  };
  for (const Step& s : plan.steps) {
    const Relation& in = rel(s.in);
    Relation out;
    out.name = s.name;
    for (const ColumnInfo& c : schemas[plan.inputs.size() + made.size()]) out.cols.push_back({c, {}});
    switch (s.op) {
      case Op::Select:
        for (std::uint64_t i = 0; i < in.rows(); ++i) {
          const std::uint64_t x = in.cols[static_cast<std::size_t>(s.col)].at(i);
          if (x < s.lo || x > s.hi) continue;
          for (std::size_t c = 0; c < in.cols.size(); ++c) out.cols[c].push_back(in.cols[c].at(i));
        }
        break;
      case Op::Join: {
        const Relation& right = rel(s.right);
        // Keys compare as whole values: 64-bit on wide columns.
        std::unordered_multimap<std::uint64_t, std::uint64_t> index;
        for (std::uint64_t j = 0; j < right.rows(); ++j)
          index.emplace(right.cols[static_cast<std::size_t>(s.right_col)].at(j), j);
        for (std::uint64_t i = 0; i < in.rows(); ++i) {
          auto range = index.equal_range(in.cols[static_cast<std::size_t>(s.col)].at(i));
          for (auto it = range.first; it != range.second; ++it) {
            std::size_t o = 0;
            for (const Column& c : in.cols) out.cols[o++].push_back(c.at(i));
            for (std::size_t c = 0; c < right.cols.size(); ++c)
              if (static_cast<int>(c) != s.right_col) out.cols[o++].push_back(right.cols[c].at(it->second));
          }
        }
        break;
      }
      case Op::Project:
        for (std::size_t k = 0; k < s.cols.size(); ++k) out.cols[k] = in.cols[static_cast<std::size_t>(s.cols[k])];
        break;
    }
    made.push_back(std::move(out));
  }
  return std::move(made.back());
}

}  // namespace hdb::tpch
