#include "harness/case.hpp"

#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <stdexcept>

#include "harness/sizes.hpp"

namespace hdb {

std::string param_text(const ParamValue& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_float()) {
    // Shortest text that reads back as the same double.
    double x = v.get<double>();
    char buf[40];
    if (x == std::floor(x) && std::fabs(x) < 1e15) {  // 100.0 -> "100", never "1e+02"
      std::snprintf(buf, sizeof buf, "%.0f", x);
      return buf;
    }
    for (int prec = 1; prec <= 17; ++prec) {
      std::snprintf(buf, sizeof buf, "%.*g", prec, x);
      if (std::strtod(buf, nullptr) == x) break;
    }
    return buf;
  }
  return v.dump();
}

std::string CaseKey::id() const {
  std::string inner;
  for (const auto& [k, v] : params) inner += (inner.empty() ? "" : ",") + k + "=" + param_text(v);
  if (transfer != Transfer::None) inner += std::string(inner.empty() ? "" : ",") + "transfer=" + to_string(transfer);
  return test + "/" + variant + (inner.empty() ? "" : "[" + inner + "]") +
         (size_bytes ? "@" + format_size(size_bytes) : "");
}

nlohmann::json CaseKey::params_json() const {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, v] : params) j[k] = v;
  return j;
}

std::vector<Params> axis_product(const std::vector<Axis>& axes) {
  std::vector<Params> out{Params{}};
  for (const Axis& axis : axes) {
    std::vector<Params> next;
    for (const Params& head : out)
      for (const ParamValue& v : axis.values) {
        next.push_back(head);
        next.back().emplace_back(axis.name, v);
      }
    out = std::move(next);
  }
  return out;
}

const ParamValue& param(const Params& params, const std::string& name) {
  for (const auto& [k, v] : params)
    if (k == name) return v;
  throw std::logic_error("the case declares no parameter '" + name + "'");
}

bool glob_match(const std::string& p, const std::string& t) {
  std::size_t pi = 0, ti = 0, star = std::string::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi, ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

bool CaseFilter::may_select(const std::string& test, const std::string& variant) const {
  if (patterns_.empty()) return true;
  const std::string full = test + "/" + variant;
  for (const auto& pat : patterns_) {
    if (glob_match(pat, test) || glob_match(pat, full)) return true;
    // An id pattern: its part before the parameters or the size names the test/variant.
    const std::string head = pat.substr(0, pat.find_first_of("[@"));
    if (head.size() < pat.size() && (glob_match(head, full) || glob_match(head + "*", full))) return true;
  }
  return false;
}

bool CaseFilter::selects(const CaseKey& key) const {
  if (patterns_.empty()) return true;
  const std::string full = key.test + "/" + key.variant, id = key.id();
  for (const auto& pat : patterns_)
    if (glob_match(pat, key.test) || glob_match(pat, full) || glob_match(pat, id)) return true;
  return false;
}

}  // namespace hdb
