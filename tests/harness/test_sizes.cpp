#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>

#include "harness/env.hpp"
#include "harness/errors.hpp"
#include "harness/sizes.hpp"

using namespace hdb;

TEST(Sizes, ParsesSuffixesAndPowers) {
  EXPECT_EQ(parse_size("4096"), 4096u);
  EXPECT_EQ(parse_size("32K"), 32u * 1024);
  EXPECT_EQ(parse_size("1M"), 1u << 20);
  EXPECT_EQ(parse_size("1G"), 1ull << 30);
  EXPECT_EQ(parse_size("2^20"), 1u << 20);
  EXPECT_EQ(parse_size("16MiB"), 16u << 20);
  EXPECT_EQ(parse_size_list("32K,1M,1G"), (std::vector<std::uint64_t>{32768, 1 << 20, 1ull << 30}));
}

TEST(Sizes, RejectsBadText) {
  for (const char* bad : {"", "K", "12Q", "-1", "0", "3^4", "2^", "2^99", "1.5M", "99999999T"})
    EXPECT_THROW(parse_size(bad, "--sizes"), UsageError) << bad;
  try {
    parse_size("12Q", "--sizes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("--sizes"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("12Q"), std::string::npos);
  }
}

// A size given twice (also as two spellings of one size) would make two cases of one id.
TEST(Sizes, RepeatedSizeIsRefused) {
  try {
    parse_size_list("32K,1M,32768", "--sizes");
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "--sizes: 32768 is given twice (32K; each size is a case of its own)");
  }
}

TEST(Sizes, FormatsAndLabels) {
  EXPECT_EQ(format_size(32768), "32K");
  EXPECT_EQ(format_size(1ull << 30), "1G");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(size_label(1u << 20), "2^20");
  EXPECT_EQ(size_label(1000), "1000");
}

TEST(Sizes, ClassesComeFromOneTable) {
  EXPECT_EQ(size_class_range(1), std::make_pair(32 * KiB, 1 * MiB));
  EXPECT_EQ(size_class_range(4), std::make_pair(32 * KiB, 1 * GiB));
  EXPECT_THROW(size_class_range(0), UsageError);
  EXPECT_THROW(size_class_range(5), UsageError);
  auto r = pow2_range(32 * KiB, 1 * GiB);
  EXPECT_EQ(r.size(), 16u);
  EXPECT_EQ(r.front(), 32 * KiB);
  EXPECT_EQ(r.back(), 1 * GiB);
  EXPECT_EQ(pow2_range(3000, 9000), (std::vector<std::uint64_t>{4096, 8192}));
}

// Settings from the environment go through the options' parsers: a bad value is a UsageError naming
// the variable (issue 50, item 6: strtod took "1.5x" as 1 byte, "999999T" as 1.1e18, "garbage" as unset).
TEST(EnvSettings, SizesParseAsOptionsDo) {
  const char* var = "HDB_TEST_ENV_SIZE";
  unsetenv(var);
  EXPECT_FALSE(env_size(var).has_value());
  setenv(var, "2G", 1);
  EXPECT_EQ(env_size(var), std::optional<std::uint64_t>(2ull << 30));
  setenv(var, "2^20", 1);
  EXPECT_EQ(env_size(var), std::optional<std::uint64_t>(1u << 20));
  for (const char* bad : {"garbage", "0", "-5G", "1e30", "999999T", "1.5x", "1.5G", ""}) {
    setenv(var, bad, 1);
    try {
      env_size(var);
      ADD_FAILURE() << "accepted " << bad;
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(var), std::string::npos) << e.what();
    }
  }
  unsetenv(var);
}

TEST(EnvSettings, IntegersChoicesAndFlags) {
  const char* var = "HDB_TEST_ENV_OTHER";
  setenv(var, "17", 1);
  EXPECT_EQ(env_integer(var, 1, UINT64_MAX), std::optional<std::uint64_t>(17));
  setenv(var, "18446744073709551615", 1);
  EXPECT_EQ(env_integer(var, 1, UINT64_MAX), std::optional<std::uint64_t>(UINT64_MAX));
  for (const char* bad : {"abc", "0", "-1", "+3", "3x", " 3", "18446744073709551616", ""}) {
    setenv(var, bad, 1);
    EXPECT_THROW(env_integer(var, 1, UINT64_MAX), UsageError) << bad;
  }
  setenv(var, "9", 1);
  EXPECT_THROW(env_integer(var, 0, 5), UsageError);
  setenv(var, "threads", 1);
  EXPECT_EQ(env_choice(var, {"fibers", "threads"}), std::optional<std::string>("threads"));
  setenv(var, "bogus", 1);
  try {
    env_choice(var, {"fibers", "threads"});
    ADD_FAILURE();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "HDB_TEST_ENV_OTHER: 'bogus' (allowed: fibers, threads)");
  }
  setenv(var, "1", 1);
  EXPECT_TRUE(env_flag(var));
  setenv(var, "0", 1);
  EXPECT_FALSE(env_flag(var));
  setenv(var, "yes", 1);
  EXPECT_THROW(env_flag(var), UsageError);
  unsetenv(var);
  EXPECT_FALSE(env_flag(var));
}
