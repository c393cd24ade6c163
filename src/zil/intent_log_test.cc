// The intent log on a memory device: commits read back in order, batching
// (one flush for every waiter that arrived before it), the arena's wrap and
// reuse, the fallbacks, and a chain that ends exactly at a torn block.
#include "zil/intent_log.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "arc/arc.h"
#include "base/thread_annotations.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "testing/wait_until.h"

namespace arcstore::zil {
namespace {

using format::LogRecordType;

constexpr uint64_t kArenaAt = 1 << 20;

// Most tests here gate and count device flushes: their commits always
// flush (a one-block commit would otherwise be one FUA write; that has its
// own test), and only commits write (early writes have their own tests).
IntentLogOptions Flushing() {
  IntentLogOptions o;
  o.use_fua = false;
  o.early_write_window_ns = 0;
  return o;
}

// Counts flushes; can hold them (and, when told, writes) until released.
class GateDevice final : public io::ForwardingDevice {
 public:
  explicit GateDevice(io::Device* d) : ForwardingDevice(d) {}
  void Submit(io::IoRequest r) override {
    const uint64_t flush = r.op == io::IoOp::kFlush ? ++flushes_ : 0;
    if (r.op == io::IoOp::kWrite) writes_++;
    if (r.op == io::IoOp::kWrite && r.fua) fua_writes_++;
    if (r.op == io::IoOp::kWrite && advance_ != nullptr) advance_->AdvanceNs(kWriteNs);
    if (r.op == io::IoOp::kFlush || (r.op == io::IoOp::kWrite && hold_writes_)) {
      MutexLock l(&mu_);
      while (closed_ || flush > pass_flushes_) cv_.Wait(&mu_);
    }
    inner()->Submit(std::move(r));
  }
  // When set, every write takes kWriteNs of this clock (the log's device
  // time, which sizes its gathering window).
  static constexpr uint64_t kWriteNs = 10ull * 1000 * 1000 * 1000;
  testing::ManualClock* advance_ = nullptr;
  std::atomic<bool> hold_writes_{false};
  std::atomic<uint64_t> writes_{0};
  std::atomic<uint64_t> fua_writes_{0};
  void Close() {
    MutexLock l(&mu_);
    closed_ = true;
  }
  void Open() {
    MutexLock l(&mu_);
    closed_ = false;
    cv_.SignalAll();
  }
  // Flushes after the n-th wait even when open (UINT64_MAX: none).
  void PassFlushes(uint64_t n) {
    MutexLock l(&mu_);
    pass_flushes_ = n;
    cv_.SignalAll();
  }
  std::atomic<uint64_t> flushes_{0};

 private:
  Mutex mu_;
  CondVar cv_;
  bool closed_ ARC_GUARDED_BY(mu_) = false;
  uint64_t pass_flushes_ ARC_GUARDED_BY(mu_) = UINT64_MAX;
};

// ARC buffers for AppendHeld, each filled with one byte.
class HeldBuffers {
 public:
  HeldBuffers() {
    arc::ArcOptions ao;
    ao.evictor = arc::EvictorMode::kInline;
    ao.monitor_interval_ns = 0;
    auto arc = arc::Arc::Create(ao, arc::ArcEnv{&clock_, &monitor_, &registry_});
    EXPECT_TRUE(arc.ok()) << arc.status().ToString();
    if (arc.ok()) arc_ = std::move(*arc);
  }
  arc::ArcHold Make(uint64_t bytes, uint8_t fill) {
    arc::ArcHold h = arc_->AllocateAnon(bytes, arc::BufKind::kData, arc::HolderKind::kDirtyRecord);
    std::fill(h.mutable_data().begin(), h.mutable_data().end(), fill);
    return h;
  }
  stats::Registry& registry() { return registry_; }

 private:
  testing::ManualClock clock_;
  testing::FakeMemoryMonitor monitor_{1ull << 30};
  stats::Registry registry_;
  std::unique_ptr<arc::Arc> arc_;
};

class IntentLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io::MemoryDeviceOptions mo;
    mo.size_bytes = 16 << 20;
    mem_ = std::move(*io::MemoryDevice::Create(mo));
    gate_ = std::make_unique<GateDevice>(mem_.get());
  }

