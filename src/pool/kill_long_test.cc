// The long kill-and-reopen loop (label "long"): kill_stress.h for 500
// cycles with longer child runs. Command in docs/testing.md.
#include <gtest/gtest.h>

#include "testing/pool/kill_stress.h"

namespace arcstore::pool {
namespace {

TEST(KillLongTest, FiveHundredKillReopenCyclesLoseNothingDurable) {
  KillStressOptions o;
  o.dir = ::testing::TempDir();
  o.cycles = 500;
  o.threads = 8;
  o.max_run_ms = 3000;
  o.seed_name = "KillLongTest";
  KillStressResult r = RunKillStress(o);
  PrintKillStressResult(r);
  EXPECT_EQ(r.first_failure, "");
  EXPECT_EQ(r.durable_lost, 0u);
  EXPECT_EQ(r.cycles, o.cycles);
}

}  // namespace
}  // namespace arcstore::pool
