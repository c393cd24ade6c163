#include "base/check.h"

#include <gtest/gtest.h>

namespace arcstore {
namespace {

TEST(CheckDeathTest, PrintsBothOperands) {
  int a = 3, b = 4;
  EXPECT_DEATH(ARC_CHECK_EQ(a, b) << "while testing", "a == b \\(3 vs 4\\).*while testing");
  EXPECT_DEATH(ARC_CHECK_LT(b, a), "b < a \\(4 vs 3\\)");
  EXPECT_DEATH(ARC_CHECK(a > b) << "ctx", "check failed: a > b.*ctx");
}

TEST(CheckTest, PassingChecksDoNothingAndEvaluateOnce) {
  int calls = 0;
  auto f = [&] { return ++calls; };
  ARC_CHECK_EQ(f(), 1);
  // Each operand is evaluated once when the check passes... and once more
  // only to print it when it fails.
  EXPECT_EQ(calls, 1);
  ARC_CHECK(true) << "never printed";
}

#ifndef NDEBUG
TEST(CheckDeathTest, DebugChecksFireInDebugBuilds) { EXPECT_DEATH(ARC_DCHECK_EQ(1, 2), "1 == 2"); }
#else
TEST(CheckTest, DebugChecksAreOffInReleaseBuilds) {
  int evaluated = 0;
  ARC_DCHECK(++evaluated == 100);
  EXPECT_EQ(evaluated, 0);
}
#endif

}  // namespace
}  // namespace arcstore
