#pragma once
// The human-readable table, one row per case as it finishes (SHOC style: kernel-only throughput,
// with transfers, their parity and % of the measured ceiling).
#include <cstdio>
#include <string>

#include "harness/result.hpp"

namespace hdb {

class Console {
 public:
  Console(bool quiet, double ceiling_gbps) : quiet_(quiet), ceiling_(ceiling_gbps) {}
  void set_ceiling(double gbps) { ceiling_ = gbps; }
  void row(const Record& r);
  void line(const std::string& text);  // a note (suppressed by --quiet)

 private:
  void header();
  bool quiet_;
  double ceiling_;
  bool header_done_ = false;
};

}  // namespace hdb
