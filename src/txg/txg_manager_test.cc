#include "txg/txg_manager.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <future>
#include <mutex>
#include <thread>

#include "base/thread_name.h"
#include "testing/manual_clock.h"
#include "testing/wait_until.h"

namespace arcstore::txg {
namespace {

using arcstore::testing::ManualClock;

TxgOptions Opts(uint64_t dirty_max = 100 * kMiB) {
  TxgOptions o;
  o.dirty_max_bytes = dirty_max;
  return o;
}

// Records the txgs synced, in order, and checks two syncs never overlap.
struct SyncLog {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<uint64_t> synced;
  std::atomic<int> running{0};
  TxgManager* mgr = nullptr;
  std::function<void(uint64_t)> during;  // runs inside the sync

  TxgManager::SyncFn Fn() {
    return [this](uint64_t txg) {
      EXPECT_EQ(running.fetch_add(1), 0) << "two syncs at once";
      if (during) during(txg);
      running.fetch_sub(1);
      std::lock_guard<std::mutex> l(mu);
      synced.push_back(txg);
      cv.notify_all();
      return Status::Ok();
    };
  }
  // The sync of `txg` says it has started (`entered`) and waits for
  // `release` before it goes on.
  void HoldSyncOf(uint64_t txg, std::promise<void>* entered, std::promise<void>* release) {
    std::shared_future<void> go = release->get_future().share();
    during = [txg, entered, go](uint64_t t) {
      if (t != txg) return;
      entered->set_value();
      go.wait();
    };
  }
  void WaitFor(size_t n) {
    std::unique_lock<std::mutex> l(mu);
    ASSERT_TRUE(cv.wait_for(l, std::chrono::seconds(30), [&] { return synced.size() >= n; }));
  }
};

TxgRecord Row(TxgManager& m, uint64_t txg) {
  for (const TxgRecord& r : m.History()) {
    if (r.txg == txg) return r;
  }
  ADD_FAILURE() << "no history for txg " << txg;
  return {};
}

TEST(TxgManagerTest, ExplicitWaitSyncsAndRecordsWhy) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  TxgManager m(Opts(), &clock, &reg, log.Fn(), 5);
  m.Start();
  uint64_t txg;
  {
    Result<TxgHold> h = m.Assign(4096);
    ASSERT_TRUE(h.ok());
    txg = h->txg();
    EXPECT_EQ(txg, 5u);
  }
  ASSERT_TRUE(m.WaitSynced(txg, SyncReason::kExplicitWait).ok());
  EXPECT_EQ(m.last_committed_txg(), 5u);
  EXPECT_EQ(m.open_txg(), 6u);
  EXPECT_EQ(m.unsynced_dirty_bytes(), 0u);
  TxgRecord r = Row(m, 5);
  EXPECT_EQ(r.reason, SyncReason::kExplicitWait);
  EXPECT_EQ(r.state, TxgState::kCommitted);
  EXPECT_EQ(r.ndirty_bytes, 4096u);
  // Waiting on an empty open txg returns at once: nothing to commit.
  ASSERT_TRUE(m.WaitSynced(6, SyncReason::kExplicitWait).ok());
  EXPECT_EQ(log.synced.size(), 1u);
  ASSERT_TRUE(m.Stop().ok());
}

// A writer that expects to reuse an older txg's copy charges 0 dirty bytes
// but still changes the txg it holds (and logs the change with it). A wait
// for that txg, as the intent log's txg-sync fallback does, must commit it:
// it once returned at once ("nothing dirty"), acknowledging a flush whose
// change no txg and no log block held (kill stress, 1 run in 3).
TEST(TxgManagerTest, ATxgHeldWithNoDirtyBytesIsStillSynced) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  TxgManager m(Opts(), &clock, &reg, log.Fn(), 7);
  m.Start();
  uint64_t txg;
  {
    Result<TxgHold> h = m.Assign(0);
    ASSERT_TRUE(h.ok());
    txg = h->txg();
  }
  ASSERT_TRUE(m.WaitSynced(txg, SyncReason::kExplicitWait).ok());
  EXPECT_EQ(m.last_committed_txg(), txg);
  ASSERT_EQ(log.synced.size(), 1u);
  EXPECT_EQ(log.synced[0], txg);
  // Left alone, such a txg goes at the timeout like any other.
  {
    Result<TxgHold> h = m.Assign(0);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->txg(), txg + 1);
  }
  clock.AdvanceNs(Opts().timeout_ns);
  log.WaitFor(2);
  EXPECT_EQ(Row(m, txg + 1).reason, SyncReason::kTimeout);
  ASSERT_TRUE(m.Stop().ok());
}

