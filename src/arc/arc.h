// Arc: the engine's adaptive replacement cache of records and indirect
// blocks, and its control loops (target c, eviction, overflow throttling).
//
// What it is: a cache of byte buffers keyed by (volume guid, level, block
// id), with ZFS's states (anon, MRU, MFU and their ghosts), per-state byte
// accounting, holds, fill tokens and a background evictor. The replacement
// decisions are CachePolicy's (cache_policy.h): ArcPolicy (policy.h), the
// same code `arcstore sim` runs, or with ArcOptions::policy = kDuet, Duet
// over it.
// The theory of operation (model, invariants, lock order, options) is at the
// top of arc.cc.
//
// It knows nothing of disks. A read goes:
//
//   LookupResult r = arc.Lookup(key, {.bytes = 131072});
//   if (!r.hit()) {                       // a miss: this caller reads
//     std::span<uint8_t> buf = r.fill.buffer();   // may wait for eviction
//     ... read the block into buf, verify it ...
//     r.hold = r.fill.Finish();           // or drop r.fill on error
//   }
//   use r.hold.data(); the hold is released when r.hold goes away.
//
// Concurrent lookups of a key being filled wait for that one read and count
// as iohits. A write goes through anon: AllocateAnon() gives a dirty buffer
// (held, never evictable, not found by Lookup); once the txg has written it,
// Publish() makes it the cached version of its key.
//
// A thread holding an unfinished FillToken must not look up the same key:
// it would wait for itself.
//
// Thread-safety: every method may be called from any thread. ArcHold and
// FillToken are move-only handles owned by the caller; each must be
// destroyed (or Finish()ed) before the Arc. Callbacks given to
// SubscribeTarget run on the thread that changed c, with no ARC lock held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "arc/arc_options.h"
#include "arc/arc_types.h"
#include "arc/monitor/memory_monitor.h"
#include "arc/cache_policy.h"
#include "arc/policy.h"
#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "stats/registry.h"

namespace arcstore::arc {

class Arc;
struct Header;

// A hold on one buffer: while it lives the buffer stays in memory and is
// not evictable. Move-only; releasing is destroying it (or Reset()).
class ArcHold {
 public:
  ArcHold() = default;
  ~ArcHold() { Reset(); }
  ArcHold(ArcHold&& o) noexcept : arc_(o.arc_), h_(o.h_), kind_(o.kind_) { o.h_ = nullptr; }
  ArcHold& operator=(ArcHold&& o) noexcept;
  ArcHold(const ArcHold&) = delete;
  ArcHold& operator=(const ArcHold&) = delete;

  explicit operator bool() const { return h_ != nullptr; }
  std::span<const uint8_t> data() const;
  // Writable bytes: only for anon buffers (dirty records) of the holder.
  std::span<uint8_t> mutable_data();
  uint64_t bytes() const;
  const ArcKey& key() const;
  HolderKind kind() const { return kind_; }
  // Another hold on the same buffer, of `kind`.
  ArcHold Clone(HolderKind kind) const;
  // Whether another hold than this one exists now (takes the buffer's
  // shard lock). Only the caller can add holds to a buffer it alone can
  // reach (an anon buffer), so `false` stays true until it clones.
  bool shared() const;
  void Reset();

 private:
  friend class Arc;
  friend class FillToken;
  ArcHold(Arc* arc, Header* h, HolderKind kind) : arc_(arc), h_(h), kind_(kind) {}
  Arc* arc_ = nullptr;
  Header* h_ = nullptr;
  HolderKind kind_ = HolderKind::kApiUser;
};

// The right and duty to fill a missed buffer. Other lookups of the key wait
// until Finish() or until the token is dropped (then one of them gets a new
// token). While it lives its buffer is held by kind "read in flight".
class FillToken {
 public:
  FillToken() = default;
  ~FillToken() { Abandon(); }
  FillToken(FillToken&& o) noexcept;
  FillToken& operator=(FillToken&& o) noexcept;
  FillToken(const FillToken&) = delete;
  FillToken& operator=(const FillToken&) = delete;

