// ArcOrder and LirsOrder: two orderings of a resident set, page-granular,
// that Duet (duet.h) keeps side by side over one cache. LirsOrder is also
// the whole of `arcstore sim --policy lirs` (tools/sim/lirs.h). LIRS itself
// is BasicLirsOrder, generic over its node: the engine's Duet
// (cache_policy.h) runs it in bytes over its buffer headers, beside
// ArcPolicy instead of ArcOrder.
//
// Each keeps its policy's whole state (ARC: T1, T2, B1, B2 and p; LIRS: the
// stack S, the queue Q and the non-resident entries) in its own fields of
// the key's OrderNode, which the owner allocates and indexes, so one node
// and one index lookup serve both orderings. Neither evicts on its own: on
// a miss with the cache full the owner asks one of them for a Victim(),
// tells each ordering it runs to Evict() it, then to Reference() the new
// key. Driven by its own victims alone, each is exactly its policy (ARC:
// the paper's Fig. 4 with a real p; LIRS: Jiang & Zhang with Lhirs =
// max(1, hir_fraction x c) and non-resident entries capped at
// nonresident_multiple x c); driven by the other's, it keeps a consistent
// state over whatever stays resident.
// When a node leaves an ordering's state altogether (a trimmed ghost, a
// forgotten non-resident), the ordering tells the owner through its hooks,
// which may then free it.
//
// Thread-safety: none; owned by one policy.
#pragma once

#include <cstddef>
#include <cstdint>

#include "arc/order_lists.h"
#include "arc/policy.h"
#include "base/check.h"
#include "base/result.h"

namespace arcstore::arc {

// One key's state in both orderings, and the key. An ArcOrder uses the
// arc_ fields, a LirsOrder the lirs_ fields; neither touches the other's or
// the key. An owner running one ordering leaves the other's fields empty.
// The links are places in the owner's node array (order_lists.h) and the
// key has 48 bits, so a node is half a cache line: a request touches one
// line per key, and the nodes of a cache of c pages (at most 4c + 3 of them
// in Duet) take 128c bytes. Every field is whole bytes: a state written and
// read back at once is forwarded from the store, which a bit-field sharing
// the key's word would not be.
struct alignas(32) OrderNode {
  enum : uint8_t { kNone = 0 };
  enum : uint8_t { kT1 = 1, kT2, kB1, kB2 };        // arc_where
  enum : uint8_t { kLir = 1, kHir, kNonResident };  // lirs_where
  static constexpr uint64_t kMaxKey = (uint64_t{1} << 48) - 1;
  IndexLinks arc_link;    // T1, T2, B1 or B2
  IndexLinks lirs_queue;  // Q (resident HIR), the non-resident list or the provisional LIR list
  IndexLinks lirs_stack;  // S
  uint32_t key_low = 0;   // the key's bits 0-31
  uint16_t key_high = 0;  // and 32-47
  uint8_t arc_where = kNone;
  uint8_t lirs_where = kNone;

  uint64_t key() const { return uint64_t{key_high} << 32 | key_low; }
  void set_key(uint64_t key) {
    ARC_DCHECK_LE(key, kMaxKey);
    key_low = static_cast<uint32_t>(key);
    key_high = static_cast<uint16_t>(key >> 32);
  }
  bool tracked() const { return arc_where != kNone || lirs_where != kNone; }
};
static_assert(sizeof(OrderNode) == 32);

// The links each ordering's lists go through (order_lists.h), for any node
// type with these members. CacheNode derives from PolicyNode and so is not
// standard-layout; offsetof of its own members (no virtual bases) is exact
// with GCC and Clang, which only warn that the standard does not promise it.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
template <typename Node>
struct LirsQueueField {
  static auto& Of(Node& n) { return n.lirs_queue; }
  static Node* Owner(ListLinks* l) { return OwnerOf<Node>(l, offsetof(Node, lirs_queue)); }
};
template <typename Node>
struct LirsStackField {
  static auto& Of(Node& n) { return n.lirs_stack; }
  static Node* Owner(ListLinks* l) { return OwnerOf<Node>(l, offsetof(Node, lirs_stack)); }
};
#pragma GCC diagnostic pop
struct ArcLinkField {
  static IndexLinks& Of(OrderNode& n) { return n.arc_link; }
};

// What LIRS weighs and may evict: an OrderNode is one page, always evictable.
inline uint64_t LirsWeight(const OrderNode&) { return 1; }
inline bool LirsEvictable(const OrderNode&) { return true; }

// Told when a node leaves an ordering (its where is kNone again). Called
// from inside the ordering's calls; a hook must not call back into it.
template <typename Node>
class BasicOrderHooks {
 public:
  virtual void OnForgotten(Node* node) = 0;

 protected:
  ~BasicOrderHooks() = default;
};
using OrderHooks = BasicOrderHooks<OrderNode>;

class ArcOrder {
 public:
  // `nodes`: the array the owner's nodes live in.
  ArcOrder(uint64_t cache_pages, OrderHooks* hooks, OrderNode* nodes);

  static bool Resident(const OrderNode& e) {
    return e.arc_where == OrderNode::kT1 || e.arc_where == OrderNode::kT2;
  }
  uint64_t resident() const {
    return lists_[OrderNode::kT1].size() + lists_[OrderNode::kT2].size();
  }
  // A miss on `e`'s key: moves p if it is a ghost (the paper's cases II, III).
  void NoteMiss(const OrderNode& e);
  // The resident node ARC would evict to make room for `e`'s key (REPLACE,
  // or T1's LRU page in case IV(A) when T1 holds c pages). Cache non-empty.
  OrderNode* Victim(const OrderNode& e) const;
  // `e` (resident) leaves the cache: T1 -> B1, T2 -> B2.
  void Evict(OrderNode* e);
  // `e`'s key is referenced and is resident afterwards: a hit or ghost goes
  // to T2's MRU end, a new key to T1's; then the ghost bounds are restored.
  void Reference(OrderNode* e);

