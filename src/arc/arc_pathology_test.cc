// The seeds' pathologies (../shared/seeds/), reproduced against the ARC and
// shown fixed, one test each:
//  (1) ghost trimming does not release a waiter early (OpenZFS PR 12279:
//      evicting a ghost header credited the ghost's logical size);
//  (2) a fully pinned cache overshoots c, releases its waiters instead of
//      deadlocking, and its stats name the holder kind;
//  (3) a burst of memory pressure lowers c in bounded steps with the cause
//      recorded, and c grows back once the pressure ends and the holdoff
//      has passed (the seed's c sat at c_min and nobody could see why);
//  (4) a cache sized from c (the handle cache) shrinks when c shrinks (the
//      seed's handle cache, sized from physical memory, pinned 27 GiB);
//  (5) stalls while memory is available (PSI during a burst of page-cache
//      reclaim) cost a fresh ARC one step of c, not c down to the little it
//      holds: the seed's pressure "that isn't, in fact, there".
#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <future>
#include <thread>

#include "arc/arc.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "testing/arc_test_policy.h"

namespace arcstore::arc {
namespace {

constexpr uint64_t kBlock = 64 * kKiB;

class PathologyTest : public ::testing::Test {
 protected:
  void Make(ArcOptions o) {
    arc_.reset();
    o.monitor_interval_ns = 0;
    o.min_residence_ns = 0;
    o.initial_largest_bytes = kBlock;
    testing::ApplyTestArcPolicy(&o);
    auto a = Arc::Create(o, ArcEnv{&clock_, &mon_, &registry_});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    arc_ = std::move(*a);
  }
  // An ARC whose evictions run inline, sized c_max / c_min.
  ArcOptions MakeInline(uint64_t c_max_bytes, uint64_t c_min_bytes) {
    ArcOptions o;
    o.evictor = EvictorMode::kInline;
    o.c_max_bytes = c_max_bytes;
    o.c_min_bytes = c_min_bytes;
    Make(o);
    return o;
  }
  ArcHold Read(uint64_t block, HolderKind holder = HolderKind::kApiUser, uint64_t bytes = kBlock) {
    LookupResult r = arc_->Lookup(ArcKey{1, block, 0}, {.bytes = bytes, .holder = holder});
    if (r.hit()) return std::move(r.hold);
    r.fill.buffer();
    return r.fill.Finish();
  }
  int64_t Stat(const char* name) { return registry_.TakeSnapshot().Get("arcstats", name, -1); }
  void ExpectInvariants() {
    Status s = arc_->CheckInvariants();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  testing::ManualClock clock_;
  testing::FakeMemoryMonitor mon_{8 * kGiB};
  stats::Registry registry_;
  std::unique_ptr<Arc> arc_;
};

// (1) A waiter needs 2 x 64 KiB really freed. Pressure shrinks c and the
// ghost lists lose 1 MiB of logical bytes, which frees only headers: the
// waiter stays blocked. The evictor then frees one 64 KiB buffer (not
// enough) and nothing more: the waiter leaves when the pass gives up, not
// because a ghost's size was counted as freed.
TEST_F(PathologyTest, GhostTrimmingDoesNotReleaseAWaiterEarly) {
  ArcOptions o;
  o.evictor = EvictorMode::kManual;  // the test steps eviction
  o.c_max_bytes = 2 * kMiB;
  o.c_min_bytes = 256 * kKiB;
  o.shrink_shift = 1;  // one pressure step halves c
  o.p_min_shift = 0;
  Make(o);
  // 32 blocks seen twice: MFU holds 2 MiB.
  for (uint64_t b = 0; b < 32; b++) Read(b);
  for (uint64_t b = 0; b < 32; b++) Read(b);
  // A cap of 1 MiB: the evictor moves 1 MiB of MFU to the MFU ghost list.
  arc_->SetMaxBytes(1 * kMiB);
  arc_->RunEvictionPass();
  ArcSizes z = arc_->Sizes();
  ASSERT_EQ(z.c, 1 * kMiB);
  const uint64_t ghost_bytes = z.state_size[static_cast<int>(ArcState::kMfuGhost)][0];
  ASSERT_GE(ghost_bytes, 15 * kBlock);
  ExpectInvariants();

  // Pin all resident buffers but one (whichever the policy kept; Cached()
  // first, since looking a ghost up would turn it into a fill).
  std::vector<ArcHold> pinned;
  bool left_one = false;
  for (uint64_t b = 32; b-- > 0;) {
    if (!arc_->Cached(ArcKey{1, b, 0})) continue;
    LookupResult r = arc_->Lookup(ArcKey{1, b, 0}, {.bytes = kBlock, .holder = HolderKind::kHandleCache});
    ASSERT_TRUE(r.hit()) << "block " << b;
    if (!left_one) {
      left_one = true;  // block 31 stays evictable
      continue;
    }
    pinned.push_back(std::move(r.hold));
  }
  ASSERT_GE(pinned.size(), 10u);
  // Dirty buffers up to the SEVERE line (c + 1.5 ovf, ovf = 64 KiB): the
  // next allocation would pass it.
  std::vector<ArcHold> dirty;
  const ArcSizes before = arc_->Sizes();
  const uint64_t header_bytes = before.hdr_size / before.headers;
  while (arc_->size_bytes() + kBlock + header_bytes <= arc_->target_bytes() + kBlock * 3 / 2) {
    dirty.push_back(arc_->AllocateAnon(kBlock, BufKind::kData, HolderKind::kDirtyRecord));
  }
  const int64_t count_before = Stat("evict_count");
  std::promise<void> allocated;
  std::thread waiter([&] {
    ArcHold h = arc_->AllocateAnon(kBlock, BufKind::kData, HolderKind::kDirtyRecord);
    allocated.set_value();
    dirty.push_back(std::move(h));
  });
  while (Stat("waiters") != 1) std::this_thread::yield();
  // Pressure: c halves, and the ghost lists are trimmed to the new bounds.
  mon_.SetPressure(true, "psi some avg10 55.0% > 10%");
  arc_->Tick();
  EXPECT_EQ(arc_->target_bytes(), 512 * kKiB);
  EXPECT_LT(arc_->Sizes().state_size[static_cast<int>(ArcState::kMfuGhost)][0], ghost_bytes / 2);
  auto f = allocated.get_future();
  EXPECT_EQ(f.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout)
      << "the waiter was released by ghost trimming";
  EXPECT_EQ(Stat("waiters_released_target"), 0);
  EXPECT_LT(Stat("evict_count") - count_before, static_cast<int64_t>(kBlock));
  // The evictor frees the one unpinned buffer (64 KiB of the 128 KiB the
  // waiter waits for), then nothing: the waiter goes at the end.
  arc_->RunEvictionPass();
  arc_->RunEvictionPass();
  EXPECT_EQ(f.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  waiter.join();
  EXPECT_EQ(Stat("waiters_released_target"), 0);
  EXPECT_EQ(Stat("waiters_released_pass_end"), 1);
  EXPECT_GE(Stat("evict_freed_bytes"), static_cast<int64_t>(kBlock));
  // Ghost headers evicted by the evictor credit their own bytes only.
  EXPECT_LT(Stat("evict_freed_hdr_bytes"), static_cast<int64_t>(kBlock));
  pinned.clear();
  dirty.clear();
  ExpectInvariants();
}

// (2) Every buffer held by the handle cache: an allocation at SEVERE waits,
// the evictor frees nothing, the waiter is released, size overshoots c, and
// the stats say who pins the cache.
TEST_F(PathologyTest, FullyPinnedCacheOvershootsAndReleasesWaiters) {
  ArcOptions o;
  o.evictor = EvictorMode::kThread;
  o.c_max_bytes = 2 * kMiB;
  o.c_min_bytes = 1 * kMiB;
  o.stuck_wait_ns = 0;  // nothing will be released: no waiting for it
  Make(o);
  std::vector<ArcHold> pinned;
  for (uint64_t b = 0; b < 32; b++) pinned.push_back(Read(b, HolderKind::kHandleCache));
  auto more = std::async(std::launch::async, [&] {
    std::vector<ArcHold> dirty;
    for (int i = 0; i < 16; i++) {
      dirty.push_back(arc_->AllocateAnon(kBlock, BufKind::kData, HolderKind::kDirtyRecord));
    }
    return dirty;
  });
  ASSERT_EQ(more.wait_for(std::chrono::seconds(30)), std::future_status::ready) << "deadlocked";
  std::vector<ArcHold> dirty = more.get();
  arc_->WaitEvictorIdle();
  ArcSizes z = arc_->Sizes();
  EXPECT_GT(z.size, z.c + 8 * kBlock);  // the overshoot is visible
  EXPECT_GE(Stat("evict_waits"), 1);
  EXPECT_GE(Stat("evict_passes_no_progress"), 1);
  EXPECT_GE(Stat("waiters_released_pass_end"), 1);
  EXPECT_GE(Stat("reserve_forced"), 1);
  EXPECT_EQ(Stat("waiters"), 0);
  EXPECT_EQ(Stat("held_bytes_handle_cache"), static_cast<int64_t>(32 * kBlock));
  EXPECT_EQ(Stat("held_bytes_dirty_record"), static_cast<int64_t>(16 * kBlock));
  EXPECT_EQ(Stat("mru_evictable_data"), 0);
  // Pressure now cannot shrink anything: c stays, and the record says why.
  mon_.SetPressure(true, "psi some avg10 40.0% > 10%");
  const uint64_t c = arc_->target_bytes();
  arc_->RunEvictionPass();  // nothing to free: marks the stall
  arc_->Tick();
  EXPECT_EQ(arc_->target_bytes(), c);
  auto h = arc_->TargetHistory();
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back().cause, TargetCause::kShrinkStopped);
  EXPECT_NE(h.back().reason.find("held by handle_cache"), std::string::npos) << h.back().reason;
  EXPECT_EQ(Stat("c_changes_shrink_stopped"), 1);
  pinned.clear();
  dirty.clear();
  arc_->RunEvictionPass();
  EXPECT_LE(arc_->size_bytes(), arc_->target_bytes());
  ExpectInvariants();
  arc_.reset();
}

// (3) Ten ticks of pressure: c falls step by step, each step at most
// min(c, size) / 32 and recorded with the monitor's reason, never straight to
// c_min. Then no pressure: no growth during the 5 s holdoff, growth after.
TEST_F(PathologyTest, PressureBurstShrinksInBoundedStepsThenCGrowsBack) {
  const ArcOptions o = MakeInline(64 * kMiB, 8 * kMiB);
  for (uint64_t b = 0; b < 1024; b++) Read(b);  // 64 MiB of reads: the cache is full
  const uint64_t c0 = arc_->target_bytes();
  ASSERT_EQ(c0, 64 * kMiB);
  mon_.SetPressure(true, "psi some avg10 40.0% > 10%");
  uint64_t c = c0;
  for (int i = 0; i < 10; i++) {
    arc_->Tick();
    const uint64_t now_c = arc_->target_bytes();
    const uint64_t base = std::min(c, arc_->size_bytes());
    EXPECT_LT(now_c, c) << "tick " << i;
    EXPECT_GE(now_c + (std::max(c, base) >> 5) + 2 * kBlock, std::min(c, base)) << "step too big at tick " << i;
    EXPECT_GT(now_c, o.c_min_bytes);
    c = now_c;
    arc_->RunEvictionPass();
    clock_.AdvanceNs(kNsPerSec);
  }
  auto history = arc_->TargetHistory();
  int pressure_records = 0;
  for (const TargetChange& ch : history) {
    if (ch.cause != TargetCause::kPressure) continue;
    pressure_records++;
    EXPECT_EQ(ch.reason, "psi some avg10 40.0% > 10%");
    EXPECT_LT(ch.to_bytes, ch.from_bytes);
  }
  EXPECT_EQ(pressure_records, 10);
  EXPECT_EQ(Stat("c_changes_pressure"), 10);
  EXPECT_EQ(Stat("c_change_bytes_pressure"), static_cast<int64_t>(c0 - c));
  ExpectInvariants();
  // Pressure ends. Within the holdoff, reads near c do not grow it.
  mon_.SetPressure(false);
  arc_->Tick();
  clock_.AdvanceNs(3 * kNsPerSec);  // 4 s after the last pressure
  for (uint64_t b = 2000; b < 2100; b++) Read(b);
  EXPECT_EQ(arc_->target_bytes(), c) << "grew during the holdoff";
  // After it, they do: c climbs back with the reads.
  clock_.AdvanceNs(2 * kNsPerSec);
  for (uint64_t b = 3000; b < 3000 + 1024; b++) Read(b);
  EXPECT_GT(arc_->target_bytes(), c);
  EXPECT_EQ(arc_->target_bytes(), c0);
  EXPECT_GT(Stat("c_changes_grow"), 0);
  history = arc_->TargetHistory();
  ASSERT_FALSE(history.empty());
  EXPECT_EQ(history.back().cause, TargetCause::kGrow);
  EXPECT_EQ(history.back().to_bytes, c0);
  ExpectInvariants();
}

// A test double of the volume layer's handle cache: an LRU of holds of kind
// "handle cache", its target 1/32 of the LIVE c, shrunk when c shrinks.
class HandleCacheDouble {
 public:
  explicit HandleCacheDouble(Arc* arc)
      : target_(arc->target_bytes() / 32),
        sub_(arc->SubscribeTarget([this](uint64_t c) {
          std::lock_guard<std::mutex> l(mu_);
          target_ = c / 32;
          TrimLocked();
        })) {}
  void Add(ArcHold h) {
    std::lock_guard<std::mutex> l(mu_);
    bytes_ += h.bytes();
    lru_.push_back(std::move(h));
    TrimLocked();
  }
  uint64_t bytes() {
    std::lock_guard<std::mutex> l(mu_);
    return bytes_;
  }
  uint64_t target() {
    std::lock_guard<std::mutex> l(mu_);
    return target_;
  }

