// PoolImpl: the engine behind arcstore::Pool.
//
// Owns the device, the allocator, the txg manager and the volumes, and
// implements the txg sync (write every dirty block copy-on-write, the
// volume table, the space log; flush; write the uberblock; flush) and the
// open-time choice of the uberblock to trust. See pool_impl.cc for the
// theory of operation.
//
// Thread-safety: the Pool methods are thread-safe.
#pragma once

#include <atomic>
#include <map>
#include <set>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arc/arc.h"
#include "arc/monitor/memory_monitor.h"
#include "arcstore/pool.h"
#include "base/clock.h"
#include "format/label.h"
#include "format/uberblock.h"
#include "format/volume_table.h"
#include "io/device.h"
#include "io/file_device.h"
#include "io/io_queue.h"
#include "pool/block_io.h"
#include "pool/cache_devices.h"
#include "pool/space_admission.h"
#include "space/allocator.h"
#include "stats/registry.h"
#include "txg/txg_manager.h"
#include "volume/volume_impl.h"
#include "zil/intent_log.h"

namespace arcstore::pool {

// Test-only switches that break the commit protocol on purpose, so that
// the crash harness can show it notices, and test-only injections.
struct UnsafeTestSwitches {
  bool skip_flush_before_uberblock = false;
  bool uberblock_before_blocks = false;
  bool reuse_frees_early = false;  // reuse before the freeing txg commits
  bool log_ack_before_flush = false;  // intent log commits without their device flush
  // Intent log commits write their blocks and flush the device, never one
  // FUA write (IntentLogOptions::use_fua false), so that a test can fail
  // the log's flush.
  bool log_flush_not_fua = false;
  // The memory monitor the ARC and dirty_max read instead of the system's
  // (testing/fake_memory_monitor.h); not owned, must outlive the pool.
  MemoryMonitor* memory_monitor = nullptr;
  // The clock every part of the pool reads instead of DefaultClock()
  // (testing/manual_clock.h); not owned, must outlive the pool.
  Clock* clock = nullptr;
  // How long an ARC allocation waits for a release when nothing can be
  // evicted (ArcOptions::stuck_wait_ns), for tests that pin the whole cache
  // on purpose; unset: the ARC's default.
  std::optional<uint64_t> arc_stuck_wait_ns;
  // Cache devices opened by this instead of the file or block device at
  // their path (CacheDevices::Env::open_device), so that the crash harness
  // can record them and hand over their crash images.
  CacheDevices::Opener open_cache_device;
  // Cache devices file copies under the block's place alone, not its birth
  // (CacheDevices::Env::unsafe_key_ignores_birth): a freed and rewritten
  // block is served its old bytes.
  bool l2_key_ignores_birth = false;
};

// What Open found, for `pool info`, fsck and logs.
struct OpenReport {
  uint64_t txg = 0;                  // the txg the pool opened at
  uint64_t newest_seen_txg = 0;      // the newest uberblock with a valid checksum
  std::vector<std::string> notes;    // e.g. "uberblock 17 rejected: ... ; using 16"
  // The intent log at open: records replayed (those of txgs after `txg`),
  // and the seq of the last record of the valid chain (0: none).
  uint64_t log_records_replayed = 0;
  uint64_t log_last_seq = 0;
};

// The intent log that opening `device` would replay: the chain that its
// newest valid uberblock names, read without opening the pool (for tests
// and tools that look at what a crash left).
struct LogOnDevice {
  uint64_t uberblock_txg = 0;
  zil::LogReplay chain;
};
Result<LogOnDevice> ReadLogOnDevice(io::Device* device);

class PoolImpl final : public Pool {
 public:
  // Opens a pool on an already open device (tests use memory devices).
  static Result<std::unique_ptr<PoolImpl>> OpenOnDevice(std::unique_ptr<io::Device> device,
                                                        const PoolOptions& options,
                                                        const UnsafeTestSwitches& unsafe = {});
  // Writes labels and the first txg on a device (Pool::Create's core).
  static Status Format(io::Device* device, const std::string& name);

  ~PoolImpl() override;

  PoolInfo Info() override;
  Status CreateVolume(const VolumeOptions& options) override;
  Status DestroyVolume(const std::string& name) override;
  Result<std::shared_ptr<Volume>> OpenVolume(const std::string& name) override;
  Status DropCaches() override;
  Status Sync() override;
  Status Close() override;
  stats::Registry& stats() override { return registry_; }
  Status StartTrace(const std::string& path, uint64_t ring_entries,
                    bool replace_existing) override;
  Status StopTrace() override;
  Status AddCache(const std::string& path) override;
  Status RemoveCache(const std::string& path) override;

