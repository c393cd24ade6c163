// Crash consistency (label "crash"): power cuts at every flush point with
// random subsets of pending and torn writes; and the harness's own proof
// that it notices a broken commit protocol.
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/random.h"
#include "pool/crash_harness.h"

namespace arcstore::pool {
namespace {

uint64_t Seed(const char* who) { return SeededRandom::FromEnvironment(who).seed(); }

void Report(const CrashHarnessResult& r) {
  std::printf("crash harness: %llu txgs, %llu crash points, %llu images checked, %llu fallbacks\n",
              static_cast<unsigned long long>(r.txgs),
              static_cast<unsigned long long>(r.crash_points),
              static_cast<unsigned long long>(r.images),
              static_cast<unsigned long long>(r.fallbacks));
}

TEST(CrashTest, EveryPowerCutLeavesOneTxgAndNothingDurableLost) {
  CrashHarnessOptions o;
  o.seed = Seed("CrashTest");
  o.operations = static_cast<uint32_t>(ScaledIterations(4200));
  o.images_per_point = 10;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Report(*r);
  for (size_t i = 0; i < r->failures.size() && i < 10; i++) ADD_FAILURE() << r->failures[i];
  EXPECT_GE(r->images, ScaledIterations(10000));
}

// Each broken protocol must be caught within the default budget.
struct Broken {
  const char* name;
  UnsafeTestSwitches unsafe;
};

class CrashHarnessCanFailTest : public ::testing::TestWithParam<Broken> {};

TEST_P(CrashHarnessCanFailTest, ReportsALoss) {
  CrashHarnessOptions o;
  o.seed = Seed(GetParam().name);
  o.operations = 3000;
  o.images_per_point = 10;
  o.unsafe = GetParam().unsafe;
  o.stop_at_first_failure = true;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Report(*r);
  ASSERT_FALSE(r->failures.empty()) << GetParam().name << " went unnoticed";
  std::printf("%s caught: %s\n", GetParam().name, r->failures.front().c_str());
}

INSTANTIATE_TEST_SUITE_P(
    Switches, CrashHarnessCanFailTest,
    ::testing::Values(Broken{"skip_flush_before_uberblock", {.skip_flush_before_uberblock = true}},
                      Broken{"uberblock_before_blocks", {.uberblock_before_blocks = true}},
                      Broken{"reuse_frees_early", {.reuse_frees_early = true}}),
    [](const ::testing::TestParamInfo<Broken>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace arcstore::pool