TEST(TxgManagerTest, TimeoutSyncsOnTheInjectedClock) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  TxgManager m(Opts(), &clock, &reg, log.Fn(), 1);
  m.Start();
  { ASSERT_TRUE(m.Assign(100).ok()); }
  clock.AdvanceNs(4 * kNsPerSec);
  EXPECT_EQ(m.last_committed_txg(), 0u);
  clock.AdvanceNs(1 * kNsPerSec);
  log.WaitFor(1);
  EXPECT_EQ(Row(m, 1).reason, SyncReason::kTimeout);
  EXPECT_EQ(Row(m, 1).otime_ns, 5 * kNsPerSec);
  ASSERT_TRUE(m.Stop().ok());
}

// With deferred work (the pool's pending frees) an open txg nobody was
// assigned to syncs at its timeout; once the work is done, it does not.
TEST(TxgManagerTest, DeferredWorkSyncsAnUnassignedTxgAtItsTimeout) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  std::atomic<bool> frees{true};
  TxgOptions o = Opts();
  o.has_deferred_work = [&frees] { return frees.load(); };
  TxgManager m(o, &clock, &reg, log.Fn(), 1);
  m.Start();
  clock.AdvanceNs(5 * kNsPerSec);
  log.WaitFor(1);
  EXPECT_EQ(Row(m, 1).reason, SyncReason::kTimeout);
  frees = false;
  // A writer's txg still goes at its timeout, and is the next one synced:
  // no unassigned txg went in between.
  const uint64_t next = m.open_txg();
  { ASSERT_TRUE(m.Assign(100).ok()); }
  clock.AdvanceNs(5 * kNsPerSec);
  log.WaitFor(2);
  {
    std::lock_guard<std::mutex> l(log.mu);
    EXPECT_EQ(log.synced[1], next);
  }
  ASSERT_TRUE(m.Stop().ok());
}

TEST(TxgManagerTest, DirtyThresholdKicksAndAKickDuringASyncMarksTheNextTxg) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  std::promise<void> in_sync1, release_sync1;
  log.HoldSyncOf(1, &in_sync1, &release_sync1);
  TxgManager m(Opts(100 * kMiB), &clock, &reg, log.Fn(), 1);
  m.Start();
  { ASSERT_TRUE(m.AssignNoThrottle(31 * kMiB).ok()); }  // > 30% of dirty_max
  in_sync1.get_future().wait();
  EXPECT_EQ(Row(m, 1).reason, SyncReason::kDirtyThreshold);
  {
    Result<TxgHold> h = m.AssignNoThrottle(31 * kMiB);  // kicks while txg 1 syncs
    ASSERT_EQ(h->txg(), 2u);
  }
  EXPECT_EQ(Row(m, 2).state, TxgState::kOpen) << "the kick only marks txg 2 to go next";
  release_sync1.set_value();
  log.WaitFor(2);
  EXPECT_EQ(log.synced, (std::vector<uint64_t>{1, 2}));
  EXPECT_EQ(Row(m, 2).reason, SyncReason::kDirtyThreshold);
  ASSERT_TRUE(m.Stop().ok());
  EXPECT_EQ(reg.TakeSnapshot().Get("txg", "syncs_dirty_threshold"), 2);
}