  const OpenReport& open_report() const { return open_report_; }
  // Keeps `lock` (on the pool's file) until the pool is destroyed.
  void HoldLock(io::FileLock lock) { lock_ = std::move(lock); }
  txg::TxgManager& txgs() { return *txg_; }
  // nullptr on a read-only pool.
  zil::IntentLog* intent_log() { return log_.get(); }
  arc::Arc& arc() { return *arc_; }
  // nullptr on a read-only pool.
  CacheDevices* cache_devices() { return caches_.get(); }
  // Tests: with the caller's threads done, makes a quiescent point for the
  // ARC's CheckInvariants: everything dirty synced (the sync thread idle),
  // every operation and prefetch submitted so far finished, the handle
  // cache empty and its evictor idle.
  Status QuiesceForCheck();
  // Blocks of every kind reachable from the live uberblock, for fsck.
  struct Census {
    uint64_t blocks = 0, data_blocks = 0, indirect_blocks = 0, log_blocks = 0;
    uint64_t referenced_bytes = 0;
    std::vector<std::string> problems;  // each names the block and what is wrong
  };
  // Walks and verifies every block (read + checksum), and checks that the
  // referenced space equals the allocator's allocated space. Txg syncs
  // wait while it runs: it sees the last committed txg whole.
  Census Check() ARC_EXCLUDES(sync_mu_);

 private:
  PoolImpl(std::unique_ptr<io::Device> device, const PoolOptions& options,
           const UnsafeTestSwitches& unsafe);
  // Declared first, so released last (after Close and every member).
  io::FileLock lock_;
  Status Load();
  Status LoadState(const format::Uberblock& ub) ARC_REQUIRES(sync_mu_);
  Status Start();
  // Start's builders, in the order it calls them.
  Result<MemoryMonitor*> StartArc();
  Status StartTxgs(MemoryMonitor* monitor, uint64_t first_txg);
  Status StartSpaceAdmission(uint64_t first_txg);
  Status StartIntentLog();
  void StartCacheDevices();
  void UpdateEvictionSink() ARC_REQUIRES(config_mu_);
  // The cache device paths of a label's config, in order.
  static std::vector<std::string> CachePathsOf(const format::PoolConfig& config);
  // Records the cache devices in both labels' config (a new generation).
  Status WriteCacheConfig() ARC_REQUIRES(config_mu_);
  void RegisterSpaceStats();
  // Applies the intent log's records read at Start and syncs them.
  Status ReplayLog();
  uint64_t ArenaBytes() const;
  Status SyncTxg(uint64_t txg) ARC_EXCLUDES(sync_mu_);
  // SyncTxg's steps, in order.
  struct SyncSet {
    std::vector<std::shared_ptr<volume::VolumeImpl>> volumes;    // that exist at the txg
    std::vector<std::shared_ptr<volume::VolumeImpl>> destroyed;  // by the txg: freed whole
    bool table_changed = false;
  };
  SyncSet TakeSyncSet(uint64_t txg) ARC_EXCLUDES(mu_);
  void PlaceLogArena(uint64_t txg) ARC_REQUIRES(sync_mu_);
  // Writes zeros into the holes a sparse pool file has under the log's
  // arena (Device::FillHoles).
  void FillArenaHoles(uint64_t offset_bytes, uint64_t bytes);
  Status WriteVolumes(uint64_t txg, SyncSet& set, TxgWriter* writer) ARC_REQUIRES(sync_mu_);
  Result<format::Uberblock> WriteUberblockAfterBlocks(uint64_t txg, TxgWriter* writer)
      ARC_REQUIRES(sync_mu_);
  void Committed(uint64_t txg, const SyncSet& set, const format::Uberblock& ub)
      ARC_REQUIRES(sync_mu_) ARC_EXCLUDES(mu_);
  Status WriteSpaceLog(uint64_t txg, TxgWriter* writer) ARC_REQUIRES(sync_mu_);
  Status WriteChain(uint64_t txg, std::vector<space::SpaceRecord> records,
                    std::vector<space::Extent> extents, uint64_t first_sequence,
                    format::BlockPointer prev, TxgWriter* writer) ARC_REQUIRES(sync_mu_);
  Result<std::vector<space::Extent>> AllocateLogBlocks(uint64_t txg, size_t records);
  Result<std::shared_ptr<volume::VolumeImpl>> NewVolume(const format::VolumeEntry& entry);

