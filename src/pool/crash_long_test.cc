// The long crash-consistency run (label "long"; docs/testing.md).
#include <gtest/gtest.h>

#include "base/random.h"
#include "testing/pool/crash_harness.h"

namespace arcstore::pool {
namespace {

// The long variant (label "long"): 7.5 times the workload, more subsets
// (the recording of 15000 operations, log blocks and txgs, stays under its
// 1 GiB cap).
TEST(CrashLongTest, ManyMorePowerCuts) {
  CrashHarnessOptions o;
  o.seed = SeededRandom::FromEnvironment("CrashLongTest").seed();
  o.operations = static_cast<uint32_t>(ScaledIterations(15000));
  o.images_per_point = 16;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::printf("crash harness (long): %llu txgs, %llu crash points, %llu images checked\n",
              static_cast<unsigned long long>(r->txgs),
              static_cast<unsigned long long>(r->crash_points),
              static_cast<unsigned long long>(r->images));
  for (size_t i = 0; i < r->failures.size() && i < 10; i++) ADD_FAILURE() << r->failures[i];
}

}  // namespace
}  // namespace arcstore::pool
