// The engine's ARC, operation by operation: hits, misses, fills, iohits,
// ghosts, holds, anon and publish, volumes, sizing defaults, overflow
// levels, the history of c, subscribers and the stats' names.
#include "arc/arc.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "testing/arc_test_policy.h"

namespace arcstore::arc {
namespace {

class ArcTest : public ::testing::Test {
 protected:
  void Make(ArcOptions o = {}) {
    arc_.reset();  // one ARC per stats module
    o.evictor = EvictorMode::kInline;
    o.monitor_interval_ns = 0;
    testing::ApplyTestArcPolicy(&o);
    auto a = Arc::Create(o, ArcEnv{&clock_, &mon_, &registry_});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    arc_ = std::move(*a);
  }
  ArcOptions Small(uint64_t c_bytes) {
    ArcOptions o;
    o.c_max_bytes = c_bytes;
    o.c_min_bytes = c_bytes / 4;
    o.min_residence_ns = 0;
    o.p_min_shift = 0;
    o.initial_largest_bytes = 4096;
    return o;
  }
  // Reads `key` through the ARC; a miss is filled with `fill`.
  ArcHold Read(const ArcKey& key, uint64_t bytes = 4096, uint8_t fill = 1,
               HolderKind holder = HolderKind::kApiUser) {
    LookupResult r = arc_->Lookup(key, {.bytes = bytes, .holder = holder});
    if (r.hit()) return std::move(r.hold);
    auto buf = r.fill.buffer();
    std::fill(buf.begin(), buf.end(), fill);
    return r.fill.Finish();
  }
  int64_t Stat(const char* name) { return registry_.TakeSnapshot().Get("arcstats", name, -1); }
  void ExpectInvariants() {
    Status s = arc_->CheckInvariants();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  testing::ManualClock clock_;
  testing::FakeMemoryMonitor mon_{4 * kGiB};
  stats::Registry registry_;
  std::unique_ptr<Arc> arc_;
};

TEST_F(ArcTest, MissFillThenHit) {
  Make(Small(1 * kMiB));
  {
    LookupResult r = arc_->Lookup(ArcKey{1, 7, 0}, {.bytes = 4096});
    ASSERT_FALSE(r.hit());
    ASSERT_TRUE(r.fill);
    auto buf = r.fill.buffer();
    ASSERT_EQ(buf.size(), 4096u);
    buf[0] = 42;
    ArcHold h = r.fill.Finish();
    EXPECT_EQ(h.data()[0], 42);
    EXPECT_EQ(arc_->Sizes().held_bytes[static_cast<int>(HolderKind::kApiUser)], 4096u);
    ExpectInvariants();
  }
  EXPECT_EQ(arc_->Sizes().held_bytes[static_cast<int>(HolderKind::kApiUser)], 0u);
  ArcHold h = Read(ArcKey{1, 7, 0});
  EXPECT_EQ(h.data()[0], 42);
  EXPECT_EQ(Stat("hits"), 1);
  EXPECT_EQ(Stat("misses"), 1);
  EXPECT_EQ(Stat("demand_data_hits"), 1);
  EXPECT_EQ(Stat("demand_data_misses"), 1);
  EXPECT_EQ(Stat("mru_hits"), 1);  // promoted at once (min residence 0)
  EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kMfu)][0], 4096u);
  ExpectInvariants();
}