  std::unique_ptr<IntentLog> NewLog(const LogStart& start, IntentLogOptions o = Flushing(),
                                    Clock* clock = DefaultClock()) {
    IntentLogEnv env;
    env.device = gate_.get();
    env.unit_bytes = 4096;
    env.clock = clock;
    registries_.push_back(std::make_unique<stats::Registry>());
    env.registry = registries_.back().get();
    env.sync_all = [this] {
      syncs_++;
      return Status::Ok();
    };
    env.request_sync = [this] { kicks_++; };
    return std::make_unique<IntentLog>(o, env, start);
  }
  // A fresh log whose device writes take 10 s of `clock` each (gathering
  // windows of 5 s: longer than any test waits).
  std::unique_ptr<IntentLog> SlowDeviceLog(testing::ManualClock* clock) {
    gate_->advance_ = clock;
    IntentLogOptions o = Flushing();
    o.gather_max_ns = 5ull * 1000 * 1000 * 1000;
    return FreshLog(4 << 20, o, clock);
  }
  // A fresh log that writes a change early within 1 ms of `clock` after
  // a commit.
  std::unique_ptr<IntentLog> EarlyLog(testing::ManualClock* clock) {
    IntentLogOptions o = Flushing();
    o.early_write_window_ns = 1000 * 1000;
    return FreshLog(1 << 20, o, clock);
  }
  // A fresh log with an arena of `arena` bytes.
  std::unique_ptr<IntentLog> FreshLog(uint64_t arena, IntentLogOptions o = Flushing(),
                                      Clock* clock = DefaultClock()) {
    auto log = NewLog(LogStart{}, o, clock);
    log->SetArena(kArenaAt, arena);
    return log;
  }
  void Write(IntentLog& log, uint64_t txg, uint64_t offset, size_t n, uint8_t fill) {
    std::vector<uint8_t> d(n, fill);
    log.Append(LogRecordType::kWrite, 7, txg, offset, n, d.data());
  }
  LogReplay Read(const format::IntentLogHeader& h) {
    Result<LogReplay> r = ReadLog(mem_.get(), 4096, h);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? std::move(*r) : LogReplay{};
  }
  // Replay from `start` finds exactly `n` records: the writes Write(..,
  // 4096 * i, 4096, i + 1) for i < n, in that order.
  void ExpectWrittenInOrder(const format::IntentLogHeader& start, int n) {
    LogReplay r = Read(start);
    ASSERT_EQ(r.records.size(), static_cast<size_t>(n)) << r.end;
    for (int i = 0; i < n; i++) {
      EXPECT_EQ(r.records[i].offset, 4096u * i);
      EXPECT_EQ(r.records[i].data, std::vector<uint8_t>(4096, static_cast<uint8_t>(i + 1)));
    }
  }
  int64_t Stat(const char* name) {
    return registries_.back()->TakeSnapshot().Get("zil", name);
  }
  // A first caller's change and commit, held at its device flush (the gate
  // closed) when this returns; open the gate to let it finish.
  std::thread FirstCommitAtTheGate(IntentLog& log) {
    Write(log, 2, 0, 4096, 1);
    gate_->Close();
    std::thread first([&log] { EXPECT_TRUE(log.Commit().ok()); });
    while (gate_->flushes_ == 0) std::this_thread::yield();
    return first;
  }
  // While a first commit is at the device: `n` threads each append a
  // change and commit; returns once all n wait (commit_requests n + 1).
  std::vector<std::thread> QueueWaiters(IntentLog& log, int n) {
    std::vector<std::thread> waiters;
    for (int i = 0; i < n; i++) {
      waiters.emplace_back([this, &log, i] {
        Write(log, 2, 4096 * (i + 1), 4096, static_cast<uint8_t>(i));
        EXPECT_TRUE(log.Commit().ok());
      });
    }
    while (Stat("commit_requests") < n + 1) std::this_thread::yield();
    return waiters;
  }

  std::unique_ptr<io::MemoryDevice> mem_;
  std::unique_ptr<GateDevice> gate_;
  std::vector<std::unique_ptr<stats::Registry>> registries_;  // one per log
  std::atomic<int> syncs_{0};
  std::atomic<int> kicks_{0};
};

TEST_F(IntentLogTest, CommittedRecordsReadBackInOrder) {
  auto log = FreshLog(1 << 20);
  const format::IntentLogHeader before = log->HeaderFor(1);
  Write(*log, 2, 0, 4096, 1);
  log->Append(LogRecordType::kTrim, 7, 2, 8192, 100, nullptr);
  Write(*log, 3, 50, 10, 2);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(gate_->flushes_, 1u);
  LogReplay r = Read(before);
  ASSERT_EQ(r.records.size(), 3u) << r.end;
  EXPECT_EQ(r.records[0].seq, 1u);
  EXPECT_EQ(r.records[1].type, LogRecordType::kTrim);
  EXPECT_EQ(r.records[2].offset, 50u);
  EXPECT_EQ(r.records[2].data, std::vector<uint8_t>(10, 2));
  EXPECT_EQ(r.last_seq, 3u);
  EXPECT_EQ(Stat("records"), 3);
  EXPECT_EQ(Stat("commits"), 1);
  // A commit with nothing new writes nothing.
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(gate_->flushes_, 1u);
  // Once txg 2 is in a committed uberblock, replay of that state starts at
  // the block holding txg 3's record.
  const format::IntentLogHeader after2 = log->HeaderFor(2);
  EXPECT_EQ(after2.replay_sequence, before.replay_sequence);
  log->TxgCommitted(3, log->HeaderFor(3));
  const format::IntentLogHeader after3 = log->HeaderFor(3);
  EXPECT_EQ(after3.replay_sequence, before.replay_sequence + 1);
  EXPECT_EQ(Read(after3).records.size(), 0u);
}

TEST_F(IntentLogTest, OneFlushServesEveryWaiterThatArrivedBeforeIt) {
  IntentLogOptions one = Flushing();
  one.max_inflight_commits = 1;
  auto log = FreshLog(4 << 20, one);
  std::thread first = FirstCommitAtTheGate(*log);
  constexpr int kWaiters = 6;
  std::vector<std::thread> waiters = QueueWaiters(*log, kWaiters);
  gate_->Open();
  first.join();
  for (auto& t : waiters) t.join();
  EXPECT_EQ(gate_->flushes_, 2u) << "the six waiters must share one flush";
  EXPECT_EQ(Stat("commits"), 2);
  EXPECT_EQ(Stat("records"), kWaiters + 1);
}

// Callers queued behind a batch: the caller whose batch finished returns,
// and the log writer thread writes the queued callers' batch; without the
// writer, a queued caller writes it.
TEST_F(IntentLogTest, TheWriterThreadTakesTheQueueWhileTheFirstCallerReturns) {
  for (bool writer : {true, false}) {
    SCOPED_TRACE(writer ? "writer thread" : "no writer thread");
    IntentLogOptions o = Flushing();
    o.writer_thread = writer;
    gate_->flushes_ = 0;
    auto log = FreshLog(4 << 20, o);
    Write(*log, 2, 0, 4096, 1);
    gate_->Close();
    gate_->PassFlushes(1);
    std::atomic<bool> first_returned{false};
    std::thread first([&] {
      EXPECT_TRUE(log->Commit().ok());
      first_returned = true;
    });
    while (gate_->flushes_ == 0) std::this_thread::yield();
    constexpr int kWaiters = 4;
    std::vector<std::thread> waiters = QueueWaiters(*log, kWaiters);
    gate_->Open();  // the first batch's flush passes; the second's waits
    while (gate_->flushes_ < 2) std::this_thread::yield();
    first.join();
    EXPECT_TRUE(first_returned) << "the first caller waits for nobody else's batch";
    gate_->PassFlushes(UINT64_MAX);
    for (auto& t : waiters) t.join();
    EXPECT_EQ(gate_->flushes_, 2u) << "the queued callers share one batch";
    EXPECT_EQ(Stat("records"), kWaiters + 1);
    EXPECT_EQ(Stat("writer_batches"), writer ? 1 : 0);
  }
}

