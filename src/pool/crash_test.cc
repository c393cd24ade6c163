// Crash consistency (label "crash"): power cuts at every flush point with
// random subsets of pending and torn writes, with and without a cache
// device; and the harness's own proof that it notices a broken commit
// protocol and a stale block served by the cache device.
#include <gtest/gtest.h>

#include <algorithm>
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
  if (r.l2_images > 0 || r.l2_slots_written > 0) {
    std::printf(
        "cache device: %llu slots written, %llu workload reads (%llu blocks served by it), %llu removes; "
        "%llu images verified with it online, %llu blocks it served to verification\n",
        static_cast<unsigned long long>(r.l2_slots_written),
        static_cast<unsigned long long>(r.workload_reads),
        static_cast<unsigned long long>(r.l2_workload_hits),
        static_cast<unsigned long long>(r.cache_removes),
        static_cast<unsigned long long>(r.l2_images),
        static_cast<unsigned long long>(r.l2_verify_hits));
  }
}

// A workload with a cache device for the power cuts: a small ARC that
// evicts into it, reads back, the cache's slots written as they fill and
// when the workload flushes it, and a remove and add back now and then.
CrashHarnessOptions WithCacheDevice(uint64_t seed, uint32_t operations) {
  CrashHarnessOptions o;
  o.seed = seed;
  o.operations = operations;
  o.cache_device_bytes = 8 << 20;
  o.cache_arc_bytes = 1 << 20;
  o.read_one_in = 3;
  o.cache_flush_one_in = 12;
  o.cache_remove_one_in = 300;
  o.images_per_point = 2;
  o.replay_crash_one_in = 8;
  return o;
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

// Power cuts during feeds, rebuilds and removes of a cache device: every
// image opens with the cache device image the same cut leaves, verification
// reads ask it first, and no block it serves differs from the model.
TEST(CrashTest, WithACacheDeviceNoPowerCutServesAStaleBlock) {
  // At least 300 operations at any scale: with fewer, some seeds remove the
  // device before it has fed a slot that verification would read.
  CrashHarnessOptions o = WithCacheDevice(
      Seed("CrashTestCache"), static_cast<uint32_t>(std::max<uint64_t>(ScaledIterations(500), 300)));
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Report(*r);
  for (size_t i = 0; i < r->failures.size() && i < 10; i++) ADD_FAILURE() << r->failures[i];
  EXPECT_GT(r->l2_slots_written, 0u) << "the workload never wrote a slot of the cache device";
  EXPECT_GT(r->l2_images, 0u) << "no image opened with its cache device online";
  EXPECT_GT(r->l2_verify_hits, 0u) << "verification never read a block from the cache device";
  EXPECT_GT(r->replay_crash_images, 0u);
}

// A cache that files copies under their place alone serves a block freed
// and rewritten there its old bytes: the harness must report it.
TEST(CrashHarnessCanFailTest, ReportsAStaleBlockFromTheCacheDevice) {
  CrashHarnessOptions o = WithCacheDevice(Seed("l2_key_ignores_birth"), 800);
  o.unsafe.l2_key_ignores_birth = true;
  o.replay_crash_one_in = 0;
  o.stop_at_first_failure = true;
  Result<CrashHarnessResult> r = RunCrashHarness(o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Report(*r);
  ASSERT_FALSE(r->failures.empty()) << "l2_key_ignores_birth went unnoticed";
  std::printf("l2_key_ignores_birth caught: %s\n", r->failures.front().c_str());
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
