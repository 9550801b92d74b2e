// Fuzz pass over the .tbl loader (issue 15): thousands of deterministic, seeded mutations of a valid
// customer/orders/lineitem set — truncations, bit flips, inserted and deleted bytes, huge fields,
// line-break changes, random bytes. Every case must either load (then the tables are consistent)
// or throw UsageError with a short message; anything else (another exception, a crash, a hang) is
// a failure. Run by CTest as fault.tpch.fuzz (label "fault"); HDB_FUZZ_CASES changes the count.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <typeinfo>

#include <stdlib.h>

#include "harness/errors.hpp"
#include "common/fuzz.hpp"
#include "workloads/random.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {
namespace {

namespace fs = std::filesystem;

using test::make_temp_dir;
using test::read_file;
using test::write_file;

// Mutates `s` with the random stream (seed, i...): the shared kinds of damage, plus separators,
// edge-value numbers, dates and byte order marks of the .tbl format.
class Mutator : public test::Mutator {
 public:
  using test::Mutator::Mutator;

  std::string mutate(std::string s) {
    const int rounds = 1 + static_cast<int>(below(3));
    for (int r = 0; r < rounds; ++r) {
      const std::size_t pos = below(s.size() + 1);
      switch (below(12)) {
        case 0: truncate(s, pos); break;
        case 1: flip_bits(s); break;
        case 2: insert_random(s, pos); break;
        case 3: erase_range(s, pos); break;
        case 4: insert_run(s, pos, "9a|\n\r.-0 \xff", std::size_t{1} << 21); break;  // digits, letters, separators
        case 5: duplicate_range(s, pos); break;
        case 6:  // '|' and line breaks removed or added
          for (std::size_t k = 0, m = 1 + below(6); k < m && !s.empty(); ++k) {
            std::size_t p = below(s.size());
            s[p] = s[p] == '|' ? 'x' : s[p] == '\n' ? '|' : below(2) ? '|' : '\n';
          }
          break;
        case 7:  // numbers changed into edge values
        {
          static const char* values[] = {
              "4294967295", "4294967296",  "-1",          "1.005", "0.000", "99999999999999999999", "", ".5", "5.",
              "1e3",        "42949672.95", "42949672.96", "0x10",  "+1"};
          std::size_t bar = s.find('|', pos);
          if (bar != std::string::npos) s.insert(bar, values[below(sizeof values / sizeof *values)]);
          break;
        }
        case 8:  // dates changed
        {
          static const char* dates[] = {"1995-02-29", "1996-02-29", "1969-12-31", "9999-12-31", "2000-13-01",
                                        "2000-00-10", "0000-01-01", "1995-3-15",  "19950315ab"};
          std::size_t dash = s.find('-', pos);
          if (dash != std::string::npos && dash >= 4)
            s.replace(dash - 4, 10, dates[below(sizeof dates / sizeof *dates)]);
          break;
        }
        case 9:  // a byte order mark or NULs at the start
          s.insert(0, below(2) ? std::string("\xEF\xBB\xBF") : std::string(1 + below(4), '\0'));
          break;
        case 10: random_bytes(s); break;  // the whole file random bytes
        default: to_crlf(s); break;       // CRLF line ends
      }
    }
    return s;
  }
};

TEST(TpchFuzz, TblLoaderLoadsOrFailsWithAMessage) {
  const fs::path dir = make_temp_dir("hdb-tpch-fuzz");
  write_tbl_files(generate_tables(0.0002, 5, 1), dir.string());  // 30 customers, 300 orders
  const char* files[] = {"customer.tbl", "orders.tbl", "lineitem.tbl"};
  std::string good[3];
  for (int f = 0; f < 3; ++f) good[f] = read_file(dir / files[f]);
  std::string on_disk[3] = {good[0], good[1], good[2]};
  ASSERT_NO_THROW(load_tables(dir.string()));

  int cases = 3000;
  if (const char* n = std::getenv("HDB_FUZZ_CASES")) cases = std::atoi(n);
  int loaded = 0, refused = 0;
  for (int i = 0; i < cases; ++i) {
    Mutator m(splitmix64(0x7470636866757a7aull + static_cast<std::uint64_t>(i)));
    // Mostly one damaged file; sometimes all three.
    const int which = static_cast<int>(m.below(4));
    for (int f = 0; f < 3; ++f) {
      const bool damaged = which == 3 || which == f;
      if (damaged || on_disk[f] != good[f]) {  // rewrite only what changed
        on_disk[f] = damaged ? m.mutate(good[f]) : good[f];
        write_file(dir / files[f], on_disk[f]);
      }
    }
    try {
      Tables t = load_tables(dir.string());
      ++loaded;
      for (const Relation* r : {&t.customer, &t.orders, &t.lineitem}) {
        ASSERT_GT(r->rows(), 0u) << "case " << i << ": " << r->name << " loaded with no row";
        for (const Column& c : r->cols) ASSERT_EQ(c.v.size(), r->rows()) << "case " << i;
      }
    } catch (const UsageError& e) {
      ++refused;
      const std::string msg = e.what();
      ASSERT_FALSE(msg.empty()) << "case " << i;
      ASSERT_LT(msg.size(), 600u) << "case " << i << ": a message of " << msg.size()
                                  << " bytes: " << msg.substr(0, 300);
      ASSERT_NE(msg.find(dir.string()), std::string::npos) << "case " << i << ": the message names no file: " << msg;
    } catch (const std::exception& e) {
      FAIL() << "case " << i << ": " << typeid(e).name() << ": " << e.what();
    }
  }
  std::printf("fuzz: %d cases, %d loaded, %d refused with a message\n", cases, loaded, refused);
  EXPECT_GT(refused, cases / 4);
  EXPECT_GT(loaded, 10);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace hdb::tpch
