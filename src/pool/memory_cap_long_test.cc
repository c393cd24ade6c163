// The long memory-cap run (label "long"): memory_cap_test.cc's workload for
// two minutes, as issue 11 asks.
#include <gtest/gtest.h>

#include "testing/pool/memory_cap_workload.h"

namespace arcstore::pool {
namespace {

TEST(MemoryCapLongTest, TwoMinutesOfSixteenClientsStayWithinTheBounds) {
  MemoryCapOptions o;
  o.dir = ::testing::TempDir();
  o.duration_ms = 120'000;
  MemoryCapResult r = RunMemoryCapWorkload(o);
  ASSERT_TRUE(r.setup.ok()) << r.setup.ToString();
  EXPECT_EQ(r.failed_requests, 0u) << r.first_failure;
  EXPECT_EQ(r.wrong_reads, 0u) << r.first_failure;
  PrintMemoryCapResult(o, r);
  EXPECT_LE(r.max_arc_bytes, r.arc_bound_bytes) << "ARC size above c_max + 1.5 x ovf";
  EXPECT_LE(r.peak_rss_bytes, r.rss_bound_bytes) << "RSS above its bound";
}

}  // namespace
}  // namespace arcstore::pool
