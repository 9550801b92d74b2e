#pragma once
// The case model: a case is (test, variant, typed parameters, transfer mode, size). Its id is made
// here and nowhere else; --list prints it, --only matches it, the JSON records it and the driver,
// report and compare key on it (docs/cases.md).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/options.hpp"

namespace hdb {

// A parameter value is a JSON number or string: numbers stay numbers in the results, so no reader
// ever parses them back out of text.
using ParamValue = nlohmann::json;
using Params = std::vector<std::pair<std::string, ParamValue>>;  // in the benchmark's declared order

// 0.5 -> "0.5", 3 -> "3", "uniform" -> "uniform": how a value is printed inside an id.
std::string param_text(const ParamValue& v);

struct CaseKey {
  std::string test;
  std::string variant;
  Params params;
  std::uint64_t size_bytes = 0;        // nominal input size of the sweep (bytes per input); 0: no sweep
  Transfer transfer = Transfer::None;  // host memory of the PCIe copies; none without a bus
  // "test/variant[k=v,...,transfer=pinned]@size"; the brackets only when there is something in them,
  // "@size" only for a case of the size sweep (size_bytes > 0).
  std::string id() const;
  nlohmann::json params_json() const;
};

// One declared axis of a test (nvbench's idea): its name and the values a run sweeps. A test's
// cases are the product of its axes; the first axis varies slowest.
struct Axis {
  std::string name;
  std::vector<ParamValue> values;
};
std::vector<Params> axis_product(const std::vector<Axis>& axes);
template <class T>
std::vector<ParamValue> axis_values(const std::vector<T>& values) {
  return std::vector<ParamValue>(values.begin(), values.end());
}
// A case's parameter by name; std::logic_error when the case does not declare it.
const ParamValue& param(const Params& params, const std::string& name);

// A glob where only '*' and '?' are special, so the brackets of an id match themselves.
bool glob_match(const std::string& pattern, const std::string& text);

// --only: a pattern selects a case when it matches its test, its test/variant or its whole id.
class CaseFilter {
 public:
  explicit CaseFilter(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {}
  bool empty() const { return patterns_.empty(); }
  // Could any case of test/variant be selected? (Lets a benchmark skip generating data.)
  bool may_select(const std::string& test, const std::string& variant) const;
  bool selects(const CaseKey& key) const;

 private:
  std::vector<std::string> patterns_;
};

}  // namespace hdb
