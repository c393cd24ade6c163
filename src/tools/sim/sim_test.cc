// arcstore sim against the ARC paper's traces: the OLTP rows (all five cache
// sizes) and P12 at c = 1024 must give section 5's integers exactly, for ARC
// and LRU. The rest of the table runs in sim_long_test (label `long`).
#include <gtest/gtest.h>

#include "tools/sim/paper_counts_test_util.h"

namespace arcstore::sim {
namespace {

using testing::ExpectPaperRow;
using testing::kPaperRows;

class PaperOltpTest : public ::testing::TestWithParam<size_t> {};

TEST_P(PaperOltpTest, ArcHitsExact) { ExpectPaperRow(kPaperRows[GetParam()], SimPolicy::kArc); }
TEST_P(PaperOltpTest, LruHitsExact) { ExpectPaperRow(kPaperRows[GetParam()], SimPolicy::kLru); }

INSTANTIATE_TEST_SUITE_P(Oltp, PaperOltpTest, ::testing::Values(0, 1, 2, 3, 4),
                         [](const auto& info) {
                           return "c" + std::to_string(kPaperRows[info.param].cache_pages);
                         });

TEST(PaperP12Test, ArcHitsExactAt1024) { ExpectPaperRow(kPaperRows[8], SimPolicy::kArc); }
TEST(PaperP12Test, LruHitsExactAt1024) { ExpectPaperRow(kPaperRows[8], SimPolicy::kLru); }

TEST(SimTest, MissingTraceIsAnError) {
  SimOptions o;
  o.trace_path = "/nonexistent/x.lis.zst";
  o.cache_pages = 10;
  auto r = RunSim(o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(SimTest, RejectsZeroCache) {
  SimOptions o;
  o.trace_path = "x.lis";
  o.cache_pages = 0;
  EXPECT_FALSE(RunSim(o).ok());
}

}  // namespace
}  // namespace arcstore::sim
