// The variant registry (harness/variants.hpp): a name never registered is an error that names the
// registered ones, never a default; tests and reasons come back as registered; what ran is typed.
#include <gtest/gtest.h>

#include <stdexcept>

#include "harness/variants.hpp"

using namespace hdb;

namespace {

enum class Impl { Paper, Tuned, Library };

VariantTable<Impl> sample() {
  return VariantTable<Impl>("the test backend", {{Impl::Paper, {"paper", {"select", "join"}, ""}},
                                                 {Impl::Tuned, {"tuned", {"select"}, ""}},
                                                 {Impl::Library, {"lib", {"join"}, "built without the library"}}});
}

}  // namespace

TEST(Variants, LookUpByNameGivesTheRegisteredId) {
  const VariantTable<Impl> t = sample();
  EXPECT_EQ(t.id("paper"), Impl::Paper);
  EXPECT_EQ(t.id("tuned"), Impl::Tuned);
  EXPECT_EQ(t.id("lib"), Impl::Library);
  EXPECT_EQ(t.info("lib").unavailable, "built without the library");
  EXPECT_TRUE(t.info("tuned").unavailable.empty());
}

TEST(Variants, AnUnregisteredNameThrowsNamingTheRegisteredOnes) {
  const VariantTable<Impl> t = sample();
  try {
    t.id("cub");
    FAIL() << "no exception for an unregistered variant";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "the test backend has no variant 'cub' (registered: paper, tuned, lib)");
  }
  EXPECT_THROW(t.implements("", "select"), std::invalid_argument);
  EXPECT_THROW(t.info("Paper"), std::invalid_argument);  // names are exact
}

TEST(Variants, NamesPerTestInRegistrationOrder) {
  const VariantTable<Impl> t = sample();
  EXPECT_EQ(t.names("select"), (std::vector<std::string>{"paper", "tuned"}));
  EXPECT_EQ(t.names("join"), (std::vector<std::string>{"paper", "lib"}));
  EXPECT_TRUE(t.names("sort").empty());
  EXPECT_TRUE(t.implements("tuned", "select"));
  EXPECT_FALSE(t.implements("tuned", "join"));
  EXPECT_EQ(t.all().size(), 3u);
}

TEST(Variants, ANameRegisteredTwiceIsRefused) {
  EXPECT_THROW(
      VariantTable<Impl>("dup", {{Impl::Paper, {"paper", {"select"}, ""}}, {Impl::Tuned, {"paper", {"join"}, ""}}}),
      std::logic_error);
}

TEST(Variants, RanKeepsOnlyTheFieldsThatWereSet) {
  Ran r;
  EXPECT_TRUE(r.empty());
  EXPECT_EQ(r.to_json(), nlohmann::json::object());
  r.impl = "avx512";
  r.work_group = 256;
  EXPECT_FALSE(r.empty());
  EXPECT_EQ(r.to_json(), (nlohmann::json{{"impl", "avx512"}, {"work_group", 256}}));
  Ran p;
  p.pieces = 12;
  p.radix_bits = 8;
  p.items_per_thread = 4;
  EXPECT_EQ(p.to_json(), (nlohmann::json{{"pieces", 12}, {"radix_bits", 8}, {"items_per_thread", 4}}));
}