// A writer waiting for space waits for the txg syncing now, not for the
// open one, which is asked to go next; with nothing in flight, the open
// txg is synced even when empty (to age deferred frees).
TEST(TxgManagerTest, WaitNextCommitWaitsForTheSyncingTxgAndMarksTheOpenOne) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  std::promise<void> in_sync1, release_sync1;
  log.HoldSyncOf(1, &in_sync1, &release_sync1);
  TxgManager m(Opts(), &clock, &reg, log.Fn(), 1);
  m.Start();
  { ASSERT_TRUE(m.Assign(4096).ok()); }
  m.RequestSync(1, SyncReason::kExplicitWait);
  in_sync1.get_future().wait();
  { ASSERT_EQ(m.Assign(4096)->txg(), 2u); }
  std::future<Status> waited =
      std::async(std::launch::async, [&] { return m.WaitNextCommit(SyncReason::kSpace); });
  EXPECT_EQ(waited.wait_for(std::chrono::seconds(0)), std::future_status::timeout)
      << "txg 1 cannot commit before its sync returns";
  release_sync1.set_value();
  ASSERT_TRUE(waited.get().ok());
  EXPECT_GE(m.last_committed_txg(), 1u);
  log.WaitFor(2);
  EXPECT_EQ(Row(m, 2).reason, SyncReason::kSpace) << "the open txg went next, for space";
  // Txg 2's sync function has run; its commit follows on the sync thread.
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return m.last_committed_txg() >= 2; }));
  // Nothing in flight, nothing dirty: the open txg is synced anyway.
  ASSERT_TRUE(m.WaitNextCommit(SyncReason::kSpace).ok());
  EXPECT_EQ(m.last_committed_txg(), 3u);
  EXPECT_EQ(Row(m, 3).reason, SyncReason::kSpace);
  ASSERT_TRUE(m.Stop().ok());
  EXPECT_EQ(reg.TakeSnapshot().Get("txg", "syncs_space"), 2);
}

TEST(TxgManagerTest, QuiescingDoesNotStopWriters) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  TxgManager m(Opts(), &clock, &reg, log.Fn(), 1);
  m.Start();
  Result<TxgHold> slow = m.Assign(10);  // a writer still inside txg 1
  ASSERT_TRUE(slow.ok());
  m.RequestSync(1, SyncReason::kExplicitWait);
  // Txg 1 cannot finish quiescing, but txg 2 opens at once.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (m.open_txg() != 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  ASSERT_EQ(m.open_txg(), 2u);
  {
    Result<TxgHold> h = m.Assign(10);
    ASSERT_TRUE(h.ok());
    EXPECT_EQ(h->txg(), 2u);
  }
  EXPECT_EQ(m.last_committed_txg(), 0u);
  slow->Release();
  ASSERT_TRUE(m.WaitSynced(1, SyncReason::kExplicitWait).ok());
  ASSERT_TRUE(m.Stop().ok());
  EXPECT_EQ(Row(m, 2).reason, SyncReason::kShutdown);
}

TEST(TxgManagerTest, DelayCurveFollowsTheFormula) {
  ManualClock clock;
  stats::Registry reg;
  TxgManager m(Opts(1000 * kMiB), &clock, &reg, [](uint64_t) { return Status::Ok(); }, 1);
  EXPECT_EQ(m.DelayNsAt(599 * kMiB), 0u);
  EXPECT_EQ(m.DelayNsAt(600 * kMiB), 0u);
  // The midpoint between 60% and 100% costs exactly the scale.
  EXPECT_EQ(m.DelayNsAt(800 * kMiB), 500 * kNsPerUs);
  EXPECT_EQ(m.DelayNsAt(700 * kMiB), 500 * kNsPerUs * 100 / 300);
  EXPECT_EQ(m.DelayNsAt(999 * kMiB), 100 * kNsPerMs);  // capped
  EXPECT_EQ(m.DelayNsAt(2000 * kMiB), 100 * kNsPerMs);
}