// A fill finished uncached (its version is no longer the key's) gives its
// reader the bytes and leaves nothing cached: the next lookup misses, and
// the buffer is freed at its last release.
TEST_F(ArcTest, AFillFinishedUncachedLeavesTheCache) {
  Make(Small(1 * kMiB));
  const ArcKey key{1, 8, 0};
  {
    LookupResult r = arc_->Lookup(key, {.bytes = 4096});
    ASSERT_FALSE(r.hit());
    r.fill.buffer()[0] = 7;
    ArcHold h = r.fill.FinishUncached();
    EXPECT_EQ(h.data()[0], 7);
    EXPECT_FALSE(arc_->Cached(key));
    EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kAnon)][0], 4096u);
    ExpectInvariants();
  }
  EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kAnon)][0], 0u)
      << "freed at its last release";
  LookupResult again = arc_->Lookup(key, {.bytes = 4096});
  EXPECT_FALSE(again.hit());
  again.fill.buffer()[0] = 9;
  EXPECT_EQ(again.fill.Finish().data()[0], 9);
  EXPECT_TRUE(arc_->Cached(key));
  ExpectInvariants();
}
TEST_F(ArcTest, KindsAndAccessesCountSeparately) {
  Make(Small(1 * kMiB));
  auto meta = arc_->Lookup(ArcKey{1, 1, 1}, {.bytes = 512, .kind = BufKind::kMetadata,
                                              .access = AccessKind::kPrefetch});
  meta.fill.buffer();
  meta.fill.Finish().Reset();
  arc_->Lookup(ArcKey{1, 1, 1}, {.bytes = 512, .kind = BufKind::kMetadata}).hold.Reset();
  EXPECT_EQ(Stat("prefetch_metadata_misses"), 1);
  EXPECT_EQ(Stat("demand_metadata_hits"), 1);
  EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kMfu)][1], 512u);
  EXPECT_EQ(Stat("arc_meta_used"), static_cast<int64_t>(512 + arc_->Sizes().hdr_size));
}

TEST_F(ArcTest, ConcurrentMissWaitsForTheOneReadAndCountsAnIohit) {
  Make(Small(1 * kMiB));
  LookupResult first = arc_->Lookup(ArcKey{1, 9, 0}, {.bytes = 4096});
  ASSERT_FALSE(first.hit());
  std::atomic<bool> done{false};
  uint8_t seen = 0;
  std::thread other([&] {
    LookupResult r = arc_->Lookup(ArcKey{1, 9, 0}, {.bytes = 4096});
    ASSERT_TRUE(r.hit());  // an iohit gives a hold, not a second token
    seen = r.hold.data()[0];
    done = true;
  });
  while (Stat("iohits") != 1) std::this_thread::yield();
  EXPECT_FALSE(done);
  first.fill.buffer()[0] = 99;
  ArcHold h = first.fill.Finish();
  other.join();
  EXPECT_EQ(seen, 99);
  EXPECT_EQ(Stat("misses"), 1);
  EXPECT_EQ(Stat("hits"), 0);
  EXPECT_EQ(Stat("demand_data_iohits"), 1);
  ExpectInvariants();
}

TEST_F(ArcTest, AbandonedFillLetsAWaiterRetry) {
  Make(Small(1 * kMiB));
  LookupResult first = arc_->Lookup(ArcKey{1, 3, 0}, {.bytes = 4096});
  std::atomic<bool> got_token{false};
  std::thread other([&] {
    LookupResult r = arc_->Lookup(ArcKey{1, 3, 0}, {.bytes = 4096});
    ASSERT_FALSE(r.hit());  // the first reader failed: this one reads
    got_token = true;
    r.fill.buffer()[0] = 5;
    r.fill.Finish();
  });
  while (Stat("iohits") != 1) std::this_thread::yield();
  first.fill.buffer();
  first.fill.Abandon();  // e.g. a checksum error
  other.join();
  EXPECT_TRUE(got_token);
  EXPECT_EQ(Stat("fills_abandoned"), 1);
  EXPECT_EQ(Read(ArcKey{1, 3, 0}).data()[0], 5);
  ExpectInvariants();
}

