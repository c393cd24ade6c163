// DuetNode and DuetNodes: one node per key that an ArcOrder or a LirsOrder
// (duet_orders.h) tracks, carrying both orderings' entries, and the index
// from key to node that Duet (duet.h) looks a request up in once.
//
// A node stays while either ordering tracks its key (resident, ARC ghost or
// LIRS non-resident) and goes back to the pool when the second one forgets
// it. The node of the request in flight is pinned: an ordering may forget
// it while the other makes room (the oldest non-resident entry, say), and
// it stays in the index, with both entries empty, until it is referenced.
//
// Thread-safety: none; owned by one Duet.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arc/duet_orders.h"
#include "arc/flat_table.h"
#include "base/result.h"

namespace arcstore::arc {

// One cache line. The key is only in the index: a node keeps where its
// key's probe starts (arc.owner_word), which is all that freeing it needs.
struct alignas(64) DuetNode {
  ArcEntry arc;
  LirsEntry lirs;

  uint64_t home() const { return arc.owner_word; }

  static DuetNode* Of(ArcEntry* e) { return OwnerOf<DuetNode>(e, offsetof(DuetNode, arc)); }
  static DuetNode* Of(LirsEntry* e) { return OwnerOf<DuetNode>(e, offsetof(DuetNode, lirs)); }
  bool tracked() const { return arc.where != ArcEntry::kNone || lirs.where != LirsEntry::kNone; }
};
static_assert(sizeof(DuetNode) == 64);

class DuetNodes final : public ArcHooks, public LirsHooks {
 public:
  // At most `max_nodes` keys tracked at once, the pinned one included.
  explicit DuetNodes(uint64_t max_nodes) : pool_(max_nodes), table_(max_nodes) {
    ARC_CHECK_LE(table_.capacity(), uint64_t{UINT32_MAX});
  }

  // The node of `key`, a new one (both entries empty) if it has none; it is
  // pinned until Unpin().
  DuetNode* FindAndPin(uint64_t key) {
    DuetNode* n = table_.Find(key);
    if (n == nullptr) {
      n = pool_.Get();
      n->arc.owner_word = static_cast<uint32_t>(table_.Home(key));
      table_.Insert(key, n);
    }
    pinned_ = n;
    return n;
  }
  // The pinned node must be tracked by now.
  void Unpin() {
    ARC_DCHECK(pinned_->tracked());
    pinned_ = nullptr;
  }

  void OnForgotten(ArcEntry* e) override { MaybeFree(DuetNode::Of(e)); }
  void OnForgotten(LirsEntry* e) override { MaybeFree(DuetNode::Of(e)); }

  uint64_t size() const { return table_.size(); }
  // Every node in the index is tracked and found from its home; the
  // untracked ones are back in the pool. `same_resident_set`: each key is
  // resident in both orderings or in neither.
  Status CheckInvariants(bool same_resident_set) const;

 private:
  void MaybeFree(DuetNode* n) {
    if (n->tracked() || n == pinned_) return;
    table_.EraseValue(n->home(), n);
    pool_.Put(n);
  }

  FixedPool<DuetNode> pool_;
  FlatTable<DuetNode> table_;
  DuetNode* pinned_ = nullptr;
};

}  // namespace arcstore::arc
