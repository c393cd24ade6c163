// DuetNodes: one OrderNode (duet_orders.h) per key that an ArcOrder or a
// LirsOrder tracks, carrying both orderings' state, and the index from key
// to node that Duet (duet.h) looks a request up in once.
//
// A node stays while either ordering tracks its key (resident, ARC ghost or
// LIRS non-resident) and goes back to the pool when the second one forgets
// it. The node of the request in flight is pinned: an ordering may forget
// it while the other makes room (the oldest non-resident entry, say), and
// it stays in the index, with both orderings' fields empty, until it is
// referenced.
//
// Erases in flight: a forgotten key's index slot is, nearly always, a
// cache miss (the index is megabytes, its keys hashed across it), and
// erasing at once would wait for it. A forgotten node instead has its
// slot prefetched and waits in a ring of kErasesInFlight; it leaves the
// index and goes back to the pool when the ring comes round to it. A key
// referenced again meanwhile finds its node still indexed, with both
// orderings' fields empty (a new key's state), and takes it out of the
// ring.
//
//   forgotten --> prefetch slot --> ring [n0 n1 ... n7] --> erase, pool
//                                      ^  |
//                                      +--+ referenced again: out of the ring
//
// Thread-safety: none; owned by one Duet.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "arc/duet_orders.h"
#include "arc/flat_table.h"
#include "base/result.h"

namespace arcstore::arc {

class DuetNodes final : public OrderHooks {
 public:
  static constexpr size_t kErasesInFlight = 8;

  // At most `max_nodes` keys tracked at once, the pinned one included (and
  // room for the erases in flight besides).
  explicit DuetNodes(uint64_t max_nodes)
      : pool_(max_nodes + kErasesInFlight), index_(max_nodes + kErasesInFlight, &pool_) {}

  // The node of `key`, a new one (tracked by neither) if it has none; it is
  // pinned until Unpin().
  OrderNode* FindAndPin(uint64_t key) {
    OrderNode* n = index_.Find(key);
    if (n == nullptr) {
      n = pool_.Get();
      n->set_key(key);
      index_.Insert(n);
    } else if (!n->tracked()) {
      Unqueue(n);  // forgotten, not yet erased
    }
    pinned_ = n;
    return n;
  }
  // The pinned node must be tracked by now.
  void Unpin() {
    ARC_DCHECK(pinned_->tracked());
    pinned_ = nullptr;
  }

  void OnForgotten(OrderNode* n) override {
    if (n->tracked() || n == pinned_) return;
    index_.Prefetch(n->key());
    OrderNode*& place = erasing_[next_erase_];
    if (place != nullptr) Release(place);
    place = n;
    erasing_count_++;
    next_erase_ = (next_erase_ + 1) % kErasesInFlight;
  }

  // Keys tracked (the erases in flight are not).
  uint64_t size() const { return index_.size() - erasing_count_; }
  // The array the nodes live in, for the orderings' lists.
  OrderNode* nodes() const { return pool_.data(); }
  // Every tracked node is indexed under its key, the erases in flight are
  // untracked and still indexed, and every other node is back in the pool.
  // `same_resident_set`: each key is resident in both orderings or in
  // neither.
  Status CheckInvariants(bool same_resident_set) const;

 private:
  void Release(OrderNode* n) {
    index_.Erase(n);
    pool_.Put(n);
    erasing_count_--;
  }
  void Unqueue(OrderNode* n) {
    for (OrderNode*& e : erasing_) {
      if (e == n) {
        e = nullptr;
        erasing_count_--;
        return;
      }
    }
    ARC_CHECK(false) << "an untracked node that is not being erased";
  }

  FixedPool<OrderNode> pool_;
  FlatIndex<OrderNode> index_;
  OrderNode* pinned_ = nullptr;
  std::array<OrderNode*, kErasesInFlight> erasing_{};  // forgotten, still indexed
  size_t next_erase_ = 0;
  uint64_t erasing_count_ = 0;
};

}  // namespace arcstore::arc
