#include <gtest/gtest.h>

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
