// TPC-H data: dates, the generator's distributions, the .tbl loader on a hand-checked fixture and
// its error messages, the kernel plans' answers on that fixture, checksums, output files.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <stdlib.h>

#include <nlohmann/json.hpp>

#include "bench/tpch.hpp"
#include "common/chi_square.hpp"
#include "harness/errors.hpp"
#include "reference/tpch.hpp"
#include "workloads/tpch_tables.hpp"

namespace hdb::tpch {
namespace {

namespace fs = std::filesystem;

// A new directory of this test's own under TMPDIR (mkdtemp: no other run can share it).
fs::path make_temp_dir(const std::string& tag) {
  std::string pattern = (fs::temp_directory_path() / ("hdb-tpch-" + tag + "-XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp " + pattern + " failed");
  return pattern;
}

TEST(TpchDates, KnownDays) {
  EXPECT_EQ(days_from_civil(1970, 1, 1), 0);
  EXPECT_EQ(days_from_civil(1992, 1, 1), kStartDate);
  EXPECT_EQ(days_from_civil(1998, 12, 31), kEndDate);
  EXPECT_EQ(days_from_civil(1994, 1, 1), kQ6DateLo);
  EXPECT_EQ(days_from_civil(1994, 12, 31), kQ6DateHi);
  EXPECT_EQ(days_from_civil(1995, 3, 15), kQ3Date);
  EXPECT_EQ(format_date(kQ3Date), "1995-03-15");
  EXPECT_EQ(format_date(static_cast<std::uint32_t>(days_from_civil(1996, 2, 29))), "1996-02-29");
}

TEST(TpchGenerator, FollowsTheSpecification) {
  Tables t = generate_tables(0.01, 7, 2);
  ASSERT_EQ(t.customer.rows(), 1500u);
  ASSERT_EQ(t.orders.rows(), 15000u);
  EXPECT_GE(t.lineitem.rows(), 15000u);
  EXPECT_LE(t.lineitem.rows(), 7 * 15000u);
  std::set<std::uint32_t> okeys;
  for (std::uint64_t i = 0; i < t.orders.rows(); ++i) {
    std::uint32_t k = t.orders.cols[0].v[i], c = t.orders.cols[1].v[i], d = t.orders.cols[2].v[i];
    EXPECT_LT(k % 32, 8u) << "order keys are sparse: 8 of every 32";
    okeys.insert(k);
    EXPECT_TRUE(c >= 1 && c <= 1500 && c % 3 != 0) << c;
    EXPECT_TRUE(d >= kStartDate && d <= kEndDate - 151) << d;
  }
  EXPECT_EQ(okeys.size(), t.orders.rows());
  std::set<std::uint32_t> segs;
  for (std::uint32_t s : t.customer.cols[1].v) segs.insert(s);
  EXPECT_EQ(segs.size(), 5u);
  for (std::uint64_t i = 0; i < t.lineitem.rows(); ++i) {
    std::uint32_t q = t.lineitem.cols[1].v[i], p = t.lineitem.cols[2].v[i], disc = t.lineitem.cols[3].v[i];
    ASSERT_TRUE(q >= 1 && q <= 50);
    ASSERT_EQ(p % q, 0u);
    ASSERT_TRUE(p / q >= 90000 && p / q <= 90000 + 20000 + 99900) << "retail price of some part";
    ASSERT_LE(disc, 10u);
    ASSERT_EQ(okeys.count(t.lineitem.cols[0].v[i]), 1u);
  }
  // Same data for any thread count.
  Tables u = generate_tables(0.01, 7, 1);
  EXPECT_EQ(checksum(u.lineitem), checksum(t.lineitem));
  EXPECT_EQ(checksum(u.orders), checksum(t.orders));
}

using test::ChiSquare;
using test::uniform_chi_square;

// The specification's distributions (clause 4.2.3) of the columns the kernels read, at SF 0.1.
TEST(TpchGenerator, DistributionsFollowTheSpecification) {
  Tables t = generate_tables(0.1, 11, 2);
  const std::uint64_t customers = t.customer.rows(), orders = t.orders.rows(), lines = t.lineitem.rows();
  ASSERT_EQ(customers, 15000u);
  ASSERT_EQ(orders, 150000u);

  // O_CUSTKEY: uniform over the customers whose key is not a multiple of 3, so a third of the
  // customers have no orders and the others about orders / (2/3 customers) each.
  std::vector<std::uint64_t> per_customer(customers + 1, 0);
  for (std::uint32_t c : t.orders.cols[1].v) ++per_customer.at(c);
  std::uint64_t without = 0, eligible_without = 0;
  std::vector<std::uint64_t> eligible_counts;
  for (std::uint64_t c = 1; c <= customers; ++c) {
    if (c % 3 == 0) {
      EXPECT_EQ(per_customer[c], 0u) << "customer " << c << " has orders";
      ++without;
    } else {
      eligible_without += per_customer[c] == 0;
      eligible_counts.push_back(per_customer[c]);
    }
  }
  EXPECT_EQ(without, customers / 3) << "a third of the customers have no orders";
  EXPECT_LE(eligible_without, 2u) << "15 orders expected per eligible customer";
  ChiSquare cust = uniform_chi_square(eligible_counts);
  EXPECT_LT(cust.statistic, cust.critical) << "orders spread unevenly over the eligible customers";

  // C_MKTSEGMENT: uniform over the five segments.
  std::vector<std::uint64_t> segs(market_segments().size(), 0);
  for (std::uint32_t s : t.customer.cols[1].v) ++segs.at(s);
  ChiSquare seg = uniform_chi_square(segs);
  EXPECT_LT(seg.statistic, seg.critical) << "segments";

  // O_ORDERDATE: uniform over [STARTDATE, ENDDATE - 151 days], counted in 24 equal bins.
  const std::uint32_t span = kEndDate - 151 - kStartDate + 1;
  std::vector<std::uint64_t> dates(24, 0);
  for (std::uint32_t d : t.orders.cols[2].v) ++dates.at((d - kStartDate) * 24ull / span);
  ChiSquare date = uniform_chi_square(dates);
  EXPECT_LT(date.statistic, date.critical) << "order dates";

  // Line items: 1..7 per order, uniform (4 on average); L_QUANTITY 1..50; L_DISCOUNT 0.00..0.10;
  // L_SHIPDATE = O_ORDERDATE + 1..121 days; each uniform. Items of one order are contiguous.
  std::vector<std::uint64_t> per_order(7, 0), qty(50, 0), disc(11, 0), ship(121, 0);
  std::uint64_t i = 0;
  for (std::uint64_t o = 0; o < orders; ++o) {
    const std::uint32_t key = t.orders.cols[0].v[o], odate = t.orders.cols[2].v[o];
    std::uint64_t n = 0;
    for (; i < lines && t.lineitem.cols[0].v[i] == key; ++i, ++n) {
      ++qty.at(t.lineitem.cols[1].v[i] - 1);
      ++disc.at(t.lineitem.cols[3].v[i]);
      ASSERT_GT(t.lineitem.cols[4].v[i], odate);
      ++ship.at(t.lineitem.cols[4].v[i] - odate - 1);
    }
    ASSERT_TRUE(n >= 1 && n <= 7) << "order " << key << " has " << n << " line items";
    ++per_order[n - 1];
  }
  ASSERT_EQ(i, lines) << "line items grouped by order, in order";
  EXPECT_NEAR(static_cast<double>(lines) / static_cast<double>(orders), 4.0, 0.02);
  for (const auto& [name, counts] :
       {std::pair<const char*, const std::vector<std::uint64_t>&>{"items per order", per_order},
        {"quantity", qty},
        {"discount", disc},
        {"ship date offset", ship}}) {
    ChiSquare x = uniform_chi_square(counts);
    EXPECT_LT(x.statistic, x.critical) << name;
  }
}

TEST(TpchChecksum, IndependentOfRowOrder) {
  Relation r;
  Column a, b;
  a.info.name = "a";
  a.v = {1, 2, 3, 0xffffffffu};
  b.info.name = "b";
  b.v = {5, 6, 7, 8};
  r.cols.push_back(a);
  r.cols.push_back(b);
  Relation s = r;
  std::reverse(s.cols[0].v.begin(), s.cols[0].v.end());
  std::reverse(s.cols[1].v.begin(), s.cols[1].v.end());
  EXPECT_EQ(checksum(r), checksum(s));
  std::swap(s.cols[1].v[0], s.cols[1].v[1]);  // same column multisets, different rows
  EXPECT_NE(checksum(r), checksum(s));
  // The sum over rows of row_hash, for any thread count.
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    std::uint32_t row[2] = {r.cols[0].v[i], r.cols[1].v[i]};
    sum += row_hash(row, 2);
  }
  EXPECT_EQ(checksum(r), sum);
  Tables t = generate_tables(0.01, 3, 1);
  EXPECT_EQ(checksum(t.lineitem, 1), checksum(t.lineitem, 4));
}

// A hand-checked data set: which rows each kernel keeps is noted beside them.
class Fixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    write("customer.tbl",
          "1|Customer#000000001|IVhzIApeRb ot,c,E|15|25-989-741-2988|711.56|BUILDING|regular deposits|\n"
          "2|Customer#000000002|XSTf4,NCwDVaWNe6tE|13|23-768-687-3665|121.65|AUTOMOBILE|quickly final|\n"
          "3|Customer#000000003|MG9kdTD2WBHm|1|11-719-748-3364|7498.12|BUILDING|furiously|\n"
          "4|Customer#000000004|XxVSJsLAGtn|4|14-128-190-5944|2866.83|MACHINERY|no orders|\n");
    write("orders.tbl",
          "1|1|O|173665.47|1995-03-10|5-LOW|Clerk#000000951|0|nstructions sleep|\n"
          "2|2|O|46929.18|1995-03-01|1-URGENT|Clerk#000000880|0|foxes|\n"
          "3|3|F|193846.25|1995-03-20|5-LOW|Clerk#000000955|1|sly final|\n"
          "4|1|F|32151.78|1994-06-01|5-LOW|Clerk#000000124|0|sits|\n");
    // A keeps 4/14 (1994, 0.07, qty 23) and 4/17 (boundaries 1994-01-01, 0.05, qty 1).
    // C keeps 1/10 only: order 1 (before 03-15, customer 1 BUILDING) shipped after 03-15.
    // B joins every line except 5/18, whose order does not exist: 8 rows.
    write("lineitem.tbl",
          "1|10|1|1|17|1700.50|0.04|0.02|N|O|1995-03-16|1995-03-20|1995-03-25|NONE|AIR|c|\n"
          "1|11|1|2|30|3000.00|0.06|0.00|N|O|1995-03-15|1995-03-20|1995-03-25|NONE|AIR|shipped on the date|\n"
          "2|12|1|1|5|500.00|0.05|0.00|N|O|1995-03-20|1995-03-20|1995-03-25|NONE|AIR|automobile|\n"
          "3|13|1|1|8|800.00|0.07|0.00|N|O|1995-03-25|1995-03-20|1995-03-25|NONE|AIR|ordered late|\n"
          "4|14|1|1|23|2300.00|0.07|0.00|R|F|1994-06-05|1994-06-20|1994-06-25|NONE|AIR|q6|\n"
          "4|15|1|2|24|2400.00|0.06|0.00|R|F|1994-12-31|1994-06-20|1994-06-25|NONE|AIR|quantity 24|\n"
          "4|16|1|3|10|1000.00|0.08|0.00|R|F|1994-01-01|1994-06-20|1994-06-25|NONE|AIR|discount 0.08|\n"
          "4|17|1|4|1|100.00|0.05|0.00|R|F|1994-01-01|1994-06-20|1994-06-25|NONE|AIR|q6 boundaries|\n"
          "5|18|1|1|2|200.00|0.06|0.00|N|O|1995-04-01|1995-04-20|1995-04-25|NONE|AIR|no order|\n");
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) { std::ofstream(dir_ / name) << text; }
  std::string read(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  // The message of loading the fixture with `file` replaced by `text` (the file is restored).
  std::string error_of(const std::string& file, const std::string& text) {
    std::string good = fs::exists(dir_ / file) ? read(dir_ / file) : std::string();
    write(file, text);
    std::string msg = "no error";
    try {
      load_tables(dir_.string());
    } catch (const UsageError& e) {
      msg = e.what();
    }
    write(file, good);
    return msg;
  }
  fs::path dir_;
};

TEST_F(Fixture, LoadsTheColumns) {
  Tables t = load_tables(dir_.string());
  ASSERT_EQ(t.customer.rows(), 4u);
  ASSERT_EQ(t.orders.rows(), 4u);
  ASSERT_EQ(t.lineitem.rows(), 9u);
  EXPECT_EQ(t.customer.cols[1].v, (std::vector<std::uint32_t>{1, 0, 1, 4}));  // sorted segment codes
  EXPECT_EQ(t.orders.cols[2].v[0], static_cast<std::uint32_t>(days_from_civil(1995, 3, 10)));
  EXPECT_EQ(t.orders.cols[3].v[2], 1u);
  EXPECT_EQ(t.lineitem.cols[2].v[0], 170050u);  // cents
  EXPECT_EQ(t.lineitem.cols[3].v[0], 4u);       // hundredths
}

TEST_F(Fixture, KernelAnswersAreTheHandCheckedOnes) {
  Tables t = load_tables(dir_.string());
  Relation a = reference_execute(tpch_kernel("A", t));
  Relation b = reference_execute(tpch_kernel("B", t));
  Relation c = reference_execute(tpch_kernel("C", t));
  EXPECT_EQ(b.rows(), 8u);
  write_rows(a, (dir_ / "a.tbl").string());
  write_rows(c, (dir_ / "c.tbl").string());
  EXPECT_EQ(read(dir_ / "a.tbl"), "4|23|2300.00|0.07|1994-06-05\n4|1|100.00|0.05|1994-01-01\n");
  EXPECT_EQ(read(dir_ / "c.tbl"), "1|1700.50|0.04|1995-03-10|0\n");
  // B's columns: l_orderkey, l_extendedprice, o_custkey, o_orderdate, c_mktsegment.
  ASSERT_EQ(b.cols.size(), 5u);
  for (std::uint64_t i = 0; i < b.rows(); ++i)
    if (b.cols[0].v[i] == 3) {
      EXPECT_EQ(format_value(b.cols[4].info.type, b.cols[4].v[i]), "BUILDING");
    }
}

// Order keys beyond 2^32 (as dbgen writes them from about sf 716): l_orderkey and o_orderkey load
// as 64-bit columns, the customer keys stay 32-bit; the kernels run at 64-bit keys only, and their
// answers are the fixture's with every order key moved up by 2^32 (the low words alone would
// join the same rows: the high word decides nothing here, only the checksum catches a lost one).
TEST_F(Fixture, OrderKeysFrom2To32LoadAs64BitColumns) {
  auto shift = [&](std::string text) {
    std::string out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);)
      out += std::to_string((std::uint64_t{1} << 32) + std::stoull(l.substr(0, l.find('|')))) + l.substr(l.find('|')) +
             "\n";
    return out;
  };
  Tables narrow = load_tables(dir_.string());
  write("orders.tbl", shift(read(dir_ / "orders.tbl")));
  write("lineitem.tbl", shift(read(dir_ / "lineitem.tbl")));
  Tables t = load_tables(dir_.string());
  EXPECT_TRUE(t.orders.cols[0].info.wide);
  EXPECT_TRUE(t.lineitem.cols[0].info.wide);
  EXPECT_FALSE(t.orders.cols[1].info.wide);  // o_custkey stays 32-bit
  EXPECT_FALSE(t.customer.cols[0].info.wide);
  EXPECT_EQ(t.orders.cols[0].at(0), (std::uint64_t{1} << 32) + 1);
  EXPECT_EQ(t.lineitem.cols[0].at(8), (std::uint64_t{1} << 32) + 5);
  EXPECT_EQ(t.orders.cols[0].v, narrow.orders.cols[0].v);  // the low words
  EXPECT_EQ(max_key(t), (std::uint64_t{1} << 32) + 5);
  EXPECT_THROW(tpch_kernel("B", t, 32), std::invalid_argument);
  for (const char* k : {"A", "B", "C"}) {
    SCOPED_TRACE(k);
    Relation wide = reference_execute(tpch_kernel(k, t, 64));
    Relation want = reference_execute(tpch_kernel(k, narrow, 64));
    ASSERT_EQ(wide.rows(), want.rows());
    EXPECT_NE(checksum(wide), checksum(want));  // the keys differ in the high word only
    for (std::uint64_t i = 0; i < want.rows(); ++i)
      EXPECT_EQ(wide.cols[0].at(i), (std::uint64_t{1} << 32) + want.cols[0].at(i));
  }
  write_rows(reference_execute(tpch_kernel("C", t, 64)), (dir_ / "c.tbl").string());
  EXPECT_EQ(read(dir_ / "c.tbl"), "4294967297|1700.50|0.04|1995-03-10|0\n");
  // A key of 2^64 is no key: an error naming file, line and column.
  std::string e = error_of("orders.tbl", "18446744073709551616|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n");
  EXPECT_NE(e.find("orders.tbl:1: column 1 (o_orderkey) '18446744073709551616': does not fit 64 bits (at most "
                   "18446744073709551615)"),
            std::string::npos)
      << e;
}

