// SSB columns, dictionaries and dates (workloads/ssb_tables.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "harness/errors.hpp"
#include "workloads/calendar.hpp"
#include "workloads/ssb_tables.hpp"

namespace hdb::ssb {
namespace {

struct ColDef {
  const char* name;
  Table table;
};
constexpr ColDef kColDefs[kCols] = {
    {"lo_orderdate", Table::Lineorder}, {"lo_custkey", Table::Lineorder},  {"lo_partkey", Table::Lineorder},
    {"lo_suppkey", Table::Lineorder},   {"lo_quantity", Table::Lineorder}, {"lo_extendedprice", Table::Lineorder},
    {"lo_discount", Table::Lineorder},  {"lo_revenue", Table::Lineorder},  {"lo_supplycost", Table::Lineorder},
    {"d_datekey", Table::Date},         {"d_year", Table::Date},           {"d_yearmonthnum", Table::Date},
    {"d_yearmonth", Table::Date},       {"d_weeknuminyear", Table::Date},  {"c_custkey", Table::Customer},
    {"c_city", Table::Customer},        {"c_nation", Table::Customer},     {"c_region", Table::Customer},
    {"s_suppkey", Table::Supplier},     {"s_city", Table::Supplier},       {"s_nation", Table::Supplier},
    {"s_region", Table::Supplier},      {"p_partkey", Table::Part},        {"p_mfgr", Table::Part},
    {"p_category", Table::Part},        {"p_brand1", Table::Part},
};

// ssb-dbgen's dists.dss: the nations in order with their regions.
constexpr const char* kNationNames[kNations] = {
    "ALGERIA", "ARGENTINA", "BRAZIL",         "CANADA",       "EGYPT", "ETHIOPIA", "FRANCE",
    "GERMANY", "INDIA",     "INDONESIA",      "IRAN",         "IRAQ",  "JAPAN",    "JORDAN",
    "KENYA",   "MOROCCO",   "MOZAMBIQUE",     "PERU",         "CHINA", "ROMANIA",  "SAUDI ARABIA",
    "VIETNAM", "RUSSIA",    "UNITED KINGDOM", "UNITED STATES"};
constexpr std::uint8_t kNationRegion[kNations] = {0, 1, 1, 1, 4, 0, 3, 3, 2, 2, 4, 4, 2,
                                                  4, 0, 0, 0, 1, 2, 3, 4, 2, 3, 3, 1};
constexpr const char* kRegionNames[kRegions] = {"AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"};
constexpr const char* kMonths[12] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

int find(const char* const* names, int n, std::string_view s) {
  for (int i = 0; i < n; ++i)
    if (s == names[i]) return i;
  return -1;
}

// "MFGR#" followed by `digits` digits 1..5 (the manufacturer, then the category): their codes, or
// false. `rest` receives what follows.
bool mfgr_prefix(std::string_view s, int digits, int& m, int& c, std::string_view& rest) {
  if (s.size() < 5u + static_cast<unsigned>(digits) || s.substr(0, 5) != "MFGR#") return false;
  m = s[5] - '1';
  c = digits > 1 ? s[6] - '1' : 0;
  if (m < 0 || m >= kMfgrs || c < 0 || c >= 5) return false;
  rest = s.substr(5 + static_cast<unsigned>(digits));
  return true;
}

}  // namespace

const char* table_name(Table t) {
  switch (t) {
    case Table::Lineorder: return "lineorder";
    case Table::Date: return "date";
    case Table::Customer: return "customer";
    case Table::Supplier: return "supplier";
    case Table::Part: return "part";
  }
  return "?";
}

const char* col_name(Col c) { return kColDefs[static_cast<int>(c)].name; }
Table table_of(Col c) { return kColDefs[static_cast<int>(c)].table; }

Col key_of(Table t) {
  switch (t) {
    case Table::Lineorder: return Col::lo_orderdate;
    case Table::Date: return Col::d_datekey;
    case Table::Customer: return Col::c_custkey;
    case Table::Supplier: return Col::s_suppkey;
    case Table::Part: return Col::p_partkey;
  }
  return Col::lo_orderdate;
}

std::uint64_t Tables::bytes() const {
  std::uint64_t b = 0;
  for (const Column& c : cols) b += c.size() * sizeof(std::uint32_t);
  return b;
}

Sizes sizes_for(double sf) {
  if (!(sf > 0) || sf > 1000) throw UsageError("scale factor must be in (0, 1000], not " + std::to_string(sf));
  auto scaled = [sf](std::uint64_t per) {
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(sf * static_cast<double>(per))));
  };
  const double parts_factor = std::max(1.0, std::floor(1.0 + std::log2(sf)));
  return {scaled(kLineorderPerSf), scaled(kCustomersPerSf), scaled(kSuppliersPerSf),
          static_cast<std::uint64_t>(parts_factor) * kPartsBase};
}