  double p() const { return p_; }
  uint64_t t1() const { return lists_[OrderNode::kT1].size(); }
  uint64_t t2() const { return lists_[OrderNode::kT2].size(); }
  uint64_t b1() const { return lists_[OrderNode::kB1].size(); }
  uint64_t b2() const { return lists_[OrderNode::kB2].size(); }
  uint64_t tracked() const { return t1() + t2() + b1() + b2(); }
  Status CheckInvariants() const;

 private:
  void Move(OrderNode* e, uint8_t to);
  void Drop(uint8_t from);

  const uint64_t c_;
  OrderHooks* const hooks_;
  double p_ = 0;
  using List = NodeList<OrderNode, ArcLinkField>;
  List lists_[5];  // indexed by OrderNode::arc_where; [kNone] unused
};

struct LirsOrderOptions {
  uint64_t cache_pages = 0;
  double hir_fraction = 0.01;
  double nonresident_multiple = 2.0;
  Status Validate() const;
  uint64_t hir_pages() const;        // Lhirs = max(1, hir_fraction x c), < c
  uint64_t max_nonresident() const;  // nonresident_multiple x c
};

// LIRS over any node type with the OrderNode's lirs_ fields,
// weighed by LirsWeight(node) (a page for OrderNode, its bytes for the
// engine's CacheNode) and skipping nodes for which LirsEvictable(node) is
// false when it names a victim. Instantiated in duet_lirs_order.cc.
template <typename Node>
class BasicLirsOrder {
 public:
  // `capacity` and `hir` in LirsWeight's unit: the cache's size and the part
  // of it kept for resident HIR entries (0 < hir < capacity);
  // `max_nonresident` in entries. `nodes`: the array the owner's nodes live
  // in, for nodes linked by place (OrderNode); nodes linked by pointer
  // (CacheNode) may live anywhere and pass nullptr.
  BasicLirsOrder(uint64_t capacity, uint64_t hir, uint64_t max_nonresident,
                 BasicOrderHooks<Node>* hooks, Node* nodes = nullptr);

  static bool Resident(const Node& e) {
    return e.lirs_where == OrderNode::kLir || e.lirs_where == OrderNode::kHir;
  }
  uint64_t resident() const { return lir_ + hir_; }
  // Q's oldest evictable entry, else S's lowest evictable resident one,
  // looking at no more than `max_walk` entries of each; nullptr if none.
  Node* Victim(uint32_t max_walk = 64) const;
  // `e` (resident) leaves the cache; it stays in S as a non-resident entry
  // if it is there (a LIR entry always is).
  void Evict(Node* e);
  // `e`'s key is referenced and is resident afterwards.
  void Reference(Node* e);
  // `e` (not in the ordering) is referenced, and its owner knows that it
  // would still be a non-resident entry in S had S kept it (its last
  // reference came after the bottom LIR entry's): it becomes LIR at once,
  // as such an entry would.
  void ReferenceRemembered(Node* e);
  // S's bottom, a LIR entry; nullptr when S is empty.
  Node* Bottom() const;
  // `e` leaves the ordering whatever its state, without a hook.
  void Remove(Node* e);
  // A new capacity and HIR part: provisional LIR entries, then S's bottom
  // LIR entries, become HIR until the LIR set fits.
  void SetCapacity(uint64_t capacity, uint64_t hir);

  uint64_t capacity() const { return c_; }
  uint64_t hir_target() const { return c_ - llirs_; }  // Lhirs
  uint64_t lir() const { return lir_; }
  uint64_t hir() const { return hir_; }
  uint64_t nonresident() const { return nonres_.size(); }
  uint64_t provisional() const { return provisional_.size(); }
  uint64_t tracked() const { return lir_entries_ + q_.size() + nonres_.size(); }
  Status CheckInvariants() const;

 private:
  void StackTop(Node* e);
  void Prune();
  void PromoteToLir(Node* e);
  void DemoteBottom();
  void MakeNonResident(Node* e);
  void Forget(Node* e);
  void QueuePush(Node* e);
  void QueueRemove(Node* e);
  void LeaveProvisional(Node* e);
  void LeaveLir(Node* e);
  void DemoteProvisional();

  uint64_t c_;
  uint64_t llirs_;
  const uint64_t max_nonresident_;
  BasicOrderHooks<Node>* const hooks_;
  using Queue = NodeList<Node, LirsQueueField<Node>>;
  NodeList<Node, LirsStackField<Node>> stack_;  // front = top (newest), back = bottom
  Queue q_;            // resident HIR, front = newest
  Queue nonres_;       // non-resident HIR in S, front = newest
  Queue provisional_;  // LIR only because the set had room, front = newest
  bool filled_ = false;    // a new entry has found the LIR set full
  uint64_t lir_ = 0;  // weight of the LIR entries
  uint64_t lir_entries_ = 0;
  uint64_t hir_ = 0;  // weight of Q
};

// LIRS in pages (Jiang & Zhang with Lhirs = max(1, hir_fraction x c) and
// non-resident entries capped at nonresident_multiple x c).
class LirsOrder : public BasicLirsOrder<OrderNode> {
 public:
  // options must Validate(); `nodes`: the array the owner's nodes live in.
  LirsOrder(const LirsOrderOptions& options, OrderHooks* hooks, OrderNode* nodes);
};

}  // namespace arcstore::arc