// At 64-bit keys the generated tables' keys are mapped above 2^32 (widen_key: order kept, so the
// same rows join); the answers have the 32-bit answers' rows with their keys mapped.
TEST(TpchKeys, GeneratedKeysAre64BitAndJoinTheSameRows) {
  Tables t = generate_tables(0.01, 5, 2);  // keys past 4096: most map above 2^32
  EXPECT_EQ(widen_key(12345), (std::uint64_t{12345} << 20) | ((12345 * 0x9E3779B97F4A7C15ull) >> 44));
  EXPECT_GE(widen_key(4096), std::uint64_t{1} << 32);
  for (const char* k : {"A", "B", "C"}) {
    SCOPED_TRACE(k);
    Plan p = tpch_kernel(k, t, 64);
    for (const auto& in : p.inputs)
      for (const Column& c : in->cols) EXPECT_EQ(c.info.wide, is_key_column(c.info.name)) << c.info.name;
    Relation narrow = reference_execute(tpch_kernel(k, t, 32));
    Relation wide = reference_execute(p);
    ASSERT_EQ(wide.rows(), narrow.rows());
    ASSERT_GT(wide.rows(), 0u);
    EXPECT_TRUE(wide.cols[0].info.wide);
    std::uint64_t above = 0;
    for (std::uint64_t i = 0; i < wide.rows(); ++i) above += wide.cols[0].at(i) >> 32 != 0;
    EXPECT_GT(above, wide.rows() / 2);
  }
  for (const char* k : {"A", "B", "C"}) {
    SCOPED_TRACE(std::string("random ") + k);
    Relation narrow = reference_execute(random_kernel(k, 5000, 9, 2, 32));
    Relation wide = reference_execute(random_kernel(k, 5000, 9, 2, 64));
    EXPECT_EQ(wide.rows(), narrow.rows());
    EXPECT_GT(wide.rows(), 0u);
  }
}

