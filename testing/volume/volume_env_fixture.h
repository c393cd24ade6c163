// VolumeEnvFixture: one VolumeImpl on a fake environment, for unit tests of
// the volume engine's read, write and sync paths without a pool.
//
// It builds what a pool gives a volume (volume_impl.h, VolumeEnv): a real
// ARC (inline evictor, no monitor ticks), a real txg manager on a manual
// clock whose sync function is the fixture's, and a FakeBlockStore
// (fake_block_store.h) as both the block source and the txg's sink;
// optionally an intent log on a memory device. No work queue (operations
// run inline, no prefetch), no handle cache, no space accounting unless
// the test gives one.
//
// The sync function does what the pool's SyncTxg does for one volume:
//
//   store.BeginTxg(T); vol.SyncTxg(T, &store, &entry)
//   [between hook, on the sync thread]
//   log.TxgCommitted(T, log.HeaderFor(T)); vol.TxgCommitted(T)
//
// Sync() asks for the open txg to be synced (even when empty) and returns
// once it has committed or failed: one txg, synchronously. Nothing else
// syncs: the manual clock does not move past the txg timeout, and dirty_max
// is far above what a test writes.
//
// Thread-safety: Sync and the accessors from the test's threads; the hooks
// run on the txg manager's sync thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "arc/arc.h"
#include "base/check.h"
#include "format/indirect_block.h"
#include "io/memory_device.h"
#include "stats/registry.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "testing/volume/fake_block_store.h"
#include "txg/txg_manager.h"
#include "volume/volume_impl.h"
#include "zil/intent_log.h"

namespace arcstore::testing {

struct VolumeFixtureOptions {
  uint32_t record_bytes = 16 * 1024;
  uint64_t records = 64;
  // Fan-out 4: a 64-record volume has a tree of three indirect levels, so
  // the tree's reads and writes of indirect blocks are exercised too.
  uint32_t indirect_shift = 2;
  bool defer_partial_reads = true;
  bool with_log = false;  // an intent log (FUA and Flush commit it)
  // The log's writer writes changes appended after a commit at once
  // (early writes; the clock never leaves their window). false: only
  // commits write, so that a test knows what the log's blocks hold.
  bool early_log_writes = false;
  uint64_t arc_bytes = 64ull << 20;
  volume::SpaceAccount* space = nullptr;  // space accounting; nullptr: none
};

class VolumeEnvFixture {
 public:
  static constexpr uint64_t kGuid = 77;
  static constexpr const char* kName = "vol";

  explicit VolumeEnvFixture(const VolumeFixtureOptions& o = {}) : options_(o) {
    arc::ArcOptions ao;
    ao.c_max_bytes = o.arc_bytes;
    ao.c_min_bytes = o.arc_bytes / 4;
    ao.evictor = arc::EvictorMode::kInline;
    ao.monitor_interval_ns = 0;
    auto a = arc::Arc::Create(ao, arc::ArcEnv{&clock_, &monitor_, &registry_});
    ARC_CHECK(a.ok()) << a.status().ToString();
    arc_ = std::move(*a);
    txg::TxgOptions to;
    to.dirty_max_bytes = 1ull << 30;
    txg_ = std::make_unique<txg::TxgManager>(
        to, &clock_, &registry_, [this](uint64_t txg) { return SyncOne(txg); }, 1);
    store_.SetOnWritten([this](uint64_t txg, uint64_t bytes) { txg_->Undirty(txg, bytes); });
    if (o.with_log) MakeLog();
    entry_.name = kName;
    entry_.guid = kGuid;
    entry_.record_size_bytes = o.record_bytes;
    entry_.size_bytes = o.records * o.record_bytes;
    entry_.compression = format::Compression::kOff;
    entry_.indirect_shift = static_cast<uint8_t>(o.indirect_shift);
    entry_.tree_depth = static_cast<uint8_t>(format::TreeDepthFor(o.records, o.indirect_shift));
    stats_ = std::make_unique<volume::VolumeStats>(&registry_);
    vol_ = std::make_unique<volume::VolumeImpl>(entry_, Env(), stats_.get());
    txg_->Start();
  }