// Callers that come back after their batch: the writer waits for all of
// them (their appends end the wait, long before its window would), so
// that their changes go in one batch instead of the first one back
// writing alone.
TEST_F(IntentLogTest, TheWriterGathersTheCallersOfItsLastBatch) {
  testing::ManualClock clock;
  auto log = SlowDeviceLog(&clock);
  std::thread first = FirstCommitAtTheGate(*log);
  std::vector<std::thread> waiters = QueueWaiters(*log, 2);
  gate_->Open();  // batch 1 (the first caller), then the writer's batch 2 (both waiters)
  first.join();
  for (auto& t : waiters) t.join();
  ASSERT_EQ(Stat("commits"), 2);
  // The two callers of batch 2 come back; the writer waits for both.
  std::vector<std::thread> again;
  for (int i = 0; i < 2; i++) {
    again.emplace_back([&, i] {
      Write(*log, 2, 4096 * (i + 8), 4096, 9);
      EXPECT_TRUE(log->Commit().ok());
    });
  }
  for (auto& t : again) t.join();
  EXPECT_EQ(Stat("commits"), 3) << "the two callers share one batch";
  EXPECT_EQ(Stat("records"), 5);
  EXPECT_GE(Stat("gathers"), 1);
  // Who writes the shared batch depends on timing: the writer, when a
  // caller's Commit came while it gathered; else the first caller to
  // commit, with both changes appended by then.
  EXPECT_GE(Stat("writer_batches"), 1);
  EXPECT_LE(Stat("writer_batches"), 2);
}

// A batch of many changes of one caller released one caller: the writer
// does not wait for more, and that caller's next commit is its own.
TEST_F(IntentLogTest, ManyChangesOfOneCallerAreNotGathered) {
  testing::ManualClock clock;
  auto log = SlowDeviceLog(&clock);
  std::thread first = FirstCommitAtTheGate(*log);
  std::thread second([&] {
    for (int i = 1; i <= 5; i++) Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
    EXPECT_TRUE(log->Commit().ok());  // the writer's batch of 5
    Write(*log, 2, 4096 * 6, 4096, 6);
    EXPECT_TRUE(log->Commit().ok());  // its own
  });
  while (Stat("commit_requests") < 2) std::this_thread::yield();
  gate_->Open();
  first.join();
  second.join();
  EXPECT_EQ(Stat("commits"), 3);
  EXPECT_EQ(Stat("writer_batches"), 1);
  EXPECT_EQ(Stat("gathers"), 0);
}

// A caller alone never waits for anybody: its batches release one caller.
TEST_F(IntentLogTest, ACallerAloneIsNeverKeptWaiting) {
  testing::ManualClock clock;
  auto log = SlowDeviceLog(&clock);
  for (int i = 0; i < 20; i++) {
    Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
    ASSERT_TRUE(log->Commit().ok());
  }
  EXPECT_EQ(Stat("commits"), 20);
  EXPECT_EQ(Stat("gathers"), 0);
  EXPECT_EQ(Stat("writer_batches"), 0);
}

// Block buffers outlive their batch: a large block's buffer serves the
// small blocks after it (each written at its own size, so replay reads
// every record), and steady small commits allocate nothing.
TEST_F(IntentLogTest, BlockBuffersAreReusedAcrossBatches) {
  auto log = FreshLog(4 << 20);
  const format::IntentLogHeader start = log->HeaderFor(1);
  for (int i = 0; i < 50; i++) Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
  ASSERT_TRUE(log->Commit().ok());  // one block of 50 records (~205 KiB)
  EXPECT_EQ(Stat("buffers_allocated"), 1);
  for (int i = 0; i < 10; i++) {
    Write(*log, 2, 4096 * (50 + i), 4096, static_cast<uint8_t>(100 + i));
    ASSERT_TRUE(log->Commit().ok());
  }
  EXPECT_EQ(Stat("buffers_allocated"), 1) << "the small blocks reuse the large block's buffer";
  EXPECT_EQ(Stat("commits"), 11);
  LogReplay r = Read(start);
  ASSERT_EQ(r.records.size(), 60u) << r.end;
  for (int i = 0; i < 60; i++) {
    const uint8_t fill = static_cast<uint8_t>(i < 50 ? i : 100 + (i - 50));
    EXPECT_EQ(r.records[i].data, std::vector<uint8_t>(4096, fill)) << "record " << i;
  }
}

// A write logged by reference: the log keeps a hold on the buffer (no
// copy), copies its bytes into the block at commit and lets go of the hold
// before the block's I/O; a txg commit lets go of the holds of its txg.
TEST_F(IntentLogTest, AHeldWriteIsCopiedAtCommitAndLetGoOfBeforeItsIo) {
  HeldBuffers buffers;
  auto held = [&](uint64_t bytes, uint8_t fill) { return buffers.Make(bytes, fill); };
  auto log = FreshLog(1 << 20);
  // Record 1: 8 KiB, of which the first 6000 bytes are the change.
  arc::ArcHold a = held(8192, 0xa1);
  log->AppendHeld(7, 2, 0, 6000, a.Clone(arc::HolderKind::kIntentLog));
  Write(*log, 2, 65536, 100, 0x33);
  EXPECT_TRUE(a.shared());
  gate_->hold_writes_ = true;
  gate_->Close();
  std::thread committer([&] { EXPECT_TRUE(log->Commit().ok()); });
  while (gate_->writes_.load() < 1) std::this_thread::yield();
  EXPECT_FALSE(a.shared()) << "the hold outlived the encoding, into the I/O";
  gate_->hold_writes_ = false;
  gate_->Open();
  committer.join();
  LogReplay r = Read(log->HeaderFor(1));
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].data, std::vector<uint8_t>(6000, 0xa1));
  EXPECT_EQ(r.records[0].offset, 0u);
  EXPECT_EQ(r.records[1].data, std::vector<uint8_t>(100, 0x33));

  // Not committed: the txg's commit lets go of it; a newer txg's stays.
  arc::ArcHold b = held(4096, 0xb2), c = held(4096, 0xc3);
  log->AppendHeld(7, 3, 8192, 4096, b.Clone(arc::HolderKind::kIntentLog));
  log->AppendHeld(7, 4, 12288, 4096, c.Clone(arc::HolderKind::kIntentLog));
  log->TxgCommitted(3, log->HeaderFor(3));
  EXPECT_FALSE(b.shared());
  EXPECT_TRUE(c.shared());
  EXPECT_EQ(buffers.registry().TakeSnapshot().Get("arcstats", "held_bytes_intent_log"), 4096);
  log->TxgCommitted(4, log->HeaderFor(4));
  EXPECT_FALSE(c.shared());
}