// Writers admitted per simulated second equal 1/delay whatever their count.
TEST(TxgManagerTest, AdmissionRateIsIndependentOfWriterCount) {
  // The delays chain through one shared wakeup time, so N admissions take
  // N delays of the clock however many writers share them. (Counting the
  // admissions that end before a deadline instead races with the other
  // writers moving the auto-advancing clock past it.)
  constexpr uint64_t kAdmissions = 240;
  for (int writers : {1, 4, 16}) {
    for (uint64_t level_mib : {700u, 800u, 900u}) {
      ManualClock clock(1'000'000'000, /*auto_advance=*/true);
      stats::Registry reg;
      TxgManager m(Opts(1000 * kMiB), &clock, &reg, [](uint64_t) { return Status::Ok(); }, 1);
      { ASSERT_TRUE(m.AssignNoThrottle(level_mib * kMiB).ok()); }  // fixed dirty level
      const uint64_t delay = m.DelayNsAt(level_mib * kMiB);
      ASSERT_GT(delay, 0u);
      ASSERT_LT(writers * delay, Opts(1000 * kMiB).delay_max_ns);  // the clamp never binds
      const uint64_t start = clock.NowNs();
      std::vector<std::thread> threads;
      for (int w = 0; w < writers; w++) {
        threads.emplace_back([&, w] {
          for (uint64_t i = w; i < kAdmissions; i += writers) {
            Result<TxgHold> h = m.Assign(0);
            ASSERT_TRUE(h.ok());
          }
        });
      }
      for (auto& t : threads) t.join();
      EXPECT_EQ(clock.NowNs() - start, kAdmissions * delay)
          << writers << " writers at " << level_mib << " MiB, delay " << delay << " ns";
    }
  }
}

TEST(TxgManagerTest, BacklogIsClampedToTheCap) {
  ManualClock clock;  // frozen: sleepers wait for the test to move time
  stats::Registry reg;
  TxgOptions o = Opts(1000 * kMiB);
  TxgManager m(o, &clock, &reg, [](uint64_t) { return Status::Ok(); }, 1);
  { ASSERT_TRUE(m.AssignNoThrottle(995 * kMiB).ok()); }
  const uint64_t delay = m.DelayNsAt(995 * kMiB);
  ASSERT_GT(delay, o.delay_max_ns / 4);  // 16 chained delays would exceed the cap
  const int writers = 16;
  std::atomic<int> done{0};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; w++) {
    threads.emplace_back([&] {
      ASSERT_TRUE(m.Assign(0).ok());
      done++;
    });
  }
  while (clock.sleeps() < static_cast<uint64_t>(writers)) std::this_thread::yield();
  clock.AdvanceNs(o.delay_max_ns);  // everyone's wakeup is at most now + cap
  for (auto& t : threads) t.join();
  EXPECT_EQ(done.load(), writers);
}

TEST(TxgManagerTest, WritersBlockAtDirtyMaxUntilTheSyncCleans) {
  ManualClock clock;
  stats::Registry reg;
  TxgManager m(Opts(100 * kMiB), &clock, &reg, [](uint64_t) { return Status::Ok(); }, 1);
  { ASSERT_TRUE(m.AssignNoThrottle(100 * kMiB).ok()); }
  std::atomic<bool> admitted{false};
  std::thread writer([&] {
    ASSERT_TRUE(m.AssignNoThrottle(0).ok());  // unthrottled still goes
    Result<TxgHold> h = m.Assign(kMiB);
    admitted = true;
  });
  // The writer cannot get in until the sync cleans something. (It may be
  // delayed too, at 100%: move time so the delay passes.)
  while (reg.TakeSnapshot().Get("txg", "blocked_writes") == 0) std::this_thread::yield();
  EXPECT_FALSE(admitted.load());
  m.Undirty(1, 10 * kMiB);
  while (clock.sleeps() == 0) std::this_thread::yield();
  clock.AdvanceNs(100 * kNsPerMs);
  writer.join();
  EXPECT_TRUE(admitted.load());
}

// With the ARC's dirty limit below dirty_max, the curve and the async-write
// ramp measure dirty data against the ARC's limit.
TEST(TxgManagerTest, DelayCurveFollowsTheArcLimitBelowDirtyMax) {
  ManualClock clock;
  stats::Registry reg;
  TxgOptions o = Opts(1000 * kMiB);
  static std::atomic<uint64_t> limit{100 * kMiB};
  o.arc_dirty_limit_bytes = [] { return limit.load(); };
  TxgManager m(o, &clock, &reg, [](uint64_t) { return Status::Ok(); }, 1);
  EXPECT_EQ(m.EffectiveDirtyMax(), 100 * kMiB);
  EXPECT_EQ(m.DelayNsAt(60 * kMiB), 0u);
  EXPECT_EQ(m.DelayNsAt(80 * kMiB), 500 * kNsPerUs);
  EXPECT_EQ(m.DelayNsAt(100 * kMiB), 100 * kNsPerMs);
  limit = 2000 * kMiB;  // above dirty_max: dirty_max rules
  EXPECT_EQ(m.EffectiveDirtyMax(), 1000 * kMiB);
  EXPECT_EQ(m.DelayNsAt(80 * kMiB), 0u);
  EXPECT_EQ(m.DelayNsAt(800 * kMiB), 500 * kNsPerUs);
  limit = 100 * kMiB;
  { ASSERT_TRUE(m.AssignNoThrottle(45 * kMiB).ok()); }  // 45% of the ARC limit
  EXPECT_DOUBLE_EQ(m.AsyncWriteFraction(), 0.5);
}

