// Issue 32's acceptance criteria for Duet over every trace and size they
// name (duet_acceptance_test_util.h): the 13 LIRS traces at 10% and 30% of
// their distinct keys, OLTP at c = 1000..15000 and P2, P3, P6, P12 at
// c = 32768. Label `long`.
#include <gtest/gtest.h>

#include "tools/sim/duet_acceptance_test_util.h"

namespace arcstore::sim {
namespace {

class DuetLirsTraceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DuetLirsTraceTest, MeetsTheCriteria) { testing::ExpectLirsTraceCriteria(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Lirs, DuetLirsTraceTest,
                         ::testing::Values("loop", "gli", "scan", "cs", "ps", "multi1", "multi2",
                                           "multi3", "2_pools", "sprite", "zigzag", "cpp", "backf"));

TEST(DuetArcTraceTest, OltpWithinOnePercentOfArc) {
  for (uint64_t c : {1000u, 2000u, 5000u, 10000u, 15000u}) {
    testing::ExpectWithinOnePercentOfArc("arc/OLTP.lis.zst", c);
  }
}

class DuetPTraceTest : public ::testing::TestWithParam<const char*> {};

TEST_P(DuetPTraceTest, WithinOnePercentOfArcAt32768) {
  testing::ExpectWithinOnePercentOfArc(std::string("arc/") + GetParam() + ".lis.zst", 32768);
}

INSTANTIATE_TEST_SUITE_P(Paper, DuetPTraceTest, ::testing::Values("P2", "P3", "P6", "P12"));

}  // namespace
}  // namespace arcstore::sim
