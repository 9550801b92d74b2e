#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "harness/errors.hpp"
#include "harness/options.hpp"
#include "harness/sizes.hpp"

using namespace hdb;

namespace {
Options parse(std::vector<std::string> args) {
  CLI::App app;
  Options o;
  add_common_options(app, o);
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector in reverse order
  app.parse(args);
  finalize_options(o);
  return o;
}
}  // namespace

TEST(Options, Defaults) {
  Options o = parse({});
  EXPECT_EQ(o.sizes, pow2_range(32 * KiB, 1 * MiB));
  EXPECT_EQ(o.transfers, std::vector<Transfer>{Transfer::Pinned});
  EXPECT_TRUE(o.verify);
  EXPECT_EQ(o.seed, 42u);
}

TEST(Options, SizesAndRanges) {
  EXPECT_EQ(parse({"--sizes", "32K,1M"}).sizes, (std::vector<std::uint64_t>{32768, 1 << 20}));
  EXPECT_EQ(parse({"--size-class", "2"}).sizes.back(), 16 * MiB);
  EXPECT_EQ(parse({"--size-class", "4", "--min-size", "256M"}).sizes,
            (std::vector<std::uint64_t>{256 * MiB, 512 * MiB, 1 * GiB}));
  EXPECT_EQ(parse({"--max-size", "64K"}).sizes, (std::vector<std::uint64_t>{32 * KiB, 64 * KiB}));
}

TEST(Options, TransferModesAndFilters) {
  Options o = parse({"--transfer", "both", "--only", "select,join/tuned", "--threads", "3", "--quiet"});
  EXPECT_EQ(o.transfers, (std::vector<Transfer>{Transfer::Pageable, Transfer::Pinned}));
  EXPECT_EQ(o.only, (std::vector<std::string>{"select", "join/tuned"}));
  // A whole case id keeps the commas of its brackets; the ones between patterns still split.
  EXPECT_EQ(parse({"--only", "join/paper[match=0.5,fanout=1]*,select", "--only", "x[a,b"}).only,
            (std::vector<std::string>{"join/paper[match=0.5,fanout=1]*", "select", "x[a", "b"}));
  EXPECT_EQ(parse({"--only", "unique/paper[*sorted*,join/paper[*,a[k=1,t=2]@1M"}).only,
            (std::vector<std::string>{"unique/paper[*sorted*", "join/paper[*", "a[k=1,t=2]@1M"}));
  EXPECT_EQ(effective_threads(o), 3);
  EXPECT_TRUE(o.quiet);
  EXPECT_FALSE(parse({"--no-verify"}).verify);
}

TEST(Options, PassesBelowMinimumRaiseTheMaximum) {
  Options o = parse({"--passes", "80"});
  EXPECT_EQ(o.max_passes, 80);
}

TEST(Options, BadValuesAreRejected) {
  EXPECT_THROW(parse({"--passes", "0"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--passes", "x"}), CLI::ParseError);
  EXPECT_THROW(parse({"--transfer", "dma"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--size-class", "9"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--target-noise", "-1"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--no-such-option"}), CLI::ParseError);
  EXPECT_THROW(parse({"--sizes", "12Q"}), UsageError);
  EXPECT_THROW(parse({"--min-size", "1M", "--max-size", "32K"}), UsageError);
  EXPECT_THROW(parse({"--sizes", "1M", "--min-size", "32K"}), UsageError);
}

TEST(Options, MemoryLimit) {
  EXPECT_EQ(parse({}).memory_limit, 0u);
  EXPECT_EQ(parse({"--memory-limit", "64M"}).memory_limit, 64u * MiB);
  EXPECT_THROW(parse({"--memory-limit", "lots"}), UsageError);
  EXPECT_THROW(parse({"--memory-limit", "0"}), UsageError);
}

TEST(Options, SeedsTakeThe64BitRangeAndNothingElse) {
  EXPECT_EQ(parse({"--seed", "0"}).seed, 0u);
  EXPECT_EQ(parse({"--seed", "4294967297"}).seed, 4294967297ull);  // above 32 bits, not wrapped
  EXPECT_EQ(parse({"--seed", "18446744073709551615"}).seed, 18446744073709551615ull);
  for (const char* bad : {"18446744073709551616", "99999999999999999999999", "-1", "+1", "1e9", "0x10", "12a", " 1"}) {
    try {
      parse({"--seed", bad});
      ADD_FAILURE() << bad << " was accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("18446744073709551615"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(parse_seed("010"), 10u);  // decimal, never octal
}

// Issue 50 (neighbours of item 6): NaN passes CLI::Range (every comparison with it is false), so a
// stopping rule of NaN seconds or noise never stopped; empty values are refused, never the default.
TEST(Options, NanAndEmptyValuesAreRefused) {
  for (const char* opt : {"--max-time", "--target-noise"}) {
    try {
      parse({opt, "nan"});
      ADD_FAILURE() << opt << " nan accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(std::string(opt) + ": nan is not a number"), std::string::npos) << e.what();
    }
  }
  for (const char* opt : {"--sizes", "--min-size", "--max-size", "--memory-limit", "--seed", "--json", "--csv"})
    EXPECT_THROW(parse({opt, ""}), CLI::ValidationError) << opt;
  EXPECT_THROW(parse({"--platform", "-1"}), CLI::ValidationError);
  EXPECT_THROW(parse({"--device", "-1"}), CLI::ValidationError);
  EXPECT_EQ(parse({"--platform", "pocl", "--device", "1"}).device, 1);
}
