#include "volume/handle_cache.h"

#include <vector>

#include "base/thread_name.h"

namespace arcstore::volume {

Status HandleCacheOptions::Validate() const {
  if (target_shift < 1 || target_shift > 20) {
    return Status::InvalidArgument("handle cache: target_shift must be in [1, 20]");
  }
  if (low_water_percent < 10 || low_water_percent > 100) {
    return Status::InvalidArgument("handle cache: low_water_percent must be in [10, 100]");
  }
  if (high_water_percent < 100 || high_water_percent > 400) {
    return Status::InvalidArgument("handle cache: high_water_percent must be in [100, 400]");
  }
  return Status::Ok();
}

HandleCache::HandleCache(arc::Arc* arc, const HandleCacheOptions& options,
                         stats::Registry* registry)
    : arc_(arc), options_(options) {
  ARC_CHECK(options_.Validate().ok()) << options_.Validate().ToString();
  const char* m = "handle_cache";
  hits_ = registry->AddCounter(m, "hits", stats::Unit::kOps, "reads served by a cached handle");
  misses_ = registry->AddCounter(m, "misses", stats::Unit::kOps, "reads without a cached handle");
  evictions_ = registry->AddCounter(m, "evictions", stats::Unit::kOps,
                                    "handles dropped by the background evictor");
  direct_evictions_ = registry->AddCounter(m, "direct_evictions", stats::Unit::kOps,
                                           "handles dropped by callers above high water");
  registry->AddGaugeFn(m, "size", stats::Unit::kBytes, "bytes held by cached handles",
                       [this] { return static_cast<int64_t>(size_bytes()); });
  registry->AddGaugeFn(m, "target", stats::Unit::kBytes, "c >> target_shift",
                       [this] { return static_cast<int64_t>(target_bytes()); });
  SetTarget(arc_->target_bytes());
  subscription_ = arc_->SubscribeTarget([this](uint64_t c) { SetTarget(c); });
  if (options_.background_evictor) evictor_ = std::thread([this] {
      NameThisThread("handle_evict");
      EvictorLoop();
    });
}

HandleCache::~HandleCache() {
  subscription_ = arc::Arc::Subscription();
  {
    MutexLock l(&mu_);
    stopping_ = true;
    cv_.SignalAll();
  }
  if (evictor_.joinable()) evictor_.join();
  EvictTo(0);
}

void HandleCache::SetTarget(uint64_t c_bytes) {
  bool over_high;
  {
    MutexLock l(&mu_);
    target_bytes_ = c_bytes >> options_.target_shift;
    over_high = size_bytes_ > target_bytes_ / 100 * options_.high_water_percent;
    if (size_bytes_ > target_bytes_) cv_.SignalAll();
  }
  // c shrank below what we hold: shrink now, on the thread that moved c.
  if (over_high) EvictTo(target_bytes());
}

arc::ArcHold HandleCache::Lookup(const arc::ArcKey& key) {
  MutexLock l(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) {
    misses_->Add();
    return arc::ArcHold();
  }
  lru_.splice(lru_.begin(), lru_, it->second);
  hits_->Add();
  return it->second->hold.Clone(arc::HolderKind::kApiUser);
}

uint64_t HandleCache::Generation(uint64_t volume_guid) {
  MutexLock l(&mu_);
  return generations_[volume_guid];
}

void HandleCache::Insert(const arc::ArcKey& key, const arc::ArcHold& hold, uint64_t generation) {
  if (!hold) return;
  bool direct = false;
  {
    MutexLock l(&mu_);
    if (generations_[key.volume_guid] != generation || index_.count(key) != 0) return;
    lru_.push_front(Entry{key, hold.Clone(arc::HolderKind::kHandleCache)});
    index_.emplace(key, lru_.begin());
    size_bytes_ += hold.bytes();
    if (size_bytes_ > target_bytes_ / 100 * options_.high_water_percent) {
      direct = true;
    } else if (size_bytes_ > target_bytes_) {
      cv_.SignalAll();
    }
  }
  if (direct) {
    direct_evictions_->Add();
    EvictTo(target_bytes());
  }
}

void HandleCache::Invalidate(const arc::ArcKey& key) {
  arc::ArcHold drop;
  MutexLock l(&mu_);
  generations_[key.volume_guid]++;
  auto it = index_.find(key);
  if (it == index_.end()) return;
  size_bytes_ -= it->second->hold.bytes();
  drop = std::move(it->second->hold);
  lru_.erase(it->second);
  index_.erase(it);
  // `drop` is released after the lock (declared before it).
}

void HandleCache::RemoveVolume(uint64_t volume_guid) {
  std::vector<arc::ArcHold> drop;
  MutexLock l(&mu_);
  generations_[volume_guid]++;
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->key.volume_guid != volume_guid) {
      ++it;
      continue;
    }
    size_bytes_ -= it->hold.bytes();
    drop.push_back(std::move(it->hold));
    index_.erase(it->key);
    it = lru_.erase(it);
  }
}

uint64_t HandleCache::size_bytes() {
  MutexLock l(&mu_);
  return size_bytes_;
}

uint64_t HandleCache::target_bytes() {
  MutexLock l(&mu_);
  return target_bytes_;
}

void HandleCache::EvictTo(uint64_t goal_bytes) {
  std::vector<arc::ArcHold> drop;
  {
    MutexLock l(&mu_);
    while (size_bytes_ > goal_bytes && !lru_.empty()) {
      Entry& e = lru_.back();
      size_bytes_ -= e.hold.bytes();
      drop.push_back(std::move(e.hold));
      index_.erase(e.key);
      lru_.pop_back();
    }
  }
  evictions_->Add(drop.size());
}

void HandleCache::Trim() { EvictTo(target_bytes() / 100 * options_.low_water_percent); }

void HandleCache::EvictorLoop() {
  MutexLock l(&mu_);
  while (!stopping_) {
    if (size_bytes_ <= target_bytes_) {
      cv_.Wait(&mu_);
      continue;
    }
    const uint64_t goal = target_bytes_ / 100 * options_.low_water_percent;
    evicting_ = true;
    mu_.Unlock();
    EvictTo(goal);
    mu_.Lock();
    evicting_ = false;
    cv_.SignalAll();  // Drain
  }
}

void HandleCache::Drain() {
  EvictTo(0);
  MutexLock l(&mu_);
  while (evicting_) cv_.Wait(&mu_);
}

}  // namespace arcstore::volume
