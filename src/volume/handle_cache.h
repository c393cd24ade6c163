// HandleCache: the volume layer's cache of record handles (ZFS's dbuf
// cache): recently used committed records kept HELD, so a hit needs neither
// the tree nor the ARC's hash table.
//
// Every entry holds its ARC buffer (holder kind "handle cache"), so what it
// keeps is pinned in the ARC; that is why its size follows the LIVE target
// c of the ARC and never physical memory (the seed's front cache pinned
// 27 GiB that the ARC could not evict):
//
//   target = c >> target_shift (c/32)     low water  = 90% of target
//                                         high water = 110% of target
//   size > target      the background evictor trims to low water
//   size > high water  the inserting thread trims to target itself
//   c shrinks          target shrinks with it, and so does the cache
//
// Versions: a committed record is replaced when a newer txg commits it.
// Invalidate(key) drops the entry and bumps its volume's generation; an
// Insert carries the generation its reader saw before looking the record
// up, and is refused if a commit came in between, so no stale version is
// ever cached.
//
// Thread-safety: all methods are thread-safe; one mutex, never held while
// calling into the ARC except to release holds (which takes no lock the
// ARC holds while calling us).
#pragma once

#include <cstdint>
#include <list>
#include <thread>
#include <unordered_map>

#include "arc/arc.h"
#include "base/thread_annotations.h"
#include "stats/registry.h"

namespace arcstore::volume {

struct HandleCacheOptions {
  uint32_t target_shift = 5;      // target = c >> shift
  uint32_t low_water_percent = 90;
  uint32_t high_water_percent = 110;
  bool background_evictor = true;  // tests may turn it off and call Trim()

  Status Validate() const;
};

class HandleCache {
 public:
  HandleCache(arc::Arc* arc, const HandleCacheOptions& options, stats::Registry* registry);
  ~HandleCache();
  HandleCache(const HandleCache&) = delete;
  HandleCache& operator=(const HandleCache&) = delete;

  // A new hold on the cached buffer of `key`, or an empty hold.
  arc::ArcHold Lookup(const arc::ArcKey& key);
  // The generation of `volume_guid` to pass to Insert.
  uint64_t Generation(uint64_t volume_guid);
  // Caches a hold on `hold`'s buffer for `key` unless the volume's
  // generation moved past `generation`.
  void Insert(const arc::ArcKey& key, const arc::ArcHold& hold, uint64_t generation);
  // `key` is about to get a new version: drop it, bump the generation.
  void Invalidate(const arc::ArcKey& key);
  void RemoveVolume(uint64_t volume_guid);

  uint64_t size_bytes();
  uint64_t target_bytes();
  // Evicts down to low water now (what the background evictor does).
  void Trim();
  // Empties the cache and waits until the background evictor has let go of
  // every hold it took out of it. With no caller reading meanwhile, the
  // cache then takes or lets go of no hold: a quiescent point for the ARC's
  // checks.
  void Drain();

 private:
  struct Entry {
    arc::ArcKey key;
    arc::ArcHold hold;
  };
  struct KeyHash {
    size_t operator()(const arc::ArcKey& k) const { return k.Hash(); }
  };
  void SetTarget(uint64_t c_bytes);
  // Evicts LRU entries until size <= goal; the holds are released after
  // the lock is dropped.
  void EvictTo(uint64_t goal_bytes) ARC_EXCLUDES(mu_);
  void EvictorLoop();

  arc::Arc* const arc_;
  const HandleCacheOptions options_;
  Mutex mu_;
  CondVar cv_;
  std::list<Entry> lru_ ARC_GUARDED_BY(mu_);  // most recent at the front
  std::unordered_map<arc::ArcKey, std::list<Entry>::iterator, KeyHash> index_ ARC_GUARDED_BY(mu_);
  std::unordered_map<uint64_t, uint64_t> generations_ ARC_GUARDED_BY(mu_);
  uint64_t size_bytes_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t target_bytes_ ARC_GUARDED_BY(mu_) = 0;
  bool stopping_ ARC_GUARDED_BY(mu_) = false;
  bool evicting_ ARC_GUARDED_BY(mu_) = false;  // the evictor lets go of holds
  stats::Counter* hits_;
  stats::Counter* misses_;
  stats::Counter* evictions_;
  stats::Counter* direct_evictions_;
  arc::Arc::Subscription subscription_;
  std::thread evictor_;
};

}  // namespace arcstore::volume
