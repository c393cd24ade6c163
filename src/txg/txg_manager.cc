// Transaction groups: theory of operation.
//
// A txg is a batch of changes that reaches the disk atomically. There is
// always exactly one OPEN txg; at most one is QUIESCING and at most one is
// SYNCING:
//
//   writers --Assign()--> [ open T+1 ]        accepting new dirty data
//                         [ quiescing T ]     waiting for T's holds to drop
//                         [ syncing T-1 ]     the pool's SyncFn writes it
//                              |
//                              v  committed: its waiters are released
//
// One sync thread runs the loop: wait until the open txg must go (see
// below), move it to quiescing and open the next one AT ONCE (writers never
// wait for a quiesce), wait for the quiescing txg's holds to drop, then sync
// it with no lock held. A request that arrives while a txg is syncing only
// marks the open txg to go next; two syncs never run at once. The thread
// is named txg_sync and may run at a lower priority than the threads that
// write (TxgOptions::sync_thread_nice; arcstore serve: 19): its work is
// batch work, and the write throttle bounds how far it may fall behind.
//
// Why the open txg goes (SyncReason, recorded per txg):
//   timeout          it has been open timeout_ns (5 s) with dirty data
//   dirty_threshold  its OWN dirty bytes passed sync_kick_percent (30%)
//                    of dirty_max: half the delay line, so the syncing
//                    txg and the next open one reach the delay only when
//                    the disk falls behind. A record already dirty in the
//                    open txg adds nothing (Assign's dirty_bytes are new
//                    copies), so rewrites of a working set below the kick
//                    reach the disk once per timeout.
//   arc_dirty_limit  a writer would take the pool's unsynced bytes past
//                    the ARC's dirty limit (50% of c); the writer waits.
//                    Also the kick when that limit is below dirty_max:
//                    the open txg's own dirty bytes passed 30% of it (the
//                    kick compares with the effective limit, min(dirty_max,
//                    c/2), so a small c makes small early txgs rather than
//                    writers stalled for a whole sync at the limit)
//   explicit_wait    someone waits for it (a flush without intent log)
//   log_space        the intent log placed another share of its arena
//                    (zil/intent_log.cc), so that flush-heavy work never
//                    fills the arena
//   space            pool space (pool/space_admission.h): a writer whose
//                    new data does not fit waits for txgs to commit the
//                    frees that make room, or the open txg's new data
//                    passed a share of the room left (the early kick)
//   shutdown, memory
// A txg that no writer was ever assigned to goes only at its timeout and
// only while the pool has deferred work (TxgOptions::has_deferred_work:
// frees that mature in later txgs); otherwise never (nothing to commit).
// One a writer was assigned to does, even if its holds declared 0 dirty
// bytes (a writer reusing an older txg's copy estimates 0 but changes this
// txg).
//
// The write throttle compares the pool's UNSYNCED total (open + quiescing
// + syncing), which the sync lowers record by record through Undirty():
//
//   0%        30%            60%                                 100%
//   |---------|--------------|-----------------------------------|
//    async-write concurrency  writers delayed:                    writers
//    ramps 30%..60%           scale*(dirty-min)/(max-dirty)       block
//
// The percentages are of the EFFECTIVE limit min(dirty_max, the ARC's dirty
// limit): with a small c the curve rises towards the ARC's limit, so
// writers are slowed a little at a time (at most delay_max each) before
// dirty data reaches the limit, where a writer would wait for a whole txg
// sync. The block compares with dirty_max itself, the ARC wait with c/2.
//
// Delays are chained through one shared last-wakeup time, so the pool
// admits one write per delay whatever the number of writers:
//   wakeup = max(now, last_wakeup) + delay, clamped to now + delay_max
// (the clamp bounds the backlog when sleeps overshoot).
//
// Locking: one mutex (mu_) guards all state; the sync function and the
// throttle's sleeps run without it. The ARC dirty-limit callback is called
// with mu_ held, so it must not take locks (it reads an atomic).
//
// Stats (module "txg"): syncs by reason, delayed/blocked writes and their
// time, memory_throttle_count and arc_limit_wait_ns (the writers' time at
// the ARC dirty limit), sync time and per-txg dirty histograms.
#include "txg/txg_manager.h"

