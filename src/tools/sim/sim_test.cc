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

// libCacheSim's miss ratios for the LIRS traces and its own sample
// (../shared/traces/README.md, sections 2 and 4), to their four decimals.
TEST(SimTest, MatchesLibCacheSimMissRatios) {
  struct Row {
    const char* rel;
    uint64_t cache_pages;
    double lru_miss;
    double arc_miss;
  };
  for (const Row& row : {Row{"lirs/loop.trace.gz", 101, 1.0000, 1.0000},
                         Row{"lirs/loop.trace.gz", 303, 1.0000, 1.0000},
                         Row{"lirs/gli.trace.gz", 252, 0.9909, 0.9862},
                         Row{"lirs/gli.trace.gz", 758, 0.9885, 0.9859},
                         Row{"lirs/sprite.trace.gz", 707, 0.1352, 0.1450},
                         Row{"lirs/sprite.trace.gz", 2122, 0.0642, 0.0647},
                         Row{"lirs/2_pools.trace.gz", 993, 0.4562, 0.4570},
                         Row{"lirs/2_pools.trace.gz", 2981, 0.3611, 0.3605},
                         Row{"libcachesim-sample/cloudPhysicsIO.csv", 4897, 0.8049, 0.7728}}) {
    for (SimPolicy policy : {SimPolicy::kLru, SimPolicy::kArc}) {
      SCOPED_TRACE(std::string(row.rel) + " c=" + std::to_string(row.cache_pages) + " " +
                   std::string(SimPolicyName(policy)));
      const std::string path = testing::SharedTrace(row.rel);
      ASSERT_FALSE(path.empty());
      SimOptions o;
      o.trace_path = path;
      o.policy = policy;
      o.cache_pages = row.cache_pages;
      o.trace.csv_offset_column = 4;  // version,time,op,size,lbn: the key is lbn
      o.trace.csv_size_column = -1;
      o.trace.csv_op_column = 2;
      auto r = RunSim(o);
      ASSERT_TRUE(r.ok()) << r.status().ToString();
      const double miss = static_cast<double>(r->misses) / static_cast<double>(r->requests);
      EXPECT_NEAR(miss, policy == SimPolicy::kArc ? row.arc_miss : row.lru_miss, 0.00005);
    }
  }
}

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