TEST_F(ArcTest, EvictionMakesGhostsAndAGhostHitMovesP) {
  if (testing::TestLirsNamesVictims()) GTEST_SKIP() << "checks which blocks ARC's REPLACE keeps";
  Make(Small(64 * kKiB));  // 16 blocks of 4 KiB (less the headers)
  for (uint64_t b = 0; b < 6; b++) Read(ArcKey{1, b, 0});
  for (uint64_t b = 0; b < 6; b++) Read(ArcKey{1, b, 0});  // 0..5 in MFU
  for (uint64_t b = 6; b < 24; b++) Read(ArcKey{1, b, 0});  // over c
  arc_->RunEvictionPass();
  ArcSizes z = arc_->Sizes();
  EXPECT_LE(z.size, z.c);
  EXPECT_GT(z.state_size[static_cast<int>(ArcState::kMruGhost)][0], 0u);
  ExpectInvariants();
  const double p0 = z.p;
  // p = 0, so REPLACE took MRU's LRU first: the newest blocks are resident,
  // the ones evicted last are MRU ghosts. Walk down from the newest (hits do
  // not insert, so they trim no ghost) to the first ghost.
  uint64_t ghost = 23;
  for (;; ghost--) {
    ASSERT_GE(ghost, 6u) << "no MRU ghost found";
    LookupResult r = arc_->Lookup(ArcKey{1, ghost, 0}, {.bytes = 4096});
    if (r.hit()) continue;
    ASSERT_EQ(Stat("mru_ghost_hits"), 1) << "block " << ghost << " was neither resident nor a ghost";
    EXPECT_GT(arc_->Sizes().p, p0);
    r.fill.buffer();
    r.fill.Finish().Reset();
    break;
  }
  // A ghost hit goes to MFU.
  EXPECT_EQ(Stat("mru_ghost_hits"), 1);
  EXPECT_GE(arc_->Sizes().state_size[static_cast<int>(ArcState::kMfu)][0], 7u * 4096);
  ExpectInvariants();
}

// Cached() answers what a Lookup would find, without counting or moving
// anything: resident (held or not) yes; absent, a ghost or a fill in
// flight no.
TEST_F(ArcTest, CachedSaysWhetherALookupWouldHit) {
  Make(Small(64 * kKiB));
  EXPECT_FALSE(arc_->Cached(ArcKey{1, 0, 0}));
  LookupResult filling = arc_->Lookup(ArcKey{1, 0, 0}, {.bytes = 4096});
  ASSERT_FALSE(filling.hit());
  EXPECT_FALSE(arc_->Cached(ArcKey{1, 0, 0})) << "a fill in flight is not cached yet";
  filling.fill.buffer();
  ArcHold held = filling.fill.Finish();
  EXPECT_TRUE(arc_->Cached(ArcKey{1, 0, 0})) << "held";
  held.Reset();
  EXPECT_TRUE(arc_->Cached(ArcKey{1, 0, 0})) << "resident, unheld";
  const int64_t hits = Stat("hits"), misses = Stat("misses");
  for (int i = 0; i < 10; i++) (void)arc_->Cached(ArcKey{1, 0, 0});
  EXPECT_EQ(Stat("hits"), hits);
  EXPECT_EQ(Stat("misses"), misses);

  for (uint64_t b = 1; b < 24; b++) Read(ArcKey{1, b, 0});  // over c: ghosts
  arc_->RunEvictionPass();
  int resident = 0, not_cached = 0;
  for (uint64_t b = 24; b-- > 0;) {
    const bool cached = arc_->Cached(ArcKey{1, b, 0});
    LookupResult r = arc_->Lookup(ArcKey{1, b, 0}, {.bytes = 4096});
    EXPECT_EQ(cached, r.hit()) << "block " << b;
    (cached ? resident : not_cached)++;
    if (!r.hit()) {
      r.fill.buffer();
      r.fill.Finish().Reset();
    }
  }
  EXPECT_GT(resident, 0);
  EXPECT_GT(not_cached, 0);
  EXPECT_GT(Stat("mru_ghost_hits") + Stat("mfu_ghost_hits"), 0) << "no ghost was asked about";
  ExpectInvariants();
}

TEST_F(ArcTest, HeldBuffersAreNotEvictedAndNameTheirHolder) {
  Make(Small(64 * kKiB));
  std::vector<ArcHold> pinned;
  for (uint64_t b = 0; b < 24; b++) pinned.push_back(Read(ArcKey{1, b, 0}, 4096, 1, HolderKind::kHandleCache));
  const uint64_t passes_before = static_cast<uint64_t>(Stat("evict_passes_no_progress"));
  EXPECT_EQ(arc_->RunEvictionPass(), 0u);
  EXPECT_GT(static_cast<uint64_t>(Stat("evict_passes_no_progress")), passes_before);
  ArcSizes z = arc_->Sizes();
  EXPECT_GT(z.size, z.c);  // overshoot, visibly
  EXPECT_EQ(z.held_bytes[static_cast<int>(HolderKind::kHandleCache)], 24u * 4096);
  EXPECT_EQ(Stat("held_bytes_handle_cache"), 24 * 4096);
  EXPECT_EQ(z.state_evictable[static_cast<int>(ArcState::kMru)][0], 0u);
  ExpectInvariants();
  pinned.clear();
  arc_->RunEvictionPass();
  EXPECT_LE(arc_->Sizes().size, arc_->Sizes().c);
  ExpectInvariants();
}

