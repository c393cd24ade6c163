// The engine's ARC: theory of operation.
//
// PURPOSE
//   Keep the blocks the engine reads and writes in memory, as many as the
//   target c allows, choosing what to keep with the adaptive replacement
//   policy, and give memory back when the machine needs it, visibly.
//
// MODEL
//   A buffer is a Header (key, size, holds, state) plus its data. Headers
//   are found through a hash table split into shards; the replacement state
//   lives in one CachePolicy (cache_policy.h): ArcPolicy (policy.h), the
//   very code `arcstore sim` runs, alone (ArcOptions::policy = kArc) or
//   with Duet's LIRS ordering and duel naming the victims (kDuet).
//
//     Lookup(key) --shard--> Header? --+-- resident (MRU/MFU): hit, hold it
//                                      +-- being filled: wait (iohit)
//                                      +-- ghost: adapt p, FillToken (-> MFU)
//                                      +-- absent: new Header, FillToken (-> MRU)
//     FillToken.buffer(): reserve memory (maybe wait), Insert (pinned)
//     FillToken.Finish(): waiters wake; the token becomes a hold
//       (FinishUncached(): the same, but the buffer leaves the cache: an
//       orphan its caller holds, for a version the key no longer names)
//     AllocateAnon() -> anon (dirty) --Publish(key)--> MRU
//
//        anon            MRU            MFU          MRU-ghost     MFU-ghost
//     [dirty,held] --> [seen once] --> [twice+]     [keys only]   [keys only]
//                        |  REPLACE by p   |            ^             ^
//                        |  (Duet: LIRS's  |            |             |
//                        |  victim when    |            |             |
//                        |  LIRS leads)    |            |             |
//                        +-----------------+------------+-------------+
//                              evictor (background thread)
//
//   States and sizes are ZFS's: per state, size and evictable size, data vs
//   metadata. A buffer is evictable only when it has no holds and no I/O in
//   flight; such buffers are the only ones on the policy's lists. Holds are
//   RAII handles carrying a HolderKind; held bytes are kept per kind.
//
// MEMORY AND EVICTION
//   size = data of anon + MRU + MFU + every header (ghosts included). An
//   allocation (a fill's buffer, an anon buffer and its header, a missed
//   key's header) first grows c when size is near c and memory is free (no
//   pressure in the last reading, no pressure for grow_holdoff_ns), then
//   RESERVES its bytes: one compare-and-swap adds them to size unless size
//   would pass the SEVERE line, so that concurrent allocators can never all
//   pass the check and then all add (they did: 68.6 MiB against a 64.4 MiB
//   bound). The reservation becomes the buffer's (or header's) bytes and is
//   subtracted when they are freed. With ovf = max(largest record,
//   c >> overflow_shift):
//     size + request <= c + ovf/2           NONE    go on
//     size + request >  c + ovf/2           SOME    wake the evictor, go on
//     size + request >  c + 1.5 ovf         SEVERE  reserve nothing; wait:
//                    target = max(previous waiter's target, evict_count) +
//                    eviction_pct% of the request; then try again
//   A header needed by a miss is reserved under its shard lock without
//   waiting; when it does not fit, the lookup drops the lock, waits and
//   looks again. So size never passes c + 1.5 ovf, except when eviction
//   can free nothing (every buffer held): a waiter released by such a pass
//   then waits for a buffer to be released (unpinned or freed), up to
//   stuck_wait_ns, and reserves anyway after that, counted in
//   reserve_forced. Data buffers come from a
//   BufferAllocator (buffer_allocator.h): records of 64 KiB and more are
//   mapped by the ARC and unmapped when freed (except a cache of freed ones
//   that fits the room c - size), so the process's resident set follows c.
//   The evictor, once woken, runs passes until size <= c. A pass REPLACEs
//   (policy) in batches of evict_batch under policy_mu_, trims the ghost
//   lists, frees outside the locks and credits evict_count, the monotonic
//   count of bytes really freed: a buffer's data, or a ghost header's own
//   bytes (never the ghost's logical size: OpenZFS PR 12279). Waiters whose
//   target is reached are released in order. A pass that ends with size
//   still above c, nothing freed and nothing left to evict (stuck) releases
//   every waiter and is counted (evict_passes_no_progress); the released
//   allocators reserve past the line (reserve_forced): a fully pinned cache
//   overshoots c visibly, held_bytes_<kind> names the pinner, and nothing
//   deadlocks. A pass that freed nothing only because size was at or below
//   c when it looked is not stuck: eviction goes on.
//
// THE SECOND LEVEL
//   A buffer's filler (FillToken::set_origin) or publisher names where its
//   bytes are kept (ArcOrigin: for the pool, the block's place and birth
//   txg). A buffer REPLACE evicts from MRU or MFU with a known origin is
//   offered to the eviction sink (SetEvictionSink: the L2 cache) with its
//   bytes, after the locks are released and before its memory is freed:
//
//     REPLACE --OnEvicted--> Reclaim {data, offers} --unlock--> sink.OnEvict
//                                                               then free
//   Buffers dropped because a newer version was published, or with their
//   volume, are not offered: their bytes are no longer anyone's. The sink
//   copies what it wants and never waits for I/O; SetEvictionSink returns
//   once the calls to the sink it replaces have ended.
//
// TARGET c
//   c_max = c_max_percent of the monitor's limit (or c_max_bytes, or a cap
//   from SetMaxBytes), c_min = max(c_max / 32, 64 MiB). Tick() (every
//   monitor_interval_ns on the evictor thread) reads the monitor: a new limit
//   moves c_max (cause kLimit); pressure shrinks c by one step, never below
//   c_min (cause kPressure, with the monitor's reason), and holds growth
//   off. A shortage (available memory below the monitor's low threshold)
//   steps from base = min(c, size); stalls alone (PSI over its threshold
//   while memory is available: reclaim of the page cache, which the kernel
//   does whatever the ARC holds) step from base = c. The step is
//   base >> shrink_shift, so a burst of stalls costs a few percent of c per
//   tick and never drops c from c_max to what a fresh ARC holds. If the last
//   pass freed nothing, it refuses to shrink further and records
//   kShrinkStopped once. Every change goes to TargetHistory() and the
//   c_changes_<cause> counters; subscribers (the handle cache) are called.
//
// INVARIANTS (CheckInvariants checks them all)
//   - per state and kind, size = sum of its headers' bytes; evictable = sum
//     of its listed (unpinned) headers' bytes <= size; ghosts are all listed;
//   - resident and unpinned <=> on its list; ghosts have no holds, no data;
//     anon and MRU/MFU have data; anon is held and unhashed;
//   - MRU + MRU-ghost <= c unless MRU-ghost is empty; the four lists <= 2c
//     unless both ghosts are empty; p in [c >> p_min_shift, c - that];
//   - holds = sum of holds by kind; held_bytes_[k] = sum of bytes x holds of
//     kind k; size = data + headers x header bytes; c_min <= c <= c_max.
//
// LOCKING (in acquisition order; never the other way)
//   pass_mu_     one eviction pass at a time (and the invariant check)
//   target_mu_   c, c_min, c_max, the history
//   shard.mu     a shard's table and its headers' hold/fill fields; several
//                only in ascending index (the invariant check, destruction)
//   policy_mu_   the policy (lists, sizes, p), headers' state and data
//   evict_mu_    waiters, evict_count, the evictor's flags
//   subs_mu_     subscribers (a leaf; callbacks run with no lock held)
//   sink_mu_     the eviction sink and its calls in progress (a leaf; the
//                sink is called with no lock held)
//   The policy never calls out with a lock held: what it evicts or drops is
//   collected in a Reclaim and freed after the locks are released.
//
// OPTIONS (arc_options.h): c_max/c_min/initial c, holdoff, shrink step,
//   free threshold, monitor interval, overflow shift, eviction %, batch,
//   min residence (ZFS ARC_MINTIME), p floor, list sublists, hash shards,
//   and who evicts (a thread; or, for deterministic tests, the waiting
//   thread itself, or nobody until RunEvictionPass). List sublists (ZFS
//   multilists) live under the one policy_mu_ here: they reproduce ZFS's
//   per-sublist LRU order, not its per-sublist locking; the hash shards are
//   what spreads lookups. `arcstore sim` runs the policy alone with all
//   refinements off.
//
// STATS: module "arcstats" (arc_stats.cc), arcstats names where the concept
//   is the same.
#include "arc/arc.h"

