#pragma once
// A benchmark's data set (the tpch and ssb tables), generated or loaded on first use and kept for
// every case. Out of host memory while making it, that case and every later one are skipped with
// the same reason: a data set that did not fit is not tried again case after case.
#include <memory>
#include <new>
#include <string>

#include "harness/errors.hpp"

namespace hdb {

template <class T>
class MadeOnce {
 public:
  // The data set, made by make() the first time; out_of_memory() gives the reason where make()
  // throws std::bad_alloc (a SkipCase then and on every later call).
  template <class Make, class Why>
  const T& get(Make&& make, Why&& out_of_memory) {
    if (!value_) {
      if (!failed_.empty()) throw SkipCase(failed_);
      try {
        value_ = std::make_unique<T>(make());
      } catch (const std::bad_alloc&) {
        failed_ = out_of_memory();
        throw SkipCase(failed_);
      }
    }
    return *value_;
  }
  bool made() const { return value_ != nullptr; }

 private:
  std::unique_ptr<T> value_;
  std::string failed_;
};

}  // namespace hdb
