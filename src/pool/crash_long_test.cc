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

// With a cache device (as CrashTest.WithACacheDeviceNoPowerCutServesAStaleBlock):
// ten times the workload, a larger cache device whose ring wraps, more
// subsets per point.
TEST(CrashLongTest, ManyMorePowerCutsWithACacheDevice) {
  CrashHarnessOptions o;
  o.seed = SeededRandom::FromEnvironment("CrashLongTestCache").seed();
  o.operations = static_cast<uint32_t>(ScaledIterations(5000));
  o.cache_device_bytes = 16 << 20;
  o.cache_arc_bytes = 1 << 20;
  o.read_one_in = 3;
  o.cache_remove_one_in = 400;
  o.images_per_point = 4;
  o.replay_crash_one_in = 6;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  std::printf(
      "crash harness (long, cache device): %llu crash points, %llu images checked, %llu cut "
      "during replay; %llu slots written, %llu images with it online, %llu blocks it served to "
      "verification\n",
      static_cast<unsigned long long>(r->crash_points),
      static_cast<unsigned long long>(r->images),
      static_cast<unsigned long long>(r->replay_crash_images),
      static_cast<unsigned long long>(r->l2_slots_written),
      static_cast<unsigned long long>(r->l2_images),
      static_cast<unsigned long long>(r->l2_verify_hits));
  for (size_t i = 0; i < r->failures.size() && i < 10; i++) ADD_FAILURE() << r->failures[i];
  EXPECT_GT(r->l2_verify_hits, 0u);
}

}  // namespace
}  // namespace arcstore::pool