std::string region_name(std::uint32_t code) { return code < kRegions ? kRegionNames[code] : "?"; }
std::string nation_name(std::uint32_t code) { return code < kNations ? kNationNames[code] : "?"; }
std::uint32_t region_of_nation(std::uint32_t nation) { return kNationRegion[nation % kNations]; }

std::string city_name(std::uint32_t code) {
  if (code >= kCities) return "?";
  std::string s = kNationNames[code / 10];
  s.resize(9, ' ');  // ssb-dbgen's gen_city: the name cut or padded to 9 characters, then a digit
  return s + static_cast<char>('0' + code % 10);
}

std::string mfgr_name(std::uint32_t code) { return "MFGR#" + std::to_string(code + 1); }
std::string category_name(std::uint32_t code) {
  return "MFGR#" + std::to_string(code / 5 + 1) + std::to_string(code % 5 + 1);
}
std::string brand_name(std::uint32_t code) { return category_name(code / 40) + std::to_string(code % 40 + 1); }
std::string yearmonth_name(std::uint32_t code) {
  return std::string(kMonths[code % 12]) + std::to_string(1992 + code / 12);
}

int region_code(std::string_view s) { return find(kRegionNames, kRegions, s); }
int nation_code(std::string_view s) { return find(kNationNames, kNations, s); }

int city_code(std::string_view s) {
  if (s.size() != 10 || s[9] < '0' || s[9] > '9') return -1;
  for (int n = 0; n < kNations; ++n)
    if (city_name(static_cast<std::uint32_t>(n * 10)).compare(0, 9, s.substr(0, 9)) == 0) return n * 10 + (s[9] - '0');
  return -1;
}

int mfgr_code(std::string_view s) {
  int m, c;
  std::string_view rest;
  return mfgr_prefix(s, 1, m, c, rest) && rest.empty() ? m : -1;
}

int category_code(std::string_view s) {
  int m, c;
  std::string_view rest;
  return mfgr_prefix(s, 2, m, c, rest) && rest.empty() ? m * 5 + c : -1;
}

int brand_code(std::string_view s) {
  int m, c;
  std::string_view rest;
  if (!mfgr_prefix(s, 2, m, c, rest) || rest.empty() || rest.size() > 2) return -1;
  int b = 0;
  for (char ch : rest) {
    if (ch < '0' || ch > '9') return -1;
    b = b * 10 + (ch - '0');
  }
  if (b < 1 || b > 40) return -1;
  return (m * 5 + c) * 40 + b - 1;
}

int yearmonth_code(std::string_view s) {
  if (s.size() != 7) return -1;
  const int m = find(kMonths, 12, s.substr(0, 3));
  int y = 0;
  for (char ch : s.substr(3)) {
    if (ch < '0' || ch > '9') return -1;
    y = y * 10 + (ch - '0');
  }
  if (m < 0 || y < 1992 || y > 1998) return -1;
  return (y - 1992) * 12 + m;
}

std::uint32_t datekey_after_start(std::uint32_t days) {
  int y, m, d;
  civil_from_days(days_from_civil(1992, 1, 1) + days, y, m, d);
  return static_cast<std::uint32_t>(y * 10000 + m * 100 + d);
}

bool valid_datekey(std::uint32_t k) {
  const int y = static_cast<int>(k / 10000), m = static_cast<int>(k / 100 % 100), d = static_cast<int>(k % 100);
  if (y < 1900 || y > 2099 || m < 1 || m > 12 || d < 1) return false;
  int yy, mm, dd;
  civil_from_days(days_from_civil(y, m, d), yy, mm, dd);
  return yy == y && mm == m && dd == d;
}

std::uint32_t week_num_in_year(std::uint32_t k) {
  const int y = static_cast<int>(k / 10000), m = static_cast<int>(k / 100 % 100), d = static_cast<int>(k % 100);
  const auto day_of_year = static_cast<std::uint32_t>(days_from_civil(y, m, d) - days_from_civil(y, 1, 1) + 1);
  return day_of_year / 7 + 1;
}

}  // namespace hdb::ssb