  ~VolumeEnvFixture() {
    // The shutdown sync (if any) runs before the volume goes.
    txg_->Stop().IgnoreError();
    if (log_) log_->StopWriter();
    vol_->Close();
    vol_.reset();
    log_.reset();
    txg_.reset();
  }

  // Syncs the open txg and waits for it: OK once committed, else the
  // sync's error (and the txg manager has failed).
  Status Sync() { return txg_->ForceSync(txg::SyncReason::kExplicitWait); }
  // Drops every cached buffer of the volume from the ARC (an eviction of
  // all its records; dirty copies are not cached and stay).
  void Evict() { arc_->RemoveVolume(kGuid); }
  bool Cached(uint64_t record) const { return arc_->Cached(arc::ArcKey{kGuid, record, 0}); }
  // A volume counter ("volumes" module) or any other registry stat.
  int64_t Stat(const char* name, const char* module = "volumes") {
    return registry_.TakeSnapshot().Get(module, name);
  }
  // Runs on the sync thread after SyncTxg(txg) succeeded, before the txg
  // commits.
  void SetBetweenHook(std::function<void(uint64_t txg)> hook) {
    MutexLock l(&mu_);
    between_ = std::move(hook);
  }
  // The volume entry of the last txg synced (root of its tree).
  format::VolumeEntry synced_entry() {
    MutexLock l(&mu_);
    return entry_;
  }
  // A second VolumeImpl of the same volume opened from the last synced
  // entry on the same environment but without the log (nothing of the
  // first one's memory: its tree loads from the store), as a pool opened
  // after a crash would see it. The fixture does not sync it.
  std::unique_ptr<volume::VolumeImpl> Reopen() {
    volume::VolumeEnv env = Env();
    env.log = nullptr;  // its changes (a replay) are not logged again
    return std::make_unique<volume::VolumeImpl>(synced_entry(), env, stats_.get());
  }
  // The pointer the volume's tree gives for `record`.
  format::BlockPointer PointerOf(uint64_t record) {
    Result<format::BlockPointer> bp = vol_->tree().Get(record);
    ARC_CHECK(bp.ok()) << bp.status().ToString();
    return *bp;
  }
  // Reads the intent log's records as a pool opening from txg `txg` would.
  Result<zil::LogReplay> ReadLog(uint64_t txg) {
    return zil::ReadLog(log_device_.get(), 4096, log_->HeaderFor(txg));
  }

  volume::VolumeImpl& vol() { return *vol_; }
  FakeBlockStore& store() { return store_; }
  arc::Arc& arc() { return *arc_; }
  txg::TxgManager& txg() { return *txg_; }
  zil::IntentLog* log() { return log_.get(); }
  ManualClock& clock() { return clock_; }
  uint32_t record_bytes() const { return options_.record_bytes; }
  uint64_t size_bytes() const { return options_.records * options_.record_bytes; }

 private:
  volume::VolumeEnv Env() {
    volume::VolumeEnv env;
    env.txg = txg_.get();
    env.blocks = &store_;
    env.arc = arc_.get();
    env.log = log_.get();
    env.prefetch = false;
    env.defer_partial_reads = options_.defer_partial_reads;
    env.registry = &registry_;
    env.clock = &clock_;
    env.space = options_.space;
    return env;
  }

  void MakeLog() {
    io::MemoryDeviceOptions mo;
    mo.size_bytes = 16 << 20;
    auto d = io::MemoryDevice::Create(mo);
    ARC_CHECK(d.ok()) << d.status().ToString();
    log_device_ = std::move(*d);
    zil::IntentLogOptions lo;
    lo.gather_percent = 0;  // a commit never waits for other callers
    lo.early_write_window_ns = options_.early_log_writes ? 1000ull * 1000 * 1000 : 0;
    zil::IntentLogEnv le;
    le.device = log_device_.get();
    le.unit_bytes = 4096;
    le.clock = &clock_;
    le.registry = &registry_;
    le.sync_all = [this] { return txg_->ForceSync(txg::SyncReason::kExplicitWait); };
    le.request_sync = [] {};  // the test decides when txgs sync
    le.on_failure = [this](const Status& why) { txg_->Fail(why); };
    log_ = std::make_unique<zil::IntentLog>(lo, le, zil::LogStart{});
    log_->SetArena(1 << 20, 8 << 20);
  }