TEST(TxgManagerTest, ArcDirtyLimitCapsUnsyncedBytes) {
  ManualClock clock;
  stats::Registry reg;
  TxgOptions o = Opts(1000 * kMiB);
  o.delay_min_percent = 99;  // the curve out of the way: this is about the wait at the limit
  static constexpr uint64_t limit = 10 * kMiB;
  o.arc_dirty_limit_bytes = [] { return limit; };
  std::atomic<int> throttled{0};
  o.on_memory_throttle = [&throttled] { throttled++; };
  TxgManager* mp = nullptr;
  SyncLog log;
  log.during = [&](uint64_t txg) {
    clock.AdvanceNs(kNsPerMs);  // each sync takes 1 ms, which waiting writers see
    mp->Undirty(txg, UINT64_MAX);
  };
  TxgManager m(o, &clock, &reg, log.Fn(), 1);
  mp = &m;
  m.Start();
  for (int i = 0; i < 100; i++) {
    Result<TxgHold> h = m.Assign(kMiB);
    ASSERT_TRUE(h.ok());
    EXPECT_LE(m.unsynced_dirty_bytes(), limit);
  }
  ASSERT_TRUE(m.Stop().ok());
  EXPECT_GE(reg.TakeSnapshot().Get("txg", "memory_throttle_count"), 1);
  EXPECT_EQ(throttled.load(), reg.TakeSnapshot().Get("txg", "memory_throttle_count"));
  uint64_t history_wait_ns = 0;
  for (const TxgRecord& r : m.History()) history_wait_ns += r.arc_limit_wait_ns;
  EXPECT_GT(history_wait_ns, 0u);
  EXPECT_EQ(reg.TakeSnapshot().Get("txg", "arc_limit_wait_ns"),
            static_cast<int64_t>(history_wait_ns));
  EXPECT_EQ(Row(m, 1).reason, SyncReason::kArcDirtyLimit);
}

// With the ARC's limit below dirty_max, the kick compares with it: the open
// txg goes once its own dirty bytes pass 30% of the ARC limit, recorded as
// arc_dirty_limit, before any writer has to wait at the limit.
TEST(TxgManagerTest, ArcDirtyLimitBelowDirtyMaxKicksEarly) {
  ManualClock clock;
  stats::Registry reg;
  TxgOptions o = Opts(1000 * kMiB);
  static constexpr uint64_t limit = 10 * kMiB;
  o.arc_dirty_limit_bytes = [] { return limit; };
  TxgManager* mp = nullptr;
  SyncLog log;
  log.during = [&](uint64_t txg) { mp->Undirty(txg, UINT64_MAX); };
  TxgManager m(o, &clock, &reg, log.Fn(), 1);
  mp = &m;
  m.Start();
  { ASSERT_TRUE(m.Assign(3 * kMiB - 64 * kKiB).ok()); }  // under 30% of the limit
  EXPECT_EQ(m.open_txg(), 1u);
  { ASSERT_TRUE(m.Assign(64 * kKiB).ok()); }  // past it
  // The wait names its own reason only when nothing had requested the sync.
  ASSERT_TRUE(m.WaitSynced(1, SyncReason::kExplicitWait).ok());
  EXPECT_EQ(Row(m, 1).reason, SyncReason::kArcDirtyLimit);
  EXPECT_EQ(reg.TakeSnapshot().Get("txg", "memory_throttle_count"), 0);
  ASSERT_TRUE(m.Stop().ok());
  // Without an ARC limit below dirty_max the same bytes stay in the open
  // txg (the kick is 30% of dirty_max).
  stats::Registry reg2;
  TxgManager plain(Opts(1000 * kMiB), &clock, &reg2, [](uint64_t) { return Status::Ok(); }, 1);
  plain.Start();
  { ASSERT_TRUE(plain.Assign(3 * kMiB + 1).ok()); }
  EXPECT_EQ(reg2.TakeSnapshot().Get("txg", "syncs_dirty_threshold"), 0);
  EXPECT_EQ(plain.open_txg(), 1u);
  ASSERT_TRUE(plain.Stop().ok());
}