// Many threads appending and committing at once: every change is in the
// log, in order, and the writer thread wrote batches for them.
TEST_F(IntentLogTest, ConcurrentCommittersAllEndDurable) {
  auto log = FreshLog(8 << 20);
  const format::IntentLogHeader start = log->HeaderFor(1);
  constexpr int kThreads = 8, kEach = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; i++) {
        Write(*log, 2, 4096 * (t * kEach + i), 512, static_cast<uint8_t>(t));
        EXPECT_TRUE(log->Commit().ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  LogReplay r = Read(start);
  ASSERT_EQ(r.records.size(), static_cast<size_t>(kThreads * kEach)) << r.end;
  for (size_t i = 0; i < r.records.size(); i++) EXPECT_EQ(r.records[i].seq, i + 1);
  EXPECT_EQ(Stat("records"), kThreads * kEach);
  EXPECT_LE(Stat("commits"), kThreads * kEach);
}

TEST_F(IntentLogTest, BatchesInFlightTogetherAreAcknowledgedInOrder) {
  IntentLogOptions o = Flushing();
  o.max_inflight_commits = 3;
  auto log = FreshLog(4 << 20, o);
  const format::IntentLogHeader start = log->HeaderFor(1);
  gate_->Close();
  // Three committers reach the device's flush at once; a fourth waits for
  // room and then takes everyone pending as one batch.
  std::vector<std::thread> threads;
  std::atomic<int> returned{0};
  for (int i = 0; i < 3; i++) {
    Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
    threads.emplace_back([&] {
      EXPECT_TRUE(log->Commit().ok());
      returned++;
    });
    while (gate_->flushes_ < static_cast<uint64_t>(i + 1)) std::this_thread::yield();
  }
  for (int i = 3; i < 6; i++) {
    threads.emplace_back([&, i] {
      Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
      EXPECT_TRUE(log->Commit().ok());
      returned++;
    });
  }
  while (Stat("commit_requests") < 6) std::this_thread::yield();
  EXPECT_EQ(returned, 0) << "nothing is acknowledged before its flush";
  gate_->Open();
  for (auto& t : threads) t.join();
  EXPECT_LE(gate_->flushes_, 5u);
  EXPECT_GE(gate_->flushes_, 4u);
  LogReplay r = Read(start);
  ASSERT_EQ(r.records.size(), 6u) << r.end;
  for (size_t i = 1; i < r.records.size(); i++) EXPECT_GT(r.records[i].seq, r.records[i - 1].seq);
}

TEST_F(IntentLogTest, ArenaWrapsAndReusesCommittedSpace) {
  // 64 KiB arena; each commit of 3 x 4 KiB writes a 16 KiB block.
  auto log = FreshLog(64 << 10);
  uint64_t txg = 2;
  format::IntentLogHeader start;
  for (int round = 0; round < 12; round++) {
    start = log->HeaderFor(txg - 1);
    for (int i = 0; i < 3; i++) Write(*log, txg, 4096 * i, 4096, static_cast<uint8_t>(round));
    ASSERT_TRUE(log->Commit().ok());
    // Replay of the state before this txg finds exactly this round.
    LogReplay r = Read(start);
    ASSERT_EQ(r.records.size(), 3u) << "round " << round << ": " << r.end;
    EXPECT_EQ(r.records[0].data[0], round);
    log->TxgCommitted(txg, log->HeaderFor(txg));
    txg++;
  }
  EXPECT_EQ(syncs_, 0) << "committed space must be reused, not fall back";
  EXPECT_LE(log->arena_used_bytes(), 48u << 10);
}

TEST_F(IntentLogTest, ABlockBeingWrittenIsKeptPastItsTxgs) {
  auto log = FreshLog(64 << 10);
  Write(*log, 2, 0, 4096, 1);
  gate_->hold_writes_ = true;
  gate_->Close();
  std::thread committer([&] { EXPECT_TRUE(log->Commit().ok()); });
  while (gate_->writes_ == 0) std::this_thread::yield();  // its block's write is at the device
  const uint64_t used = log->arena_used_bytes();
  ASSERT_GT(used, 0u);
  // Three txgs commit past the block: no uberblock replays from it any more,
  // but its write has not landed, so its space must not be reused yet.
  for (uint64_t txg = 2; txg <= 4; txg++) log->TxgCommitted(txg, log->HeaderFor(txg));
  EXPECT_EQ(log->arena_used_bytes(), used);
  gate_->Open();
  committer.join();
  log->TxgCommitted(5, log->HeaderFor(5));
  EXPECT_EQ(log->arena_used_bytes(), 0u) << "once written, the space is reused";
}

TEST_F(IntentLogTest, FullArenaFallsBackToATxgSync) {
  auto log = FreshLog(64 << 10);
  for (int i = 0; i < 5; i++) {
    Write(*log, 2, 0, 12 << 10, 1);  // 16 KiB blocks, never committed by a txg
    ASSERT_TRUE(log->Commit().ok());
  }
  EXPECT_EQ(syncs_, 1);
  EXPECT_EQ(Stat("fallback_syncs"), 1);
  EXPECT_EQ(Stat("commits"), 4);
}

// Every sync_kick_percent of the arena placed asks for one sync, whether
// or not the txg asked for before has committed yet: a txg that opens while
// another syncs is asked for as soon as it holds its share of the log.
TEST_F(IntentLogTest, EachShareOfTheArenaPlacedAsksForOneSync) {
  IntentLogOptions o = Flushing();
  o.sync_kick_percent = 25;
  auto log = FreshLog(1 << 20, o);  // a 4 KiB write is an 8 KiB block: 32 fill 25%
  auto commit_writes = [&](int n, uint64_t txg) {
    for (int i = 0; i < n; i++) {
      Write(*log, txg, 0, 4096, 1);
      ASSERT_TRUE(log->Commit().ok());
    }
  };
  commit_writes(31, 2);
  EXPECT_EQ(kicks_, 0);
  EXPECT_EQ(Stat("arena_used_bytes"), 31 * 8192);
  commit_writes(1, 2);
  EXPECT_EQ(kicks_, 1);
  commit_writes(31, 3);  // txg 2 still syncing
  EXPECT_EQ(kicks_, 1);
  commit_writes(1, 3);
  EXPECT_EQ(kicks_, 2) << "the next share asks again before txg 2 commits";
  commit_writes(16, 3);
  log->TxgCommitted(2, log->HeaderFor(2));
  commit_writes(15, 4);
  EXPECT_EQ(kicks_, 2);
  commit_writes(1, 4);
  EXPECT_EQ(kicks_, 3) << "a txg commit does not restart the count";
  EXPECT_EQ(Stat("sync_kicks"), 3);
  EXPECT_EQ(syncs_, 0);  // nothing fell back
  EXPECT_EQ(Stat("arena_used_bytes"), static_cast<int64_t>(log->arena_used_bytes()));

  o.sync_kick_percent = 0;  // never
  auto quiet = FreshLog(1 << 20, o);
  for (int i = 0; i < 100; i++) {
    Write(*quiet, 2, 0, 4096, 1);
    ASSERT_TRUE(quiet->Commit().ok());
  }
  EXPECT_EQ(kicks_, 3);
}

// Each fallback is foretold by CommitWouldSync, the hint the NBD server
// asks before it runs a FLUSH on a connection's reader thread; with
// nothing to make durable the hint is false whatever the log's state.
TEST_F(IntentLogTest, FallbacksWithoutArenaDisabledOrDroppedCopies) {
  auto no_arena = NewLog(LogStart{});
  EXPECT_FALSE(no_arena->CommitWouldSync()) << "nothing appended";
  Write(*no_arena, 2, 0, 4096, 1);
  EXPECT_TRUE(no_arena->CommitWouldSync());
  ASSERT_TRUE(no_arena->Commit().ok());
  EXPECT_EQ(syncs_, 1);
  EXPECT_FALSE(no_arena->CommitWouldSync()) << "everything appended is durable";

  IntentLogOptions off;
  off.enabled = false;
  auto disabled = FreshLog(1 << 20, off);
  Write(*disabled, 2, 0, 4096, 1);
  EXPECT_TRUE(disabled->CommitWouldSync());
  ASSERT_TRUE(disabled->Commit().ok());
  EXPECT_EQ(syncs_, 2);

  IntentLogOptions small;
  small.max_pending_bytes = 1 << 20;
  small.spill_percent = 0;          // the cap, not spilling
  small.early_write_window_ns = 0;  // only commits take pending changes
  auto capped = FreshLog(4 << 20, small);
  Write(*capped, 2, 0, 4096, 1);
  EXPECT_FALSE(capped->CommitWouldSync()) << "a copy kept: the commit writes a block";
  for (int i = 0; i < 300; i++) Write(*capped, 2, 0, 4096, 1);  // > 1 MiB of copies
  EXPECT_GT(Stat("dropped_copies"), 0);
  EXPECT_TRUE(capped->CommitWouldSync());
  ASSERT_TRUE(capped->Commit().ok());
  EXPECT_EQ(syncs_, 3);
  // Once the txg holding them commits, commits use the log again.
  capped->TxgCommitted(2, capped->HeaderFor(2));
  Write(*capped, 3, 0, 4096, 1);
  EXPECT_FALSE(capped->CommitWouldSync());
  ASSERT_TRUE(capped->Commit().ok());
  EXPECT_EQ(syncs_, 3);
  EXPECT_EQ(Stat("commits"), 1);
}

// After copies were dropped, changes are not copied at all until a txg
// holding every one of them commits (a commit before that falls back
// anyway): pending stays empty, each change counts as dropped, and the
// overflow lasts until the newest such change's txg commits.
TEST_F(IntentLogTest, AnOverflowedLogCopiesNothingUntilATxgCoversIt) {
  IntentLogOptions small;
  small.max_pending_bytes = 1 << 20;
  small.spill_percent = 0;          // the cap, not spilling
  small.early_write_window_ns = 0;  // only commits take pending changes
  auto log = FreshLog(4 << 20, small);
  for (int i = 0; i < 300; i++) Write(*log, 2, 0, 4096, 1);  // > 1 MiB: overflows
  const int64_t dropped = Stat("dropped_copies");
  ASSERT_GT(dropped, 0);
  const int64_t pending = Stat("pending_bytes");
  for (int i = 0; i < 50; i++) Write(*log, 3, 4096, 4096, 2);
  EXPECT_EQ(Stat("dropped_copies"), dropped + 50);
  EXPECT_EQ(Stat("pending_bytes"), pending) << "no copy kept while overflowed";
  // Txg 2 commits, but the uncopied changes of txg 3 are not in it: a
  // commit still syncs a txg.
  log->TxgCommitted(2, log->HeaderFor(2));
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(syncs_, 1);
  EXPECT_EQ(Stat("commits"), 0);
  // Once txg 3 commits, changes are copied and logged again.
  log->TxgCommitted(3, log->HeaderFor(3));
  Write(*log, 4, 0, 4096, 3);
  EXPECT_GT(Stat("pending_bytes"), 0);
  EXPECT_EQ(Stat("dropped_copies"), dropped + 50);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(syncs_, 1);
  EXPECT_EQ(Stat("commits"), 1);
}

// A writer that never flushes fills the log's copies to the cap, which
// drops them, txg after txg: the copies' memory is reused, not made again,
// and a commit after the overflow's txg commits still logs the bytes.
TEST_F(IntentLogTest, CopiesDroppedAtTheCapReuseTheirMemory) {
  IntentLogOptions small = Flushing();
  small.max_pending_bytes = 1 << 20;
  small.spill_percent = 0;  // the cap, not spilling
  auto log = FreshLog(4 << 20, small);
  int64_t copy_bytes = 0;
  for (uint64_t txg = 2; txg < 12; txg++) {
    for (int i = 0; i < 300; i++) Write(*log, txg, 4096 * (i % 64), 4096, 1);  // > 1 MiB
    log->TxgCommitted(txg, log->HeaderFor(txg));
    if (txg == 3) copy_bytes = Stat("copy_bytes");
    if (txg > 3) EXPECT_EQ(Stat("copy_bytes"), copy_bytes) << "txg " << txg;
  }
  EXPECT_GT(Stat("dropped_copies"), 0);
  EXPECT_GT(copy_bytes, 0);
  EXPECT_LE(copy_bytes, int64_t{4} << 20) << "the cap's worth, and room to spare";
  Write(*log, 12, 8192, 4096, 7);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(syncs_, 0);
  LogReplay r = Read(log->HeaderFor(11));
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].offset, 8192u);
  EXPECT_EQ(r.records[0].data, std::vector<uint8_t>(4096, 7));
}