  // The volumes' writes into the I/O queue's trace (its W records).
  class QueueWriteTracer final : public volume::WriteTracer {
   public:
    explicit QueueWriteTracer(io::QueuedDevice* queue) : queue_(queue) {}
    bool active() const override { return queue_->tracing(); }
    void Add(const io::TracedWrite& write) override { queue_->AddTraceWrite(write); }

   private:
    io::QueuedDevice* const queue_;
  };

  std::unique_ptr<io::Device> device_;  // the I/O queue over the device given
  io::QueuedDevice* queue_ = nullptr;    // device_, for its trace and tunables
  std::unique_ptr<QueueWriteTracer> write_tracer_;  // over queue_
  const PoolOptions options_;
  const UnsafeTestSwitches unsafe_;
  Clock* const clock_;
  stats::Registry registry_;
  format::LabelHeader label_;
  format::DeviceLayout layout_;
  BlockIoStats io_stats_;
  std::unique_ptr<BlockReader> reader_;
  // Serialises config changes (cache devices) and their label writes;
  // label_.config changes under mu_ too.
  Mutex config_mu_ ARC_ACQUIRED_BEFORE(mu_);
  // Block buffers of the txg writers (block_io.h), kept from one write to
  // the next: at most kWriteBuffers of up to the largest record, and at
  // most kWriteBufferBytes in all (half of the writes a txg may have at
  // the device at once: 32 of up to 1 MiB).
  static constexpr size_t kWriteBuffers = 512;
  static constexpr size_t kWriteBufferBytes = 16u << 20;
  std::unique_ptr<io::BufferCache> write_buffers_;
  volume::VolumeStats volume_stats_;
  std::unique_ptr<MemoryMonitor> monitor_;
  std::unique_ptr<arc::Arc> arc_;
  std::unique_ptr<volume::HandleCache> handles_;  // before arc_ in destruction
  // The second cache level over reader_ (volumes read through it), the
  // ARC's eviction sink, charging its index to the ARC; nullptr on a
  // read-only pool. Destroyed after the volumes, before the ARC.
  std::unique_ptr<CacheDevices> caches_;
  std::unique_ptr<space::SpaceAllocator> allocator_;  // the sync thread's
  std::unique_ptr<txg::TxgManager> txg_;
  std::unique_ptr<SpaceAdmission> space_;  // nullptr when read-only
  std::unique_ptr<zil::IntentLog> log_;  // nullptr when read-only
  std::vector<format::LogRecord> replay_;  // read by Start, applied by ReplayLog
  std::unique_ptr<WorkQueue> work_;  // runs operations submitted to volumes
  OpenReport open_report_;

  // Held by each txg sync from its start to its end, and by Check, which
  // must see the blocks of one committed txg, never those of a sync half
  // done (its tree pointers set, its blocks not yet written).
  Mutex sync_mu_ ARC_ACQUIRED_BEFORE(mu_);
  // Sync-thread state (also set by Load before the thread starts).
  format::BlockPointer table_bp_ ARC_GUARDED_BY(sync_mu_);
  format::BlockPointer log_head_ ARC_GUARDED_BY(sync_mu_);
  std::vector<format::BlockPointer> log_chain_ ARC_GUARDED_BY(sync_mu_);  // oldest first
  uint64_t log_sequence_ ARC_GUARDED_BY(sync_mu_) = 0;                    // of the head
  std::vector<format::VolumeEntry> loaded_entries_;  // from Load, for Start
  format::IntentLogHeader loaded_log_;               // from Load, for Start

  Mutex mu_;
  std::map<std::string, std::shared_ptr<volume::VolumeImpl>> volumes_ ARC_GUARDED_BY(mu_);
  // Volumes destroyed in a txg, freed by its sync.
  std::map<uint64_t, std::vector<std::shared_ptr<volume::VolumeImpl>>> destroyed_
      ARC_GUARDED_BY(mu_);
  std::set<uint64_t> table_dirty_txgs_ ARC_GUARDED_BY(mu_);  // txgs that change the table
  space::SpaceUsage usage_ ARC_GUARDED_BY(mu_);
  // usage_.deferred_bytes > 0, for the txg manager's has_deferred_work
  // (read under its lock, so not under mu_).
  std::atomic<bool> frees_pending_{false};
  uint64_t committed_txg_ ARC_GUARDED_BY(mu_) = 0;
  bool closed_ ARC_GUARDED_BY(mu_) = false;
};

}  // namespace arcstore::pool