TEST(TxgManagerTest, FailedSyncFailsEveryone) {
  ManualClock clock;
  stats::Registry reg;
  TxgManager m(Opts(), &clock, &reg, [](uint64_t) { return Status::IOError("device gone"); }, 1);
  m.Start();
  { ASSERT_TRUE(m.Assign(1).ok()); }
  Status s = m.WaitSynced(1, SyncReason::kExplicitWait);
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("txg 1 failed to sync"), std::string::npos) << s.ToString();
  EXPECT_EQ(m.Assign(1).status().code(), StatusCode::kIOError);
  EXPECT_EQ(Row(m, 1).state, TxgState::kFailed);
}

TEST(TxgManagerTest, OptionsNameTheBadOne) {
  TxgOptions o;
  o.delay_min_percent = 100;
  EXPECT_NE(o.Validate().message().find("delay_min_percent"), std::string::npos);
  o = TxgOptions();
  o.async_write_min_percent = 70;
  EXPECT_NE(o.Validate().message().find("async_write_min_percent"), std::string::npos);
  o = TxgOptions();
  o.dirty_max_bytes = 10;
  EXPECT_NE(o.Validate().message().find("dirty_max_bytes"), std::string::npos);
  EXPECT_TRUE(TxgOptions().Validate().ok());
}

// AssignWouldWait() tells ahead of Assign() whether the throttle would make
// it wait: below delay_min_percent no; from there (delay) and at dirty_max
// (block) yes; a failed manager fails at once. The ARC's limit: below.
TEST(TxgManagerTest, AssignWouldWaitFollowsTheThrottle) {
  ManualClock clock(1'000'000'000, /*auto_advance=*/true);
  stats::Registry reg;
  SyncLog log;
  TxgOptions o = Opts(1 * kMiB);
  TxgManager m(o, &clock, &reg, log.Fn(), 1);  // not started: nothing syncs
  // 60% of 1 MiB is 629,145.6 bytes: 153 writes of 4 KiB stay below it.
  for (int i = 0; i < 153; i++) {
    ASSERT_FALSE(m.AssignWouldWait(4096)) << "write " << i;
    ASSERT_TRUE(m.Assign(4096).ok());
  }
  EXPECT_EQ(clock.sleeps(), 0u);
  EXPECT_FALSE(m.AssignWouldWait(4096));
  ASSERT_TRUE(m.Assign(4096).ok());  // 154 x 4 KiB: past the line
  EXPECT_TRUE(m.AssignWouldWait(4096));
  ASSERT_TRUE(m.Assign(4096).ok());
  EXPECT_EQ(clock.sleeps(), 1u) << "the throttle delayed the write the hint said would wait";
  // A request that would pass dirty_max is blocked.
  EXPECT_TRUE(m.AssignWouldWait(1 * kMiB));
  m.Fail(Status::IOError("device gone"));
  EXPECT_FALSE(m.AssignWouldWait(4096)) << "a failed manager answers at once";
  EXPECT_FALSE(m.Assign(4096).ok());
}

TEST(TxgManagerTest, AssignWouldWaitAtTheArcDirtyLimit) {
  ManualClock clock(1'000'000'000, /*auto_advance=*/true);
  stats::Registry reg;
  SyncLog log;
  TxgOptions o = Opts(100 * kMiB);
  o.arc_dirty_limit_bytes = [] { return 64 * kKiB; };
  TxgManager m(o, &clock, &reg, log.Fn(), 1);
  EXPECT_FALSE(m.AssignWouldWait(1 * kMiB)) << "nothing unsynced: even a large write goes";
  ASSERT_TRUE(m.Assign(30 * kKiB).ok());
  EXPECT_FALSE(m.AssignWouldWait(4 * kKiB));
  EXPECT_TRUE(m.AssignWouldWait(40 * kKiB)) << "30 + 40 KiB passes the ARC's 64 KiB";
  ASSERT_TRUE(m.Assign(10 * kKiB).ok());
  EXPECT_TRUE(m.AssignWouldWait(1)) << "40 KiB: past 60% of the ARC's limit, the delay";
}

// The sync thread of an idle pool sleeps: an open txg past its timeout
// with nothing in it once made the loop wait 1 ns at a time, a spinning
// thread (24% of a core in `arcstore serve` after 5 s idle). The thread
// reads the clock twice per wakeup, so 100 ms of real time at one wakeup
// per 10 ms reads it about 20 times; spinning, thousands.
TEST(TxgManagerTest, AnIdleSyncThreadDoesNotSpinPastTheTimeout) {
  class CountingClock final : public Clock {
   public:
    uint64_t NowNs() override {
      reads++;
      return inner.NowNs();
    }
    void SleepUntilNs(uint64_t deadline_ns) override { inner.SleepUntilNs(deadline_ns); }
    ManualClock inner;
    std::atomic<uint64_t> reads{0};
  } clock;
  stats::Registry reg;
  SyncLog log;
  TxgManager m(Opts(), &clock, &reg, log.Fn(), 1);
  m.Start();
  clock.inner.AdvanceNs(60 * kNsPerSec);  // the open txg is long past its 5 s
  const uint64_t before = clock.reads.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the interval measured
  const uint64_t reads = clock.reads.load() - before;
  EXPECT_LT(reads, 200u) << "the sync thread woke " << reads / 2 << " times in 100 ms";
  EXPECT_TRUE(log.synced.empty()) << "nothing to sync";
  ASSERT_TRUE(m.Stop().ok());
}

// On the real clock the sync thread of an idle manager sleeps with no
// deadline (no wake-ups); a writer's first hold wakes it, and its txg is
// synced by the timeout with nobody asking.
TEST(TxgManagerTest, OnTheRealClockAnIdleSyncThreadSleepsUntilAWriterComes) {
  stats::Registry reg;
  SyncLog log;
  TxgOptions o = Opts();
  o.timeout_ns = 20 * kNsPerMs;
  TxgManager m(o, DefaultClock(), &reg, log.Fn(), 1);
  auto gauge = [&](const char* name) { return reg.TakeSnapshot().Get("txg", name); };
  m.Start();
  while (gauge("sync_thread_idle") != 1) std::this_thread::yield();
  EXPECT_EQ(gauge("sync_thread_wakeups"), 0);
  ASSERT_TRUE(m.Assign(0).ok());  // a writer's hold, taken and let go of
  {
    std::unique_lock<std::mutex> l(log.mu);
    ASSERT_TRUE(log.cv.wait_for(l, std::chrono::seconds(30), [&] { return !log.synced.empty(); }))
        << "the written txg was never synced";
  }
  ASSERT_TRUE(m.Stop().ok());
  EXPECT_EQ(log.synced, std::vector<uint64_t>{1});
  EXPECT_EQ(reg.TakeSnapshot().Get("txg", "syncs_timeout"), 1);
}

}  // namespace
}  // namespace arcstore::txg

