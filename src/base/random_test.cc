#include "base/random.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace arcstore {
namespace {

TEST(RandomTest, SameSeedSameSequence) {
  SeededRandom a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 100; i++) {
    uint64_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    differs |= x != c.Next();
  }
  EXPECT_TRUE(differs);
}

TEST(RandomTest, UniformStaysInRangeAndCoversIt) {
  SeededRandom r(7);
  std::vector<int> seen(10);
  for (int i = 0; i < 10000; i++) {
    uint64_t v = r.Uniform(10);
    ASSERT_LT(v, 10u);
    seen[v]++;
  }
  for (int n : seen) EXPECT_GT(n, 800);
  for (int i = 0; i < 1000; i++) {
    uint64_t v = r.Range(5, 7);
    EXPECT_GE(v, 5u);
    EXPECT_LE(v, 7u);
  }
}

TEST(RandomTest, SeedComesFromEnvironment) {
  setenv("ARCSTORE_SEED", "12345", 1);
  SeededRandom r = SeededRandom::FromEnvironment("random_test");
  unsetenv("ARCSTORE_SEED");
  EXPECT_EQ(r.seed(), 12345u);
  EXPECT_EQ(r.Next(), SeededRandom(12345).Next());
}

TEST(RandomTest, TestScaleReadsEnvironment) {
  const char* old = std::getenv("ARCSTORE_TEST_SCALE");
  std::string saved = old ? old : "";
  setenv("ARCSTORE_TEST_SCALE", "0.25", 1);
  EXPECT_EQ(ScaledIterations(1000), 250u);
  EXPECT_EQ(ScaledIterations(2), 1u);
  unsetenv("ARCSTORE_TEST_SCALE");
  EXPECT_EQ(ScaledIterations(1000), 1000u);
  if (old != nullptr) setenv("ARCSTORE_TEST_SCALE", saved.c_str(), 1);
}

}  // namespace
}  // namespace arcstore