 private:
  void TrimLocked() {
    while (bytes_ > target_ && !lru_.empty()) {
      bytes_ -= lru_.front().bytes();
      lru_.pop_front();  // releases the hold: the ARC may evict it now
    }
  }
  std::mutex mu_;
  uint64_t target_;
  uint64_t bytes_ = 0;
  std::deque<ArcHold> lru_;
  Arc::Subscription sub_;
};

// (4) The handle cache fills to c/32; pressure halves c; the handle cache
// follows, and the ARC's held bytes by "handle_cache" with it.
TEST_F(PathologyTest, HandleCacheSizedFromCShrinksWithC) {
  ArcOptions o;
  o.evictor = EvictorMode::kInline;
  o.c_max_bytes = 256 * kMiB;
  o.c_min_bytes = 16 * kMiB;
  o.shrink_shift = 2;  // quarter steps
  Make(o);
  HandleCacheDouble handles(arc_.get());
  EXPECT_EQ(handles.target(), 8 * kMiB);
  for (uint64_t b = 0; b < 4096; b++) handles.Add(Read(b, HolderKind::kHandleCache));
  EXPECT_LE(handles.bytes(), 8 * kMiB);
  EXPECT_GE(handles.bytes(), 8 * kMiB - kBlock);
  EXPECT_EQ(static_cast<uint64_t>(Stat("held_bytes_handle_cache")), handles.bytes());
  mon_.SetPressure(true, "available 100 MiB < 5% of limit", -1, /*shortage=*/true);
  for (int i = 0; i < 6; i++) {
    arc_->Tick();
    arc_->RunEvictionPass();
    EXPECT_LE(handles.bytes(), arc_->target_bytes() / 32) << "tick " << i;
    EXPECT_EQ(static_cast<uint64_t>(Stat("held_bytes_handle_cache")), handles.bytes());
  }
  EXPECT_LT(arc_->target_bytes(), 128 * kMiB);
  EXPECT_LT(handles.bytes(), 4 * kMiB);
  ExpectInvariants();
}

// (5) A fresh ARC holds 4 MiB of a 256 MiB c. Stalls alone, memory still
// available: each tick takes one step of c / 32 from c, and the reads that
// follow are cached. A shortage at the same point takes c down to what the
// ARC holds (less a step), as it must: c above size would let the ARC grow
// into memory that is not there.
TEST_F(PathologyTest, StallsWithMemoryAvailableCostAStepOfCNotTheCache) {
  MakeInline(256 * kMiB, 8 * kMiB);
  for (uint64_t b = 0; b < 64; b++) Read(b);
  const uint64_t c0 = arc_->target_bytes();
  ASSERT_EQ(c0, 256 * kMiB);
  ASSERT_EQ(arc_->size_bytes() / kMiB, 4u);
  mon_.SetPressure(true, "psi some avg10 40.0% > 10%", 40.0);
  uint64_t c = c0;
  for (int i = 0; i < 3; i++) {
    arc_->Tick();
    EXPECT_EQ(arc_->target_bytes(), c - (c >> 5)) << "tick " << i;
    c = arc_->target_bytes();
    clock_.AdvanceNs(kNsPerSec);
  }
  auto history = arc_->TargetHistory();
  ASSERT_FALSE(history.empty());
  EXPECT_EQ(history.back().cause, TargetCause::kPressure);
  EXPECT_EQ(history.back().reason, "psi some avg10 40.0% > 10%");
  // The stalls end: 64 MiB more of reads stay cached (c is far above them).
  mon_.SetPressure(false);
  arc_->Tick();
  for (uint64_t b = 64; b < 64 + 1024; b++) Read(b);
  EXPECT_EQ(arc_->size_bytes() / kMiB, 68u);
  EXPECT_EQ(Stat("evict_count"), 0);
  // A shortage now: c falls to what the ARC holds, less a step.
  const uint64_t size = arc_->size_bytes();
  mon_.SetPressure(true, "available 100 MiB < 5% of limit", -1, /*shortage=*/true);
  arc_->Tick();
  EXPECT_EQ(arc_->target_bytes(), size - (size >> 5));
  EXPECT_EQ(Stat("c_changes_pressure"), 4);
  ExpectInvariants();
}

}  // namespace
}  // namespace arcstore::arc