namespace arcstore::txg {
namespace {

// The sync runs on a thread named txg_sync at the nice value asked for;
// the threads that assign txgs keep theirs.
TEST(TxgManagerTest, TheSyncThreadRunsNamedAtItsNiceValue) {
  ManualClock clock;
  stats::Registry reg;
  SyncLog log;
  TxgOptions o = Opts();
  const int caller_nice = ThisThreadNice();
  o.sync_thread_nice = std::min(caller_nice + 7, 19);
  int nice_in_sync = -1;
  std::string name_in_sync;
  log.during = [&](uint64_t) {
    nice_in_sync = ThisThreadNice();
    char name[16] = {};
    pthread_getname_np(pthread_self(), name, sizeof(name));
    name_in_sync = name;
  };
  TxgManager m(o, &clock, &reg, log.Fn(), 1);
  m.Start();
  uint64_t txg;
  {
    Result<TxgHold> h = m.Assign(4096);
    ASSERT_TRUE(h.ok());
    txg = h->txg();
  }
  ASSERT_TRUE(m.WaitSynced(txg, SyncReason::kExplicitWait).ok());
  EXPECT_EQ(nice_in_sync, o.sync_thread_nice);
  EXPECT_EQ(name_in_sync, "txg_sync");
  EXPECT_EQ(reg.TakeSnapshot().Get("txg", "sync_thread_nice"), o.sync_thread_nice);
  EXPECT_EQ(ThisThreadNice(), caller_nice);
  ASSERT_TRUE(m.Stop().ok());
  o.sync_thread_nice = 20;
  EXPECT_NE(o.Validate().message().find("sync_thread_nice 20"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::txg