#include <algorithm>

#include "arc/arc_internal.h"
#include "base/units.h"

namespace arcstore::arc {
namespace {

PolicyOptions EnginePolicyOptions(const ArcOptions& o) {
  PolicyOptions p;
  p.c_bytes = 1;  // set by Init from the monitor
  p.synchronous_replace = false;
  p.min_residence_ns = o.min_residence_ns;
  p.p_min_shift = o.p_min_shift;
  p.sublists = o.list_sublists;
  return p;
}

}  // namespace

// ---- Creation -----------------------------------------------------------------

Result<std::unique_ptr<Arc>> Arc::Create(const ArcOptions& options, const ArcEnv& env) {
  ARC_RETURN_IF_ERROR(options.Validate());
  if (env.clock == nullptr || env.monitor == nullptr) {
    return Status::InvalidArgument("arc: a clock and a memory monitor are required");
  }
  std::unique_ptr<Arc> arc(new Arc(options, env));
  ARC_RETURN_IF_ERROR(arc->Init());
  return arc;
}

Arc::Arc(const ArcOptions& options, const ArcEnv& env)
    : options_(options),
      clock_(env.clock),
      monitor_(env.monitor),
      own_registry_(env.registry == nullptr ? std::make_unique<stats::Registry>() : nullptr),
      registry_(env.registry != nullptr ? env.registry : own_registry_.get()),
      stats_module_(env.stats_module),
      header_bytes_(sizeof(Header)),
      stats_(std::make_unique<Stats>()),
      hooks_(std::make_unique<Hooks>(this)),
      buffers_(options.buffers),
      shards_(std::make_unique<Shard[]>(options.hash_shards)),
      shard_count_(options.hash_shards),
      policy_(options.policy, EnginePolicyOptions(options), options.duet, hooks_.get()),
      reclaim_(std::make_unique<Reclaim>()) {
  largest_bytes_ = options.initial_largest_bytes;
  // Freed buffers may be kept in the room below c (buffer_allocator.h).
  buffers_.AttachRoom([this]() -> uint64_t {
    const int64_t room = static_cast<int64_t>(c_bytes_.load(std::memory_order_relaxed)) -
                         size_bytes_.load(std::memory_order_relaxed);
    return room > 0 ? static_cast<uint64_t>(room) : 0;
  });
}

Arc::~Arc() {
  {
    MutexLock l(&evict_mu_);
    shutdown_ = true;
    evict_cv_.SignalAll();
  }
  if (evictor_.joinable()) evictor_.join();
  {
    MutexLock l(&evict_mu_);
    ReleaseAllWaiters(false, /*stuck=*/true);
  }
  buffers_.StopFiller();        // it counts the slabs it maps
  buffers_.AttachCounters({});  // the buffers freed below outlive the stats
  buffers_.AttachRoom({});      // and this ARC's c and size
  registry_->RemoveModule(stats_module_);
  for (int k = 0; k < kNumHolderKinds; k++) {
    ARC_CHECK_EQ(HeldBytes(k), 0)
        << "ARC destroyed while " << HolderKindName(static_cast<HolderKind>(k)) << " holds buffers";
  }
  for (uint32_t i = 0; i < shard_count_; i++) {
    Shard& sh = shards_[i];
    MutexLock l(&sh.mu);
    while (sh.all != nullptr) {
      Header* h = sh.all;
      sh.UnlinkAll(h);
      delete h;
    }
  }
}

// ---- Headers ------------------------------------------------------------------

uint32_t Arc::ShardIndexOf(const ArcKey& key) const {
  return static_cast<uint32_t>(key.Hash() & (shard_count_ - 1));
}

Arc::Shard& Arc::ShardOf(uint32_t index) const { return shards_[index]; }

Header* Arc::NewHeader(const ArcKey& key, uint64_t bytes, BufKind kind, uint32_t shard)
    ARC_NO_THREAD_SAFETY_ANALYSIS /* caller holds shards_[shard].mu */ {
  Header* h = new Header();
  h->key = key;
  h->key_hash = key.Hash();
  h->bytes = static_cast<uint32_t>(bytes);
  h->kind = kind;
  h->shard = shard;
  h->sublist = static_cast<uint8_t>((h->key_hash >> 40) % options_.list_sublists);
  shards_[shard].LinkAll(h);
  live_headers_.fetch_add(1, std::memory_order_relaxed);  // its bytes: reserved by the caller
  uint64_t largest = largest_bytes_.load(std::memory_order_relaxed);
  while (bytes > largest && !largest_bytes_.compare_exchange_weak(largest, bytes)) {
  }
  return h;
}

// Caller holds the header's shard lock; the header is out of the hash table
// and the policy.
void Arc::FreeHeader(Header* h) ARC_NO_THREAD_SAFETY_ANALYSIS {
  shards_[h->shard].UnlinkAll(h);
  live_headers_.fetch_sub(1, std::memory_order_relaxed);
  size_bytes_.fetch_sub(static_cast<int64_t>(header_bytes_), std::memory_order_relaxed);
  delete h;
}

void Arc::FreeIfUnreferenced(Header* h) {
  if (h->dead && h->holds == 0 && h->waiters == 0) FreeHeader(h);
}

// ---- Holds --------------------------------------------------------------------

int64_t Arc::HeldBytes(int kind) const {
  int64_t total = 0;
  for (uint32_t i = 0; i < shard_count_; i++) total += shards_[i].held[kind].load(std::memory_order_relaxed);
  return total;
}

void Arc::AddHoldLocked(Header* h, HolderKind kind) ARC_NO_THREAD_SAFETY_ANALYSIS /* h's shard lock */ {
  h->holds++;
  h->holds_by_kind[static_cast<int>(kind)]++;
  shards_[h->shard].AddHeld(static_cast<int>(kind), static_cast<int64_t>(h->bytes));
}

void Arc::RemoveHoldLocked(Header* h, HolderKind kind) ARC_NO_THREAD_SAFETY_ANALYSIS /* h's shard lock */ {
  const int k = static_cast<int>(kind);
  ARC_CHECK_GT(h->holds_by_kind[k], 0u) << "releasing a " << HolderKindName(kind)
                                        << " hold that was not taken: " << h->key.ToString();
  h->holds--;
  h->holds_by_kind[k]--;
  shards_[h->shard].AddHeld(k, -static_cast<int64_t>(h->bytes));
}

void Arc::Release(Header* h, HolderKind kind) {
  Reclaim r;
  bool unpinned = false;
  {
    Shard& sh = shards_[h->shard];
    MutexLock l(&sh.mu);
    RemoveHoldLocked(h, kind);
    if (h->holds == 0 && !h->io_in_flight) {
      MutexLock pl(&policy_mu_);
      if (h->hashed) {
        // Resident and cached: evictable again, at its list's head; unless
        // lookups woken by its fill have yet to take their holds (evicting
        // and freeing it under them would be a use after free).
        if (h->waiters == 0) {
          policy_.Unpin(h);
          unpinned = true;
        }
      } else {
        // Anon, or an orphan (its volume was removed or a newer version
        // published while it was held): it leaves.
        if (h->data) {
          r.data.push_back(std::move(h->data));
          r.data_bytes += h->bytes;
        }
        policy_.Remove(h);
        h->dead = true;
      }
    }
    if (h->dead) FreeIfUnreferenced(h);
  }
  FreeReclaimed(r);
  if (unpinned) NoteUnpinned();
}

ArcHold Arc::CloneHold(Header* h, HolderKind kind) {
  Shard& sh = shards_[h->shard];
  MutexLock l(&sh.mu);
  ARC_CHECK_GT(h->holds, 0u);
  AddHoldLocked(h, kind);
  return ArcHold(this, h, kind);
}

ArcHold& ArcHold::operator=(ArcHold&& o) noexcept {
  if (this != &o) {
    Reset();
    arc_ = o.arc_;
    h_ = o.h_;
    kind_ = o.kind_;
    o.h_ = nullptr;
  }
  return *this;
}

void ArcHold::Reset() {
  if (h_ != nullptr) {
    Header* h = h_;
    h_ = nullptr;
    arc_->Release(h, kind_);
  }
}

std::span<const uint8_t> ArcHold::data() const {
  ARC_CHECK(h_ != nullptr);
  return {h_->data.get(), h_->bytes};
}

std::span<uint8_t> ArcHold::mutable_data() {
  ARC_CHECK(h_ != nullptr);
  return {h_->data.get(), h_->bytes};
}

uint64_t ArcHold::bytes() const { return h_ == nullptr ? 0 : h_->bytes; }

const ArcKey& ArcHold::key() const {
  ARC_CHECK(h_ != nullptr);
  return h_->key;
}

ArcHold ArcHold::Clone(HolderKind kind) const {
  ARC_CHECK(h_ != nullptr);
  return arc_->CloneHold(h_, kind);
}

bool ArcHold::shared() const {
  ARC_CHECK(h_ != nullptr);
  Arc::Shard& sh = arc_->ShardOf(h_->shard);
  MutexLock l(&sh.mu);
  return h_->holds > 1;
}

// ---- Lookup -------------------------------------------------------------------

void Arc::CountHit(const Header* h, const LookupOptions& o) {
  Stats& s = *stats_;
  s.hits->Add();
  const bool data = h->kind == BufKind::kData;
  if (o.access == AccessKind::kDemand) {
    (data ? s.demand_data_hits : s.demand_metadata_hits)->Add();
  } else {
    (data ? s.prefetch_data_hits : s.prefetch_metadata_hits)->Add();
  }
  (h->state == ArcState::kMru ? s.mru_hits : s.mfu_hits)->Add();
}

void Arc::CountMiss(BufKind kind, const LookupOptions& o) {
  Stats& s = *stats_;
  s.misses->Add();
  const bool data = kind == BufKind::kData;
  if (o.access == AccessKind::kDemand) {
    (data ? s.demand_data_misses : s.demand_metadata_misses)->Add();
  } else {
    (data ? s.prefetch_data_misses : s.prefetch_metadata_misses)->Add();
  }
}

bool Arc::Cached(const ArcKey& key) const {
  const uint64_t hash = key.Hash();
  Shard& sh = shards_[static_cast<uint32_t>(hash & (shard_count_ - 1))];
  MutexLock l(&sh.mu);
  const Header* h = sh.Find(key, hash);
  if (h == nullptr || h->io_in_flight) return false;
  if (h->holds > 0) return true;  // a held buffer is resident (ghosts have no holds)
  MutexLock pl(&policy_mu_);
  return !h->pending_drop && IsResident(h->state);
}

LookupResult Arc::Lookup(const ArcKey& key, const LookupOptions& o) {
  ARC_CHECK(o.bytes > 0 && o.bytes <= kMaxNodeBytes) << "lookup of " << key.ToString() << " with size " << o.bytes;
  LookupResult result;
  bool force = false;  // a new header goes past the SEVERE line (eviction is stuck)
  bool iohit = false;  // counted once per lookup
  std::chrono::steady_clock::time_point deadline{};
  while (!LookupOnce(key, o, force, &iohit, &result)) {
    // A new header's bytes would pass c + 1.5 ovf: wait with no lock held.
    force = WaitForRoom(header_bytes_, &deadline);
  }
  return result;
}

// False when a new header is needed and its bytes cannot be reserved now.
bool Arc::LookupOnce(const ArcKey& key, const LookupOptions& o, bool force, bool* counted_iohit,
                     LookupResult* out) {
  const uint64_t hash = key.Hash();
  const uint32_t si = static_cast<uint32_t>(hash & (shard_count_ - 1));
  Shard& sh = shards_[si];
  LookupResult& result = *out;
  bool& iohit = *counted_iohit;
  MutexLock l(&sh.mu);
  for (;;) {
    Header* h = sh.Find(key, hash);
    if (h != nullptr && h->io_in_flight) {
      if (!iohit) {
        iohit = true;
        stats_->iohits->Add();
        const bool data = o.kind == BufKind::kData;
        if (o.access == AccessKind::kDemand) {
          (data ? stats_->demand_data_iohits : stats_->demand_metadata_iohits)->Add();
        } else {
          (data ? stats_->prefetch_data_iohits : stats_->prefetch_metadata_iohits)->Add();
        }
      }
      h->waiters++;
      while (h->io_in_flight) sh.fill_cv.Wait(&sh.mu);
      h->waiters--;
      if (!h->hashed) {  // abandoned, or its volume went: look again
        FreeIfUnreferenced(h);
        continue;
      }
    }
    if (h != nullptr) {
      MutexLock pl(&policy_mu_);
      if (h->pending_drop) {
        sh.Unhash(h);  // the policy let it go; its dropper frees it
        h = nullptr;
      } else if (IsResident(h->state)) {
        if (!iohit) {
          CountHit(h, o);
          policy_.Hit(h, clock_->NowNs());
        }
        if (o.access == AccessKind::kDemand) h->prefetched.store(false, std::memory_order_relaxed);
        policy_.Pin(h);
        AddHoldLocked(h, o.holder);
        result.hold = ArcHold(this, h, o.holder);
        return true;
      } else {
        ARC_CHECK(IsGhost(h->state)) << StateName(h->state) << " " << key.ToString();
        CountMiss(o.kind, o);
        (h->state == ArcState::kMruGhost ? stats_->mru_ghost_hits : stats_->mfu_ghost_hits)->Add();
        const ArcState ghost = policy_.GhostHit(h);  // adapts p; off the ghost list
        h->fill_target = ArcState::kMfu;
        h->fill_in_b2 = ghost == ArcState::kMfuGhost;
        h->bytes = static_cast<uint32_t>(o.bytes);
        h->kind = o.kind;
      }
    }
    if (h == nullptr) {
      if (!TryReserve(header_bytes_, force)) return false;
      CountMiss(o.kind, o);
      h = NewHeader(key, o.bytes, o.kind, si);
      sh.Insert(h);
      h->fill_target = ArcState::kMru;
      h->fill_in_b2 = false;
    }
    h->io_in_flight = true;
    h->prefetched.store(o.access == AccessKind::kPrefetch, std::memory_order_relaxed);
    AddHoldLocked(h, HolderKind::kReadInFlight);
    result.fill = FillToken(this, h, o.holder);
    return true;
  }
}

// ---- Fill tokens --------------------------------------------------------------

std::span<uint8_t> Arc::FillBuffer(Header* h) {
  const uint64_t bytes = h->bytes;  // fixed: this token owns the fill
  ReserveMemory(bytes, /*header_bytes=*/0);  // the header's bytes came with the lookup
  ArcBuffer data = buffers_.Allocate(bytes);
  uint8_t* raw = data.get();
  Reclaim r;
  {
    Shard& sh = shards_[h->shard];
    MutexLock l(&sh.mu);
    MutexLock pl(&policy_mu_);
    h->data = std::move(data);  // its bytes: reserved above
    if (h->hashed) {
      policy_.Insert(h, h->fill_target, h->fill_in_b2, clock_->NowNs(), /*pinned=*/true);
    } else {
      policy_.InsertAnon(h);  // its volume was removed meanwhile: an orphan
    }
    TakeReclaim(&r);
  }
  FreeReclaimed(r);
  return {raw, bytes};
}

ArcHold Arc::FinishFill(Header* h, HolderKind kind, bool cache, const ArcOrigin& origin) {
  Shard& sh = shards_[h->shard];
  MutexLock l(&sh.mu);
  ARC_CHECK(h->io_in_flight);
  h->io_in_flight = false;
  RemoveHoldLocked(h, HolderKind::kReadInFlight);
  AddHoldLocked(h, kind);
  if (!cache && h->hashed) sh.Unhash(h);  // an orphan from here, as if a newer one was published
  {
    MutexLock pl(&policy_mu_);
    h->origin = origin;
    if (!h->hashed && IsResident(h->state)) policy_.MoveToAnon(h);
  }
  sh.fill_cv.SignalAll();
  return ArcHold(this, h, kind);
}

void Arc::AbandonFill(Header* h, bool buffered) {
  Reclaim r;
  {
    Shard& sh = shards_[h->shard];
    MutexLock l(&sh.mu);
    h->io_in_flight = false;
    if (h->hashed) sh.Unhash(h);
    {
      MutexLock pl(&policy_mu_);
      if (h->data) {
        r.data.push_back(std::move(h->data));
        r.data_bytes += h->bytes;
      }
      policy_.Remove(h);
    }
    RemoveHoldLocked(h, HolderKind::kReadInFlight);
    h->dead = true;
    sh.fill_cv.SignalAll();
    FreeIfUnreferenced(h);
  }
  stats_->fills_abandoned->Add();
  FreeReclaimed(r);
}

FillToken::FillToken(FillToken&& o) noexcept
    : arc_(o.arc_), h_(o.h_), kind_(o.kind_), buffered_(o.buffered_), origin_(o.origin_) {
  o.h_ = nullptr;
}

FillToken& FillToken::operator=(FillToken&& o) noexcept {
  if (this != &o) {
    Abandon();
    arc_ = o.arc_;
    h_ = o.h_;
    kind_ = o.kind_;
    buffered_ = o.buffered_;
    origin_ = o.origin_;
    o.h_ = nullptr;
  }
  return *this;
}

const ArcKey& FillToken::key() const {
  ARC_CHECK(h_ != nullptr);
  return h_->key;
}

uint64_t FillToken::bytes() const { return h_ == nullptr ? 0 : h_->bytes; }

std::span<uint8_t> FillToken::buffer() {
  ARC_CHECK(h_ != nullptr);
  if (!buffered_) {
    buffered_ = true;
    return arc_->FillBuffer(h_);
  }
  return {h_->data.get(), h_->bytes};
}

ArcHold FillToken::Finish() { return Finish(kind_); }

ArcHold FillToken::Finish(HolderKind kind) {
  ARC_CHECK(h_ != nullptr);
  ARC_CHECK(buffered_) << "Finish() before buffer(): nothing was read";
  Header* h = h_;
  h_ = nullptr;
  return arc_->FinishFill(h, kind, /*cache=*/true, origin_);
}

ArcHold FillToken::FinishUncached() {
  ARC_CHECK(h_ != nullptr);
  ARC_CHECK(buffered_) << "FinishUncached() before buffer(): nothing was read";
  Header* h = h_;
  h_ = nullptr;
  return arc_->FinishFill(h, kind_, /*cache=*/false, {});
}

void FillToken::Abandon() {
  if (h_ == nullptr) return;
  Header* h = h_;
  h_ = nullptr;
  arc_->AbandonFill(h, buffered_);
}

// ---- Anon buffers, publishing, volumes --------------------------------------------

ArcHold Arc::AllocateAnon(uint64_t bytes, BufKind kind, HolderKind holder) {
  ARC_CHECK(bytes > 0 && bytes <= kMaxNodeBytes) << "anon buffer of " << bytes << " bytes";
  ReserveMemory(bytes, header_bytes_);  // the data and its header
  ArcBuffer data = buffers_.Allocate(bytes);
  const uint32_t si =
      static_cast<uint32_t>(anon_rr_.fetch_add(1, std::memory_order_relaxed) & (shard_count_ - 1));
  Shard& sh = shards_[si];
  MutexLock l(&sh.mu);
  Header* h = NewHeader(ArcKey{}, bytes, kind, si);
  AddHoldLocked(h, holder);
  {
    MutexLock pl(&policy_mu_);
    h->data = std::move(data);
    policy_.InsertAnon(h);
  }
  return ArcHold(this, h, holder);
}

// Takes `e` (hashed, found under its shard lock) out of the cache: what is
// referenced stays alive as an orphan, the rest is freed.
void Arc::RemoveFromCacheLocked(Header* e, Reclaim* r) ARC_NO_THREAD_SAFETY_ANALYSIS {
  Shard& sh = shards_[e->shard];
  sh.Unhash(e);
  {
    MutexLock pl(&policy_mu_);
    if (e->pending_drop) return;  // its dropper frees it
    if (e->io_in_flight) return;  // the fill token finishes it as an orphan
    if (e->holds > 0) {
      if (IsResident(e->state)) policy_.MoveToAnon(e);
      return;  // freed at its last release
    }
    if (e->data) {
      r->data.push_back(std::move(e->data));
      r->data_bytes += e->bytes;
    }
    policy_.Remove(e);
  }
  e->dead = true;
  FreeIfUnreferenced(e);
}

ArcHold Arc::Publish(ArcHold hold, const ArcKey& key, const ArcOrigin& origin) {
  PublishInPlace(hold, key, origin);
  return hold;
}

void Arc::PublishInPlace(const ArcHold& hold, const ArcKey& key, const ArcOrigin& origin) {
  ARC_CHECK(hold.h_ != nullptr && hold.arc_ == this);
  Header* h = hold.h_;
  const HolderKind kind = hold.kind_;
  {
    Shard& old = shards_[h->shard];
    MutexLock l(&old.mu);
    ARC_CHECK(!h->hashed && h->holds == 1)
        << "Publish needs an anon buffer with one hold; it has " << h->holds;
    old.UnlinkAll(h);
    old.AddHeld(static_cast<int>(kind), -static_cast<int64_t>(h->bytes));
  }
  const uint64_t hash = key.Hash();
  const uint32_t si = static_cast<uint32_t>(hash & (shard_count_ - 1));
  Reclaim r;
  {
    Shard& sh = shards_[si];
    MutexLock l(&sh.mu);
    h->key = key;
    h->key_hash = hash;
    h->shard = si;
    h->sublist = static_cast<uint8_t>((hash >> 40) % options_.list_sublists);
    sh.LinkAll(h);
    sh.AddHeld(static_cast<int>(kind), static_cast<int64_t>(h->bytes));
    if (Header* e = sh.Find(key, hash); e != nullptr) RemoveFromCacheLocked(e, &r);
    sh.Insert(h);
    MutexLock pl(&policy_mu_);
    ARC_CHECK(h->state == ArcState::kAnon) << StateName(h->state);
    h->origin = origin;
    policy_.Remove(h);
    policy_.Insert(h, ArcState::kMru, false, clock_->NowNs(), /*pinned=*/true);
    TakeReclaim(&r);
  }
  FreeReclaimed(r);
}

uint64_t Arc::RemoveVolume(uint64_t volume_guid) {
  uint64_t removed = 0;
  std::vector<Header*> victims;
  for (uint32_t i = 0; i < shard_count_; i++) {
    Reclaim r;
    {
      Shard& sh = shards_[i];
      MutexLock l(&sh.mu);
      victims.clear();
      for (Header* chain : sh.buckets) {
        for (Header* h = chain; h != nullptr; h = h->hash_next) {
          if (h->key.volume_guid == volume_guid) victims.push_back(h);
        }
      }
      for (Header* h : victims) RemoveFromCacheLocked(h, &r);
      removed += victims.size();
    }
    FreeReclaimed(r);
  }
  stats_->volumes_removed->Add();
  return removed;
}

void Arc::CountMemoryThrottle() { stats_->memory_throttle_count->Add(); }

}  // namespace arcstore::arc