TEST_F(ArcTest, AnonBuffersPublishAndReplaceOlderVersions) {
  Make(Small(1 * kMiB));
  ArcHold old_version = Read(ArcKey{2, 5, 0}, 4096, 0xAA);
  ArcHold dirty = arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord);
  std::fill(dirty.mutable_data().begin(), dirty.mutable_data().end(), 0xBB);
  EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kAnon)][0], 4096u);
  EXPECT_EQ(arc_->Sizes().held_bytes[static_cast<int>(HolderKind::kDirtyRecord)], 4096u);
  ExpectInvariants();
  ArcHold published = arc_->Publish(std::move(dirty), ArcKey{2, 5, 0});
  EXPECT_EQ(published.key(), (ArcKey{2, 5, 0}));
  // The old version's holder keeps its bytes (now anon, out of the cache).
  EXPECT_EQ(old_version.data()[0], 0xAA);
  EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kAnon)][0], 4096u);
  EXPECT_EQ(Read(ArcKey{2, 5, 0}).data()[0], 0xBB);
  ExpectInvariants();
  old_version.Reset();  // the orphan is freed
  EXPECT_EQ(arc_->Sizes().state_size[static_cast<int>(ArcState::kAnon)][0], 0u);
  ExpectInvariants();
}

TEST_F(ArcTest, RemoveVolumeDropsItsEntriesOnly) {
  Make(Small(1 * kMiB));
  for (uint64_t b = 0; b < 10; b++) {
    Read(ArcKey{7, b, 0});
    Read(ArcKey{8, b, 0});
  }
  ArcHold held = Read(ArcKey{7, 3, 0});
  EXPECT_EQ(arc_->RemoveVolume(7), 10u);
  ExpectInvariants();
  EXPECT_EQ(held.data()[0], 1);  // still readable by its holder
  EXPECT_FALSE(arc_->Lookup(ArcKey{7, 4, 0}, {.bytes = 4096}).hit());
  EXPECT_TRUE(arc_->Lookup(ArcKey{8, 4, 0}, {.bytes = 4096}).hit());
  held.Reset();
  ExpectInvariants();
}

TEST_F(ArcTest, SizingDefaultsFollowTheMonitorLimit) {
  mon_.SetLimit(16 * kGiB, "cgroup v2 memory.max");
  Make(ArcOptions{});
  EXPECT_EQ(arc_->c_max(), 8 * kGiB);                    // 50% of the limit
  EXPECT_EQ(arc_->c_min(), 256 * kMiB);                  // c_max / 32 > 64 MiB
  EXPECT_EQ(arc_->target_bytes(), 8 * kGiB);
  mon_.SetLimit(1 * kGiB);
  Make(ArcOptions{});
  EXPECT_EQ(arc_->c_max(), 512 * kMiB);
  EXPECT_EQ(arc_->c_min(), 64 * kMiB);                   // the 64 MiB floor
}

TEST_F(ArcTest, ALowerLimitLowersCWithItsCause) {
  mon_.SetLimit(4 * kGiB);
  Make(ArcOptions{});
  mon_.SetLimit(1 * kGiB, "cgroup v2 memory.max");
  arc_->Tick();
  EXPECT_EQ(arc_->target_bytes(), 512 * kMiB);
  auto h = arc_->TargetHistory();
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back().cause, TargetCause::kLimit);
  EXPECT_NE(h.back().reason.find("cgroup v2 memory.max"), std::string::npos) << h.back().reason;
  EXPECT_EQ(Stat("c_changes_limit"), 1);
}