  explicit operator bool() const { return h_ != nullptr; }
  const ArcKey& key() const;
  uint64_t bytes() const;
  // The buffer to read into, `bytes()` long. The first call reserves the
  // memory: it may wait for the evictor (SEVERE overflow).
  std::span<uint8_t> buffer();
  // The buffer is filled: wakes the waiters and turns the token into a hold
  // of `kind` (default: the lookup's holder kind).
  ArcHold Finish();
  ArcHold Finish(HolderKind kind);
  // The buffer is filled, but with a version its key no longer names (a
  // newer one was published while the caller read): the caller keeps it as
  // an anon buffer, freed at its last release; waiters look the key up
  // again and miss.
  ArcHold FinishUncached();
  // The fill failed or is not wanted: the buffer is dropped, waiters retry.
  void Abandon();
  // Where the bytes being read are kept (ArcOrigin); recorded at Finish().
  void set_origin(const ArcOrigin& origin) { origin_ = origin; }

 private:
  friend class Arc;
  FillToken(Arc* arc, Header* h, HolderKind kind) : arc_(arc), h_(h), kind_(kind) {}
  Arc* arc_ = nullptr;
  Header* h_ = nullptr;
  HolderKind kind_ = HolderKind::kApiUser;
  bool buffered_ = false;
  ArcOrigin origin_;
};

// Where evicted buffers go before their memory is freed: the second cache
// level (l2arc/). OnEvict is called for each buffer the policy evicts from
// MRU or MFU whose origin is known (not for buffers dropped because a newer
// version was published or their volume removed), with no ARC lock held,
// on the evicting thread; `data` is valid for the call only. It must not
// wait for I/O and must not call into the Arc.
class EvictionSink {
 public:
  virtual ~EvictionSink() = default;
  virtual void OnEvict(const ArcKey& key, const ArcOrigin& origin, BufKind kind,
                       bool prefetched, std::span<const uint8_t> data) = 0;
};

struct LookupOptions {
  uint64_t bytes = 0;  // the block's size; needed on a miss (> 0)
  BufKind kind = BufKind::kData;
  HolderKind holder = HolderKind::kApiUser;
  AccessKind access = AccessKind::kDemand;
};

struct LookupResult {
  bool hit() const { return static_cast<bool>(hold); }
  ArcHold hold;    // set on a hit (including an iohit)
  FillToken fill;  // set on a miss
};

// What the injected world gives the ARC.
struct ArcEnv {
  Clock* clock = nullptr;              // required
  MemoryMonitor* monitor = nullptr;    // required
  stats::Registry* registry = nullptr; // optional: stats are declared there
  std::string stats_module = "arcstats";
};

// One change of c (or a refusal to change it), as `arcstore summary` shows.
struct TargetChange {
  uint64_t time_ns = 0;
  TargetCause cause = TargetCause::kGrow;
  uint64_t from_bytes = 0;
  uint64_t to_bytes = 0;
  uint32_t events = 1;    // growth steps coalesced into this record
  std::string reason;     // the monitor's words, or what was set
};

// A point-in-time view of the accounting, for tools and tests.
struct ArcSizes {
  uint64_t c = 0, c_min = 0, c_max = 0;
  double p = 0;
  uint64_t size = 0;      // data of anon+MRU+MFU, data being freed, headers, other
  uint64_t hdr_size = 0;  // header bytes (ghosts included)
  uint64_t other_bytes = 0;  // ChargeOtherBytes: the cache devices' indexes
  uint64_t state_size[kNumStates][kNumBufKinds] = {};
  uint64_t state_evictable[kNumStates][kNumBufKinds] = {};
  uint64_t held_bytes[kNumHolderKinds] = {};
  uint64_t headers = 0;
  uint64_t waiters = 0;
  OverflowLevel overflow = OverflowLevel::kNone;
  uint64_t ovf_bytes = 0;
};

class Arc {
 public:
  static Result<std::unique_ptr<Arc>> Create(const ArcOptions& options, const ArcEnv& env);
  ~Arc();
  Arc(const Arc&) = delete;
  Arc& operator=(const Arc&) = delete;

