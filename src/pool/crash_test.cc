// Crash consistency (label "crash"): power cuts at every flush point with
// random subsets of pending and torn writes; and the harness's own proof
// that it notices a broken commit protocol.
#include <gtest/gtest.h>

#include <cstdlib>

#include "base/random.h"
#include "testing/pool/crash_harness.h"

namespace arcstore::pool {
namespace {

uint64_t Seed(const char* who) { return SeededRandom::FromEnvironment(who).seed(); }

void Report(const CrashHarnessResult& r) {
  std::printf(
      "crash harness: %llu txgs, %llu durable flushes, %llu crash points, %llu images checked, "
      "%llu fallbacks, %llu images replayed %llu log records, %llu images cut during replay\n",
      static_cast<unsigned long long>(r.txgs), static_cast<unsigned long long>(r.durable_flushes),
      static_cast<unsigned long long>(r.crash_points), static_cast<unsigned long long>(r.images),
      static_cast<unsigned long long>(r.fallbacks),
      static_cast<unsigned long long>(r.replayed_images),
      static_cast<unsigned long long>(r.replayed_records),
      static_cast<unsigned long long>(r.replay_crash_images));
}

TEST(CrashTest, EveryPowerCutLeavesOneTxgAndNothingDurableLost) {
  CrashHarnessOptions o;
  o.seed = Seed("CrashTest");
  o.operations = static_cast<uint32_t>(ScaledIterations(2000));
  o.images_per_point = 6;
  o.replay_crash_one_in = 8;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Report(*r);
  for (size_t i = 0; i < r->failures.size() && i < 10; i++) ADD_FAILURE() << r->failures[i];
  EXPECT_GE(r->images, ScaledIterations(2000));
  EXPECT_GT(r->replayed_records, 0u) << "no image exercised the intent log's replay";
  EXPECT_GT(r->replay_crash_images, 0u);
}

// The same with flushes served by txg syncs (the log turned off).
TEST(CrashTest, WithoutTheIntentLogEveryFlushIsATxg) {
  CrashHarnessOptions o;
  o.seed = Seed("CrashTestNoLog");
  o.operations = static_cast<uint32_t>(ScaledIterations(1000));
  o.intent_log = false;
  o.images_per_point = 3;
  o.replay_crash_one_in = 0;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Report(*r);
  for (size_t i = 0; i < r->failures.size() && i < 10; i++) ADD_FAILURE() << r->failures[i];
  EXPECT_EQ(r->replayed_records, 0u);
}

// Each broken protocol must be caught within the default budget.
struct Broken {
  const char* name;
  UnsafeTestSwitches unsafe;
  bool intent_log = false;  // the txg protocol's switches show best with every flush a txg
};

class CrashHarnessCanFailTest : public ::testing::TestWithParam<Broken> {};

TEST_P(CrashHarnessCanFailTest, ReportsALoss) {
  CrashHarnessOptions o;
  o.seed = Seed(GetParam().name);
  o.operations = 3000;
  o.images_per_point = 10;
  o.unsafe = GetParam().unsafe;
  o.intent_log = GetParam().intent_log;
  o.replay_crash_one_in = 0;
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
                      Broken{"reuse_frees_early", {.reuse_frees_early = true}},
                      Broken{"log_ack_before_flush", {.log_ack_before_flush = true}, true}),
    [](const ::testing::TestParamInfo<Broken>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace arcstore::pool
