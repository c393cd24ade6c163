// The ARC's private parts: the buffer header, the hash shard, the reclaim
// list and the waiter. Included only by src/arc/*.cc.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <vector>

#include "arc/arc.h"
#include "stats/stats.h"

namespace arcstore::arc {

// One buffer (or ghost). Its fields are guarded by two locks:
//  - the shard lock of `shard`: key, key_hash (CacheNode's), hash_next,
//    all, hashed, holds, holds_by_kind, waiters, io_in_flight, dead,
//    fill_target, fill_in_b2; `bytes` and `kind` are written only with it
//    held and only while the header is out of the policy and has no holds,
//    `key_hash` only while the header is new or anon (the policy reads all
//    three under policy_mu_);
//  - policy_mu_: the CacheNode fields but key_hash (state, list links,
//    on_list, access_ns, LIRS's links and state), data, pending_drop.
// `shard` itself changes only in Publish, while the publisher's hold is the
// only hold (whose owner may read `data` through it meanwhile: Publish does
// not change `data` or `bytes`).
struct Header : CacheNode {
  ArcKey key;
  Header* hash_next = nullptr;
  Header* all_prev = nullptr;  // the shard's list of every live header
  Header* all_next = nullptr;
  uint32_t shard = 0;
  uint32_t holds = 0;
  uint32_t waiters = 0;       // lookups waiting for this fill
  uint32_t holds_by_kind[kNumHolderKinds] = {};
  bool hashed = false;
  bool io_in_flight = false;  // a fill token exists and has not finished
  bool dead = false;          // out of the hash and the policy: freed at the last reference
  bool fill_in_b2 = false;
  ArcState fill_target = ArcState::kMru;
  bool pending_drop = false;  // (policy_mu_) dropped by the policy, not yet freed
  // Filled by a prefetch and not asked for since (read and written with
  // relaxed atomics: set at creation, cleared by a demand hit).
  std::atomic<bool> prefetched{false};
  ArcOrigin origin;  // (policy_mu_) where the bytes are kept; see ArcOrigin
  ArcBuffer data;  // (policy_mu_) present in anon, MRU, MFU
};

// A slice of the hash table with its own lock. Also keeps every live header
// whose shard it is (hashed or not) on `all`, so that the invariant check
// and the destructor can find anon buffers and orphans.
struct alignas(64) Arc::Shard {
  mutable Mutex mu;
  // Bytes held per holder kind by this shard's headers, kept per shard so
  // that holds on different shards never share a cache line. Written under
  // mu, read without it by the stats.
  std::atomic<int64_t> held[kNumHolderKinds] = {};
  void AddHeld(int kind, int64_t delta) ARC_REQUIRES(mu) {
    held[kind].store(held[kind].load(std::memory_order_relaxed) + delta, std::memory_order_relaxed);
  }
  CondVar fill_cv;  // lookups wait here for fills of this shard's headers
  std::vector<Header*> buckets ARC_GUARDED_BY(mu);
  uint64_t hashed ARC_GUARDED_BY(mu) = 0;
  Header* all ARC_GUARDED_BY(mu) = nullptr;  // head of every live header's list
  uint64_t live ARC_GUARDED_BY(mu) = 0;