  // The pool's SyncTxg for this one volume (pool/pool_impl.cc).
  Status SyncOne(uint64_t txg) {
    store_.BeginTxg(txg);
    format::VolumeEntry e;
    ARC_RETURN_IF_ERROR(vol_->SyncTxg(txg, &store_, &e));
    std::function<void(uint64_t)> between;
    {
      MutexLock l(&mu_);
      entry_ = e;
      between = between_;
    }
    if (between) between(txg);
    // The log first: it lets go of the dirty buffers it holds, which the
    // volume then publishes.
    if (log_) log_->TxgCommitted(txg, log_->HeaderFor(txg));
    vol_->TxgCommitted(txg);
    return Status::Ok();
  }

  const VolumeFixtureOptions options_;
  ManualClock clock_{1'000'000'000, /*auto_advance=*/true};
  FakeMemoryMonitor monitor_{4ull << 30};
  stats::Registry registry_;
  FakeBlockStore store_;
  std::unique_ptr<arc::Arc> arc_;
  std::unique_ptr<txg::TxgManager> txg_;
  std::unique_ptr<io::MemoryDevice> log_device_;
  std::unique_ptr<zil::IntentLog> log_;
  std::unique_ptr<volume::VolumeStats> stats_;
  std::unique_ptr<volume::VolumeImpl> vol_;
  Mutex mu_;
  format::VolumeEntry entry_ ARC_GUARDED_BY(mu_);
  std::function<void(uint64_t)> between_ ARC_GUARDED_BY(mu_);
};

// The base of the volume's unit tests: Make() builds the fixture; the
// helpers read, write and commit whole records through the volume's
// synchronous calls, failing the test on an error.
class VolumeTest : public ::testing::Test {
 protected:
  static std::vector<uint8_t> Filled(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

  void Make(VolumeFixtureOptions o = {}) {
    f_ = std::make_unique<VolumeEnvFixture>(o);
    rb_ = o.record_bytes;
  }
  volume::VolumeImpl& vol() { return f_->vol(); }
  FakeBlockStore::Counts counts() { return f_->store().counts(); }
  std::vector<uint8_t> ReadOk(uint64_t offset, size_t n) {
    std::vector<uint8_t> out(n, 0xee);
    Status s = vol().Read(offset, out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }
  void WriteOk(uint64_t offset, const std::vector<uint8_t>& data, uint32_t flags = kWriteNone) {
    Status s = vol().Write(offset, data, flags);
    ASSERT_TRUE(s.ok()) << s.ToString();
  }
  // Writes record `record` whole with bytes `v` and syncs it.
  void Commit(uint64_t record, uint8_t v) {
    WriteOk(record * rb_, Filled(rb_, v));
    ASSERT_TRUE(f_->Sync().ok());
  }

  // Syncs, then checks the volume and a volume reopened from the store
  // (without the log) both read as `model` from offset 0.
  void ExpectSyncedAndStored(const std::vector<uint8_t>& model) {
    ASSERT_TRUE(f_->Sync().ok());
    EXPECT_EQ(ReadOk(0, model.size()), model);
    f_->Evict();
    std::unique_ptr<volume::VolumeImpl> again = f_->Reopen();
    std::vector<uint8_t> stored(model.size());
    ASSERT_TRUE(again->Read(0, stored).ok());
    again->Close();
    EXPECT_EQ(stored, model) << "the store does not hold the model";
  }

  std::unique_ptr<VolumeEnvFixture> f_;
  uint32_t rb_ = 0;
};

}  // namespace arcstore::testing
