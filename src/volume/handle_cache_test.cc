#include "volume/handle_cache.h"

#include <gtest/gtest.h>

#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"

namespace arcstore::volume {
namespace {

using arc::ArcKey;

class HandleCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    arc::ArcOptions o;
    o.c_max_bytes = 256 * kMiB;
    o.c_min_bytes = 64 * kMiB;
    o.evictor = arc::EvictorMode::kInline;
    o.monitor_interval_ns = 0;
    arc_ = *arc::Arc::Create(o, arc::ArcEnv{&clock_, &mon_, &registry_});
  }
  // A committed record of 128 KiB, read through the ARC.
  arc::ArcHold Read(uint64_t block, uint8_t fill = 1) {
    arc::LookupResult r = arc_->Lookup(ArcKey{7, block, 0}, {.bytes = 128 * 1024});
    if (r.hit()) return std::move(r.hold);
    std::fill(r.fill.buffer().begin(), r.fill.buffer().end(), fill);
    return r.fill.Finish();
  }
  uint64_t Held() { return arc_->Sizes().held_bytes[static_cast<int>(arc::HolderKind::kHandleCache)]; }

  testing::ManualClock clock_;
  testing::FakeMemoryMonitor mon_{1 * kGiB};
  stats::Registry registry_;
  std::unique_ptr<arc::Arc> arc_;
};

TEST_F(HandleCacheTest, TargetFollowsLiveCAndWaterMarksHold) {
  HandleCacheOptions o;
  o.background_evictor = false;
  HandleCache hc(arc_.get(), o, &registry_);
  EXPECT_EQ(hc.target_bytes(), 256 * kMiB / 32);  // 8 MiB
  // Up to high water (110%), inserts just add.
  const uint64_t gen = hc.Generation(7);
  for (uint64_t b = 0; b < 70; b++) hc.Insert(ArcKey{7, b, 0}, Read(b), gen);
  EXPECT_EQ(hc.size_bytes(), 70 * 128 * 1024u);  // 8.75 MiB <= 8.8 MiB
  EXPECT_EQ(Held(), hc.size_bytes()) << "the ARC reports what the handle cache pins";
  hc.Trim();  // the background evictor's work: down to low water (90%)
  EXPECT_LE(hc.size_bytes(), 8 * kMiB / 100 * 90);
  // Above high water, the inserting caller evicts down to the target.
  for (uint64_t b = 100; b < 200; b++) hc.Insert(ArcKey{7, b, 0}, Read(b), gen);
  EXPECT_LE(hc.size_bytes(), 8 * kMiB / 100 * 110);
  EXPECT_GT(registry_.TakeSnapshot().Get("handle_cache", "direct_evictions"), 0);
  // The most recent entries stayed; the oldest went.
  EXPECT_TRUE(hc.Lookup(ArcKey{7, 199, 0}));
  EXPECT_FALSE(hc.Lookup(ArcKey{7, 0, 0}));
}

// The change of c itself evicts (no background evictor here: one running
// could be between taking entries and letting go of their holds when the
// test compares the held bytes with the size).
TEST_F(HandleCacheTest, ShrinksWhenCShrinks) {
  HandleCacheOptions o;
  o.background_evictor = false;
  HandleCache hc(arc_.get(), o, &registry_);
  const uint64_t gen = hc.Generation(7);
  for (uint64_t b = 0; b < 64; b++) hc.Insert(ArcKey{7, b, 0}, Read(b), gen);
  ASSERT_GT(hc.size_bytes(), 7 * kMiB);
  arc_->SetMaxBytes(64 * kMiB);  // c falls to 64 MiB: target 2 MiB
  EXPECT_EQ(hc.target_bytes(), 2 * kMiB);
  EXPECT_LE(hc.size_bytes(), 2 * kMiB / 100 * 110);
  EXPECT_EQ(Held(), hc.size_bytes());
}

TEST_F(HandleCacheTest, AStaleVersionIsNeverCached) {
  HandleCache hc(arc_.get(), HandleCacheOptions(), &registry_);
  const ArcKey key{7, 5, 0};
  const uint64_t seen = hc.Generation(7);  // a reader starts
  arc::ArcHold old_version = Read(5, 0xaa);
  hc.Invalidate(key);                      // a commit replaces the record meanwhile
  hc.Insert(key, old_version, seen);       // the reader's late insert is refused
  EXPECT_FALSE(hc.Lookup(key));
  hc.Insert(key, old_version, hc.Generation(7));
  EXPECT_TRUE(hc.Lookup(key));
  hc.Invalidate(key);
  EXPECT_FALSE(hc.Lookup(key));
  hc.Insert(key, Read(6), hc.Generation(7));
  hc.RemoveVolume(7);
  EXPECT_EQ(hc.size_bytes(), 0u);
}

}  // namespace
}  // namespace arcstore::volume