  Shard() { buckets.assign(64, nullptr); }
  size_t Bucket(uint64_t hash) const ARC_REQUIRES(mu) {
    return static_cast<size_t>(hash >> 24) & (buckets.size() - 1);
  }
  Header* Find(const ArcKey& key, uint64_t hash) const ARC_REQUIRES(mu) {
    for (Header* h = buckets[Bucket(hash)]; h != nullptr; h = h->hash_next) {
      if (h->key_hash == hash && h->key == key) return h;
    }
    return nullptr;
  }
  void Insert(Header* h) ARC_REQUIRES(mu) {
    if (hashed + 1 > buckets.size()) Grow();
    Header*& head = buckets[Bucket(h->key_hash)];
    h->hash_next = head;
    head = h;
    h->hashed = true;
    hashed++;
  }
  void Unhash(Header* h) ARC_REQUIRES(mu) {
    for (Header** p = &buckets[Bucket(h->key_hash)]; *p != nullptr; p = &(*p)->hash_next) {
      if (*p == h) {
        *p = h->hash_next;
        h->hash_next = nullptr;
        h->hashed = false;
        hashed--;
        return;
      }
    }
    ARC_CHECK(false) << "unhashing a header that is not in its shard: " << h->key.ToString();
  }
  void Grow() ARC_REQUIRES(mu) {
    std::vector<Header*> old(buckets.size() * 2, nullptr);
    old.swap(buckets);
    for (Header* chain : old) {
      while (chain != nullptr) {
        Header* next = chain->hash_next;
        Header*& head = buckets[Bucket(chain->key_hash)];
        chain->hash_next = head;
        head = chain;
        chain = next;
      }
    }
  }
  void LinkAll(Header* h) ARC_REQUIRES(mu) {
    h->all_prev = nullptr;
    h->all_next = all;
    if (all != nullptr) all->all_prev = h;
    all = h;
    live++;
  }
  void UnlinkAll(Header* h) ARC_REQUIRES(mu) {
    if (h->all_prev != nullptr) {
      h->all_prev->all_next = h->all_next;
    } else {
      all = h->all_next;
    }
    if (h->all_next != nullptr) h->all_next->all_prev = h->all_prev;
    h->all_prev = h->all_next = nullptr;
    live--;
  }
};

// What a policy call let go of, to be freed once the locks are dropped:
// data of evicted buffers, and headers the policy dropped. `offers`: the
// evicted buffers of `data` to hand to the eviction sink first.
struct Arc::Reclaim {
  struct Offer {
    ArcKey key;
    ArcOrigin origin;
    BufKind kind = BufKind::kData;
    bool prefetched = false;
    uint64_t bytes = 0;
    size_t index = 0;  // into data
  };
  std::vector<ArcBuffer> data;
  uint64_t data_bytes = 0;
  std::vector<Header*> drops;
  std::vector<Offer> offers;
  bool empty() const { return data.empty() && drops.empty(); }
};

// A thread blocked in WaitForEviction (SEVERE overflow).
struct Arc::Waiter {
  uint64_t target = 0;  // released when evict_count_ reaches this
  bool released = false;
  bool stuck = false;   // released because nothing more can be freed
  CondVar cv;
};

struct Arc::Stats {
  stats::Counter* hits;
  stats::Counter* iohits;
  stats::Counter* misses;
  stats::Counter* demand_data_hits;
  stats::Counter* demand_data_iohits;
  stats::Counter* demand_data_misses;
  stats::Counter* demand_metadata_hits;
  stats::Counter* demand_metadata_iohits;
  stats::Counter* demand_metadata_misses;
  stats::Counter* prefetch_data_hits;
  stats::Counter* prefetch_data_iohits;
  stats::Counter* prefetch_data_misses;
  stats::Counter* prefetch_metadata_hits;
  stats::Counter* prefetch_metadata_iohits;
  stats::Counter* prefetch_metadata_misses;
  stats::Counter* mru_hits;
  stats::Counter* mfu_hits;
  stats::Counter* mru_ghost_hits;
  stats::Counter* mfu_ghost_hits;
  stats::Counter* deleted;
  stats::Counter* evict_skip;
  stats::Counter* duet_evict_lirs = nullptr;  // Duet only
  stats::Counter* duet_evict_arc = nullptr;
  stats::Counter* duet_lirs_fallbacks = nullptr;
  stats::Counter* evict_not_enough;
  stats::Counter* evict_passes;
  stats::Counter* evict_passes_no_progress;
  stats::Counter* evict_freed_bytes;
  stats::Counter* evict_freed_hdr_bytes;
  stats::Counter* memory_throttle_count;
  stats::Counter* fills_abandoned;
  stats::Counter* volumes_removed;
  stats::Counter* c_changes[kNumTargetCauses];
  stats::Counter* c_change_bytes[kNumTargetCauses];
  stats::Counter* evict_waits;
  stats::Counter* reserve_forced;
  stats::Counter* waiters_released_target;
  stats::Counter* waiters_released_pass_end;
  stats::Counter* overflow_some_ns;
  stats::Counter* overflow_severe_ns;
  stats::Counter* monitor_errors;
  stats::Histogram* evict_wait_ns;
};

class Arc::Hooks final : public PolicyHooks {
 public:
  explicit Hooks(Arc* arc) : arc_(arc) {}
  // Both run inside policy calls, with policy_mu_ held.
  void OnEvicted(PolicyNode* n) override ARC_NO_THREAD_SAFETY_ANALYSIS {
    Header* h = static_cast<Header*>(n);
    Reclaim& r = *arc_->reclaim_;
    if (h->data && h->origin.known() && arc_->sink_set_.load(std::memory_order_relaxed)) {
      r.offers.push_back(Reclaim::Offer{h->key, h->origin, h->kind,
                                        h->prefetched.load(std::memory_order_relaxed),
                                        h->bytes, r.data.size()});
    }
    TakeData(h);
  }
  void OnDropped(PolicyNode* n) override ARC_NO_THREAD_SAFETY_ANALYSIS {
    Header* h = static_cast<Header*>(n);
    TakeData(h);  // a resident node dropped outright still has data
    h->pending_drop = true;
    arc_->reclaim_->drops.push_back(h);
  }

 private:
  void TakeData(Header* h) ARC_NO_THREAD_SAFETY_ANALYSIS {
    Reclaim& r = *arc_->reclaim_;
    if (h->data) {
      r.data.push_back(std::move(h->data));
      r.data_bytes += h->bytes;
    }
  }
  Arc* arc_;
};

}  // namespace arcstore::arc
