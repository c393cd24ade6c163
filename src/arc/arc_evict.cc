// The ARC's memory side: reserving memory for new buffers (growth, overflow
// levels, waiting), the background evictor and its passes, and freeing what
// the policy let go. See the theory of operation in arc.cc.
#include <algorithm>
#include <chrono>

#include "arc/arc.h"
#include "arc/arc_internal.h"

namespace arcstore::arc {

OverflowLevel Arc::Overflow() const {
  const int64_t c = static_cast<int64_t>(c_bytes_.load(std::memory_order_relaxed));
  const int64_t size = size_bytes_.load(std::memory_order_relaxed);
  const int64_t ovf = std::max(static_cast<int64_t>(largest_bytes_.load(std::memory_order_relaxed)),
                               c >> options_.overflow_shift);
  const int64_t over = size - c - ovf / 2;
  if (over <= 0) return OverflowLevel::kNone;
  return over <= ovf ? OverflowLevel::kSome : OverflowLevel::kSevere;
}

void Arc::NoteOverflow(OverflowLevel level) {
  const int prev = ovf_level_.exchange(static_cast<int>(level), std::memory_order_relaxed);
  if (prev == static_cast<int>(level)) return;
  MutexLock l(&evict_mu_);
  const uint64_t now = clock_->NowNs();
  const uint64_t spent = now > ovf_since_ns_ ? now - ovf_since_ns_ : 0;
  if (prev == static_cast<int>(OverflowLevel::kSome)) stats_->overflow_some_ns->Add(spent);
  if (prev == static_cast<int>(OverflowLevel::kSevere)) stats_->overflow_severe_ns->Add(spent);
  ovf_since_ns_ = now;
}

int64_t Arc::SevereLineBytes() const {
  const int64_t c = static_cast<int64_t>(c_bytes_.load(std::memory_order_relaxed));
  const int64_t ovf = std::max(static_cast<int64_t>(largest_bytes_.load(std::memory_order_relaxed)),
                               c >> options_.overflow_shift);
  return c + ovf + ovf / 2;
}

// The reservation: one compare-and-swap on size_bytes_, so that concurrent
// allocators can never all pass the check and then all add their bytes.
bool Arc::TryReserve(uint64_t bytes, bool force) {
  const int64_t want = static_cast<int64_t>(bytes);
  const int64_t line = SevereLineBytes();
  int64_t size = size_bytes_.load(std::memory_order_relaxed);
  do {
    if (!force && size + want > line) return false;
  } while (!size_bytes_.compare_exchange_weak(size, size + want, std::memory_order_relaxed));
  if (force && size + want > line) stats_->reserve_forced->Add();
  const OverflowLevel level = Overflow();
  NoteOverflow(level);
  // SOME is advisory: wake the evictor, do not wait (ZFS takes no lock here either).
  if (level != OverflowLevel::kNone && !evict_needed_hint_.load(std::memory_order_relaxed)) {
    WakeEvictor();
  }
  return true;
}

void Arc::ReserveMemory(uint64_t buffer_bytes, uint64_t header_bytes) {
  uint64_t largest = largest_bytes_.load(std::memory_order_relaxed);
  while (buffer_bytes > largest && !largest_bytes_.compare_exchange_weak(largest, buffer_bytes)) {
  }
  const uint64_t bytes = buffer_bytes + header_bytes;
  MaybeGrow(bytes);
  bool force = false;
  std::chrono::steady_clock::time_point deadline{};
  while (!TryReserve(bytes, force)) {
    NoteOverflow(OverflowLevel::kSevere);
    force = WaitForRoom(bytes, &deadline);
  }
}

bool Arc::WaitForRoom(uint64_t bytes, std::chrono::steady_clock::time_point* deadline) {
  if (!WaitForEviction(bytes)) return false;
  // Stuck: every buffer is held. Held buffers come back (a txg commits, a
  // reader finishes), so wait for a release, up to stuck_wait_ns in all for
  // this allocation; then pass the line rather than risk a deadlock (the
  // thread may be the one whose progress would release them).
  if (options_.evictor != EvictorMode::kThread || options_.stuck_wait_ns == 0) return true;
  const auto now = std::chrono::steady_clock::now();
  if (*deadline == std::chrono::steady_clock::time_point{}) {
    *deadline = now + std::chrono::nanoseconds(options_.stuck_wait_ns);
  }
  if (now >= *deadline) return true;
  stuck_waiters_.fetch_add(1);
  bool released = false;
  {
    MutexLock l(&evict_mu_);
    const uint64_t gen = release_gen_;
    while (release_gen_ == gen && !shutdown_ && std::chrono::steady_clock::now() < *deadline) {
      release_cv_.WaitFor(&evict_mu_, *deadline - std::chrono::steady_clock::now());
    }
    released = release_gen_ != gen && !shutdown_;
  }
  stuck_waiters_.fetch_sub(1);
  return !released;
}

// A buffer became evictable or was freed: wakes allocations waiting while
// eviction was stuck (one relaxed load when there are none).
void Arc::NoteUnpinned() {
  if (stuck_waiters_.load() == 0) return;
  MutexLock l(&evict_mu_);
  release_gen_++;
  release_cv_.SignalAll();
}

void Arc::WakeEvictor() {
  MutexLock l(&evict_mu_);
  if (!evict_needed_) {
    evict_needed_ = true;
    evict_needed_hint_.store(true, std::memory_order_relaxed);
    evict_cv_.Signal();
  }
}

// Waits until the evictor has really freed eviction_pct% of `bytes` more than
// was freed before this waiter or any waiter ahead of it, or until a pass
// ends without the cache over c or without progress. True when the cache
// cannot shrink (a pass above c freed nothing, or the ARC is going away):
// the caller then allocates past the SEVERE line, visibly
// (reserve_forced), rather than deadlock.
bool Arc::WaitForEviction(uint64_t bytes) {
  Waiter w;
  const uint64_t start_ns = clock_->NowNs();
  {
    MutexLock l(&evict_mu_);
    const uint64_t previous = waiters_.size() > waiters_head_ ? waiters_.back()->target : 0;
    w.target = std::max(previous, evict_count_) + bytes * options_.eviction_pct / 100;
    waiters_.push_back(&w);
    stats_->evict_waits->Add();
    if (!evict_needed_) {
      evict_needed_ = true;
      evict_needed_hint_.store(true, std::memory_order_relaxed);
      evict_cv_.Signal();
    }
    if (options_.evictor != EvictorMode::kInline) {
      while (!w.released) w.cv.Wait(&evict_mu_);
    }
  }
  // Without an evictor thread the allocating thread evicts for itself.
  while (options_.evictor == EvictorMode::kInline) {
    {
      MutexLock l(&evict_mu_);
      if (w.released) break;
    }
    RunEvictionPass();
  }
  stats_->evict_wait_ns->Record(clock_->NowNs() - start_ns);
  return w.stuck;
}

void Arc::Credit(uint64_t freed_bytes) {
  MutexLock l(&evict_mu_);
  evict_count_ += freed_bytes;
  while (waiters_head_ < waiters_.size() && waiters_[waiters_head_]->target <= evict_count_) {
    Waiter* w = waiters_[waiters_head_++];
    w->released = true;
    w->cv.Signal();
    stats_->waiters_released_target->Add();
  }
  if (waiters_head_ == waiters_.size()) {
    waiters_.clear();
    waiters_head_ = 0;
  }
}

void Arc::ReleaseAllWaiters(bool count, bool stuck) ARC_NO_THREAD_SAFETY_ANALYSIS /* evict_mu_ held */ {
  while (waiters_head_ < waiters_.size()) {
    Waiter* w = waiters_[waiters_head_++];
    w->released = true;
    w->stuck = stuck;
    w->cv.Signal();
    if (count) stats_->waiters_released_pass_end->Add();
  }
  waiters_.clear();
  waiters_head_ = 0;
}

void Arc::TakeReclaim(Reclaim* out) ARC_NO_THREAD_SAFETY_ANALYSIS /* policy_mu_ held */ {
  if (reclaim_->empty()) return;
  for (Reclaim::Offer& o : reclaim_->offers) {
    o.index += out->data.size();
    out->offers.push_back(o);
  }
  reclaim_->offers.clear();
  for (auto& d : reclaim_->data) out->data.push_back(std::move(d));
  out->data_bytes += reclaim_->data_bytes;
  out->drops.insert(out->drops.end(), reclaim_->drops.begin(), reclaim_->drops.end());
  reclaim_->data.clear();
  reclaim_->drops.clear();
  reclaim_->data_bytes = 0;
}

// Hands the evicted buffers of `r` to the eviction sink, if one is set.
void Arc::OfferEvicted(Reclaim& r) {
  EvictionSink* sink;
  {
    MutexLock l(&sink_mu_);
    sink = sink_;
    if (sink == nullptr) {
      r.offers.clear();
      return;
    }
    sink_calls_++;
  }
  for (const Reclaim::Offer& o : r.offers) {
    const ArcBuffer& b = r.data[o.index];
    sink->OnEvict(o.key, o.origin, o.kind, o.prefetched, {b.get(), o.bytes});
  }
  r.offers.clear();
  MutexLock l(&sink_mu_);
  if (--sink_calls_ == 0) sink_idle_cv_.SignalAll();
}

void Arc::ChargeOtherBytes(int64_t delta) {
  other_bytes_.fetch_add(delta, std::memory_order_relaxed);
  size_bytes_.fetch_add(delta, std::memory_order_relaxed);
}

void Arc::SetEvictionSink(EvictionSink* sink) {
  MutexLock l(&sink_mu_);
  sink_ = sink;
  sink_set_.store(sink != nullptr, std::memory_order_relaxed);
  while (sink_calls_ > 0) sink_idle_cv_.Wait(&sink_mu_);
}

// Frees what the policy let go, with no lock held on entry. Returns the bytes
// really freed: data, and each dropped header's own bytes.
uint64_t Arc::FreeReclaimed(Reclaim& r) {
  uint64_t freed = r.data_bytes;
  if (!r.offers.empty()) OfferEvicted(r);
  r.data.clear();
  size_bytes_.fetch_sub(static_cast<int64_t>(r.data_bytes), std::memory_order_relaxed);
  if (r.data_bytes > 0) NoteUnpinned();
  r.data_bytes = 0;
  for (Header* h : r.drops) {
    Shard& sh = shards_[h->shard];
    MutexLock l(&sh.mu);
    if (h->hashed) sh.Unhash(h);
    FreeHeader(h);
    freed += header_bytes_;
  }
  if (!r.drops.empty()) stats_->deleted->Add(r.drops.size());
  r.drops.clear();
  return freed;
}

// One batch: up to evict_batch REPLACEs while size is above c, then the
// ghost bounds. Returns the bytes really freed; *more when size is still
// above c; *exhausted when the policy had nothing left to evict.
uint64_t Arc::EvictBatch(bool* more, bool* exhausted) {
  Reclaim r;
  {
    MutexLock pl(&policy_mu_);
    const int64_t over = size_bytes_.load(std::memory_order_relaxed) -
                         static_cast<int64_t>(c_bytes_.load(std::memory_order_relaxed));
    const uint64_t skips_before = policy_.evict_skips();
    const DuetState duet_before = policy_.duet_state();
    int64_t pending = 0;
    *exhausted = false;
    for (uint32_t i = 0; i < options_.evict_batch && pending < over; i++) {
      PolicyNode* victim = policy_.Replace(false);
      if (victim == nullptr) {
        *exhausted = true;
        break;
      }
      pending += static_cast<int64_t>(victim->bytes);
    }
    policy_.TrimGhosts();
    stats_->evict_skip->Add(policy_.evict_skips() - skips_before);
    if (options_.policy == PolicyKind::kDuet) {
      const DuetState d = policy_.duet_state();
      stats_->duet_evict_lirs->Add(d.evictions_by_lirs - duet_before.evictions_by_lirs);
      stats_->duet_evict_arc->Add(d.evictions_by_arc - duet_before.evictions_by_arc);
      stats_->duet_lirs_fallbacks->Add(d.lirs_fallbacks - duet_before.lirs_fallbacks);
    }
    TakeReclaim(&r);
  }
  const uint64_t data = r.data_bytes;
  const uint64_t freed = FreeReclaimed(r);
  stats_->evict_freed_bytes->Add(freed);
  stats_->evict_freed_hdr_bytes->Add(freed - data);
  *more = size_bytes_.load(std::memory_order_relaxed) >
          static_cast<int64_t>(c_bytes_.load(std::memory_order_relaxed));
  return freed;
}

uint64_t Arc::RunEvictionPass() {
  MutexLock pass(&pass_mu_);
  {
    MutexLock l(&evict_mu_);
    pass_running_ = true;
  }
  stats_->evict_passes->Add();
  uint64_t freed_total = 0;
  bool exhausted = false;
  for (;;) {
    bool more = false;
    const uint64_t freed = EvictBatch(&more, &exhausted);
    Credit(freed);
    freed_total += freed;
    if (freed == 0 || !more) break;
  }
  NoteOverflow(Overflow());
  const bool over = size_bytes_.load(std::memory_order_relaxed) >
                    static_cast<int64_t>(c_bytes_.load(std::memory_order_relaxed));
  // Stuck: above c, and the policy found nothing to evict. (A pass that
  // found size at or below c when it looked, and above c again when it
  // ended, made no progress but is not stuck: allocators reserved meanwhile.)
  const bool stuck = over && exhausted && freed_total == 0;
  last_pass_no_progress_.store(stuck, std::memory_order_relaxed);
  MutexLock l(&evict_mu_);
  // Once started, eviction goes on until size <= c, unless it is stuck;
  // when it stops, nobody is left waiting.
  evict_needed_ = over && !stuck && !shutdown_;
  evict_needed_hint_.store(evict_needed_, std::memory_order_relaxed);
  if (!evict_needed_) {
    if (over) stats_->evict_not_enough->Add();
    if (stuck) stats_->evict_passes_no_progress->Add();
    ReleaseAllWaiters(true, stuck);
  }
  pass_running_ = false;
  idle_cv_.SignalAll();
  return freed_total;
}

void Arc::EvictorMain() ARC_NO_THREAD_SAFETY_ANALYSIS /* evict_mu_ by hand */ {
  evict_mu_.Lock();
  while (!shutdown_) {
    if (!evict_needed_) {
      idle_cv_.SignalAll();
      if (options_.monitor_interval_ns == 0) {
        evict_cv_.Wait(&evict_mu_);
      } else {
        const uint64_t now = clock_->NowNs();
        const uint64_t wait_ns = next_tick_ns_ > now ? next_tick_ns_ - now : 0;
        if (wait_ns > 0) evict_cv_.WaitFor(&evict_mu_, std::chrono::nanoseconds(wait_ns));
      }
    }
    if (shutdown_) break;
    const bool tick = options_.monitor_interval_ns != 0 && clock_->NowNs() >= next_tick_ns_;
    const bool evict = evict_needed_;
    evict_mu_.Unlock();
    if (tick) {
      next_tick_ns_ = clock_->NowNs() + options_.monitor_interval_ns;
      Tick();
    }
    if (evict) RunEvictionPass();
    evict_mu_.Lock();
  }
  ReleaseAllWaiters(false, /*stuck=*/true);
  release_cv_.SignalAll();
  idle_cv_.SignalAll();
  evict_mu_.Unlock();
}

void Arc::WaitEvictorIdle() {
  if (options_.evictor != EvictorMode::kThread) return;
  MutexLock l(&evict_mu_);
  while ((evict_needed_ || pass_running_) && !shutdown_) idle_cv_.Wait(&evict_mu_);
}

}  // namespace arcstore::arc
