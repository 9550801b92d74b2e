// A helper for the Parquet test (tests/peers/test_parquet_tables.py):
//   ssb_tbl_tool write SF DIR   writes the built-in generator's tables (seed 42) as ssb-dbgen .tbl files
// Exit 2 with "error: ..." on a bad argument or a file that cannot be written.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

#include "workloads/ssb_tables.hpp"

int main(int argc, char** argv) {
  if (argc != 4 || std::strcmp(argv[1], "write") != 0) {
    std::fprintf(stderr, "usage: ssb_tbl_tool write SF DIR\n");
    return 2;
  }
  try {
    hdb::ssb::write_tbl_files(hdb::ssb::generate_tables(std::atof(argv[2]), 42, 2), argv[3]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ssb_tbl_tool: error: %s\n", e.what());
    return 2;
  }
  return 0;
}
