#pragma once
// The human-readable table, one row per case as it finishes (SHOC style: kernel-only throughput,
// with transfers, their parity and % of the measured ceiling).
#include <cstdio>
#include <string>

#include "harness/result.hpp"

namespace hdb {

class Console {
 public:
  explicit Console(bool quiet) : quiet_(quiet) {}
  // ceiling_gbps: the ceiling sampled nearest to the case so far (the document's may be a later,
  // nearer sample).
  void row(const Record& r, const Ceiling& ceiling);
  void line(const std::string& text);  // a note (suppressed by --quiet)

 private:
  void header();
  bool quiet_;
  bool header_done_ = false;
};

}  // namespace hdb
