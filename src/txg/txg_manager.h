// TxgManager: transaction groups, dirty accounting and the write throttle.
//
// Every change to a pool belongs to one transaction group (txg). Writers
// join the OPEN txg through Assign(), which also applies the write
// throttle; the sync thread QUIESCES it (waits for the writers inside it to
// finish), opens the next one at once, and SYNCS it by calling the pool's
// sync function, which writes everything the txg dirtied and commits it.
// See txg_manager.cc for the theory of operation.
//
// Thread-safety: all public methods are thread-safe. The sync function runs
// on the manager's sync thread, one txg at a time, without the manager's
// lock held; it may call Undirty() and NoteSyncIo().
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "stats/registry.h"

namespace arcstore::txg {

// Why a txg was synced. The names are the ones `arcstore txgs` prints.
enum class SyncReason : uint8_t {
  kNone = 0,
  kTimeout,         // the open txg reached timeout_ns
  kDirtyThreshold,  // the open txg's dirty bytes passed sync_kick_percent
  kArcDirtyLimit,   // dirty data reached the ARC's limit (50% of c)
  kExplicitWait,    // a flush (without intent log) or a caller waited on it
  kShutdown,        // the pool is closing
  kMemory,          // memory pressure asked for dirty data to go
  kLogSpace,        // the intent log wrote another share of its arena
  kSpace,           // pool space: frees must commit, or the open txg grew large for the room
};
inline constexpr int kNumSyncReasons = 9;
std::string_view SyncReasonName(SyncReason reason);

struct TxgOptions {
  uint64_t timeout_ns = 5 * kNsPerSec;
  uint64_t dirty_max_bytes = 4 * kGiB;   // a pool sets DirtyMaxFor(its memory limit)
  // The open txg's own dirty bytes, in percent of dirty_max, that start its
  // sync. Half the delay line: the syncing txg and the next open one
  // together reach delay_min_percent only when the disk falls behind. A
  // record rewritten in the open txg adds no dirty bytes, so a working set
  // of rewrites below the kick is written once per timeout.
  uint32_t sync_kick_percent = 30;
  uint32_t async_write_min_percent = 30; // async-write concurrency ramp start
  uint32_t async_write_max_percent = 60; // ... and end
  uint32_t delay_min_percent = 60;       // writers are delayed from here
  uint64_t delay_scale_ns = 500 * kNsPerUs;
  uint64_t delay_max_ns = 100 * kNsPerMs;
  uint32_t history_length = 100;         // txgs kept for `arcstore txgs`
  // The sync thread's nice value (0..19; 0 = the same as the threads that
  // serve requests). A sync is batch work (compression, checksums, I/O
  // submission) while requests are served by threads waiting on clients:
  // at a lower priority it runs in their idle time instead of delaying
  // their wake-ups, and the write throttle still bounds how far it may
  // fall behind.
  int sync_thread_nice = 0;
  // Returns the ARC's current dirty limit in bytes (50% of c), or 0 for
  // none. Called on every Assign(); must be cheap and thread-safe.
  std::function<uint64_t()> arc_dirty_limit_bytes;
  // Called (with mu_ held, so it must not block) each time a write waits
  // for the ARC dirty limit: the ARC counts it as memory_throttle_count.
  std::function<void()> on_memory_throttle;
  // Whether committed txgs left work that only later txgs finish (the
  // pool's frees, deferred until no older tree can reference them): while
  // it says so, an open txg nobody was assigned to still syncs at its
  // timeout, so an idle pool gives freed space back within a few timeouts
  // instead of at its next write. Called with mu_ held: must be cheap and
  // must not block. Empty: never.
  std::function<bool()> has_deferred_work;

  Status Validate() const;

