// The ARC's target c: sizing from the memory monitor, growth near c when
// memory is free, bounded shrink steps under pressure with a holdoff before
// growing again, the history of every change with its cause, and the
// subscribers who size themselves from c. See arc.cc for the whole story.
#include <algorithm>

#include "arc/arc.h"
#include "arc/arc_internal.h"
#include "base/thread_name.h"
#include "base/units.h"

namespace arcstore::arc {
namespace {

thread_local int tls_notify_depth = 0;

}  // namespace

Status Arc::Init() {
  RegisterStats();
  uint64_t c;
  {
    MutexLock t(&target_mu_);
    Result<MemoryReading> reading = monitor_->Read();
    if (!reading.ok()) {
      if (options_.c_max_bytes == 0) {
        return Status(reading.status().code(),
                      "arc: cannot size c_max from the memory monitor: " + reading.status().message());
      }
    }
    Reclaim r;
    MemoryReading initial = reading.ok() ? *reading : MemoryReading{};
    if (initial.limit_bytes == 0 || initial.limit_bytes == kNoMemoryLimit) {
      if (options_.c_max_bytes == 0) {
        return Status::InvalidArgument("arc: the memory monitor reports no limit; set c_max_bytes");
      }
      initial.limit_bytes = options_.c_max_bytes;  // only c_max_bytes matters then
    }
    c_bytes_ = 0;
    ApplyLimitLocked(initial, TargetCause::kLimit, &r);
    c = options_.initial_c_bytes == 0 ? c_max_.load() : options_.initial_c_bytes;
    c = std::clamp(c, c_min_.load(), c_max_.load());
    {
      MutexLock pl(&policy_mu_);
      policy_.SetTarget(c);
    }
    c_bytes_ = c;
    history_.reserve(options_.history_length);
    if (reading.ok() && reading->under_pressure) can_grow_ = false;
  }
  if (options_.evictor == EvictorMode::kThread) {
    evictor_ = std::thread([this] {
      NameThisThread("arc_evict");
      EvictorMain();
    });
    buffers_.StartFiller();  // slabs mapped ahead, as eviction runs ahead
    if (options_.wait_for_pretouch) buffers_.WaitReserveFilled();
  }
  return Status::Ok();
}

// c_max and c_min from the limit (and the cap); c follows them into range.
void Arc::ApplyLimitLocked(const MemoryReading& reading, TargetCause cause, Reclaim* r) {
  const uint64_t limit = reading.limit_bytes;
  if (limit == 0 || limit == kNoMemoryLimit) return;
  limit_bytes_ = limit;
  limit_source_ = reading.limit_source;
  uint64_t c_max = options_.c_max_bytes != 0 ? options_.c_max_bytes
                                              : limit / 100 * options_.c_max_percent +
                                                    limit % 100 * options_.c_max_percent / 100;
  if (cap_bytes_ != 0) c_max = std::min(c_max, cap_bytes_);
  c_max = std::max<uint64_t>(c_max, 1);
  uint64_t c_min = options_.c_min_bytes != 0 ? options_.c_min_bytes
                                              : std::max(c_max / 32, uint64_t{64} * kMiB);
  c_min = std::min(c_min, c_max);
  c_max_ = c_max;
  c_min_ = c_min;
  const uint64_t c = c_bytes_.load();
  if (c == 0) return;  // Init sets c itself
  std::string why = cause == TargetCause::kSet
                        ? "configured cap " + FormatBytes(cap_bytes_)
                        : "limit " + FormatBytes(limit) + " (" + reading.limit_source + ")";
  if (c > c_max) SetTargetLocked(c_max, cause, why + ": c_max " + FormatBytes(c_max), r);
  if (c < c_min) SetTargetLocked(c_min, cause, why + ": c_min " + FormatBytes(c_min), r);
}

void Arc::SetTargetLocked(uint64_t c, TargetCause cause, std::string reason, Reclaim* r) {
  const uint64_t old = c_bytes_.load();
  if (c == old) return;
  {
    MutexLock pl(&policy_mu_);
    policy_.SetTarget(c);
    TakeReclaim(r);
  }
  c_bytes_.store(c, std::memory_order_relaxed);
  target_gen_.fetch_add(1, std::memory_order_release);
  const int k = static_cast<int>(cause);
  stats_->c_changes[k]->Add();
  stats_->c_change_bytes[k]->Add(c > old ? c - old : old - c);
  RecordChangeLocked(cause, old, c, std::move(reason));
}

void Arc::RecordChangeLocked(TargetCause cause, uint64_t from, uint64_t to, std::string reason) {
  const uint64_t now = clock_->NowNs();
  if (cause == TargetCause::kGrow && !history_.empty()) {
    // Growth comes in allocation-sized steps: one record per second of them.
    TargetChange& last =
        history_[(history_next_ + history_.size() - 1) % history_.size()];
    if (last.cause == TargetCause::kGrow && now - last.time_ns < kNsPerSec) {
      last.to_bytes = to;
      last.events++;
      return;
    }
  }
  TargetChange change{now, cause, from, to, 1, std::move(reason)};
  if (history_.size() < options_.history_length) {
    history_.push_back(std::move(change));
    history_next_ = history_.size() % options_.history_length;
  } else {
    history_[history_next_] = std::move(change);
    history_next_ = (history_next_ + 1) % history_.size();
  }
}

std::vector<TargetChange> Arc::TargetHistory() const {
  MutexLock t(&target_mu_);
  std::vector<TargetChange> out;
  const size_t n = history_.size();
  const size_t first = n < options_.history_length ? 0 : history_next_;
  for (size_t i = 0; i < n; i++) out.push_back(history_[(first + i) % n]);
  return out;
}

// ZFS's arc_adapt growth: when an allocation brings size within two of the
// largest records of c, and memory is free, c grows by the allocation.
void Arc::MaybeGrow(uint64_t bytes) {
  const uint64_t c = c_bytes_.load(std::memory_order_relaxed);
  if (c >= c_max_.load(std::memory_order_relaxed)) return;
  const uint64_t size = static_cast<uint64_t>(std::max<int64_t>(0, size_bytes_.load(std::memory_order_relaxed)));
  const uint64_t margin = 2 * largest_bytes_.load(std::memory_order_relaxed);
  if (size + bytes + margin < c) return;
  if (!can_grow_.load(std::memory_order_relaxed)) return;
  if (clock_->NowNs() < no_grow_until_ns_.load(std::memory_order_relaxed)) return;
  uint64_t new_c;
  {
    MutexLock t(&target_mu_);
    const uint64_t now_c = c_bytes_.load();
    new_c = std::min(c_max_.load(), now_c + bytes);
    if (new_c <= now_c) return;
    Reclaim r;  // growth loosens the ghost bounds: nothing is dropped
    SetTargetLocked(new_c, TargetCause::kGrow, "size near c, memory free", &r);
    ARC_DCHECK(r.empty());
  }
  NotifySubscribers(new_c);
}

// The largest holder kind, for "shrinking frees nothing" records.
std::string Arc::PinnedSummary() const {
  int top = 0;
  for (int k = 1; k < kNumHolderKinds; k++) {
    if (HeldBytes(k) > HeldBytes(top)) top = k;
  }
  return FormatBytes(static_cast<uint64_t>(std::max<int64_t>(0, HeldBytes(top)))) +
         " held by " + std::string(HolderKindName(static_cast<HolderKind>(top)));
}

void Arc::Tick() {
  Result<MemoryReading> reading = monitor_->Read();
  if (!reading.ok()) {
    stats_->monitor_errors->Add();
    return;
  }
  uint64_t notify = 0;
  bool wake = false;
  Reclaim r;
  {
    MutexLock t(&target_mu_);
    const uint64_t before = c_bytes_.load();
    if (reading->limit_bytes != limit_bytes_) ApplyLimitLocked(*reading, TargetCause::kLimit, &r);
    const uint64_t limit = limit_bytes_;
    const uint64_t free_floor = options_.free_shift == 0 ? 0 : limit >> options_.free_shift;
    const bool low = reading->available_bytes != kNoMemoryLimit && reading->available_bytes < free_floor;
    if (reading->available_bytes != kNoMemoryLimit) {
      memory_limit_bytes_.store(limit, std::memory_order_relaxed);
      memory_free_bytes_.store(reading->available_bytes, std::memory_order_relaxed);
      memory_available_bytes_.store(static_cast<int64_t>(reading->available_bytes) -
                                        static_cast<int64_t>(free_floor),
                                    std::memory_order_relaxed);
    }
    const bool pressure = reading->under_pressure || low;
    const bool shortage = reading->short_of_memory || low;
    can_grow_.store(!pressure, std::memory_order_relaxed);
    if (pressure) {
      no_grow_until_ns_.store(clock_->NowNs() + options_.grow_holdoff_ns, std::memory_order_relaxed);
      std::string reason = !reading->pressure_reason.empty()
                               ? reading->pressure_reason
                               : "available " + FormatBytes(reading->available_bytes) + " < " +
                                     FormatBytes(free_floor);
      const uint64_t c = c_bytes_.load();
      const uint64_t size = static_cast<uint64_t>(std::max<int64_t>(0, size_bytes_.load()));
      if (last_pass_no_progress_.load() && size > c) {
        // Shrinking further would free nothing: say so once, do not move c.
        if (!shrink_stalled_noted_) {
          shrink_stalled_noted_ = true;
          stats_->c_changes[static_cast<int>(TargetCause::kShrinkStopped)]->Add();
          RecordChangeLocked(TargetCause::kShrinkStopped, c, c,
                             reason + "; shrinking frees nothing: " + PinnedSummary());
        }
      } else {
        shrink_stalled_noted_ = false;
        // A shortage takes c down to what the ARC holds, less a step: c far
        // above size would let the ARC grow into memory that is not there.
        // Stalls alone (PSI with memory available) take one step from c:
        // a fresh server whose ARC holds little would otherwise drop c to
        // its floor on one burst of page-cache reclaim.
        const uint64_t base = shortage ? std::min(c, size) : c;
        const uint64_t step = std::max<uint64_t>(base >> options_.shrink_shift, 1);
        const uint64_t new_c = std::max(c_min_.load(), base > step ? base - step : 0);
        if (new_c < c) SetTargetLocked(new_c, TargetCause::kPressure, reason, &r);
      }
      wake = true;
    }
    if (c_bytes_.load() != before) notify = c_bytes_.load();
  }
  FreeReclaimed(r);
  buffers_.Trim();  // to the room left below c (buffer_allocator.h)
  if (notify != 0) NotifySubscribers(notify);
  if (wake && size_bytes_.load() > static_cast<int64_t>(c_bytes_.load())) WakeEvictor();
}

void Arc::SetMaxBytes(uint64_t cap_bytes) {
  uint64_t notify = 0;
  Reclaim r;
  {
    MutexLock t(&target_mu_);
    const uint64_t before = c_bytes_.load();
    cap_bytes_ = cap_bytes;
    MemoryReading reading;
    reading.limit_bytes = limit_bytes_;
    reading.limit_source = limit_source_;
    ApplyLimitLocked(reading, TargetCause::kSet, &r);
    if (c_bytes_.load() != before) notify = c_bytes_.load();
  }
  FreeReclaimed(r);
  buffers_.Trim();
  if (notify != 0) {
    NotifySubscribers(notify);
    WakeEvictor();
  }
}

// ---- Subscribers ----------------------------------------------------------------

Arc::Subscription Arc::SubscribeTarget(std::function<void(uint64_t c_bytes)> fn) {
  auto s = std::make_shared<Subscriber>();
  s->fn = std::move(fn);
  MutexLock l(&subs_mu_);
  s->id = next_sub_id_++;
  subscribers_.push_back(s);
  return Subscription(this, s->id);
}

void Arc::NotifySubscribers(uint64_t c_bytes) {
  std::vector<std::shared_ptr<Subscriber>> subs;
  {
    MutexLock l(&subs_mu_);
    subs = subscribers_;
    for (auto& s : subs) s->running++;
  }
  tls_notify_depth++;
  for (auto& s : subs) s->fn(c_bytes);
  tls_notify_depth--;
  MutexLock l(&subs_mu_);
  for (auto& s : subs) s->running--;
  subs_cv_.SignalAll();
}

// After this returns the callback is not running and will not run again
// (unless called from inside a callback, which cannot wait for itself).
void Arc::Unsubscribe(uint64_t id) {
  MutexLock l(&subs_mu_);
  for (size_t i = 0; i < subscribers_.size(); i++) {
    if (subscribers_[i]->id != id) continue;
    std::shared_ptr<Subscriber> s = subscribers_[i];
    subscribers_.erase(subscribers_.begin() + static_cast<ptrdiff_t>(i));
    while (s->running > 0 && tls_notify_depth == 0) subs_cv_.Wait(&subs_mu_);
    return;
  }
}

Arc::Subscription::~Subscription() {
  if (arc_ != nullptr) arc_->Unsubscribe(id_);
}

Arc::Subscription& Arc::Subscription::operator=(Subscription&& o) noexcept {
  if (this != &o) {
    if (arc_ != nullptr) arc_->Unsubscribe(id_);
    arc_ = o.arc_;
    id_ = o.id_;
    o.arc_ = nullptr;
  }
  return *this;
}

}  // namespace arcstore::arc