TEST_F(ArcTest, OverflowLevels) {
  ArcOptions o = Small(1 * kMiB);
  o.initial_largest_bytes = 128 * kKiB;  // ovf = max(128K, 1M / 256)
  Make(o);
  std::vector<ArcHold> held;
  auto fill_to = [&](uint64_t bytes) {
    while (arc_->size_bytes() + 4096 <= bytes) {
      held.push_back(arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord));
    }
  };
  EXPECT_EQ(arc_->Overflow(), OverflowLevel::kNone);
  fill_to(1 * kMiB + 64 * kKiB);  // <= c + ovf/2
  EXPECT_EQ(arc_->Overflow(), OverflowLevel::kNone);
  held.push_back(arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord));
  EXPECT_EQ(arc_->Overflow(), OverflowLevel::kSome);
  // Up to the SEVERE line (c + 1.5 ovf), allocations that fit never wait.
  const ArcSizes z = arc_->Sizes();
  const uint64_t header_bytes = z.hdr_size / z.headers;
  while (arc_->size_bytes() + 4096 + header_bytes <= 1 * kMiB + 192 * kKiB) {
    held.push_back(arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord));
  }
  EXPECT_EQ(arc_->Overflow(), OverflowLevel::kSome);
  EXPECT_EQ(Stat("evict_waits"), 0);
  // The next one would pass it: it waits. With everything dirty nothing can
  // be freed, so the pass ends without progress and lets it through, past
  // the line, counted.
  const int64_t no_progress = Stat("evict_passes_no_progress");
  held.push_back(arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord));
  EXPECT_EQ(Stat("evict_waits"), 1);
  EXPECT_EQ(Stat("reserve_forced"), 1);
  EXPECT_GT(Stat("evict_passes_no_progress"), no_progress);
  EXPECT_EQ(arc_->Overflow(), OverflowLevel::kSevere);
  ExpectInvariants();
}

// ovf is the largest buffer the ARC has reserved, an anon one or a fill,
// not counting the header that comes with it: c + 1.5 ovf is the line the
// design states.
TEST_F(ArcTest, TheOverflowMarginIsTheLargestBufferWithoutItsHeader) {
  Make(Small(1 * kMiB));  // ovf = max(4 KiB, 1 MiB / 256) = 4 KiB
  EXPECT_EQ(arc_->Sizes().ovf_bytes, 4 * kKiB);
  ArcHold anon = arc_->AllocateAnon(128 * kKiB, BufKind::kData, HolderKind::kDirtyRecord);
  EXPECT_EQ(arc_->Sizes().ovf_bytes, 128 * kKiB);
  ArcHold read = Read(ArcKey{1, 1, 0}, 256 * kKiB);
  EXPECT_EQ(arc_->Sizes().ovf_bytes, 256 * kKiB);
  ExpectInvariants();
}

// An allocation that would take size past c + 1.5 ovf waits for eviction
// before it adds its bytes; the evictor makes room and size never passes
// the line.
TEST_F(ArcTest, AnAllocationThatWouldPassTheSevereLineWaitsUntilThereIsRoom) {
  ArcOptions o = Small(1 * kMiB);
  o.initial_largest_bytes = 128 * kKiB;  // ovf = 128 KiB: the line is c + 192 KiB
  Make(o);
  // 64 evictable buffers of 16 KiB: 1 MiB in MRU.
  for (uint64_t b = 0; b < 64; b++) {
    LookupResult r = arc_->Lookup(ArcKey{1, b, 0}, {.bytes = 16 * kKiB});
    ASSERT_FALSE(r.hit());
    r.fill.buffer();
    r.fill.Finish();
  }
  std::vector<ArcHold> dirty;
  uint64_t max_size = 0;
  for (int i = 0; i < 40; i++) {  // 40 x 128 KiB of dirty data: 5 x c
    dirty.push_back(arc_->AllocateAnon(128 * kKiB, BufKind::kData, HolderKind::kDirtyRecord));
    max_size = std::max(max_size, arc_->size_bytes());
    if (dirty.size() > 4) dirty.erase(dirty.begin());  // synced and released
  }
  EXPECT_LE(max_size, 1 * kMiB + 192 * kKiB);
  EXPECT_GT(Stat("evict_waits"), 0);
  EXPECT_EQ(Stat("reserve_forced"), 0);
  dirty.clear();
  ExpectInvariants();
}