  // ---- Buffers ----------------------------------------------------------
  LookupResult Lookup(const ArcKey& key, const LookupOptions& options);
  // A dirty buffer of `bytes` (state anon): held, never evictable, not in
  // the hash table. May wait for eviction.
  ArcHold AllocateAnon(uint64_t bytes, BufKind kind, HolderKind holder);
  // Whether `key` has a buffer in the cache now (MRU or MFU, not being
  // filled): a Lookup would hit without waiting for a read. Counts nothing
  // and changes no state; takes the key's shard lock (and the policy lock
  // when nothing holds the buffer) briefly and never waits. Only a hint:
  // the buffer may be evicted right after.
  bool Cached(const ArcKey& key) const;
  // Makes the anon buffer of `hold` (its only hold) the cached version of
  // `key`, in MRU; an older version is dropped (or, if held, left to its
  // holders as anon). Returns the same hold.
  // `origin`: where the txg stored the bytes (ArcOrigin).
  ArcHold Publish(ArcHold hold, const ArcKey& key, const ArcOrigin& origin = {});
  // The same for a hold that stays where it is: the hold object is not
  // touched, so its owner's readers may keep reading the bytes through it
  // meanwhile (they must not clone or release it).
  void PublishInPlace(const ArcHold& hold, const ArcKey& key, const ArcOrigin& origin = {});
  // Memory the ARC answers for beyond its buffers and headers: the second
  // cache level's index (the headers of blocks only on a cache device, as
  // OpenZFS counts l2_hdr_size in arc_size). Counted in size (so eviction
  // makes room for it) and in ArcSizes::other_bytes. Lock-free; may be
  // called with any lock held.
  void ChargeOtherBytes(int64_t delta);
  // Evicted buffers are offered to `sink` from now on (nullptr: to nobody).
  // Returns once no call to the sink set before is in progress, so the
  // caller may destroy that one. The sink must outlive its setting.
  void SetEvictionSink(EvictionSink* sink);
  // Drops every buffer of a volume (held ones leave the cache and are freed
  // at their last release). Returns how many headers were dropped.
  uint64_t RemoveVolume(uint64_t volume_guid);

  // ---- Target c ---------------------------------------------------------
  uint64_t target_bytes() const { return c_bytes_.load(std::memory_order_relaxed); }
  // Bumped by every change of c: a poller compares it with what it saw.
  uint64_t target_generation() const { return target_gen_.load(std::memory_order_acquire); }
  uint64_t c_min() const { return c_min_.load(std::memory_order_relaxed); }
  uint64_t c_max() const { return c_max_.load(std::memory_order_relaxed); }
  // `fn(new_c)` after every change of c, until the subscription is dropped.
  class Subscription {
   public:
    Subscription() = default;
    ~Subscription();
    Subscription(Subscription&& o) noexcept : arc_(o.arc_), id_(o.id_) { o.arc_ = nullptr; }
    Subscription& operator=(Subscription&& o) noexcept;

   private:
    friend class Arc;
    Subscription(Arc* arc, uint64_t id) : arc_(arc), id_(id) {}
    Arc* arc_ = nullptr;
    uint64_t id_ = 0;
  };
  [[nodiscard]] Subscription SubscribeTarget(std::function<void(uint64_t c_bytes)> fn);
  // A configured cap on c (0 = back to the derived c_max). Recorded as a
  // change of cause kSet when it moves c.
  void SetMaxBytes(uint64_t c_max_bytes);
  // The most recent changes of c, oldest first.
  std::vector<TargetChange> TargetHistory() const;

  // ---- Control loops (the background thread runs these; tests call them) --
  // Reads the monitor: follows the limit, shrinks c under pressure (one
  // bounded step per call), notes whether c may grow.
  void Tick();
  // One eviction pass as the evictor runs it: until size <= c or nothing
  // more can be freed. Returns the bytes really freed.
  uint64_t RunEvictionPass();
  // Blocks until the evictor has nothing to do (no pass wanted or running).
  void WaitEvictorIdle();

  // ---- Reading ----------------------------------------------------------
  ArcSizes Sizes() const;
  // Duet's segments, leader and duel (all zero under ARC).
  DuetState Duet() const;
  uint64_t size_bytes() const { return static_cast<uint64_t>(size_bytes_.load(std::memory_order_relaxed)); }
  OverflowLevel Overflow() const;
  // For the txg layer: a writer waited on the ARC dirty limit.
  void CountMemoryThrottle();
  // Every accounting invariant, checked by walking every header. Take it at
  // a quiescent point: no other ARC call in progress.
  Status CheckInvariants() const;
  const ArcOptions& options() const { return options_; }

 private:
  friend class ArcHold;
  friend class FillToken;
  struct Shard;
  struct Stats;
  struct Waiter;
  class Hooks;
  struct Reclaim;
  struct InvariantTally;