// The generator makes dbgen's order keys 64-bit where they pass 2^32 (about sf 716).
TEST(TpchKeys, OrderKeysPass2To32NearSf716) {
  EXPECT_FALSE(wide_order_keys(1'000'000'000));
  EXPECT_TRUE(wide_order_keys(1'100'000'000));
  EXPECT_GT(generated_bytes(800), generated_bytes(700) * 8 / 7);  // the second word is counted
}

TEST_F(Fixture, ErrorsNameFileLineAndColumn) {
  std::string e =
      error_of("orders.tbl", "1|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n2|1|O|1.00|1995-02-30|5-LOW|Clerk|0|c|\n");
  EXPECT_NE(e.find("orders.tbl:2: column 5 (o_orderdate) '1995-02-30'"), std::string::npos) << e;
  e = error_of("orders.tbl", "1|x1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n");
  EXPECT_NE(e.find("orders.tbl:1: column 2 (o_custkey) 'x1': is not a non-negative number"), std::string::npos) << e;
  e = error_of("orders.tbl", "1|1|O|1.00|1995-03-10|5-LOW|Clerk|0|\n");
  EXPECT_NE(e.find("orders.tbl:1: expected 9 '|'-terminated columns, found 8"), std::string::npos) << e;
  e = error_of("orders.tbl", "1|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c\n");
  EXPECT_NE(e.find("orders.tbl:1: expected 9"), std::string::npos) << e;
  e = error_of("orders.tbl", "1|1|O|1.00|95-03-10|5-LOW|Clerk|0|c|\n");
  EXPECT_NE(e.find("is not a date YYYY-MM-DD"), std::string::npos) << e;
  e = error_of("customer.tbl", "1|C|a|15|25|711.56|SPACESHIP|c|\n");
  EXPECT_NE(e.find("customer.tbl:1: column 7 (c_mktsegment) 'SPACESHIP'"), std::string::npos) << e;
  e = error_of("lineitem.tbl", "1|10|1|1|17|17.005|0.04|0.02|N|O|1995-03-16|1995-03-20|1995-03-25|NONE|AIR|c|\n");
  EXPECT_NE(e.find("lineitem.tbl:1: column 6 (l_extendedprice) '17.005'"), std::string::npos) << e;
  EXPECT_EQ(error_of("customer.tbl", read(dir_ / "customer.tbl")), "no error");
  fs::remove(dir_ / "lineitem.tbl");
  e = error_of("customer.tbl", read(dir_ / "customer.tbl"));
  EXPECT_NE(e.find("cannot open " + (dir_ / "lineitem.tbl").string()), std::string::npos) << e;
}

TEST_F(Fixture, ExactReasonsForBadNumbers) {
  const std::string row = "|10|1|1|17|1700.50|0.04|0.02|N|O|1995-03-16|1995-03-20|1995-03-25|NONE|AIR|c|\n";
  auto line = [&](const std::string& key, const std::string& qty, const std::string& price, const std::string& disc) {
    return key + "|10|1|1|" + qty + "|" + price + "|" + disc +
           "|0.02|N|O|1995-03-16|1995-03-20|1995-03-25|NONE|AIR|c|\n";
  };
  std::string e = error_of("lineitem.tbl", "1" + row + line("1", "17", "1700.505", "0.04"));
  EXPECT_NE(e.find("lineitem.tbl:2: column 6 (l_extendedprice) '1700.505': has 3 decimal places"), std::string::npos)
      << e;
  e = error_of("lineitem.tbl", line("1", "17", "1700.5", "0.041"));
  EXPECT_NE(e.find("lineitem.tbl:1: column 7 (l_discount) '0.041': has 3 decimal places"), std::string::npos) << e;
  EXPECT_EQ(error_of("lineitem.tbl", line("1", "17", "1700.500", "0.0400")), "no error");  // zeros are exact
  // Keys take up to 64 bits (a key from 2^32 up makes its column 64-bit); other numbers 32.
  EXPECT_EQ(error_of("lineitem.tbl", line("4294967296", "17", "1700.50", "0.04")), "no error");
  EXPECT_EQ(error_of("lineitem.tbl", line("18446744073709551615", "17", "1700.50", "0.04")), "no error");
  e = error_of("lineitem.tbl", line("18446744073709551616", "17", "1700.50", "0.04"));
  EXPECT_NE(e.find("lineitem.tbl:1: column 1 (l_orderkey) '18446744073709551616': does not fit 64 bits"),
            std::string::npos)
      << e;
  e = error_of("lineitem.tbl", line("99999999999999999999999", "17", "1700.50", "0.04"));
  EXPECT_NE(e.find("'99999999999999999999999': does not fit 64 bits"), std::string::npos) << e;
  e = error_of("lineitem.tbl", line("-4294967296", "17", "1700.50", "0.04"));
  EXPECT_NE(e.find("column 1 (l_orderkey) '-4294967296': is negative"), std::string::npos) << e;
  e = error_of("lineitem.tbl", line("1", "4294967296", "1700.50", "0.04"));
  EXPECT_NE(e.find("column 5 (l_quantity) '4294967296': does not fit 32 bits"), std::string::npos) << e;
  EXPECT_EQ(error_of("lineitem.tbl", line("4294967295", "17", "1700.50", "0.04")), "no error");
  e = error_of("lineitem.tbl", line("1", "17", "42949672.96", "0.04"));
  EXPECT_NE(e.find("'42949672.96': does not fit 32 bits in cents"), std::string::npos) << e;
  e = error_of("lineitem.tbl", line("1", "-3", "1700.50", "0.04"));
  EXPECT_NE(e.find("column 5 (l_quantity) '-3': is negative"), std::string::npos) << e;
  e = error_of("lineitem.tbl", line("1", "1.5", "1700.50", "0.04"));
  EXPECT_NE(e.find("'1.5': is not a whole number"), std::string::npos) << e;
  e = error_of("lineitem.tbl", line("1", "", "1700.50", "0.04"));
  EXPECT_NE(e.find("column 5 (l_quantity) '': is empty"), std::string::npos) << e;
  e = error_of("lineitem.tbl", line("1", "17", "1.2.3", "0.04"));
  EXPECT_NE(e.find("'1.2.3': is not a non-negative decimal number"), std::string::npos) << e;
}

TEST_F(Fixture, MessagesQuoteAtMost80BytesOfAField) {
  std::string big(16u << 20, '9');
  std::string e = error_of("customer.tbl", big + "|C|a|15|25|711.56|BUILDING|c|\n");
  EXPECT_LT(e.size(), 400u) << e.substr(0, 400);
  EXPECT_NE(e.find("customer.tbl:1: column 1 (c_custkey) '" + std::string(80, '9') +
                   "... (16777216 bytes)': does not fit 64 bits"),
            std::string::npos)
      << e.substr(0, 400);
  e = error_of("customer.tbl", "1|C|a|15|25|711.56|" + std::string(1u << 20, 'B') + "|c|\n");
  EXPECT_LT(e.size(), 400u);
  EXPECT_NE(e.find("... (1048576 bytes)': is not a TPC-H market segment"), std::string::npos) << e;
  // Bytes other than printable ASCII are shown as \xNN.
  e = error_of("customer.tbl", std::string("1|C|a|15|25|711.56|BUILD\x01\xE9NG|c|\n"));
  EXPECT_NE(e.find("'BUILD\\x01\\xE9NG'"), std::string::npos) << e;
}

// Issue 50, item 3: a key that must be unique (c_custkey, o_orderkey) held twice is refused at load,
// naming table, key and both rows, instead of answers that differ from SQL (an identical repeated row)
// or every backend failing verification (one key, two rows that differ).
TEST_F(Fixture, RepeatedKeysAreErrorsNamingBothRows) {
  const std::string cust = read(dir_ / "customer.tbl"), orders = read(dir_ / "orders.tbl");
  // An identical repeated customer, after a blank line: the message counts lines, not rows.
  std::string e = error_of(
      "customer.tbl",
      cust + "\n2|Customer#000000002|XSTf4,NCwDVaWNe6tE|13|23-768-687-3665|121.65|AUTOMOBILE|quickly final|\n");
  EXPECT_NE(e.find((dir_ / "customer.tbl").string() + ": c_custkey 2 is on line 2 ('2|Customer#000000002|XSTf4"),
            std::string::npos)
      << e;
  EXPECT_NE(e.find("') and on line 6 ('2|Customer#000000002|XSTf4"), std::string::npos) << e;
  EXPECT_NE(e.find("c_custkey is the key of customer and must be unique"), std::string::npos) << e;
  // One order key, two different orders, the keys out of order.
  e = error_of("orders.tbl",
               "3|3|F|1.00|1995-03-20|5-LOW|Clerk|1|a|\n1|1|O|1.00|1995-03-10|5-LOW|Clerk|0|b|\n"
               "3|2|O|2.00|1995-03-01|5-LOW|Clerk|0|c|\n");
  EXPECT_NE(e.find("orders.tbl: o_orderkey 3 is on line 1 ('3|3|F|1.00|1995-03-20|5-LOW|Clerk|1|a|') and on line 3 "
                   "('3|2|O|2.00|1995-03-01|5-LOW|Clerk|0|c|'): o_orderkey is the key of orders and must be unique"),
            std::string::npos)
      << e;
  // 64-bit keys: the high word counts (2^32 + 1 is not 1), a repeated wide key is found.
  EXPECT_EQ(error_of("orders.tbl",
                     "4294967297|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n1|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n"),
            "no error");
  e = error_of("orders.tbl",
               "4294967297|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n1|1|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n"
               "4294967297|2|O|1.00|1995-03-10|5-LOW|Clerk|0|c|\n");
  EXPECT_NE(e.find("o_orderkey 4294967297 is on line 1"), std::string::npos) << e;
  EXPECT_NE(e.find("and on line 3"), std::string::npos) << e;
  // Keys out of order but unique load; lineitem's l_orderkey repeats by design (the fixture).
  EXPECT_EQ(error_of("customer.tbl",
                     "3|C|a|1|p|1.00|BUILDING|c|\n1|C|a|1|p|1.00|BUILDING|c|\n2|C|a|1|p|1.00|AUTOMOBILE|c|\n"),
            "no error");
  EXPECT_EQ(error_of("orders.tbl", orders), "no error");
}

// The same check on tables handed over as columns (--tables: workloads/column_files.hpp), naming the
// folder, table, column, key and both rows.
TEST_F(Fixture, RepeatedKeysInColumnsAreErrors) {
  const Tables t = load_tables(dir_.string());
  const fs::path cols = dir_ / "columns";
  fs::create_directory(cols);
  nlohmann::json tables;
  for (const Relation* r : {&t.customer, &t.orders, &t.lineitem}) {
    nlohmann::json columns;
    for (const Column& c : r->cols) {
      const std::string file = r->name + "." + c.info.name;
      if (c.info.type == ColType::Segment) {
        std::string bytes;
        std::vector<std::uint64_t> off{0};
        for (std::uint32_t code : c.v) {
          bytes += market_segments()[code];
          off.push_back(bytes.size());
        }
        std::ofstream(cols / (file + ".str"), std::ios::binary) << bytes;
        std::ofstream(cols / (file + ".off"), std::ios::binary)
            .write(reinterpret_cast<const char*>(off.data()), static_cast<std::streamsize>(off.size() * 8));
        columns[c.info.name] = {{"type", "str"}, {"file", file + ".str"}, {"offsets", file + ".off"}};
      } else {
        std::vector<std::uint64_t> v(c.v.begin(), c.v.end());
        if (r->name == "customer" && c.info.name == "c_custkey") v[3] = v[1];  // customer 4 becomes a second 2
        std::ofstream(cols / (file + ".i64"), std::ios::binary)
            .write(reinterpret_cast<const char*>(v.data()), static_cast<std::streamsize>(v.size() * 8));
        columns[c.info.name] = {{"type", "i64"}, {"file", file + ".i64"}};
      }
    }
    tables[r->name] = {{"rows", r->rows()}, {"columns", columns}};
  }
  std::ofstream(cols / "columns.json") << nlohmann::json{
      {"format", "hdb-columns/1"},
      {"benchmark", "tpch"},
      {"tables", tables}}.dump();
  std::string e = "no error";
  try {
    load_column_tables(cols.string());
  } catch (const UsageError& err) {
    e = err.what();
  }
  EXPECT_EQ(e, cols.string() +
                   ": table customer column c_custkey row 4 ('2'): repeats the key of row 2 (c_custkey is "
                   "the key of customer and must be unique)");
}

TEST_F(Fixture, EmptyTablesAreErrors) {
  for (const char* f : {"customer.tbl", "orders.tbl", "lineitem.tbl"}) {
    std::string e = error_of(f, "");
    EXPECT_NE(e.find((dir_ / f).string() + ": no rows"), std::string::npos) << e;
    e = error_of(f, "\n\r\n\n");
    EXPECT_NE(e.find((dir_ / f).string() + ": no rows"), std::string::npos) << e;
  }
}

TEST_F(Fixture, ByteOrderMarks) {
  // A UTF-8 BOM is skipped (editors write one; dbgen never does); UTF-16 is refused by name.
  Tables plain = load_tables(dir_.string());
  const std::string customers = read(dir_ / "customer.tbl");
  write("customer.tbl", "\xEF\xBB\xBF" + customers);
  Tables bom = load_tables(dir_.string());
  EXPECT_EQ(bom.customer.cols[0].v, plain.customer.cols[0].v);
  EXPECT_EQ(bom.customer.cols[1].v, plain.customer.cols[1].v);
  std::string e = error_of("customer.tbl", "\xFF\xFE" + customers);
  EXPECT_NE(e.find("customer.tbl: starts with a UTF-16 byte order mark"), std::string::npos) << e;
  // Elsewhere a BOM is a bad field, shown byte by byte.
  e = error_of("customer.tbl", customers + "\xEF\xBB\xBF" + "5|C|a|15|25|711.56|BUILDING|c|\n");
  EXPECT_NE(e.find("customer.tbl:5: column 1 (c_custkey) '\\xEF\\xBB\\xBF5': is not a non-negative number"),
            std::string::npos)
      << e;
}

TEST_F(Fixture, LineEndsAndLongLines) {
  // CRLF, no final newline, and a line longer than the loader's 1 MiB chunk (an unused column).
  write("customer.tbl",
        "1|C|a|15|25|711.56|BUILDING|" + std::string(3u << 20, 'x') + "|\r\n2|C|a|15|25|7.5|AUTOMOBILE|c|");
  Tables t = load_tables(dir_.string());
  EXPECT_EQ(t.customer.cols[0].v, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(t.customer.cols[1].v, (std::vector<std::uint32_t>{1, 0}));
  // A line of more than 64 MiB is no row: an error, not unbounded memory.
  std::string e = error_of("orders.tbl", std::string((64u << 20) + 10, 'x'));
  EXPECT_NE(e.find("orders.tbl:1: a line longer than 64 MiB"), std::string::npos) << e.substr(0, 300);
}

TEST(TpchTblFiles, GeneratedTablesRoundTripThroughTblFiles) {
  // Large enough for lineitem.tbl to span many of the loader's 1 MiB chunks.
  const fs::path dir = make_temp_dir("roundtrip");
  Tables t = generate_tables(0.01, 11, 2);
  write_tbl_files(t, dir.string());
  EXPECT_GT(fs::file_size(dir / "lineitem.tbl"), 4u << 20);
  Tables u = load_tables(dir.string());
  for (auto [a, b] : {std::pair{&t.customer, &u.customer}, {&t.orders, &u.orders}, {&t.lineitem, &u.lineitem}}) {
    ASSERT_EQ(a->rows(), b->rows()) << a->name;
    ASSERT_EQ(a->cols.size(), b->cols.size());
    for (std::size_t c = 0; c < a->cols.size(); ++c) EXPECT_EQ(a->cols[c].v, b->cols[c].v) << a->cols[c].info.name;
  }
  fs::remove_all(dir);
}

TEST(TpchGenerator, SizeIsKnownBeforeGenerating) {
  Tables t = generate_tables(0.01, 7, 1);
  const double ratio = static_cast<double>(generated_bytes(0.01)) / static_cast<double>(t.bytes());
  EXPECT_GT(ratio, 0.95);
  EXPECT_LT(ratio, 1.05);
  EXPECT_GT(generated_bytes(1000), 100ull << 30);  // sf 1000 is skipped on a machine below 1.2 TB
}

TEST(TpchPlans, FusableShapes) {
  Tables t = generate_tables(0.002, 3, 1);
  for (const char* k : {"A", "B", "C"}) {
    FusedPlan f;
    std::string why;
    EXPECT_TRUE(fuse_plan(tpch_kernel(k, t), f, why)) << k << ": " << why;
    EXPECT_TRUE(fuse_plan(random_kernel(k, 1000, 5, 1), f, why)) << k << ": " << why;
  }
  FusedPlan c;
  std::string why;
  ASSERT_TRUE(fuse_plan(tpch_kernel("C", t), c, why));
  ASSERT_EQ(c.joins.size(), 2u);
  EXPECT_EQ(c.probe_preds.size(), 1u);   // l_shipdate
  EXPECT_EQ(c.joins[0].build_input, 1);  // orders, with its date select
  EXPECT_EQ(c.joins[0].build_preds.size(), 1u);
  EXPECT_EQ(c.joins[1].probe.input, 1);  // o_custkey comes from the orders row
  EXPECT_EQ(c.outputs.size(), 5u);
  // A build side with duplicate keys cannot be a unique-key lookup.
  Plan dup = random_kernel("B", 100, 5, 1);
  std::swap(dup.inputs[0], dup.inputs[1]);  // now r1 (duplicate keys) is the build side
  EXPECT_FALSE(fuse_plan(dup, c, why));
  EXPECT_NE(why.find("duplicates"), std::string::npos) << why;
}

TEST(TpchOutput, PathPerKernel) {
  EXPECT_EQ(output_path("out.tbl", "C"), "out.C.tbl");
  EXPECT_EQ(output_path("dir.x/out", "A"), "dir.x/out.A");
}

}  // namespace
}  // namespace hdb::tpch