// Copies past spill_percent of the cap are written to the log by its writer
// thread with nobody committing: none is dropped at the cap, no txg sync is
// asked for, and a commit then writes only the rest; replay finds every
// change, in order.
TEST_F(IntentLogTest, CopiesPastTheSpillShareAreLoggedWithNobodyCommitting) {
  IntentLogOptions o = Flushing();
  o.max_pending_bytes = 1 << 20;
  o.spill_percent = 25;
  auto log = FreshLog(8 << 20, o);
  const format::IntentLogHeader start = log->HeaderFor(1);
  for (int i = 0; i < 600; i++) {  // 2.4 MiB of copies: past the cap twice
    Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
    const auto spilled = [&] { return Stat("pending_bytes") < (1 << 20) / 4; };
    if (!spilled()) ASSERT_TRUE(arcstore::testing::WaitUntil(spilled)) << "after write " << i;
  }
  EXPECT_GE(Stat("spills"), 8);
  EXPECT_EQ(Stat("dropped_copies"), 0);
  EXPECT_EQ(Stat("commit_requests"), 0);
  EXPECT_EQ(kicks_, 0) << "a spill asks for no txg sync";
  const int64_t records_before = Stat("records");
  EXPECT_GT(records_before, 500);
  EXPECT_FALSE(log->CommitWouldSync());
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(syncs_, 0);
  EXPECT_EQ(Stat("records") - records_before, 600 - records_before) << "the commit wrote the rest";
  LogReplay r = Read(start);
  ASSERT_EQ(r.records.size(), 600u);
  for (int i = 0; i < 600; i++) {
    ASSERT_EQ(r.records[i].offset, 4096u * i) << i;
    ASSERT_EQ(r.records[i].data, std::vector<uint8_t>(4096, static_cast<uint8_t>(i))) << i;
  }
}

