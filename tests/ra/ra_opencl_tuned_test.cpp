// The OpenCL `tuned` sort (whole-tuple 8-bit radix, one chunk per work-item) and join (merge-path
// pieces, one per work-item) against the reference: with the device's own parameters, with tiny
// chunks / pieces so that small inputs cross many of them, and with the parameters a GPU would get
// (64 work-items a group, short chunks), on PoCL here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "common/device_suite.hpp"
#include "ra_backend.hpp"
#include "ra_conformance.hpp"
#include "reference/ra.hpp"
#include "runtime/cl_platform.hpp"
#include "workloads/relations.hpp"

namespace hdb::ra {
namespace {

class RaOpenClTuned : public ::hdb::test::DeviceSuite<hdb::opencl::OpenClPlatform> {};

struct Tuning {
  const char* name;
  bool cpu;
  std::uint32_t floor;
  bool staged = true;
  unsigned sort_bits = 0;
};
// Default (floor 0 on the real device type is covered by the plain test), then forced shapes.
const Tuning kTunings[] = {{"cpu, pieces of 1", true, 1},
                           {"cpu, pieces of 7, two merges, 11-bit sort", true, 7, false, 11},
                           {"gpu", false, 0},
                           {"gpu, pieces of 3, 11-bit sort", false, 3, true, 11}};

Relation relation(std::uint64_t rows, int values, KeySpec keys, bool sorted, std::uint64_t seed) {
  RelationSpec s;
  s.rows = rows;
  s.values = values;
  s.keys = keys;
  s.sorted = sorted;
  return make_relation(s, seed, 2);
}

KeySpec keys(std::uint64_t distinct, std::uint64_t min, std::uint64_t max, KeyDist dist = KeyDist::Uniform) {
  KeySpec k;
  k.dist = dist;
  k.distinct = distinct;
  k.min = min;
  k.max = max;
  return k;
}

// The last value numbers the rows, so every tuple is distinct and an unstable sort shows.
Relation numbered(Relation r) {
  for (std::uint64_t i = 0; i < r.rows(); ++i) r.tuple(i)[r.values()] = static_cast<std::uint32_t>(i);
  return r;
}

Relation run_sort(opencl::OpenClRa& b, const Relation& in) {
  DeviceRel d, o;
  b.upload(in, d);
  b.sort(*d, "tuned", o);
  Relation got(o->rows(), o->values());
  b.download(*o, got);
  return got;
}

Relation run_join(opencl::OpenClRa& b, const Relation& l, const Relation& r) {
  DeviceRel dl, dr, o;
  b.upload(l, dl);
  b.upload(r, dr);
  b.join(*dl, *dr, "tuned", o);
  Relation got(o->rows(), o->values());
  b.download(*o, got);
  sort_tuples(got);
  return got;
}

Relation ref_join(const Relation& l, const Relation& r) { return tuple_sorted(ref::join(l, r)); }

TEST_F(RaOpenClTuned, ConformanceWithForcedParameters) {
  for (const Tuning& t : kTunings) {
    SCOPED_TRACE(t.name);
    opencl::OpenClRa b(*platform_);
    b.override_tuning(t.cpu, t.floor, t.staged, t.sort_bits);
    test::check_backend(b, "tuned");
    test::check_output_reuse(b, "tuned");
    test::check_backend(b, "tuned", 2);
  }
}

// What the tuned kernels chose is what the result records (RaBackend::last_ran): the forced sort
// digit, the join's pieces, the compaction's tuples per work-item; the paper's kernels their -DWG.
TEST_F(RaOpenClTuned, WhatRanNamesTheChosenParameters) {
  const Relation l = relation(5000, 1, keys(700, 0, 1 << 20), true, 21);
  const Relation r = relation(4000, 1, keys(600, 0, 1 << 20), true, 22);
  opencl::OpenClRa b(*platform_);
  b.override_tuning(false, 3, true, 11);
  DeviceRel dl, dr, o;
  b.upload(l, dl);
  b.upload(r, dr);
  b.sort(*dl, "tuned", o);
  EXPECT_EQ(b.last_ran().radix_bits, 11);
  EXPECT_GE(b.last_ran().items_per_thread, 1);
  EXPECT_GE(b.last_ran().work_group, 1);
  b.join(*dl, *dr, "tuned", o);
  EXPECT_GE(b.last_ran().pieces, 2) << "pieces of at least 3 of 9000 merged rows";
  b.select(*dl, Predicate{0, 0, 1 << 19}, "tuned", o);
  EXPECT_EQ(b.last_ran().items_per_thread, 8);
  b.sort(*dl, "radix", o);
  EXPECT_EQ(b.last_ran().radix_bits, 4);
  b.select(*dl, Predicate{0, 0, 1 << 19}, "paper", o);
  EXPECT_EQ(b.last_ran().work_group, static_cast<int>(b.work_group()));
  EXPECT_EQ(b.last_ran().items_per_thread, 0);
  EXPECT_THROW(b.sort(*dl, "paper", o), std::invalid_argument);  // paper registers no sort
}

TEST_F(RaOpenClTuned, SortEdgeCases) {
  struct Case {
    std::string name;
    Relation rel;
  };
  std::vector<Case> cases;
  for (std::uint64_t n : {1u, 63u, 64u, 65u, 4097u, 70001u}) {
    const std::string sz = "/" + std::to_string(n);
    cases.push_back({"uniform" + sz, numbered(relation(n, 1, keys(0, 0, 0xffffffffu), false, 3 + n))});
    cases.push_back({"equal" + sz, numbered(relation(n, 1, keys(1, 9, 9), false, 5 + n))});
    cases.push_back({"max" + sz, numbered(relation(n, 2, keys(2, 0xfffffffeu, 0xffffffffu), false, 7 + n))});
    cases.push_back(
        {"zipf" + sz, numbered(relation(n, 3, keys(n / 3 + 1, 0, 0xffffffffu, KeyDist::Zipf), false, 9 + n))});
    cases.push_back({"keyonly" + sz, relation(n, 0, keys(0, 0, 0xffffffffu), false, 11 + n)});
    cases.push_back({"wide" + sz, numbered(relation(n, 7, keys(n / 2 + 1, 0, 1000), false, 13 + n))});
  }
  for (const Tuning& t : kTunings) {
    opencl::OpenClRa b(*platform_);
    b.override_tuning(t.cpu, t.floor, t.staged, t.sort_bits);
    for (const Case& c : cases) {
      const std::string diff = first_difference(run_sort(b, c.rel), ref::sort(c.rel));
      EXPECT_TRUE(diff.empty()) << t.name << ", " << c.name << ": " << diff;
    }
  }
  opencl::OpenClRa b(*platform_);  // the device's own parameters
  for (const Case& c : cases) {
    const std::string diff = first_difference(run_sort(b, c.rel), ref::sort(c.rel));
    EXPECT_TRUE(diff.empty()) << "device default, " << c.name << ": " << diff;
  }
}

TEST_F(RaOpenClTuned, JoinEdgeCases) {
  struct Case {
    std::string name;
    Relation l, r;
  };
  std::vector<Case> cases;
  const Relation empty(0, 1);
  const Relation dense = relation(20000, 1, keys(0, 0, 30000), true, 21);
  const Relation sparse = relation(50, 1, keys(0, 0, 30000), true, 22);
  const Relation zero_and_max = relation(3000, 1, keys(2, 0, 0xffffffffu), true, 23);  // keys 0 and 2^32 - 1
  const Relation equal_a = relation(300, 2, keys(1, 0xffffffffu, 0xffffffffu), true, 24);
  const Relation equal_b = relation(257, 1, keys(1, 0xffffffffu, 0xffffffffu), true, 25);
  const Relation zipf_a = relation(5000, 1, keys(700, 0, 0xffffffffu, KeyDist::Zipf), true, 26);
  const Relation zipf_b = relation(4099, 3, keys(700, 0, 0xffffffffu, KeyDist::Zipf), true, 27);
  const Relation zeros = relation(1000, 1, keys(1, 0, 0), true, 28);
  cases.push_back({"empty left", empty, dense});
  cases.push_back({"empty right", dense, empty});
  cases.push_back({"sparse left, dense right", sparse, dense});
  cases.push_back({"dense left, sparse right", dense, sparse});
  cases.push_back({"keys 0 and max", zero_and_max, zero_and_max});
  cases.push_back({"all equal at max", equal_a, equal_b});
  cases.push_back({"all zero vs 0 and max", zeros, zero_and_max});
  cases.push_back({"zipf many-to-many", zipf_a, zipf_b});
  cases.push_back({"zipf vs dense", zipf_a, dense});
  for (const Tuning& t : kTunings) {
    opencl::OpenClRa b(*platform_);
    b.override_tuning(t.cpu, t.floor, t.staged, t.sort_bits);
    for (const Case& c : cases) {
      const std::string diff = first_difference(run_join(b, c.l, c.r), ref_join(c.l, c.r));
      EXPECT_TRUE(diff.empty()) << t.name << ", " << c.name << ": " << diff;
    }
  }
}

}  // namespace
}  // namespace hdb::ra