TEST_F(ArcTest, CapIsRecordedAndSubscribersHearOfIt) {
  Make(Small(8 * kMiB));
  std::vector<uint64_t> heard;
  {
    Arc::Subscription sub = arc_->SubscribeTarget([&](uint64_t c) { heard.push_back(c); });
    const uint64_t gen = arc_->target_generation();
    arc_->SetMaxBytes(4 * kMiB);
    EXPECT_EQ(arc_->target_bytes(), 4 * kMiB);
    EXPECT_GT(arc_->target_generation(), gen);
    ASSERT_EQ(heard.size(), 1u);
    EXPECT_EQ(heard[0], 4 * kMiB);
    auto h = arc_->TargetHistory();
    ASSERT_FALSE(h.empty());
    EXPECT_EQ(h.back().cause, TargetCause::kSet);
    EXPECT_EQ(h.back().from_bytes, 8 * kMiB);
    EXPECT_EQ(h.back().to_bytes, 4 * kMiB);
    EXPECT_EQ(Stat("c_change_bytes_set"), static_cast<int64_t>(4 * kMiB));
  }
  arc_->SetMaxBytes(2 * kMiB);
  EXPECT_EQ(heard.size(), 1u);  // unsubscribed
}

TEST_F(ArcTest, StatsUseArcstatsNames) {
  Make(Small(1 * kMiB));
  stats::Snapshot s = registry_.TakeSnapshot();
  for (const char* name :
       {"hits", "iohits", "misses", "demand_data_hits", "demand_data_misses", "demand_metadata_hits",
        "demand_metadata_misses", "prefetch_data_hits", "prefetch_data_misses", "mru_hits", "mfu_hits",
        "mru_ghost_hits", "mfu_ghost_hits", "c", "c_min", "c_max", "p", "size", "hdr_size", "mru_size",
        "mru_evictable_data", "mru_evictable_metadata", "mfu_size", "mfu_evictable_data",
        "mfu_evictable_metadata", "mru_ghost_size", "mfu_ghost_size", "anon_size", "evict_skip",
        "evict_not_enough", "memory_throttle_count", "arc_meta_used", "deleted", "c_changes_grow",
        "c_changes_pressure", "c_changes_limit", "held_bytes_handle_cache", "held_bytes_dirty_record",
        "waiters", "evict_wait_ns", "evict_passes_no_progress", "overflow_some_ns",
        "overflow_severe_ns"}) {
    EXPECT_NE(s.Find("arcstats", name), nullptr) << name;
  }
}

TEST_F(ArcTest, OptionsAreValidated) {
  ArcOptions o;
  o.hash_shards = 3;
  EXPECT_FALSE(Arc::Create(o, ArcEnv{&clock_, &mon_, nullptr}).ok());
  o = ArcOptions{};
  o.c_min_bytes = 2 * kGiB;
  o.c_max_bytes = 1 * kGiB;
  EXPECT_FALSE(Arc::Create(o, ArcEnv{&clock_, &mon_, nullptr}).ok());
  EXPECT_FALSE(Arc::Create(ArcOptions{}, ArcEnv{nullptr, &mon_, nullptr}).ok());
  mon_.FailNextReads(1, "no cgroup");
  EXPECT_FALSE(Arc::Create(ArcOptions{}, ArcEnv{&clock_, &mon_, nullptr}).ok());
}

TEST_F(ArcTest, BackgroundEvictorBringsSizeUnderC) {
  ArcOptions o = Small(256 * kKiB);
  o.evictor = EvictorMode::kThread;
  o.monitor_interval_ns = 0;
  arc_.reset();
  testing::ApplyTestArcPolicy(&o);
  auto a = Arc::Create(o, ArcEnv{&clock_, &mon_, &registry_});
  ASSERT_TRUE(a.ok());
  arc_ = std::move(*a);
  for (uint64_t b = 0; b < 500; b++) Read(ArcKey{1, b, 0});
  arc_->WaitEvictorIdle();
  EXPECT_LE(arc_->size_bytes(), arc_->target_bytes() + arc_->Sizes().ovf_bytes / 2 + 4096);
  ExpectInvariants();
  arc_.reset();
}

}  // namespace
}  // namespace arcstore::arc
