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
// Thread-safety: none; owned by one Duet.
#pragma once

#include <cstdint>

#include "arc/duet_orders.h"
#include "arc/flat_table.h"
#include "base/result.h"

namespace arcstore::arc {

class DuetNodes final : public OrderHooks {
 public:
  // At most `max_nodes` keys tracked at once, the pinned one included.
  explicit DuetNodes(uint64_t max_nodes) : pool_(max_nodes), index_(max_nodes, &pool_) {}

  // The node of `key`, a new one (tracked by neither) if it has none; it is
  // pinned until Unpin().
  OrderNode* FindAndPin(uint64_t key) {
    OrderNode* n = index_.Find(key);
    if (n == nullptr) {
      n = pool_.Get();
      n->set_key(key);
      index_.Insert(n);
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
    index_.Erase(n);
    pool_.Put(n);
  }

  uint64_t size() const { return index_.size(); }
  // The array the nodes live in, for the orderings' lists.
  OrderNode* nodes() const { return pool_.data(); }
  // Every node in the index is tracked and found under its key; the
  // untracked ones are back in the pool. `same_resident_set`: each key is
  // resident in both orderings or in neither.
  Status CheckInvariants(bool same_resident_set) const;

 private:
  FixedPool<OrderNode> pool_;
  FlatIndex<OrderNode> index_;
  OrderNode* pinned_ = nullptr;
};

}  // namespace arcstore::arc
