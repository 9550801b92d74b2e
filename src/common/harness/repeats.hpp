#pragma once
// Options that list values (--sizes 32K,1M, --key-bits 32,64, --queries 1.1,2.1, ...): each value is
// a case (or a sweep point) of its own, so one given twice would give two cases one id. A usage error
// naming the option and the value (issue 50, item 8).
#include <sstream>
#include <string>
#include <vector>

#include "harness/errors.hpp"

namespace hdb {

// Throws UsageError "<option>: <value> is given twice (each value is a case of its own)" at the first
// value that `same` finds equal to an earlier one; `text` writes a value as the message shows it.
template <class T, class Same, class Text>
void refuse_repeats(const std::vector<T>& values, const std::string& option, Same same, Text text) {
  for (std::size_t i = 1; i < values.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (same(values[j], values[i]))
        throw UsageError(option + ": " + text(values[i]) + " is given twice (each value is a case of its own)");
}

template <class T>
void refuse_repeats(const std::vector<T>& values, const std::string& option) {
  refuse_repeats(
      values, option, [](const T& a, const T& b) { return a == b; },
      [](const T& v) {
        std::ostringstream s;
        s << v;
        return s.str();
      });
}

}  // namespace hdb