  // The default dirty limit for a process allowed `memory_bytes`: a
  // quarter of it, at most 4 GiB (0: as for 16 GiB).
  static uint64_t DirtyMaxFor(uint64_t memory_bytes) {
    return std::min<uint64_t>((memory_bytes != 0 ? memory_bytes : 16 * kGiB) / 4, 4 * kGiB);
  }
};

enum class TxgState : uint8_t { kOpen, kQuiescing, kSyncing, kCommitted, kFailed };
std::string_view TxgStateName(TxgState state);

// One txg's history row (the `txgs` kstat's columns plus arcstore's).
struct TxgRecord {
  uint64_t txg = 0;
  uint64_t birth_ns = 0;
  TxgState state = TxgState::kOpen;
  uint64_t ndirty_bytes = 0;    // bytes dirtied by writers in this txg
  uint64_t nread_bytes = 0;     // bytes the sync read
  uint64_t nwritten_bytes = 0;  // bytes the sync wrote
  uint64_t reads = 0;
  uint64_t writes = 0;
  uint64_t otime_ns = 0;  // open
  uint64_t qtime_ns = 0;  // quiescing
  uint64_t wtime_ns = 0;  // waiting for the previous sync to finish
  uint64_t stime_ns = 0;  // syncing
  SyncReason reason = SyncReason::kNone;
  uint64_t delay_ns = 0;         // time writers of this txg spent delayed
  uint64_t delayed_writes = 0;
  uint64_t blocked_ns = 0;       // time writers spent blocked at dirty_max
  uint64_t arc_limit_wait_ns = 0;  // ... and waiting on the ARC dirty limit
};

// What the sync function reports back about its I/O.
struct SyncIo {
  uint64_t read_bytes = 0, reads = 0, written_bytes = 0, writes = 0;
};

class TxgManager;

// A writer's membership of the open txg. While any hold on txg T exists, T
// cannot finish quiescing. Movable; releases on destruction.
class TxgHold {
 public:
  TxgHold() = default;
  TxgHold(TxgHold&& o) noexcept : mgr_(o.mgr_), txg_(o.txg_) { o.mgr_ = nullptr; }
  TxgHold& operator=(TxgHold&& o) noexcept;
  ~TxgHold() { Release(); }
  uint64_t txg() const { return txg_; }
  void Release();

 private:
  friend class TxgManager;
  TxgHold(TxgManager* mgr, uint64_t txg) : mgr_(mgr), txg_(txg) {}
  TxgManager* mgr_ = nullptr;
  uint64_t txg_ = 0;
};

class TxgManager {
 public:
  // Syncs txg `txg`: writes what it dirtied and commits it. A failed sync
  // fails the manager (every later Assign and wait returns the error).
  using SyncFn = std::function<Status(uint64_t txg)>;

  // `first_txg` is the txg to open (the pool's last committed txg + 1).
  TxgManager(const TxgOptions& options, Clock* clock, stats::Registry* registry, SyncFn sync,
             uint64_t first_txg);
  ~TxgManager();
  TxgManager(const TxgManager&) = delete;
  TxgManager& operator=(const TxgManager&) = delete;

  void Start();
  // Syncs whatever is dirty (reason shutdown) and stops the sync thread.
  Status Stop();

  // Joins the open txg with `dirty_bytes` of new dirty data, after the
  // throttle: delayed from delay_min_percent of dirty_max, blocked at
  // dirty_max, and made to wait for a sync when the ARC's dirty limit would
  // be passed. Errors only when the manager has failed or stopped.
  Result<TxgHold> Assign(uint64_t dirty_bytes);
  // Whether Assign(dirty_bytes) made now would wait: for the ARC's dirty
  // limit, blocked at dirty_max, or delayed by the throttle. A hint for
  // callers choosing a thread (the answer may change at once); takes the
  // manager's lock briefly and never waits. False when the manager has
  // failed or is stopping (Assign fails at once).
  bool AssignWouldWait(uint64_t dirty_bytes);
  // The same, without the throttle (metadata changes, trims).
  Result<TxgHold> AssignNoThrottle(uint64_t dirty_bytes);

  // Dirty bytes of `txg` are clean (written by its sync, or dropped).
  void Undirty(uint64_t txg, uint64_t bytes);
  // Adds the sync's I/O to the txg's history row.
  void NoteSyncIo(uint64_t txg, const SyncIo& io);

  // Asks for `txg` to be synced soon (for `reason`) and returns at once.
  void RequestSync(uint64_t txg, SyncReason reason);
  // Waits until `txg` has committed, asking for it with `reason`. A wait
  // for the open txg when no hold was ever taken on it (however few bytes
  // the holds declared) waits for the txg before it.
  Status WaitSynced(uint64_t txg, SyncReason reason);
  // Syncs the open txg even when nothing is dirty (to age deferred frees on
  // a full pool) and waits for it.
  Status ForceSync(SyncReason reason);
  // Waits for the next txg to commit: the one syncing (or quiescing) when
  // there is one, and the open txg is asked to go next (for `reason`);
  // else the open txg, synced even when nothing is dirty. Cheaper than
  // ForceSync when a sync is under way: it does not wait for the open txg.
  Status WaitNextCommit(SyncReason reason);
  // Fails the pipeline from outside (the intent log's device write or flush
  // failed): like a failed sync, every later assignment and wait returns
  // `why`, and no further txg is synced.
  void Fail(const Status& why);