// A spill keeps the arena at most half full: past that the copies run into
// the cap and are dropped as without spilling, and the next commit syncs a
// txg. No spill asks for a txg sync.
TEST_F(IntentLogTest, ASpillLeavesHalfTheArenaToCommits) {
  IntentLogOptions o = Flushing();
  o.max_pending_bytes = 1 << 20;
  o.spill_percent = 25;
  const uint64_t arena = 1 << 20;
  auto log = FreshLog(arena, o);
  for (int i = 0; i < 600 && Stat("dropped_copies") == 0; i++) {
    Write(*log, 2, 4096 * i, 4096, 1);
    const int64_t used = Stat("arena_used_bytes");
    EXPECT_LE(used, static_cast<int64_t>(arena / 2 + 64 * 1024)) << "write " << i;
  }
  EXPECT_GE(Stat("spills"), 1);
  EXPECT_GT(Stat("dropped_copies"), 0) << "the copies ran into the cap";
  EXPECT_EQ(kicks_, 0);
  EXPECT_TRUE(log->CommitWouldSync());
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(syncs_, 1);
}

// Whole records are held, not copied: they never call for a spill (the
// txg writes them anyway; a flush logs them).
TEST_F(IntentLogTest, HeldRecordsAreNotSpilled) {
  HeldBuffers buffers;
  IntentLogOptions o = Flushing();
  o.max_pending_bytes = 1 << 20;
  o.spill_percent = 25;
  auto log = FreshLog(8 << 20, o);
  std::vector<arc::ArcHold> holds;
  for (int i = 0; i < 8; i++) {  // 512 KiB held: half the cap
    holds.push_back(buffers.Make(65536, static_cast<uint8_t>(i)));
    log->AppendHeld(7, 2, 65536 * i, 65536, holds.back().Clone(arc::HolderKind::kIntentLog));
  }
  Write(*log, 2, 1 << 20, 4096, 9);  // one copy: far below the spill share
  EXPECT_GT(Stat("pending_bytes"), (1 << 20) / 2);
  EXPECT_EQ(Stat("spills"), 0) << "held records called for a spill";  // asked under the lock
  // Copies past the share do, and the spill takes the held records along.
  for (int i = 0; i < 64; i++) Write(*log, 2, (1 << 20) + 4096 * (i + 1), 4096, 9);
  EXPECT_EQ(Stat("spills"), 1);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(Stat("records"), 8 + 65);
}