  Arc(const ArcOptions& options, const ArcEnv& env);
  Status Init();
  // CheckInvariants' two halves: one shard's headers (adding them to the
  // tally), then the tally against the policy's and the ARC's counts.
  void CheckShard(uint32_t index, InvariantTally* tally, std::ostream& err) const;
  void CheckTotals(const InvariantTally& tally, std::ostream& err) const;

  Shard& ShardOf(uint32_t index) const;
  uint32_t ShardIndexOf(const ArcKey& key) const;
  Header* NewHeader(const ArcKey& key, uint64_t bytes, BufKind kind, uint32_t shard);
  void FreeHeader(Header* h);
  void FreeIfUnreferenced(Header* h);
  void CountHit(const Header* h, const LookupOptions& o);
  // Bytes held by `kind` (a sum over the shards).
  int64_t HeldBytes(int kind) const;
  void CountMiss(BufKind kind, const LookupOptions& o);
  bool LookupOnce(const ArcKey& key, const LookupOptions& o, bool force, bool* counted_iohit,
                  LookupResult* out);

  // Holds (shard lock held).
  void AddHoldLocked(Header* h, HolderKind kind);
  void RemoveHoldLocked(Header* h, HolderKind kind);
  void Release(Header* h, HolderKind kind);
  ArcHold CloneHold(Header* h, HolderKind kind);

  // Fill tokens.
  std::span<uint8_t> FillBuffer(Header* h);
  ArcHold FinishFill(Header* h, HolderKind kind, bool cache, const ArcOrigin& origin);
  void AbandonFill(Header* h, bool buffered);

  // Memory: reservation, eviction, reclaim.
  // Adds `buffer_bytes` + `header_bytes` to size at once (waiting for
  // eviction while that would pass c + 1.5 ovf); the caller turns the
  // reservation into a buffer and, with header_bytes, its new header, whose
  // freeing subtracts it again. ovf follows the largest buffer_bytes.
  void ReserveMemory(uint64_t buffer_bytes, uint64_t header_bytes);
  void OfferEvicted(Reclaim& r);
  // Adds `bytes` to size unless that would pass c + 1.5 ovf (or `force`).
  bool TryReserve(uint64_t bytes, bool force);
  int64_t SevereLineBytes() const;
  bool WaitForEviction(uint64_t bytes);
  // WaitForEviction, then, when eviction is stuck, a wait for a release
  // until `deadline` (steady clock). True: pass the line (forced).
  bool WaitForRoom(uint64_t bytes, std::chrono::steady_clock::time_point* deadline);
  void NoteUnpinned();
  void WakeEvictor();
  void NoteOverflow(OverflowLevel level);
  void EvictorMain();
  uint64_t EvictBatch(bool* more, bool* exhausted);
  uint64_t FreeReclaimed(Reclaim& r);
  void TakeReclaim(Reclaim* out);
  void Credit(uint64_t freed_bytes);
  void ReleaseAllWaiters(bool count, bool stuck);
  void RemoveFromCacheLocked(Header* h, Reclaim* r);

  // Target c.
  void MaybeGrow(uint64_t bytes);
  void SetTargetLocked(uint64_t c_bytes, TargetCause cause, std::string reason, Reclaim* r)
      ARC_REQUIRES(target_mu_);
  void RecordChangeLocked(TargetCause cause, uint64_t from, uint64_t to, std::string reason)
      ARC_REQUIRES(target_mu_);
  void ApplyLimitLocked(const MemoryReading& reading, TargetCause cause, Reclaim* r)
      ARC_REQUIRES(target_mu_);
  std::string PinnedSummary() const;
  void NotifySubscribers(uint64_t c_bytes);
  void Unsubscribe(uint64_t id);

  void RegisterStats();
  void RegisterDuetStats();

  const ArcOptions options_;
  Clock* const clock_;
  MemoryMonitor* const monitor_;
  std::unique_ptr<stats::Registry> own_registry_;  // when the env gives none
  stats::Registry* const registry_;
  const std::string stats_module_;
  const uint64_t header_bytes_;
  std::unique_ptr<Stats> stats_;
  std::unique_ptr<Hooks> hooks_;
  BufferAllocator buffers_;  // outlives every header (declared before shards_)