  uint64_t open_txg();
  uint64_t last_committed_txg();
  uint64_t unsynced_dirty_bytes();
  // Whether a txg not yet committed holds changes: one syncing or
  // quiescing, or an open one a writer was assigned to.
  bool HasUncommittedWork();
  // min(dirty_max, the ARC's dirty limit): what the delay curve, the
  // async-write ramp and the sync kick measure dirty data against.
  uint64_t EffectiveDirtyMax() const;
  // The delay the throttle applies at `dirty_bytes` of unsynced data.
  uint64_t DelayNsAt(uint64_t dirty_bytes) const;
  // The async-write concurrency in [0, 1] the I/O queue should use.
  double AsyncWriteFraction();
  std::vector<TxgRecord> History();
  const TxgOptions& options() const { return options_; }

 private:
  friend class TxgHold;
  struct Txg;
  Result<TxgHold> AssignImpl(uint64_t dirty_bytes, bool throttle);
  Status WaitArcLimit(uint64_t dirty_bytes) ARC_REQUIRES(mu_);
  uint64_t ThrottleDelay(uint64_t dirty_bytes) ARC_REQUIRES(mu_);
  void ReleaseHold(uint64_t txg);
  void SyncLoop();
  // Whether the open txg has anything to sync (a writer's hold, or forced).
  bool OpenHasWork() ARC_REQUIRES(mu_);
  // TxgOptions::has_deferred_work, false when unset.
  bool DeferredWork() const;
  bool SyncWanted(uint64_t now_ns, SyncReason* reason) ARC_REQUIRES(mu_);
  void OpenNext(uint64_t now_ns) ARC_REQUIRES(mu_);
  Txg* Find(uint64_t txg) ARC_REQUIRES(mu_);
  void Retire(std::unique_ptr<Txg> t) ARC_REQUIRES(mu_);

  const TxgOptions options_;
  Clock* const clock_;
  // The real clock: the sync thread can sleep until the open txg's timeout
  // (or, with nothing to sync, until a writer comes); another clock moves
  // without telling it, so it looks every 10 ms.
  const bool real_clock_;
  const SyncFn sync_;

  Mutex mu_;
  CondVar cv_;  // any state change: holds, syncs, dirty bytes, requests
  std::unique_ptr<Txg> open_ ARC_GUARDED_BY(mu_);
  std::unique_ptr<Txg> quiescing_ ARC_GUARDED_BY(mu_);
  std::unique_ptr<Txg> syncing_ ARC_GUARDED_BY(mu_);
  uint64_t last_committed_ ARC_GUARDED_BY(mu_);
  uint64_t unsynced_bytes_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t last_wakeup_ns_ ARC_GUARDED_BY(mu_) = 0;  // throttle chain
  Status failed_ ARC_GUARDED_BY(mu_);
  bool stopping_ ARC_GUARDED_BY(mu_) = false;
  bool started_ ARC_GUARDED_BY(mu_) = false;
  bool sync_idle_ ARC_GUARDED_BY(mu_) = false;  // sleeping until the open txg has work
  std::vector<TxgRecord> history_ ARC_GUARDED_BY(mu_);
  std::thread sync_thread_;
  std::atomic<int> sync_thread_nice_{0};  // as set by the sync thread

  struct Stats {
    stats::Counter* syncs_by_reason[kNumSyncReasons];
    stats::Counter* delayed_writes;
    stats::Counter* delay_ns;
    stats::Counter* blocked_writes;
    stats::Counter* blocked_ns;
    stats::Counter* memory_throttle_count;
    stats::Counter* arc_limit_wait_ns;
    stats::Counter* sync_thread_wakeups;
    stats::Histogram* sync_time_ns;
    stats::Histogram* txg_dirty_bytes;
  } stats_;
};

}  // namespace arcstore::txg
