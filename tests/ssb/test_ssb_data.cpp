// SSB data: dictionaries and dates, the generator's distributions (ssb-dbgen's), the .tbl loader
// (round trip and error messages on small fixture files), the query plans' columns, and the 13
// reference answers on a hand-checked table.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>

#include <nlohmann/json.hpp>

#include "common/chi_square.hpp"
#include "common/fuzz.hpp"
#include "harness/errors.hpp"
#include "reference/ssb.hpp"
#include "ssb_fixture.hpp"
#include "workloads/ssb_tables.hpp"

namespace hdb::ssb {
namespace {

namespace fs = std::filesystem;

fs::path make_temp_dir(const std::string& tag) { return hdb::test::make_temp_dir("hdb-ssb-" + tag); }

TEST(SsbDictionaries, CodesAndStrings) {
  EXPECT_EQ(city_code("UNITED KI1"), 231);
  EXPECT_EQ(city_code("UNITED KI5"), 235);
  EXPECT_EQ(city_name(170), "PERU     0");
  EXPECT_EQ(nation_code("UNITED STATES"), 24);
  EXPECT_EQ(region_of_nation(24), static_cast<std::uint32_t>(region_code("AMERICA")));
  EXPECT_EQ(region_of_nation(18), static_cast<std::uint32_t>(region_code("ASIA")));  // CHINA
  EXPECT_EQ(category_code("MFGR#12"), 1);
  EXPECT_EQ(category_code("MFGR#14"), 3);
  EXPECT_EQ(brand_code("MFGR#2221"), 260);
  EXPECT_EQ(brand_code("MFGR#2228"), 267);
  EXPECT_EQ(brand_code("MFGR#2239"), 278);
  EXPECT_EQ(brand_code("MFGR#121"), brand_code("MFGR#1201"));  // dbgen's spelling and the spec's
  EXPECT_EQ(brand_name(40), "MFGR#121");
  EXPECT_EQ(yearmonth_code("Dec1997"), 71);
  for (const char* bad : {"MFGR#6", "MFGR#1241", "MFGR#120", "MFGR#16", "UNITED KI", "Dec1999", "ATLANTIS", "mfgr#1"}) {
    EXPECT_LT(std::max({mfgr_code(bad), category_code(bad), brand_code(bad), city_code(bad), yearmonth_code(bad),
                        nation_code(bad)}),
              0)
        << bad;
  }
  // Every code reads back from its string, and codes keep the strings' order where queries compare ranges.
  for (std::uint32_t c = 0; c < kRegions; ++c) EXPECT_EQ(region_code(region_name(c)), static_cast<int>(c));
  for (std::uint32_t c = 0; c < kNations; ++c) EXPECT_EQ(nation_code(nation_name(c)), static_cast<int>(c));
  for (std::uint32_t c = 0; c < kCities; ++c) EXPECT_EQ(city_code(city_name(c)), static_cast<int>(c));
  for (std::uint32_t c = 0; c < kMfgrs; ++c) EXPECT_EQ(mfgr_code(mfgr_name(c)), static_cast<int>(c));
  for (std::uint32_t c = 0; c < kCategories; ++c) EXPECT_EQ(category_code(category_name(c)), static_cast<int>(c));
  for (std::uint32_t c = 0; c < kBrands; ++c) EXPECT_EQ(brand_code(brand_name(c)), static_cast<int>(c));
  for (std::uint32_t c = 0; c < kYearMonths; ++c) EXPECT_EQ(yearmonth_code(yearmonth_name(c)), static_cast<int>(c));
}

TEST(SsbDates, DbgenCalendar) {
  EXPECT_EQ(datekey_after_start(0), 19920101u);
  EXPECT_EQ(datekey_after_start(kDates - 1), 19981230u);      // dbgen's 2,556 days
  EXPECT_EQ(datekey_after_start(kOrderDays - 1), 19980802u);  // 1998-12-31 - 151 days
  EXPECT_EQ(week_num_in_year(19940101), 1u);
  EXPECT_EQ(week_num_in_year(19940203), 5u);
  EXPECT_EQ(week_num_in_year(19940204), 6u);  // day 35 / 7 + 1
  EXPECT_EQ(week_num_in_year(19941231), 53u);
  EXPECT_TRUE(valid_datekey(19960229));
  EXPECT_FALSE(valid_datekey(19970229));
  EXPECT_FALSE(valid_datekey(19941301));
}

using hdb::test::uniform_chi_square;

std::vector<std::uint64_t> histogram(const Column& c, std::uint32_t lo, std::uint32_t n) {
  std::vector<std::uint64_t> h(n, 0);
  for (std::uint32_t v : c) {
    EXPECT_TRUE(v >= lo && v - lo < n) << v;
    if (v >= lo && v - lo < n) ++h[v - lo];
  }
  return h;
}
void expect_uniform(const Column& c, std::uint32_t lo, std::uint32_t n, const char* what) {
  const hdb::test::ChiSquare x = uniform_chi_square(histogram(c, lo, n));
  EXPECT_LT(x.statistic, x.critical) << what << " is not uniform over its " << n << " values";
}

TEST(SsbGenerator, FollowsSsbDbgen) {
  const Tables t = generate_tables(0.05, 7, 2);
  ASSERT_EQ(t.rows(Table::Lineorder), 300000u);
  ASSERT_EQ(t.rows(Table::Customer), 1500u);
  ASSERT_EQ(t.rows(Table::Supplier), 100u);
  ASSERT_EQ(t.rows(Table::Part), 200000u);
  ASSERT_EQ(t.rows(Table::Date), 2556u);
  EXPECT_EQ(sizes_for(8).parts, 800000u);  // 200,000 x floor(1 + log2 8)
  EXPECT_EQ(generated_bytes(0.05), t.bytes());
  for (int c = 0; c < kCols; ++c)
    EXPECT_EQ(t.cols[static_cast<std::size_t>(c)].size(), t.rows(table_of(static_cast<Col>(c))));

  // Dimension values: uniform nations, digits and parts' manufacturer / category / brand.
  expect_uniform(t[Col::c_nation], 0, kNations, "c_nation");
  expect_uniform(t[Col::p_mfgr], 0, kMfgrs, "p_mfgr");
  expect_uniform(t[Col::p_category], 0, kCategories, "p_category");
  expect_uniform(t[Col::p_brand1], 0, kBrands, "p_brand1");
  for (std::uint64_t i = 0; i < t.rows(Table::Customer); ++i) {
    EXPECT_EQ(t[Col::c_custkey][i], i + 1);
    EXPECT_EQ(t[Col::c_city][i] / 10, t[Col::c_nation][i]);
    EXPECT_EQ(t[Col::c_region][i], region_of_nation(t[Col::c_nation][i]));
  }
  for (std::uint64_t i = 0; i < t.rows(Table::Part); ++i) {
    ASSERT_EQ(t[Col::p_brand1][i] / 40, t[Col::p_category][i]);
    ASSERT_EQ(t[Col::p_category][i] / 5, t[Col::p_mfgr][i]);
  }
  std::set<std::uint32_t> cities(t[Col::s_city].begin(), t[Col::s_city].end());
  EXPECT_GT(cities.size(), 50u);

  // Lineorder: domains, dbgen's formulas, uniform quantity / discount / supplier, customers whose key
  // is not a multiple of 3, order dates in [1992-01-01, 1998-08-02].
  expect_uniform(t[Col::lo_quantity], 1, 50, "lo_quantity");
  expect_uniform(t[Col::lo_discount], 0, 11, "lo_discount");
  expect_uniform(t[Col::lo_suppkey], 1, 100, "lo_suppkey");
  std::set<std::uint32_t> years;
  for (std::uint64_t i = 0; i < t.rows(Table::Lineorder); ++i) {
    const std::uint32_t d = t[Col::lo_orderdate][i], c = t[Col::lo_custkey][i], p = t[Col::lo_partkey][i];
    ASSERT_TRUE(valid_datekey(d) && d >= 19920101 && d <= 19980802) << d;
    years.insert(d / 10000);
    ASSERT_TRUE(c >= 1 && c <= 1500 && c % 3 != 0) << c;
    ASSERT_TRUE(p >= 1 && p <= 200000) << p;
    const std::uint32_t q = t[Col::lo_quantity][i], disc = t[Col::lo_discount][i], price = t[Col::lo_extendedprice][i];
    ASSERT_EQ(price, q * retail_price_cents(p));
    ASSERT_EQ(t[Col::lo_revenue][i], std::uint64_t{price} * (100 - disc) / 100);
    ASSERT_EQ(t[Col::lo_supplycost][i], 6 * retail_price_cents(p) / 10);
  }
  EXPECT_EQ(years.size(), 7u);
  // Same data for any thread count.
  const Tables u = generate_tables(0.05, 7, 1);
  EXPECT_EQ(u.cols, t.cols);
  EXPECT_NE(generate_tables(0.05, 8, 2).cols, t.cols);
}

TEST(SsbLoader, RoundTripOfTheGenerator) {
  const fs::path dir = make_temp_dir("roundtrip");
  const Tables t = generate_tables(0.002, 3, 2);
  write_tbl_files(t, dir.string());
  const Tables u = load_tables(dir.string());
  for (int c = 0; c < kCols; ++c)
    EXPECT_EQ(u.cols[static_cast<std::size_t>(c)], t.cols[static_cast<std::size_t>(c)])
        << col_name(static_cast<Col>(c));
  fs::remove_all(dir);
}

class SsbLoaderErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = make_temp_dir("errors");
    write_tbl_files(test::hand_tables(), dir_.string());
  }
  void TearDown() override { fs::remove_all(dir_); }
  // Replaces line `line` (1-based) of `file` by `text`.
  void set_line(const std::string& file, int line, const std::string& text) {
    std::ifstream in(dir_ / file);
    std::vector<std::string> lines;
    for (std::string s; std::getline(in, s);) lines.push_back(s);
    lines.at(static_cast<std::size_t>(line - 1)) = text;
    std::ofstream out(dir_ / file, std::ios::trunc);
    for (const auto& s : lines) out << s << "\n";
  }
  std::string error() {
    try {
      load_tables(dir_.string());
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

TEST_F(SsbLoaderErrors, LoadsTheFixture) {
  const Tables t = load_tables(dir_.string());
  EXPECT_EQ(t.cols, test::hand_tables().cols);
}

TEST_F(SsbLoaderErrors, NameFileLineAndColumn) {
  const std::string lo = (dir_ / "lineorder.tbl").string(), cust = (dir_ / "customer.tbl").string(),
                    part = (dir_ / "part.tbl").string(), date = (dir_ / "date.tbl").string();
  const std::string row = "1|1|2|1|1|19930101|5-LOW|0|10|1000|1|2|980|600|2|19930101|TRUCK|";
  auto expect = [this](const std::string& want) {
    const std::string got = error();
    EXPECT_NE(got.find(want), std::string::npos) << "got: " << got << "\nwant: " << want;
  };
  set_line("lineorder.tbl", 2, "1|1|2|1|1|19930101|5-LOW|0|10|1000|1|2|980|600|2|19930101|");
  expect(lo + ":2: expected 17 '|'-terminated columns, found 16");
  set_line("lineorder.tbl", 2, "1|1|2|1|1|19930101|5-LOW|0|10|1000|1|2|980|600|2|19930101|TRUCK");
  expect(lo + ":2: expected 17 '|'-terminated columns, found a row without the trailing '|'");
  set_line("lineorder.tbl", 2, "1|1|2|1|1|19930101|5-LOW|0|1x|1000|1|2|980|600|2|19930101|TRUCK|");
  expect(lo + ":2: column 9 (lo_quantity) '1x': is not a non-negative number");
  set_line("lineorder.tbl", 2, "1|1|4294967296|1|1|19930101|5-LOW|0|10|1000|1|2|980|600|2|19930101|TRUCK|");
  expect(lo +
         ":2: column 3 (lo_custkey) '4294967296': does not fit 32 bits (at most 4294967295): keys of 2^32 or more are "
         "refused");
  set_line("lineorder.tbl", 2, "1|1|2|1|1|19930229|5-LOW|0|10|1000|1|2|980|600|2|19930101|TRUCK|");
  expect(lo + ":2: column 6 (lo_orderdate) '19930229': is not a date yyyymmdd");
  set_line("lineorder.tbl", 2, "1|1|2|1|1|19930101|5-LOW|0|10|-5|1|2|980|600|2|19930101|TRUCK|");
  expect(lo + ":2: column 10 (lo_extendedprice) '-5': is negative");
  set_line("lineorder.tbl", 2, row);
  set_line("customer.tbl", 3, "3|Customer#000000003|x|ATLANTIS 4|CHINA|ASIA|25-989-741-2988|BUILDING|");
  expect(cust + ":3: column 4 (c_city) 'ATLANTIS 4': is not an SSB city");
  set_line("customer.tbl", 3, "3|Customer#000000003|x|CHINA    4|CHINA|ASIA|25-989-741-2988|BUILDING|");
  set_line("part.tbl", 1, "1|lace|MFGR#1|MFGR#12|MFGR#1241|goldenrod|PROMO|7|JUMBO PKG|");
  expect(part + ":1: column 5 (p_brand1) 'MFGR#1241': is not an SSB brand");
  set_line("part.tbl", 1, "1|lace|MFGR#1|MFGR#12|MFGR#1221|goldenrod|PROMO|7|JUMBO PKG|");
  set_line("date.tbl", 1, "19930101|January 1, 1993|Friday|January|1993|199301|Jan1999|6|1|1|1|1|Winter|0|0|1|1|");
  expect(date + ":1: column 7 (d_yearmonth) 'Jan1999': is not an SSB year and month");
  set_line("date.tbl", 1, "19930101|January 1, 1993|Friday|January|1993|199301|Jan1993|6|1|1|1|1|Winter|0|0|1|1|");
  EXPECT_EQ(error(), "(no error)");
  fs::remove(dir_ / "supplier.tbl");
  expect("cannot open " + (dir_ / "supplier.tbl").string());
  std::ofstream(dir_ / "supplier.tbl", std::ios::trunc) << "\n";
  expect((dir_ / "supplier.tbl").string() + ": no rows");
}

// Issue 50, item 3: the key of each dimension table (d_datekey, c_custkey, s_suppkey, p_partkey) held
// twice is refused at load, naming file, key and both lines: an identical repeated row gave every
// backend one answer and SQL another; two rows of one key made every backend fail verification.
TEST_F(SsbLoaderErrors, RepeatedKeysAreErrorsNamingBothRows) {
  auto lines = [this](const std::string& file) {
    std::ifstream in(dir_ / file);
    std::vector<std::string> v;
    for (std::string s; std::getline(in, s);) v.push_back(s);
    return v;
  };
  auto expect = [this](const std::string& want) {
    const std::string got = error();
    EXPECT_NE(got.find(want), std::string::npos) << "got: " << got << "\nwant: " << want;
  };
  for (const auto& [file, key, table] :
       {std::tuple<std::string, std::string, std::string>{"customer.tbl", "c_custkey", "customer"},
        {"supplier.tbl", "s_suppkey", "supplier"},
        {"part.tbl", "p_partkey", "part"},
        {"date.tbl", "d_datekey", "date"}}) {
    const std::vector<std::string> good = lines(file);
    ASSERT_GE(good.size(), 2u) << file;
    const std::string first = good[0], k = first.substr(0, first.find('|'));
    const int n = static_cast<int>(good.size());
    // An identical copy of the first row, appended.
    std::ofstream(dir_ / file, std::ios::app) << first << "\n";
    expect((dir_ / file).string() + ": " + key + " " + k + " is on line 1 ('" + first.substr(0, 20));
    expect("and on line " + std::to_string(n + 1) + " ('" + first.substr(0, 20));
    expect(key + " is the key of " + table + " and must be unique");
    // The second row given the first one's key (other values).
    set_line(file, n + 1, good[1]);
    set_line(file, 2, k + good[1].substr(good[1].find('|')));
    expect((dir_ / file).string() + ": " + key + " " + k + " is on line 1 ('");
    expect("and on line 2 ('" + k + "|");
    set_line(file, 2, good[1]);
    std::ofstream(dir_ / file, std::ios::trunc);
    for (const std::string& l : good) std::ofstream(dir_ / file, std::ios::app) << l << "\n";
    EXPECT_EQ(error(), "(no error)") << file;
  }
  // A date the calendar has but the loader does not keep: the message states the range.
  set_line("lineorder.tbl", 2, "1|1|2|1|1|21000101|5-LOW|0|10|1000|1|2|980|600|2|19930101|TRUCK|");
  expect("'21000101': is not a date yyyymmdd of the years 1900..2099");
}

// The same check on tables handed over as columns (--tables: workloads/column_files.hpp), naming the
// folder, table, column, key and both rows.
TEST_F(SsbLoaderErrors, RepeatedKeysInColumnsAreErrors) {
  Tables t = test::hand_tables();
  t[Col::s_suppkey].back() = t[Col::s_suppkey].front();  // the last supplier takes the first one's key
  const fs::path cols = dir_ / "columns";
  fs::create_directory(cols);
  const std::map<std::string, std::string> table_of_prefix{
      {"lo", "lineorder"}, {"d", "date"}, {"c", "customer"}, {"s", "supplier"}, {"p", "part"}};
  const std::map<Col, std::string (*)(std::uint32_t)> strings{
      {Col::d_yearmonth, yearmonth_name}, {Col::c_city, city_name}, {Col::c_nation, nation_name},
      {Col::c_region, region_name},       {Col::s_city, city_name}, {Col::s_nation, nation_name},
      {Col::s_region, region_name},       {Col::p_mfgr, mfgr_name}, {Col::p_category, category_name},
      {Col::p_brand1, brand_name}};
  nlohmann::json tables;
  for (int i = 0; i < kCols; ++i) {
    const Col c = static_cast<Col>(i);
    const std::string name = col_name(c), table = table_of_prefix.at(name.substr(0, name.find('_')));
    const Column& v = t[c];
    tables[table]["rows"] = v.size();
    auto bytes = [](const std::vector<std::uint64_t>& x) {
      return std::string(reinterpret_cast<const char*>(x.data()), x.size() * 8);
    };
    if (const auto it = strings.find(c); it != strings.end()) {
      std::string text;
      std::vector<std::uint64_t> off{0};
      for (std::uint32_t code : v) off.push_back((text += it->second(code)).size());
      std::ofstream(cols / (name + ".str"), std::ios::binary) << text;
      std::ofstream(cols / (name + ".off"), std::ios::binary) << bytes(off);
      tables[table]["columns"][name] = {{"type", "str"}, {"file", name + ".str"}, {"offsets", name + ".off"}};
    } else {
      std::ofstream(cols / (name + ".i64"), std::ios::binary) << bytes(std::vector<std::uint64_t>(v.begin(), v.end()));
      tables[table]["columns"][name] = {{"type", "i64"}, {"file", name + ".i64"}};
    }
  }
  std::ofstream(cols / "columns.json") << nlohmann::json{
      {"format", "hdb-columns/1"},
      {"benchmark", "ssb"},
      {"tables", tables}}.dump();
  std::string e = "(no error)";
  try {
    load_column_tables(cols.string());
  } catch (const UsageError& err) {
    e = err.what();
  }
  const std::string n = std::to_string(t[Col::s_suppkey].size());
  EXPECT_EQ(e, cols.string() + ": table supplier column s_suppkey row " + n + " ('" +
                   std::to_string(t[Col::s_suppkey][0]) +
                   "'): repeats the key of row 1 (s_suppkey is the key of supplier and must be unique)");
}

TEST(SsbQueries, PlansReadTheColumnsOfTheirSql) {
  ASSERT_EQ(queries().size(), 13u);
  EXPECT_EQ(query("1.1").dims(), std::vector<Table>{Table::Date});
  EXPECT_EQ(query("3.1").dims(), (std::vector<Table>{Table::Date, Table::Customer, Table::Supplier}));
  EXPECT_EQ(query("4.1").dims().size(), 4u);
  const std::vector<Col> q11{Col::lo_discount,      Col::lo_quantity, Col::lo_orderdate,
                             Col::lo_extendedprice, Col::d_datekey,   Col::d_year};
  EXPECT_EQ(query("1.1").columns(), q11);
  EXPECT_THROW(query("5.1"), std::invalid_argument);
}

TEST(SsbReference, HandCheckedAnswers) {
  const Tables t = test::hand_tables();
  for (const auto& [name, want] : test::hand_answers()) {
    const Result got = reference_query(name, t);
    EXPECT_EQ(got.rows, want.rows) << "Q" << name << ":\n" << format_result(query(name), got);
  }
}

// The ranges of a threaded reference add up to the one-thread answer, also where a range holds no
// row of a group (SF 0.05: 300,000 lineorder rows, above parallel_for's one-range limit).
TEST(SsbReference, ThreadCountsGiveTheSameAnswer) {
  const Tables t = generate_tables(0.05, 7, 1);
  std::size_t answered = 0;  // Q3.3 and Q3.4 select two cities of 250: at this size they may group nothing
  for (const Query& q : queries()) {
    const Result one = reference_query(q.name, t);
    answered += !one.rows.empty();
    for (int threads : {2, 3, 7})
      EXPECT_EQ(reference_query(q.name, t, threads).rows, one.rows) << "Q" << q.name << ", " << threads << " threads";
  }
  EXPECT_GE(answered, 11u);
}

TEST(SsbReference, FormatsDecodedRows) {
  const Result r = reference_query("3.3", test::hand_tables());
  EXPECT_EQ(format_result(query("3.3"), r), "UNITED KI1|UNITED KI5|1993|980\nUNITED KI1|UNITED KI5|1997|4000\n");
}

}  // namespace
}  // namespace hdb::ssb