// A pretouched log makes its kept memory when it starts: a txg's worth of
// small writes up to the pending limit and its commits take chunks and
// block buffers from it, none made on a writer's path; without pretouch
// the same writes make their chunks and buffers as they go.
TEST_F(IntentLogTest, APretouchedLogMakesNoMemoryOnTheWritersPath) {
  for (bool pretouch : {true, false}) {
    SCOPED_TRACE(pretouch ? "pretouch" : "no pretouch");
    IntentLogOptions o = Flushing();
    o.max_pending_bytes = 4 << 20;
    o.spill_percent = 0;  // one commit of the whole txg
    o.pretouch = pretouch;
    auto log = FreshLog(8 << 20, o);
    // Kept copy chunks: a MiB per MiB of the pending limit, and one.
    EXPECT_EQ(Stat("pretouched_bytes"), pretouch ? (5 + 16) << 20 : 0);
    const format::IntentLogHeader start = log->HeaderFor(1);
    for (int i = 0; i < 900; i++) Write(*log, 2, 4096 * i, 4096, static_cast<uint8_t>(i));
    ASSERT_TRUE(log->Commit().ok());  // ~3.6 MiB of records: four blocks
    EXPECT_EQ(Stat("dropped_copies"), 0);
    if (pretouch) {
      EXPECT_EQ(Stat("copy_chunks_made"), 0);
      EXPECT_EQ(Stat("buffers_allocated"), 0);
    } else {
      EXPECT_EQ(Stat("copy_chunks_made"), 4);  // 900 copies of 4 KiB, 256 to a chunk
      EXPECT_GE(Stat("buffers_allocated"), 4);
    }
    LogReplay r = Read(start);
    ASSERT_EQ(r.records.size(), 900u) << r.end;
    for (int i = 0; i < 900; i += 97) {
      EXPECT_EQ(r.records[i].data, std::vector<uint8_t>(4096, static_cast<uint8_t>(i))) << i;
    }
  }
}

TEST_F(IntentLogTest, ReplayStopsAtATornBlockAndNeverPastIt) {
  auto log = FreshLog(1 << 20);
  const format::IntentLogHeader start = log->HeaderFor(1);
  for (int i = 0; i < 3; i++) {
    Write(*log, 2, 0, 4096, static_cast<uint8_t>(i));
    ASSERT_TRUE(log->Commit().ok());
  }
  // Tear the second block (8 KiB each: header + one 4 KiB record).
  std::vector<uint8_t> junk(4096, 0xee);
  ASSERT_TRUE(io::WriteSync(*mem_, kArenaAt + 8192 + 4096, junk).ok());
  LogReplay r = Read(start);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_NE(r.end.find("block 2"), std::string::npos) << r.end;
  EXPECT_EQ(r.start.next_seq, 2u);
  EXPECT_EQ(r.start.next_offset, 8192u);

  // A new life of the log continues after the chain with a new guid: the
  // intact third block of the old guid never joins its chain.
  LogStart again = r.start;
  again.last_record_seq = r.last_seq;
  auto reopened = NewLog(again);
  reopened->ReplayApplied(5, 1);
  const format::IntentLogHeader h = reopened->HeaderFor(5);
  EXPECT_NE(h.log_guid, start.log_guid);
  EXPECT_EQ(h.replay_offset_bytes, 8192u);
  EXPECT_EQ(Read(h).records.size(), 0u);
  Write(*reopened, 6, 0, 100, 9);
  ASSERT_TRUE(reopened->Commit().ok());
  LogReplay next = Read(h);
  ASSERT_EQ(next.records.size(), 1u) << next.end;
  EXPECT_EQ(next.records[0].seq, 2u);  // record seqs continue
}

TEST_F(IntentLogTest, UnsafeSwitchSkipsTheFlush) {
  IntentLogOptions o = Flushing();
  o.unsafe_skip_flush = true;
  auto log = FreshLog(1 << 20, o);
  Write(*log, 2, 0, 4096, 1);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(gate_->flushes_, 0u);
}

// A commit whose blocks lie one after another in the arena is one FUA
// write and no flush, however many blocks it has; a commit that wraps to
// the arena's start is a write per contiguous run, then a flush.
TEST_F(IntentLogTest, AContiguousCommitIsOneFuaWrite) {
  IntentLogOptions o;
  o.early_write_window_ns = 0;
  o.max_block_bytes = 64 * 1024;  // 15 records of 4 KiB to a block
  auto log = FreshLog(256 << 10, o);
  const format::IntentLogHeader before = log->HeaderFor(1);
  Write(*log, 2, 0, 4096, 1);
  ASSERT_TRUE(log->Commit().ok());  // one 8 KiB block at 0
  EXPECT_EQ(gate_->writes_, 1u);
  EXPECT_EQ(gate_->fua_writes_, 1u);
  EXPECT_EQ(gate_->flushes_, 0u);
  for (int i = 0; i < 40; i++) Write(*log, 2, 4096 * i, 4096, 2);
  ASSERT_TRUE(log->Commit().ok());  // blocks of 64, 64 and 44 KiB at 8 KiB
  EXPECT_EQ(Stat("blocks"), 4);
  EXPECT_EQ(gate_->writes_, 2u);
  EXPECT_EQ(gate_->fua_writes_, 2u);
  EXPECT_EQ(gate_->flushes_, 0u);
  EXPECT_EQ(Stat("fua_writes"), 2);
  EXPECT_EQ(Stat("flushes"), 0);
  EXPECT_EQ(Read(before).records.size(), 41u);

  // Txg 2 commits (with two more after it, its blocks are no longer
  // replayed): the next commit's second block does not fit before the
  // arena's end (180 + 128 KiB > 256) and goes to offset 0.
  for (uint64_t txg = 2; txg <= 4; txg++) log->TxgCommitted(txg, log->HeaderFor(txg));
  ASSERT_EQ(log->arena_used_bytes(), 0u);
  const format::IntentLogHeader before5 = log->HeaderFor(4);
  for (int i = 0; i < 30; i++) Write(*log, 5, 4096 * i, 4096, 3);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(Stat("blocks"), 6);
  EXPECT_EQ(gate_->writes_, 4u);
  EXPECT_EQ(gate_->fua_writes_, 2u);
  EXPECT_EQ(gate_->flushes_, 1u);
  EXPECT_EQ(Stat("commits"), 3);
  LogReplay r = Read(before5);
  ASSERT_EQ(r.records.size(), 30u) << r.end;
  EXPECT_EQ(r.records.back().data, std::vector<uint8_t>(4096, 3));
  EXPECT_EQ(syncs_, 0);
}

