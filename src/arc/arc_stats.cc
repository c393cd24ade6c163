// The ARC's stats (module "arcstats", OpenZFS arcstats names where the
// concept is the same), its size snapshot, and the invariant check.
#include <sstream>

#include "arc/arc.h"
#include "arc/arc_internal.h"

namespace arcstore::arc {

using stats::Unit;

void Arc::RegisterStats() {
  stats::Registry& r = *registry_;
  const std::string& m = stats_module_;
  Stats& s = *stats_;
  auto counter = [&](const char* name, Unit unit, const char* help) {
    return r.AddCounter(m, name, unit, help);
  };
  s.hits = counter("hits", Unit::kOps, "lookups that found the buffer resident");
  s.iohits = counter("iohits", Unit::kOps, "lookups that waited for another lookup's read");
  s.misses = counter("misses", Unit::kOps, "lookups that had to read (ghost hits included)");
  s.demand_data_hits = counter("demand_data_hits", Unit::kOps, "demand data hits");
  s.demand_data_iohits = counter("demand_data_iohits", Unit::kOps, "demand data iohits");
  s.demand_data_misses = counter("demand_data_misses", Unit::kOps, "demand data misses");
  s.demand_metadata_hits = counter("demand_metadata_hits", Unit::kOps, "demand metadata hits");
  s.demand_metadata_iohits = counter("demand_metadata_iohits", Unit::kOps, "demand metadata iohits");
  s.demand_metadata_misses = counter("demand_metadata_misses", Unit::kOps, "demand metadata misses");
  s.prefetch_data_hits = counter("prefetch_data_hits", Unit::kOps, "prefetch data hits");
  s.prefetch_data_iohits = counter("prefetch_data_iohits", Unit::kOps, "prefetch data iohits");
  s.prefetch_data_misses = counter("prefetch_data_misses", Unit::kOps, "prefetch data misses");
  s.prefetch_metadata_hits = counter("prefetch_metadata_hits", Unit::kOps, "prefetch metadata hits");
  s.prefetch_metadata_iohits = counter("prefetch_metadata_iohits", Unit::kOps, "prefetch metadata iohits");
  s.prefetch_metadata_misses = counter("prefetch_metadata_misses", Unit::kOps, "prefetch metadata misses");
  s.mru_hits = counter("mru_hits", Unit::kOps, "hits in MRU (promoted to MFU)");
  s.mfu_hits = counter("mfu_hits", Unit::kOps, "hits in MFU");
  s.mru_ghost_hits = counter("mru_ghost_hits", Unit::kOps, "misses found in MRU-ghost (p grows)");
  s.mfu_ghost_hits = counter("mfu_ghost_hits", Unit::kOps, "misses found in MFU-ghost (p shrinks)");
  s.deleted = counter("deleted", Unit::kOps, "headers freed after the policy dropped them (ghost trims)");
  s.evict_skip = counter("evict_skip", Unit::kOps,
                         "REPLACEs whose chosen list had nothing evictable (held or reading)");
  s.evict_not_enough = counter("evict_not_enough", Unit::kOps,
                               "eviction passes that ended with size still above c");
  s.evict_passes = counter("evict_passes", Unit::kOps, "eviction passes run");
  s.evict_passes_no_progress = counter("evict_passes_no_progress", Unit::kOps,
                                       "passes that freed nothing with size above c: waiters released");
  s.evict_freed_bytes = counter("evict_freed_bytes", Unit::kBytes,
                                "bytes really freed by the evictor (the counter waiters wait on)");
  s.evict_freed_hdr_bytes = counter("evict_freed_hdr_bytes", Unit::kBytes,
                                    "of which ghost and dropped headers' own bytes");
  s.memory_throttle_count = counter("memory_throttle_count", Unit::kOps,
                                    "writes that waited on the ARC dirty limit (txg layer)");
  s.fills_abandoned = counter("fills_abandoned", Unit::kOps, "fill tokens dropped unfinished");
  s.volumes_removed = counter("volumes_removed", Unit::kOps, "RemoveVolume calls");
  for (int k = 0; k < kNumTargetCauses; k++) {
    const std::string cause(TargetCauseName(static_cast<TargetCause>(k)));
    s.c_changes[k] = r.AddCounter(m, "c_changes_" + cause, Unit::kOps, "changes of c, cause " + cause);
    s.c_change_bytes[k] =
        r.AddCounter(m, "c_change_bytes_" + cause, Unit::kBytes, "bytes c moved, cause " + cause);
  }
  s.evict_waits = counter("evict_waits", Unit::kOps, "allocations that waited (SEVERE overflow)");
  buffers_.AttachCounters({
      .maps = counter("buf_maps", Unit::kOps, "mmap calls for data buffers and slabs of small ones"),
      .unmaps = counter("buf_unmaps", Unit::kOps, "data buffers given back (munmap; MADV_DONTNEED of a slab piece)"),
      .cache_hits = counter("buf_cache_hits", Unit::kOps,
                            "buffer allocations served from the cache of freed ones"),
      .inline_slabs = counter("buf_inline_slabs", Unit::kOps,
                              "slabs an allocation mapped itself, the filler having none ready"),
      .reserve_hits = counter("buf_reserve_hits", Unit::kOps,
                              "buffers and slabs cut from the reserve (pretouched or grown ahead) instead of mapped"),
  });
  s.reserve_forced = counter("reserve_forced", Unit::kOps,
                             "allocations let past c + 1.5 ovf because eviction could free nothing");
  s.waiters_released_target = counter("waiters_released_target", Unit::kOps,
                                      "waiters released because enough was really freed");
  s.waiters_released_pass_end = counter("waiters_released_pass_end", Unit::kOps,
                                        "waiters released at the end of eviction (under c, or no progress)");
  s.overflow_some_ns = counter("overflow_some_ns", Unit::kNanoseconds, "time spent in overflow SOME");
  s.overflow_severe_ns = counter("overflow_severe_ns", Unit::kNanoseconds, "time spent in overflow SEVERE");
  s.monitor_errors = counter("monitor_errors", Unit::kOps, "memory monitor reads that failed");
  s.evict_wait_ns = r.AddHistogram(m, "evict_wait_ns", Unit::kNanoseconds,
                                   "how long allocations waited for eviction");

  auto gauge = [&](const std::string& name, Unit unit, const std::string& help,
                   std::function<int64_t()> fn) { r.AddGaugeFn(m, name, unit, help, std::move(fn)); };
  gauge("policy", Unit::kNone, "the replacement policy: 0 arc, 1 duet",
        [this] { return static_cast<int64_t>(options_.policy); });
  if (options_.policy == PolicyKind::kDuet) RegisterDuetStats();
  gauge("c", Unit::kBytes, "target size", [this] { return static_cast<int64_t>(target_bytes()); });
  gauge("c_min", Unit::kBytes, "floor of c", [this] { return static_cast<int64_t>(c_min()); });
  gauge("c_max", Unit::kBytes, "ceiling of c", [this] { return static_cast<int64_t>(c_max()); });
  gauge("memory_all_bytes", Unit::kBytes, "the memory limit the ARC plans for",
        [this] { return static_cast<int64_t>(memory_limit_bytes_.load(std::memory_order_relaxed)); });
  gauge("memory_free_bytes", Unit::kBytes, "memory the monitor saw available",
        [this] { return static_cast<int64_t>(memory_free_bytes_.load(std::memory_order_relaxed)); });
  gauge("memory_available_bytes", Unit::kBytes,
        "available memory above the free floor (negative: pressure)",
        [this] { return memory_available_bytes_.load(std::memory_order_relaxed); });
  gauge("p", Unit::kBytes, "MRU target within c", [this] { return static_cast<int64_t>(Sizes().p); });
  gauge("size", Unit::kBytes, "data and headers", [this] { return size_bytes_.load(); });
  gauge("hdr_size", Unit::kBytes, "header bytes (ghosts included)",
        [this] { return live_headers_.load() * static_cast<int64_t>(header_bytes_); });
  gauge("data_size", Unit::kBytes, "data buffers of kind data", [this] {
    ArcSizes z = Sizes();
    uint64_t t = 0;
    for (ArcState st : {ArcState::kAnon, ArcState::kMru, ArcState::kMfu}) t += z.state_size[static_cast<int>(st)][0];
    return static_cast<int64_t>(t);
  });
  gauge("metadata_size", Unit::kBytes, "data buffers of kind metadata", [this] {
    ArcSizes z = Sizes();
    uint64_t t = 0;
    for (ArcState st : {ArcState::kAnon, ArcState::kMru, ArcState::kMfu}) t += z.state_size[static_cast<int>(st)][1];
    return static_cast<int64_t>(t);
  });
  gauge("arc_meta_used", Unit::kBytes, "metadata buffers plus headers", [this] {
    ArcSizes z = Sizes();
    uint64_t t = z.hdr_size;
    for (ArcState st : {ArcState::kAnon, ArcState::kMru, ArcState::kMfu}) t += z.state_size[static_cast<int>(st)][1];
    return static_cast<int64_t>(t);
  });
  for (int st = 0; st < kNumStates; st++) {
    const std::string name(StateName(static_cast<ArcState>(st)));
    gauge(name + "_size", Unit::kBytes, name + " bytes",
          [this, st] { ArcSizes z = Sizes(); return static_cast<int64_t>(z.state_size[st][0] + z.state_size[st][1]); });
    for (int k = 0; k < kNumBufKinds; k++) {
      const std::string kind(BufKindName(static_cast<BufKind>(k)));
      gauge(name + "_" + kind, Unit::kBytes, name + " " + kind + " bytes",
            [this, st, k] { return static_cast<int64_t>(Sizes().state_size[st][k]); });
      gauge(name + "_evictable_" + kind, Unit::kBytes, name + " " + kind + " bytes neither held nor reading",
            [this, st, k] { return static_cast<int64_t>(Sizes().state_evictable[st][k]); });
    }
  }
  for (int k = 0; k < kNumHolderKinds; k++) {
    const std::string kind(HolderKindName(static_cast<HolderKind>(k)));
    gauge("held_bytes_" + kind, Unit::kBytes, "bytes held by " + kind + " (per hold)",
          [this, k] { return HeldBytes(k); });
  }
  gauge("waiters", Unit::kOps, "allocations waiting for eviction now", [this] {
    MutexLock l(&evict_mu_);
    return static_cast<int64_t>(waiters_.size() - waiters_head_);
  });
  gauge("overflow_level", Unit::kNone, "0 none, 1 some, 2 severe",
        [this] { return static_cast<int64_t>(Overflow()); });
  gauge("buf_mapped_bytes", Unit::kBytes,
        "data buffers mapped by the ARC and resident (in use, cached, slab spares)",
        [this] { return static_cast<int64_t>(buffers_.Stats().mapped_bytes); });
  gauge("buf_spare_bytes", Unit::kBytes,
        "slab pieces not handed out yet (two slabs per class at most)",
        [this] { return static_cast<int64_t>(buffers_.Stats().spare_bytes); });
  gauge("buf_cached_bytes", Unit::kBytes, "freed buffers kept for reuse (mapped and heap)",
        [this] { return static_cast<int64_t>(buffers_.Stats().cached_bytes); });
  gauge("buf_reserve_bytes", Unit::kBytes,
        "the reserve: populated memory the filler made (pretouch, grow-ahead), not handed out",
        [this] { return static_cast<int64_t>(buffers_.Stats().reserve_bytes); });
  gauge("buf_pretouched_bytes", Unit::kBytes,
        "memory the filler made ready for the reserve, in all",
        [this] { return static_cast<int64_t>(buffers_.Stats().pretouched_bytes); });
  gauge("evict_count", Unit::kBytes, "the monotonic really-freed counter", [this] {
    MutexLock l(&evict_mu_);
    return static_cast<int64_t>(evict_count_);
  });
}

// Duet's state (cache_policy.h): where its victims came from as counters
// (EvictBatch adds them), the rest read from the policy when a snapshot is
// taken.
void Arc::RegisterDuetStats() {
  stats::Registry& r = *registry_;
  const std::string& m = stats_module_;
  Stats& s = *stats_;
  s.duet_evict_lirs = r.AddCounter(m, "duet_evict_lirs", Unit::kOps, "victims LIRS named (it led)");
  s.duet_evict_arc = r.AddCounter(m, "duet_evict_arc", Unit::kOps, "victims ARC's REPLACE named");
  s.duet_lirs_fallbacks = r.AddCounter(m, "duet_lirs_fallbacks", Unit::kOps,
                                       "victims ARC named while LIRS led: LIRS had none evictable");
  auto gauge = [&](const char* name, Unit unit, const char* help, int64_t (*fn)(const DuetState&)) {
    r.AddGaugeFn(m, name, unit, help, [this, fn] { return fn(Duet()); });
  };
  gauge("duet_leader", Unit::kNone, "who names victims: 0 ARC, 1 LIRS",
        [](const DuetState& d) -> int64_t { return d.leader == DuetLeader::kLirs ? 1 : 0; });
  gauge("duet_selector", Unit::kNone, "the selector naming the leader (the scouts' while they lead): >= 0 ARC, < 0 LIRS",
        [](const DuetState& d) -> int64_t { return d.selector; });
  gauge("duet_lir_size", Unit::kBytes, "LIRS's protected (LIR) set",
        [](const DuetState& d) { return static_cast<int64_t>(d.lir_bytes); });
  gauge("duet_hir_size", Unit::kBytes, "LIRS's resident HIR buffers (its queue Q)",
        [](const DuetState& d) { return static_cast<int64_t>(d.hir_bytes); });
  gauge("duet_hir_target", Unit::kBytes, "Lhirs: room for HIR buffers, c / 100 plus the pinned bytes",
        [](const DuetState& d) { return static_cast<int64_t>(d.hir_target); });
  gauge("duet_nonresident", Unit::kOps, "LIRS's non-resident entries (ghosts it remembers)",
        [](const DuetState& d) { return static_cast<int64_t>(d.nonresident); });
  gauge("duet_provisional", Unit::kOps, "LIR buffers with no reuse yet (the first to become HIR)",
        [](const DuetState& d) { return static_cast<int64_t>(d.provisional); });
  gauge("duet_remembered", Unit::kOps, "keys LIRS remembers past their ARC ghost",
        [](const DuetState& d) { return static_cast<int64_t>(d.remembered); });
  gauge("duet_remembered_lir", Unit::kOps, "references of remembered keys that became LIR, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.remembered_lir); });
  gauge("duet_shadow_pages", Unit::kOps, "the cache the duel's shadows stand for, in buffers",
        [](const DuetState& d) { return static_cast<int64_t>(d.shadow_pages); });
  gauge("duet_sampled", Unit::kOps, "references played in the duel, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.sampled); });
  gauge("duet_shadow_arc_hits", Unit::kOps, "hits of the ARC shadow, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.shadow_arc_hits); });
  gauge("duet_shadow_lirs_hits", Unit::kOps, "hits of the LIRS shadow, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.shadow_lirs_hits); });
  gauge("duet_leader_switches", Unit::kOps, "changes of leader, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.leader_switches); });
  gauge("duet_scouting", Unit::kNone,
        "1 while the duel's scouts name the leader (its shadows have not disagreed yet)",
        [](const DuetState& d) -> int64_t { return d.scouting ? 1 : 0; });
  gauge("duet_scout_sampled", Unit::kOps, "references played by the scouts, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.scout_sampled); });
  gauge("duet_scout_disagreements", Unit::kOps, "references on which the scouts disagreed, in all",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.scout_disagreements); });
  gauge("duet_shadow_resizes", Unit::kOps, "times the shadows were built anew for a new c",
        [](const DuetState& d) { return static_cast<int64_t>(d.duel.resizes); });
}

DuetState Arc::Duet() const {
  MutexLock pl(&policy_mu_);
  return policy_.duet_state();
}

ArcSizes Arc::Sizes() const {
  ArcSizes z;
  z.c = target_bytes();
  z.c_min = c_min();
  z.c_max = c_max();
  {
    MutexLock pl(&policy_mu_);
    z.p = policy_.p();
    for (int s = 0; s < kNumStates; s++) {
      for (int k = 0; k < kNumBufKinds; k++) {
        z.state_size[s][k] = policy_.Size(static_cast<ArcState>(s), static_cast<BufKind>(k));
        z.state_evictable[s][k] = policy_.Evictable(static_cast<ArcState>(s), static_cast<BufKind>(k));
      }
    }
  }
  z.size = size_bytes();
  z.headers = static_cast<uint64_t>(live_headers_.load());
  z.hdr_size = z.headers * header_bytes_;
  z.other_bytes = static_cast<uint64_t>(other_bytes_.load(std::memory_order_relaxed));
  for (int k = 0; k < kNumHolderKinds; k++) z.held_bytes[k] = static_cast<uint64_t>(HeldBytes(k));
  {
    MutexLock l(&evict_mu_);
    z.waiters = waiters_.size() - waiters_head_;
  }
  z.overflow = Overflow();
  z.ovf_bytes = std::max(largest_bytes_.load(), z.c >> options_.overflow_shift);
  return z;
}

// What CheckInvariants adds up over the headers, to compare with the
// policy's and the ARC's own counts.
struct Arc::InvariantTally {
  uint64_t size[kNumStates][kNumBufKinds] = {};
  uint64_t evictable[kNumStates][kNumBufKinds] = {};
  uint64_t data_bytes = 0;
  uint64_t live = 0;
};

namespace {

// One header's own invariants: holds by kind against the total, and what
// its state allows (data, holds, list membership, hashing).
void CheckHeaderState(const Header& h, const std::string& who, std::ostream& err) {
  uint32_t holds = 0;
  for (int k = 0; k < kNumHolderKinds; k++) holds += h.holds_by_kind[k];
  if (holds != h.holds) err << who << " holds " << h.holds << " != sum by kind " << holds << "; ";
  const bool pinned = h.holds > 0 || h.io_in_flight || h.waiters > 0;
  if (IsResident(h.state)) {
    if (pinned == h.on_list) err << who << (pinned ? " pinned but on its list; " : " unpinned but off its list; ");
    if (!h.data) err << who << " resident without data; ";
    if (!h.hashed && !h.io_in_flight) err << who << " resident but not cached; ";
  }
  if (IsGhost(h.state)) {
    if (h.holds > 0 || h.io_in_flight || h.data) err << who << " ghost with holds, I/O or data; ";
    if (!h.hashed && !h.pending_drop) err << who << " ghost not hashed; ";
  }
  if (h.state == ArcState::kAnon) {
    if (h.hashed) err << who << " anon in the hash table; ";
    if (h.holds == 0) err << who << " anon without holds; ";
    if (!h.data) err << who << " anon without data; ";
  }
  if (h.state == ArcState::kNone) {
    if (h.data) err << who << " out of the policy with data; ";
    if (!h.pending_drop && !h.io_in_flight && !h.dead) err << who << " lost: in no state; ";
  }
  if (h.pending_drop || h.dead) {
    err << who << " awaiting its free at a quiescent point (pending_drop " << h.pending_drop
        << " dead " << h.dead << " holds " << h.holds << " waiters " << h.waiters << " io "
        << h.io_in_flight << " hashed " << h.hashed << "); ";
  }
}

}  // namespace

void Arc::CheckShard(uint32_t index, InvariantTally* t, std::ostream& err) const {
  const Shard& sh = shards_[index];
  MutexLock l(&sh.mu);
  MutexLock pl(&policy_mu_);
  uint64_t hashed = 0, in_shard = 0;
  uint64_t shard_held[kNumHolderKinds] = {};
  for (const Header* h = sh.all; h != nullptr; h = h->all_next) {
    t->live++;
    in_shard++;
    const std::string who = h->key.ToString() + " (" + std::string(StateName(h->state)) + ")";
    if (h->shard != index) err << who << " on the wrong shard's list; ";
    if (h->hashed) {
      hashed++;
      if (sh.Find(h->key, h->key_hash) != h) err << who << " hashed but not found; ";
      if (h->key_hash != h->key.Hash()) err << who << " stale hash; ";
    }
    for (int k = 0; k < kNumHolderKinds; k++) shard_held[k] += uint64_t{h->holds_by_kind[k]} * h->bytes;
    CheckHeaderState(*h, who, err);
    if (h->state != ArcState::kNone) {
      t->size[static_cast<int>(h->state)][static_cast<int>(h->kind)] += h->bytes;
      if (h->on_list) t->evictable[static_cast<int>(h->state)][static_cast<int>(h->kind)] += h->bytes;
    }
    if (h->data) t->data_bytes += h->bytes;
  }
  if (hashed != sh.hashed) err << "shard " << index << " counts " << sh.hashed << " hashed, found " << hashed << "; ";
  if (in_shard != sh.live) err << "shard " << index << " counts " << sh.live << " live, found " << in_shard << "; ";
  // Compared per shard, under its lock, as holds change only under it.
  for (int k = 0; k < kNumHolderKinds; k++) {
    const int64_t counted = sh.held[k].load(std::memory_order_relaxed);
    if (static_cast<int64_t>(shard_held[k]) != counted) {
      err << "shard " << index << " held_bytes_" << HolderKindName(static_cast<HolderKind>(k)) << " " << counted
          << " != holds' " << shard_held[k] << "; ";
    }
  }
}

void Arc::CheckTotals(const InvariantTally& t, std::ostream& err) const {
  {
    MutexLock pl(&policy_mu_);
    if (Status s = policy_.CheckInvariants(); !s.ok()) err << s.message() << "; ";
    for (int s = 0; s < kNumStates; s++) {
      for (int k = 0; k < kNumBufKinds; k++) {
        const ArcState st = static_cast<ArcState>(s);
        const BufKind bk = static_cast<BufKind>(k);
        if (t.size[s][k] != policy_.Size(st, bk)) {
          err << StateName(st) << " " << BufKindName(bk) << " size " << policy_.Size(st, bk)
              << " != headers' " << t.size[s][k] << "; ";
        }
        if (t.evictable[s][k] != policy_.Evictable(st, bk)) {
          err << StateName(st) << " " << BufKindName(bk) << " evictable " << policy_.Evictable(st, bk)
              << " != headers' " << t.evictable[s][k] << "; ";
        }
      }
    }
    if (policy_.c() != c_bytes_.load()) err << "policy c " << policy_.c() << " != c " << c_bytes_.load() << "; ";
  }
  if (static_cast<int64_t>(t.live) != live_headers_.load()) err << "live headers " << live_headers_.load() << " != " << t.live << "; ";
  const int64_t want =
      static_cast<int64_t>(t.data_bytes + t.live * header_bytes_) + other_bytes_.load();
  if (size_bytes_.load() != want) {
    err << "size " << size_bytes_.load() << " != data + headers + other " << want << "; ";
  }
  if (c_bytes_.load() < c_min_.load() || c_bytes_.load() > c_max_.load()) {
    err << "c " << c_bytes_.load() << " outside [" << c_min_.load() << ", " << c_max_.load() << "]; ";
  }
}

// Walks the shards one at a time (holding them all at once would exceed what
// TSan's deadlock detector tracks, and is not needed: the caller guarantees
// a quiescent point, and pass_mu_ keeps the evictor out).
Status Arc::CheckInvariants() const {
  MutexLock pass(&pass_mu_);
  MutexLock target(&target_mu_);
  std::ostringstream err;
  InvariantTally tally;
  for (uint32_t i = 0; i < shard_count_; i++) CheckShard(i, &tally, err);
  CheckTotals(tally, err);
  const std::string e = err.str();
  return e.empty() ? Status::Ok() : Status::Internal("arc invariants: " + e);
}

}  // namespace arcstore::arc