  // Lock order (arc.cc explains): pass_mu_ -> target_mu_ -> shard.mu (by
  // ascending index when several) -> policy_mu_ -> evict_mu_; subs_mu_ is a
  // leaf.
  mutable Mutex pass_mu_ ARC_ACQUIRED_BEFORE(target_mu_);
  mutable Mutex target_mu_;
  std::unique_ptr<Shard[]> shards_;
  uint32_t shard_count_ = 0;
  mutable Mutex policy_mu_;
  CachePolicy policy_ ARC_GUARDED_BY(policy_mu_);
  std::unique_ptr<Reclaim> reclaim_ ARC_GUARDED_BY(policy_mu_);
  mutable Mutex evict_mu_;
  // The eviction sink and the calls to it in progress (sink_mu_ is a leaf,
  // not held during a call).
  Mutex sink_mu_;
  EvictionSink* sink_ ARC_GUARDED_BY(sink_mu_) = nullptr;
  int sink_calls_ ARC_GUARDED_BY(sink_mu_) = 0;
  CondVar sink_idle_cv_;
  std::atomic<bool> sink_set_{false};  // sink_ != nullptr, read without sink_mu_
  CondVar evict_cv_;     // the evictor waits here for work
  CondVar idle_cv_;      // WaitEvictorIdle waits here
  Mutex subs_mu_;

  // Sizes, readable without locks.
  std::atomic<int64_t> size_bytes_{0};
  std::atomic<int64_t> other_bytes_{0};  // ChargeOtherBytes
  std::atomic<int64_t> live_headers_{0};
  std::atomic<uint64_t> largest_bytes_{0};
  std::atomic<uint64_t> anon_rr_{0};

  // Target c.
  std::atomic<uint64_t> c_bytes_{0};
  std::atomic<uint64_t> c_min_{0};
  std::atomic<uint64_t> c_max_{0};
  std::atomic<uint64_t> target_gen_{0};
  std::atomic<bool> can_grow_{true};
  std::atomic<uint64_t> no_grow_until_ns_{0};
  uint64_t cap_bytes_ ARC_GUARDED_BY(target_mu_) = 0;
  uint64_t limit_bytes_ ARC_GUARDED_BY(target_mu_) = 0;
  std::string limit_source_ ARC_GUARDED_BY(target_mu_);
  bool shrink_stalled_noted_ ARC_GUARDED_BY(target_mu_) = false;
  std::vector<TargetChange> history_ ARC_GUARDED_BY(target_mu_);
  size_t history_next_ ARC_GUARDED_BY(target_mu_) = 0;

  // Eviction.
  bool evict_needed_ ARC_GUARDED_BY(evict_mu_) = false;
  bool pass_running_ ARC_GUARDED_BY(evict_mu_) = false;
  bool shutdown_ ARC_GUARDED_BY(evict_mu_) = false;
  std::atomic<bool> evict_needed_hint_{false};
  uint64_t evict_count_ ARC_GUARDED_BY(evict_mu_) = 0;  // bytes really freed, ever
  std::vector<Waiter*> waiters_ ARC_GUARDED_BY(evict_mu_);
  size_t waiters_head_ ARC_GUARDED_BY(evict_mu_) = 0;
  std::atomic<bool> last_pass_no_progress_{false};
  // Allocations waiting for a release while eviction is stuck, and the
  // count of releases (unpins, frees) they wait for.
  std::atomic<int> stuck_waiters_{0};
  uint64_t release_gen_ ARC_GUARDED_BY(evict_mu_) = 0;
  CondVar release_cv_;
  // The memory monitor's last reading (arcstats memory_*; 0 before one).
  std::atomic<uint64_t> memory_limit_bytes_{0};
  std::atomic<uint64_t> memory_free_bytes_{0};
  std::atomic<int64_t> memory_available_bytes_{0};  // free minus the free floor
  std::atomic<int> ovf_level_{0};
  uint64_t ovf_since_ns_ ARC_GUARDED_BY(evict_mu_) = 0;
  uint64_t next_tick_ns_ = 0;  // evictor thread only
  std::thread evictor_;

  // Subscribers.
  struct Subscriber {
    uint64_t id = 0;
    std::function<void(uint64_t)> fn;
    int running = 0;  // calls in progress (subs_mu_)
  };
  std::vector<std::shared_ptr<Subscriber>> subscribers_ ARC_GUARDED_BY(subs_mu_);
  CondVar subs_cv_;
  uint64_t next_sub_id_ ARC_GUARDED_BY(subs_mu_) = 1;
};

}  // namespace arcstore::arc