TEST(IntentLogOptionsTest, BoundsChecked) {
  IntentLogOptions o = Flushing();
  EXPECT_TRUE(o.Validate().ok());
  o.max_block_bytes = 1024;
  EXPECT_NE(o.Validate().message().find("max_block_bytes"), std::string::npos);
  o = {};
  o.max_pending_bytes = 10;
  EXPECT_NE(o.Validate().message().find("max_pending_bytes"), std::string::npos);
  o = {};
  o.max_inflight_commits = 0;
  EXPECT_NE(o.Validate().message().find("max_inflight_commits"), std::string::npos);
  o = {};
  o.gather_percent = 101;
  EXPECT_NE(o.Validate().message().find("gather_percent"), std::string::npos);
  o = {};
  o.gather_max_ns = 11ull * 1000 * 1000 * 1000;
  EXPECT_NE(o.Validate().message().find("gather_max_ns"), std::string::npos);
  o = {};
  o.spill_percent = 101;
  EXPECT_NE(o.Validate().message().find("spill_percent"), std::string::npos);
  o = {};
  o.early_write_window_ns = 1001ull * 1000 * 1000;
  EXPECT_NE(o.Validate().message().find("early_write_window_ns"), std::string::npos);
}

// Inside the window after a commit, a change appended with nobody
// committing is written at once by the writer, durable when done; the
// commit that follows finds it durable and writes and flushes nothing.
// Before the first commit and past the window nothing is written early.
// Replay finds every change, in order.
TEST_F(IntentLogTest, AChangeSoonAfterACommitIsWrittenEarly) {
  testing::ManualClock clock;
  auto log = EarlyLog(&clock);
  const format::IntentLogHeader start = log->HeaderFor(1);
  Write(*log, 2, 0, 4096, 1);
  EXPECT_EQ(Stat("early_writes"), 0) << "no commit yet";
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(gate_->writes_, 1u);

  clock.AdvanceNs(500 * 1000);
  Write(*log, 2, 4096, 4096, 2);
  EXPECT_EQ(Stat("early_writes"), 1);  // asked under the log's lock, in Append
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return Stat("records") == 2; }));
  EXPECT_EQ(gate_->writes_, 2u);
  EXPECT_EQ(gate_->flushes_, 2u) << "an early batch is durable when it completes";
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(gate_->writes_, 2u) << "the commit wrote its change again";
  EXPECT_EQ(gate_->flushes_, 2u) << "the commit found its change durable";

  clock.AdvanceNs(1000 * 1000 + 1);
  Write(*log, 2, 8192, 4096, 3);
  EXPECT_EQ(Stat("early_writes"), 1) << "past the window";
  EXPECT_EQ(Stat("records"), 2);
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(Stat("records"), 3);
  EXPECT_EQ(gate_->writes_, 3u);
  EXPECT_EQ(syncs_, 0);
  ExpectWrittenInOrder(start, 3);
}

// A commit arriving while an early batch holding its change is at the
// device returns only once that batch is durable (its flush done), and
// writes nothing of its own.
TEST_F(IntentLogTest, ACommitDuringAnEarlyWriteWaitsForItsFlush) {
  testing::ManualClock clock;
  auto log = EarlyLog(&clock);
  Write(*log, 2, 0, 4096, 1);
  ASSERT_TRUE(log->Commit().ok());
  gate_->Close();
  Write(*log, 2, 4096, 4096, 2);
  ASSERT_EQ(Stat("early_writes"), 1);
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return gate_->flushes_ == 2; }));
  std::atomic<bool> returned{false};
  std::thread committer([&] {
    EXPECT_TRUE(log->Commit().ok());
    returned = true;
  });
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return Stat("commit_requests") == 2; }));
  EXPECT_FALSE(returned) << "acknowledged before the early batch's flush";
  gate_->Open();
  committer.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(gate_->writes_, 2u) << "the commit wrote its change again";
  EXPECT_EQ(gate_->flushes_, 2u);
  EXPECT_EQ(Stat("records"), 2);
}

// A registered caller's change that makes an early batch due is left to
// it: nothing is asked of the writer, and the caller's WriteEarly writes
// the batch on its own thread, durable when it returns; the commit that
// follows writes nothing. Another thread's change still wakes the writer,
// and a batch left when the caller unregisters goes to the writer.
TEST_F(IntentLogTest, ARegisteredCallerWritesTheEarlyBatchItsChangeMadeDue) {
  testing::ManualClock clock;
  auto log = EarlyLog(&clock);
  const format::IntentLogHeader start = log->HeaderFor(1);
  log->RegisterEarlyCaller();
  Write(*log, 2, 0, 4096, 1);
  ASSERT_TRUE(log->Commit().ok());
  ASSERT_EQ(gate_->writes_, 1u);

  clock.AdvanceNs(500 * 1000);
  Write(*log, 2, 4096, 4096, 2);
  EXPECT_EQ(Stat("early_writes"), 0) << "the writer was asked for the caller's batch";
  log->WriteEarly();
  EXPECT_EQ(Stat("early_writes"), 1);
  EXPECT_EQ(Stat("records"), 2) << "not written on the caller's thread";
  EXPECT_EQ(gate_->flushes_, 2u) << "not durable when WriteEarly returned";
  log->WriteEarly();  // nothing left
  ASSERT_TRUE(log->Commit().ok());
  EXPECT_EQ(gate_->writes_, 2u) << "the commit wrote its change again";
  EXPECT_EQ(Stat("commit_requests"), 2);

  std::thread([&] { Write(*log, 2, 8192, 4096, 3); }).join();
  EXPECT_EQ(Stat("early_writes"), 2) << "another thread's change left to the caller";
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return Stat("records") == 3; }));

  Write(*log, 2, 12288, 4096, 4);
  EXPECT_EQ(Stat("early_writes"), 2);
  log->UnregisterEarlyCaller();
  EXPECT_EQ(Stat("early_writes"), 3) << "the batch left was not handed to the writer";
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return Stat("records") == 4; }));
  clock.AdvanceNs(100 * 1000);
  Write(*log, 2, 16384, 4096, 5);
  EXPECT_EQ(Stat("early_writes"), 4) << "unregistered, yet the batch was left to it";
  ASSERT_TRUE(arcstore::testing::WaitUntil([&] { return Stat("records") == 5; }));
  EXPECT_EQ(syncs_, 0);
  ExpectWrittenInOrder(start, 5);
}

}  // namespace
}  // namespace arcstore::zil
