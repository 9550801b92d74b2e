// The single-process communicator (no mpirun, or a build without MPI) and the collective helpers
// on top of it: every collective degenerates to a copy or the identity.
#include <gtest/gtest.h>

#include <stdexcept>

#include "bench/dist_collective.hpp"
#include "harness/comm.hpp"
#include "harness/errors.hpp"

namespace hdb::dist {
namespace {

TEST(CommSingle, IsOneRank) {
  Comm c = Comm::single();
  EXPECT_EQ(c.rank(), 0);
  EXPECT_EQ(c.size(), 1);
  EXPECT_FALSE(c.distributed());
  c.barrier();
  EXPECT_EQ(c.max(7), 7u);
  EXPECT_EQ(c.sum(7), 7u);
  EXPECT_EQ(c.all_gather(5), std::vector<std::uint64_t>{5});
  EXPECT_EQ(c.broadcast("text", 0), "text");
  std::vector<double> v{1.5, 2.5};
  c.max_inplace(v);
  EXPECT_EQ(v, (std::vector<double>{1.5, 2.5}));
}

TEST(CommSingle, GatherAllAndNodeAreTheProcessItself) {
  Comm c = Comm::single();
  EXPECT_EQ(c.gather("doc", 0), std::vector<std::string>{"doc"});
  EXPECT_TRUE(c.all(true));
  EXPECT_FALSE(c.all(false));
  Comm node = c.node();
  EXPECT_EQ(node.rank(), 0);
  EXPECT_EQ(node.size(), 1);
  EXPECT_FALSE(node.distributed());
}

// Outside mpirun the world is one process too.
TEST(CommSingle, WorldWithoutLauncherIsSingle) {
  Comm c = Comm::world();
  EXPECT_EQ(c.size(), 1);
  EXPECT_EQ(c.rank(), 0);
}

TEST(CommSingle, ExchangeCopiesToSelf) {
  Comm c = Comm::single();
  std::vector<std::uint32_t> send{1, 10, 2, 20, 3, 30}, recv(6, 0);
  auto counts = c.exchange_counts({3});
  EXPECT_EQ(counts, std::vector<std::uint64_t>{3});
  c.alltoallv(send.data(), {3}, recv.data(), counts, 2);
  EXPECT_EQ(recv, send);
  EXPECT_THROW(c.alltoallv(send.data(), {3}, recv.data(), {2}, 2), std::invalid_argument);
  EXPECT_THROW(c.exchange_counts({1, 2}), std::invalid_argument);
  EXPECT_EQ(c.gather_tuples(send.data(), 2, 2, 0), (std::vector<std::uint32_t>{1, 10, 2, 20}));
  EXPECT_TRUE(c.gather_tuples(send.data(), 0, 2, 0).empty());
}

TEST(CommSingle, FirstFailure) {
  Comm c = Comm::single();
  EXPECT_FALSE(c.first_failure(false, "fine").any());
  Comm::Agreement a = c.first_failure(true, "broken");
  EXPECT_EQ(a.rank, 0);
  EXPECT_EQ(a.message, "broken");
}

TEST(Collective, SetupFailuresKeepTheirKind) {
  Comm c = Comm::single();
  EXPECT_NO_THROW(collectively(c, [] {}));
  EXPECT_THROW(collectively(c, [] { throw SkipCase("too large"); }), SkipCase);
  EXPECT_THROW(collectively(c, [] { throw std::bad_alloc(); }), SkipCase);
  EXPECT_THROW(collectively(c, [] { throw std::logic_error("bug"); }), std::runtime_error);
  EXPECT_THROW(collectively(c, [] { throw UsageError("bad option"); }), UsageError);
  try {
    collectively(c, [] { throw SkipCase("too large"); });
  } catch (const SkipCase& e) {
    EXPECT_STREQ(e.what(), "too large");
  }
}

TEST(Collective, PassKeepsFieldsAndFixesPhases) {
  Comm c = Comm::single();
  Breakdown b = collective_pass(c,
                                [] {
                                  Breakdown x;
                                  x.h2d = 1, x.kernel = 2, x.d2h = 3, x.total = 7;
                                  x.add_phase("exchange", 0.5);
                                  x.add_phase("other", 9);
                                  return x;
                                },
                                {{"partition", PhaseKind::Host}, {"exchange", PhaseKind::Network}});
  EXPECT_EQ(b.h2d, 1);
  EXPECT_EQ(b.kernel, 2);
  EXPECT_EQ(b.d2h, 3);
  EXPECT_EQ(b.total, 7);
  ASSERT_EQ(b.phases.size(), 2u);
  EXPECT_EQ(b.phases[0], (Phase{"partition", PhaseKind::Host, 0}));
  EXPECT_EQ(b.phases[1], (Phase{"exchange", PhaseKind::Network, 0.5}));
  EXPECT_THROW(collective_pass(c, []() -> Breakdown { throw std::runtime_error("device lost"); }, {}),
               std::runtime_error);
}

TEST(Collective, VerdictAndParams) {
  Comm c = Comm::single();
  Verification v = Verification::fail("tuple 3 differs");
  v.extra["rows"] = 4;
  Verification got = broadcast_verdict(c, v);
  EXPECT_FALSE(got.ok);
  EXPECT_EQ(got.detail, "tuple 3 differs");
  EXPECT_EQ(got.extra["rows"], 4);
  EXPECT_TRUE(broadcast_verdict(c, Verification::pass("ok")).ok);
  Params p;
  add_rank_params(p, c, true);
  EXPECT_EQ(p, (Params{{"ranks", 1}, {"scaling", "weak"}}));
}

}  // namespace
}  // namespace hdb::dist