#include <algorithm>
#include <chrono>

#include "base/check.h"
#include "base/thread_name.h"

namespace arcstore::txg {

std::string_view SyncReasonName(SyncReason reason) {
  switch (reason) {
    case SyncReason::kNone: return "none";
    case SyncReason::kTimeout: return "timeout";
    case SyncReason::kDirtyThreshold: return "dirty_threshold";
    case SyncReason::kArcDirtyLimit: return "arc_dirty_limit";
    case SyncReason::kExplicitWait: return "explicit_wait";
    case SyncReason::kShutdown: return "shutdown";
    case SyncReason::kMemory: return "memory";
    case SyncReason::kLogSpace: return "log_space";
    case SyncReason::kSpace: return "space";
  }
  return "?";
}

std::string_view TxgStateName(TxgState state) {
  switch (state) {
    case TxgState::kOpen: return "O";
    case TxgState::kQuiescing: return "Q";
    case TxgState::kSyncing: return "S";
    case TxgState::kCommitted: return "C";
    case TxgState::kFailed: return "F";
  }
  return "?";
}

Status TxgOptions::Validate() const {
  auto bad = [](const std::string& what) { return Status::InvalidArgument("txg: " + what); };
  if (timeout_ns < kNsPerMs || timeout_ns > 600 * kNsPerSec) {
    return bad("timeout_ns " + std::to_string(timeout_ns) + " must be in [1 ms, 600 s]");
  }
  if (dirty_max_bytes < kMiB) {
    return bad("dirty_max_bytes " + std::to_string(dirty_max_bytes) + " must be at least 1 MiB");
  }
  if (sync_kick_percent < 1 || sync_kick_percent > 100) {
    return bad("sync_kick_percent " + std::to_string(sync_kick_percent) + " must be in [1, 100]");
  }
  if (async_write_min_percent >= async_write_max_percent || async_write_max_percent > 100) {
    return bad("async_write_min_percent must be below async_write_max_percent <= 100");
  }
  if (delay_min_percent < 1 || delay_min_percent >= 100) {
    return bad("delay_min_percent " + std::to_string(delay_min_percent) + " must be in [1, 99]");
  }
  if (delay_scale_ns == 0 || delay_scale_ns > kNsPerSec) {
    return bad("delay_scale_ns must be in (0, 1 s]");
  }
  if (delay_max_ns < delay_scale_ns || delay_max_ns > 10 * kNsPerSec) {
    return bad("delay_max_ns must be in [delay_scale_ns, 10 s]");
  }
  if (history_length < 1 || history_length > 100000) {
    return bad("history_length must be in [1, 100000]");
  }
  if (sync_thread_nice < 0 || sync_thread_nice > 19) {
    return bad("sync_thread_nice " + std::to_string(sync_thread_nice) + " must be in [0, 19]");
  }
  return Status::Ok();
}

struct TxgManager::Txg {
  TxgRecord rec;
  uint64_t holds = 0;
  uint64_t dirty_bytes = 0;  // not yet undirtied by the sync
  SyncReason requested = SyncReason::kNone;
  bool forced = false;  // sync even with nothing dirty
  // A hold was taken: the txg may hold changes even with no dirty bytes
  // (a writer estimates 0 when it expects to reuse a copy of an older txg).
  bool assigned = false;
};

TxgHold& TxgHold::operator=(TxgHold&& o) noexcept {
  if (this != &o) {
    Release();
    mgr_ = o.mgr_;
    txg_ = o.txg_;
    o.mgr_ = nullptr;
  }
  return *this;
}

void TxgHold::Release() {
  if (mgr_ != nullptr) mgr_->ReleaseHold(txg_);
  mgr_ = nullptr;
}

TxgManager::TxgManager(const TxgOptions& options, Clock* clock, stats::Registry* registry,
                       SyncFn sync, uint64_t first_txg)
    : options_(options),
      clock_(clock),
      real_clock_(dynamic_cast<SystemClock*>(clock) != nullptr),
      sync_(std::move(sync)) {
  ARC_CHECK(options_.Validate().ok()) << options_.Validate().ToString();
  ARC_CHECK_GE(first_txg, 1u);
  {
    MutexLock l(&mu_);
    last_committed_ = first_txg - 1;
    OpenNext(clock_->NowNs());
  }
  const char* m = "txg";
  for (int r = 1; r < kNumSyncReasons; r++) {
    stats_.syncs_by_reason[r] = registry->AddCounter(
        m, "syncs_" + std::string(SyncReasonName(static_cast<SyncReason>(r))), stats::Unit::kOps,
        "txgs synced for this reason");
  }
  stats_.syncs_by_reason[0] = nullptr;
  stats_.delayed_writes = registry->AddCounter(m, "delayed_writes", stats::Unit::kOps,
                                               "writes delayed by the write throttle");
  stats_.delay_ns = registry->AddCounter(m, "delay_ns", stats::Unit::kNanoseconds,
                                         "time writers spent delayed");
  stats_.blocked_writes = registry->AddCounter(m, "blocked_writes", stats::Unit::kOps,
                                               "writes blocked at dirty_max");
  stats_.blocked_ns = registry->AddCounter(m, "blocked_ns", stats::Unit::kNanoseconds,
                                           "time writers spent blocked at dirty_max");
  stats_.memory_throttle_count =
      registry->AddCounter(m, "memory_throttle_count", stats::Unit::kOps,
                           "writes that waited for the ARC dirty limit");
  stats_.arc_limit_wait_ns =
      registry->AddCounter(m, "arc_limit_wait_ns", stats::Unit::kNanoseconds,
                           "time writers spent waiting for the ARC dirty limit");
  stats_.sync_thread_wakeups =
      registry->AddCounter(m, "sync_thread_wakeups", stats::Unit::kOps,
                           "times the sync thread woke to look for work (an idle pool on the "
                           "real clock: none)");
  stats_.sync_time_ns = registry->AddHistogram(m, "sync_time_ns", stats::Unit::kNanoseconds,
                                               "time to sync one txg");
  stats_.txg_dirty_bytes = registry->AddHistogram(m, "txg_dirty_bytes", stats::Unit::kBytes,
                                                  "bytes dirtied per txg");
  registry->AddGaugeFn(m, "dirty_bytes", stats::Unit::kBytes, "unsynced dirty bytes", [this] {
    return static_cast<int64_t>(unsynced_dirty_bytes());
  });
  registry->AddGaugeFn(m, "sync_thread_idle", stats::Unit::kNone,
                       "1 while the sync thread sleeps with nothing to sync (real clock)", [this] {
                         MutexLock l(&mu_);
                         return int64_t{sync_idle_};
                       });
  registry->AddGaugeFn(m, "dirty_max_bytes", stats::Unit::kBytes, "the throttle's dirty_max",
                       [this] { return static_cast<int64_t>(options_.dirty_max_bytes); });
  registry->AddGaugeFn(m, "open_txg", stats::Unit::kNone, "the open txg",
                       [this] { return static_cast<int64_t>(open_txg()); });
  registry->AddGaugeFn(m, "sync_thread_nice", stats::Unit::kNone,
                       "the nice value the sync thread runs at",
                       [this] { return static_cast<int64_t>(sync_thread_nice_.load()); });
}

TxgManager::~TxgManager() { (void)Stop(); }

void TxgManager::Start() {
  MutexLock l(&mu_);
  ARC_CHECK(!started_) << "txg manager started twice";
  started_ = true;
  sync_thread_ = std::thread([this] { SyncLoop(); });
}

Status TxgManager::Stop() {
  {
    MutexLock l(&mu_);
    if (stopping_ && !sync_thread_.joinable()) return failed_;
    stopping_ = true;
    cv_.SignalAll();
  }
  if (sync_thread_.joinable()) sync_thread_.join();
  MutexLock l(&mu_);
  return failed_;
}

void TxgManager::OpenNext(uint64_t now_ns) {
  uint64_t next = last_committed_ + 1;
  if (syncing_) next = std::max(next, syncing_->rec.txg + 1);
  if (quiescing_) next = std::max(next, quiescing_->rec.txg + 1);
  open_ = std::make_unique<Txg>();
  open_->rec.txg = next;
  open_->rec.birth_ns = now_ns;
}

TxgManager::Txg* TxgManager::Find(uint64_t txg) {
  for (Txg* t : {open_.get(), quiescing_.get(), syncing_.get()}) {
    if (t != nullptr && t->rec.txg == txg) return t;
  }
  return nullptr;
}

uint64_t TxgManager::EffectiveDirtyMax() const {
  const uint64_t arc_limit = options_.arc_dirty_limit_bytes ? options_.arc_dirty_limit_bytes() : 0;
  return arc_limit > 0 ? std::min(arc_limit, options_.dirty_max_bytes) : options_.dirty_max_bytes;
}

uint64_t TxgManager::DelayNsAt(uint64_t dirty_bytes) const {
  const long double max = static_cast<long double>(EffectiveDirtyMax());
  const long double min = max * options_.delay_min_percent / 100.0L;
  const long double dirty = static_cast<long double>(dirty_bytes);
  if (dirty < min) return 0;
  if (dirty >= max) return options_.delay_max_ns;
  long double d = options_.delay_scale_ns * (dirty - min) / (max - dirty);
  return std::min<uint64_t>(static_cast<uint64_t>(d), options_.delay_max_ns);
}

double TxgManager::AsyncWriteFraction() {
  MutexLock l(&mu_);
  const double pct = 100.0 * static_cast<double>(unsynced_bytes_) /
                     static_cast<double>(EffectiveDirtyMax());
  const double lo = options_.async_write_min_percent, hi = options_.async_write_max_percent;
  if (pct <= lo) return 0.0;
  if (pct >= hi) return 1.0;
  return (pct - lo) / (hi - lo);
}

Status TxgManager::WaitArcLimit(uint64_t dirty_bytes) {
  if (!options_.arc_dirty_limit_bytes) return Status::Ok();
  uint64_t limit = options_.arc_dirty_limit_bytes();
  if (limit == 0 || unsynced_bytes_ == 0 || unsynced_bytes_ + dirty_bytes <= limit) {
    return Status::Ok();
  }
  stats_.memory_throttle_count->Add();
  if (options_.on_memory_throttle) options_.on_memory_throttle();
  const uint64_t start = clock_->NowNs();
  while (failed_.ok() && unsynced_bytes_ > 0 && unsynced_bytes_ + dirty_bytes > limit) {
    if (open_->dirty_bytes > 0 && open_->requested == SyncReason::kNone) {
      open_->requested = SyncReason::kArcDirtyLimit;
      cv_.SignalAll();
    }
    cv_.Wait(&mu_);
    limit = options_.arc_dirty_limit_bytes();
    if (limit == 0) break;
  }
  const uint64_t waited = clock_->NowNs() - start;
  stats_.arc_limit_wait_ns->Add(waited);
  open_->rec.arc_limit_wait_ns += waited;
  return failed_;
}

Result<TxgHold> TxgManager::Assign(uint64_t dirty_bytes) { return AssignImpl(dirty_bytes, true); }

bool TxgManager::AssignWouldWait(uint64_t dirty_bytes) {
  MutexLock l(&mu_);
  if (!failed_.ok() || stopping_ || unsynced_bytes_ == 0) return false;
  const uint64_t arc_limit =
      options_.arc_dirty_limit_bytes ? options_.arc_dirty_limit_bytes() : 0;
  if (arc_limit > 0 && unsynced_bytes_ + dirty_bytes > arc_limit) return true;
  if (unsynced_bytes_ + dirty_bytes > options_.dirty_max_bytes) return true;
  return DelayNsAt(unsynced_bytes_) > 0;
}

Result<TxgHold> TxgManager::AssignNoThrottle(uint64_t dirty_bytes) {
  return AssignImpl(dirty_bytes, false);
}

Result<TxgHold> TxgManager::AssignImpl(uint64_t dirty_bytes, bool throttle) {
  MutexLock l(&mu_);
  if (!failed_.ok()) return failed_;
  if (stopping_) return Status::Aborted("txg: the pool is closing");
  if (throttle) {
    ARC_RETURN_IF_ERROR(WaitArcLimit(dirty_bytes));
    // Block at dirty_max (a single write larger than dirty_max still goes
    // once nothing else is unsynced).
    if (unsynced_bytes_ > 0 && unsynced_bytes_ + dirty_bytes > options_.dirty_max_bytes) {
      const uint64_t start = clock_->NowNs();
      stats_.blocked_writes->Add();
      while (failed_.ok() && unsynced_bytes_ > 0 &&
             unsynced_bytes_ + dirty_bytes > options_.dirty_max_bytes) {
        if (open_->dirty_bytes > 0 && open_->requested == SyncReason::kNone) {
          open_->requested = SyncReason::kDirtyThreshold;
          cv_.SignalAll();
        }
        cv_.Wait(&mu_);
      }
      const uint64_t blocked = clock_->NowNs() - start;
      stats_.blocked_ns->Add(blocked);
      open_->rec.blocked_ns += blocked;
      if (!failed_.ok()) return failed_;
    }
    const uint64_t delay = DelayNsAt(unsynced_bytes_);
    if (delay > 0) {
      const uint64_t now = clock_->NowNs();
      uint64_t wakeup = std::max(now, last_wakeup_ns_) + delay;
      wakeup = std::min(wakeup, now + options_.delay_max_ns);  // the backlog clamp
      last_wakeup_ns_ = wakeup;
      mu_.Unlock();
      clock_->SleepUntilNs(wakeup);
      mu_.Lock();
      const uint64_t waited = clock_->NowNs() - now;
      stats_.delayed_writes->Add();
      stats_.delay_ns->Add(waited);
      open_->rec.delay_ns += waited;
      open_->rec.delayed_writes++;
      if (!failed_.ok()) return failed_;
    }
  }
  Txg* t = open_.get();
  t->holds++;
  if (!t->assigned && sync_idle_) cv_.SignalAll();  // its timeout starts to matter
  t->assigned = true;
  t->dirty_bytes += dirty_bytes;
  t->rec.ndirty_bytes += dirty_bytes;
  unsynced_bytes_ += dirty_bytes;
  // The kick compares with the effective limit min(dirty_max, ARC limit):
  // with a small c, txgs of 30% of c/2 go early, so writers seldom meet
  // the ARC limit itself (and wait for a whole sync and its flushes).
  const uint64_t effective = EffectiveDirtyMax();
  const bool arc_bound = effective < options_.dirty_max_bytes;
  if (t->dirty_bytes > effective / 100 * options_.sync_kick_percent &&
      t->requested == SyncReason::kNone) {
    t->requested = arc_bound ? SyncReason::kArcDirtyLimit : SyncReason::kDirtyThreshold;
    cv_.SignalAll();
  }
  return TxgHold(this, t->rec.txg);
}

void TxgManager::ReleaseHold(uint64_t txg) {
  MutexLock l(&mu_);
  Txg* t = Find(txg);
  ARC_CHECK(t != nullptr && t->holds > 0) << "release of a hold on txg " << txg;
  // Only the quiescer waits for holds to drop (the open txg's drop all the
  // time: waking the sync thread on every write costs a context switch).
  if (--t->holds == 0 && t != open_.get()) cv_.SignalAll();
}

void TxgManager::Undirty(uint64_t txg, uint64_t bytes) {
  MutexLock l(&mu_);
  Txg* t = Find(txg);
  if (t == nullptr) return;  // already retired: its leftovers were released
  bytes = std::min(bytes, t->dirty_bytes);
  t->dirty_bytes -= bytes;
  unsynced_bytes_ -= bytes;
  cv_.SignalAll();
}

void TxgManager::NoteSyncIo(uint64_t txg, const SyncIo& io) {
  MutexLock l(&mu_);
  Txg* t = Find(txg);
  if (t == nullptr) return;
  t->rec.nread_bytes += io.read_bytes;
  t->rec.reads += io.reads;
  t->rec.nwritten_bytes += io.written_bytes;
  t->rec.writes += io.writes;
}

void TxgManager::RequestSync(uint64_t txg, SyncReason reason) {
  MutexLock l(&mu_);
  if (open_->rec.txg == txg && open_->requested == SyncReason::kNone) {
    open_->requested = reason;
    cv_.SignalAll();
  }
}

Status TxgManager::WaitSynced(uint64_t txg, SyncReason reason) {
  MutexLock l(&mu_);
  ARC_CHECK_LE(txg, open_->rec.txg) << "wait for a txg that is not open yet";
  // An open txg nobody was ever assigned to has nothing to commit: what
  // came before it is what the caller needs. (Dirty bytes do not tell: a
  // writer that charged 0 may still have changed the txg.)
  if (txg == open_->rec.txg && !open_->assigned && !open_->forced) {
    txg--;
  }
  while (failed_.ok() && last_committed_ < txg) {
    if (open_->rec.txg == txg && open_->requested == SyncReason::kNone) {
      open_->requested = reason;
      cv_.SignalAll();
    }
    if (!started_ || (stopping_ && !sync_thread_.joinable())) {
      return Status::Aborted("txg: no sync thread to commit txg " + std::to_string(txg));
    }
    cv_.Wait(&mu_);
  }
  return failed_;
}

Status TxgManager::ForceSync(SyncReason reason) {
  uint64_t txg;
  {
    MutexLock l(&mu_);
    if (!failed_.ok()) return failed_;
    open_->forced = true;
    if (open_->requested == SyncReason::kNone) open_->requested = reason;
    txg = open_->rec.txg;
    cv_.SignalAll();
  }
  return WaitSynced(txg, reason);
}

Status TxgManager::WaitNextCommit(SyncReason reason) {
  MutexLock l(&mu_);
  if (!failed_.ok()) return failed_;
  // The next txg to commit: nothing older than the open txg is in flight
  // when none is syncing or quiescing.
  const uint64_t target = last_committed_ + 1;
  if (syncing_ == nullptr && quiescing_ == nullptr) open_->forced = true;
  if (open_->requested == SyncReason::kNone && (open_->assigned || open_->forced)) {
    open_->requested = reason;
  }
  cv_.SignalAll();
  while (failed_.ok() && last_committed_ < target) {
    if (!started_ || (stopping_ && !sync_thread_.joinable())) {
      return Status::Aborted("txg: no sync thread to commit txg " + std::to_string(target));
    }
    cv_.Wait(&mu_);
  }
  return failed_;
}

uint64_t TxgManager::open_txg() {
  MutexLock l(&mu_);
  return open_->rec.txg;
}

uint64_t TxgManager::last_committed_txg() {
  MutexLock l(&mu_);
  return last_committed_;
}

uint64_t TxgManager::unsynced_dirty_bytes() {
  MutexLock l(&mu_);
  return unsynced_bytes_;
}

bool TxgManager::HasUncommittedWork() {
  MutexLock l(&mu_);
  return syncing_ != nullptr || quiescing_ != nullptr || open_->assigned || open_->forced;
}

bool TxgManager::OpenHasWork() {
  return open_->assigned || open_->forced;  // dirty bytes imply a hold
}

bool TxgManager::SyncWanted(uint64_t now_ns, SyncReason* reason) {
  const bool has_work = OpenHasWork();
  if (stopping_) {
    *reason = SyncReason::kShutdown;
    return has_work;
  }
  if (open_->requested != SyncReason::kNone && has_work) {
    *reason = open_->requested;
    return true;
  }
  if ((has_work || DeferredWork()) && now_ns >= open_->rec.birth_ns + options_.timeout_ns) {
    *reason = SyncReason::kTimeout;
    return true;
  }
  return false;
}

bool TxgManager::DeferredWork() const {
  return options_.has_deferred_work && options_.has_deferred_work();
}

void TxgManager::Retire(std::unique_ptr<Txg> t) {
  if (history_.size() >= options_.history_length) history_.erase(history_.begin());
  history_.push_back(t->rec);
}

void TxgManager::Fail(const Status& why) {
  MutexLock l(&mu_);
  if (failed_.ok()) failed_ = why;
  cv_.SignalAll();
}

void TxgManager::SyncLoop() {
  NameThisThread("txg_sync");
  // A thread that may not lower its priority still syncs; the gauge shows
  // the nice value it runs at.
  if (options_.sync_thread_nice > 0) (void)NiceThisThread(options_.sync_thread_nice);
  sync_thread_nice_.store(ThisThreadNice(), std::memory_order_relaxed);
  MutexLock l(&mu_);
  while (true) {
    SyncReason reason = SyncReason::kNone;
    while (!SyncWanted(clock_->NowNs(), &reason)) {
      if (stopping_ || !failed_.ok()) return;
      const uint64_t now = clock_->NowNs();
      const uint64_t due = open_->rec.birth_ns + options_.timeout_ns;
      if (real_clock_ && !OpenHasWork() && !DeferredWork()) {
        // Nothing to sync: sleep until a writer's first hold on the open
        // txg (AssignImpl), a request, a force or the stop wakes us. An
        // idle pool costs no wake-ups (each one a context switch that a
        // polling connection thread or a client would pay for).
        sync_idle_ = true;
        cv_.Wait(&mu_);
        sync_idle_ = false;
      } else if (real_clock_) {
        cv_.WaitFor(&mu_, std::chrono::nanoseconds(due > now ? due - now : 10 * kNsPerMs));
      } else {
        // The timeout is measured on the injected clock, which moves
        // without telling us: look every 10 ms of real time. An open txg
        // past its timeout with nothing in it waits the 10 ms too: waking
        // at once would spin while the pool is idle.
        const uint64_t wait_ns = due > now ? std::min<uint64_t>(due - now, 10 * kNsPerMs)
                                           : 10 * kNsPerMs;
        cv_.WaitFor(&mu_, std::chrono::nanoseconds(wait_ns));
      }
      stats_.sync_thread_wakeups->Add();
    }
    if (!failed_.ok()) return;  // failed from outside (Fail) while waiting
    // Quiesce: the open txg stops taking writers and the next one opens.
    uint64_t now = clock_->NowNs();
    quiescing_ = std::move(open_);
    quiescing_->rec.reason = reason;
    quiescing_->rec.state = TxgState::kQuiescing;
    quiescing_->rec.otime_ns = now - quiescing_->rec.birth_ns;
    OpenNext(now);
    cv_.SignalAll();
    while (quiescing_->holds > 0) cv_.Wait(&mu_);
    const uint64_t quiesced = clock_->NowNs();
    quiescing_->rec.qtime_ns = quiesced - now;
    // Sync, without the lock.
    syncing_ = std::move(quiescing_);
    syncing_->rec.state = TxgState::kSyncing;
    const uint64_t txg = syncing_->rec.txg;
    mu_.Unlock();
    Status s = sync_(txg);
    mu_.Lock();
    const uint64_t synced = clock_->NowNs();
    syncing_->rec.stime_ns = synced - quiesced;
    stats_.sync_time_ns->Record(syncing_->rec.stime_ns);
    stats_.txg_dirty_bytes->Record(syncing_->rec.ndirty_bytes);
    if (stats_.syncs_by_reason[static_cast<int>(reason)] != nullptr) {
      stats_.syncs_by_reason[static_cast<int>(reason)]->Add();
    }
    // Whatever the sync did not undirty record by record is clean now.
    unsynced_bytes_ -= syncing_->dirty_bytes;
    syncing_->dirty_bytes = 0;
    if (!s.ok()) {
      failed_ = s.WithContext("txg " + std::to_string(txg) + " failed to sync");
      syncing_->rec.state = TxgState::kFailed;
      Retire(std::move(syncing_));
      cv_.SignalAll();
      return;
    }
    syncing_->rec.state = TxgState::kCommitted;
    last_committed_ = txg;
    Retire(std::move(syncing_));
    cv_.SignalAll();
  }
}

std::vector<TxgRecord> TxgManager::History() {
  MutexLock l(&mu_);
  std::vector<TxgRecord> out = history_;
  const uint64_t now = clock_->NowNs();
  for (Txg* t : {syncing_.get(), quiescing_.get(), open_.get()}) {
    if (t == nullptr) continue;
    TxgRecord r = t->rec;
    if (r.state == TxgState::kOpen) r.otime_ns = now - r.birth_ns;
    out.push_back(r);
  }
  return out;
}

}  // namespace arcstore::txg
