// The intrusive lists of the orderings (duet_orders.h) and of the sim's
// page policies (tools/sim/page_list.h): doubly linked, counted, front =
// newest, back = oldest.
//
// OrderList links ListLinks (two pointers) through a sentinel. NodeList is
// one interface over a node type's own links, chosen by their type:
//
//   ListLinks  (16 bytes)  LinkedNodeList: an OrderList; the node from its
//                          links by their offset. For nodes that live
//                          anywhere (the engine's buffer headers).
//   IndexLinks  (8 bytes)  IndexedNodeList: 32-bit places in one array of
//                          nodes (a FixedPool), no sentinel: the list keeps
//                          its first and last place. For the page-granular
//                          nodes of Duet and the sim, three links to a node:
//                          24 bytes instead of 48, so a node fits half a
//                          cache line and twice as many stay in the caches.
//
// A Field names which links of a node a list goes through: a struct with
// `static Links& Of(Node&)` and, for ListLinks, `static Node* Owner(ListLinks*)`.
// Both lists answer Holds(node) from the node's links (and, by place, the
// list's first place) alone, so a node must not be on another list through
// the same links when a list is asked.
//
// Thread-safety: none; each list belongs to one ordering or policy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "arc/policy.h"
#include "base/check.h"

namespace arcstore::arc {

// A list with a count over intrusive links; front = MRU / newest.
class OrderList {
 public:
  OrderList() { head_.prev = head_.next = &head_; }
  OrderList(const OrderList&) = delete;
  OrderList& operator=(const OrderList&) = delete;
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ListLinks* front() const { return empty() ? nullptr : head_.next; }
  ListLinks* back() const { return empty() ? nullptr : head_.prev; }
  void PushFront(ListLinks* n) {
    n->prev = &head_;
    n->next = head_.next;
    head_.next->prev = n;
    head_.next = n;
    size_++;
  }
  void Remove(ListLinks* n) {
    ARC_DCHECK(size_ > 0);
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = nullptr;
    size_--;
  }
  // The sentinel: next is the front, prev the back (for walks in checks).
  const ListLinks* sentinel() const { return &head_; }

 private:
  ListLinks head_;
  uint64_t size_ = 0;
};

// The struct of type T whose member at byte offset `offset` is `member`.
template <typename T, typename M>
T* OwnerOf(M* member, size_t offset) {
  return reinterpret_cast<T*>(reinterpret_cast<char*>(member) - offset);
}

inline constexpr uint32_t kNoPlace = UINT32_MAX;

// Links by place in the owner's node array; kNoPlace at either end and off
// any list.
struct IndexLinks {
  uint32_t prev = kNoPlace;
  uint32_t next = kNoPlace;
};

template <typename Node, typename Field>
class LinkedNodeList {
 public:
  explicit LinkedNodeList(Node* /*nodes: unused, the links are pointers*/) {}
  uint64_t size() const { return list_.size(); }
  bool empty() const { return list_.empty(); }
  Node* front() const { return empty() ? nullptr : Field::Owner(list_.front()); }
  Node* back() const { return empty() ? nullptr : Field::Owner(list_.back()); }
  // The neighbour towards the back (older) or the front (newer); nullptr
  // past the end.
  Node* Older(Node* n) const { return Neighbour(Field::Of(*n).next); }
  Node* Newer(Node* n) const { return Neighbour(Field::Of(*n).prev); }
  void PushFront(Node* n) { list_.PushFront(&Field::Of(*n)); }
  void Remove(Node* n) { list_.Remove(&Field::Of(*n)); }
  // Whether `n` is on this list, given that it is on no other list through
  // the same links.
  bool Holds(Node& n) const { return Field::Of(n).prev != nullptr; }

 private:
  Node* Neighbour(ListLinks* l) const {
    return l == list_.sentinel() ? nullptr : Field::Owner(l);
  }
  OrderList list_;
};

template <typename Node, typename Field>
class IndexedNodeList {
 public:
  // `nodes`: the array every node on the list lives in.
  explicit IndexedNodeList(Node* nodes) : nodes_(nodes) { ARC_CHECK(nodes != nullptr); }
  IndexedNodeList(const IndexedNodeList&) = delete;
  IndexedNodeList& operator=(const IndexedNodeList&) = delete;
  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Node* front() const { return At(head_); }
  Node* back() const { return At(tail_); }
  Node* Older(Node* n) const { return At(Field::Of(*n).next); }
  Node* Newer(Node* n) const { return At(Field::Of(*n).prev); }
  void PushFront(Node* n) {
    const uint32_t i = PlaceOf(n);
    IndexLinks& l = Field::Of(*n);
    ARC_DCHECK(l.prev == kNoPlace && l.next == kNoPlace);
    l.next = head_;
    if (head_ != kNoPlace) {
      Field::Of(*At(head_)).prev = i;
    } else {
      tail_ = i;
    }
    head_ = i;
    size_++;
  }
  void Remove(Node* n) {
    ARC_DCHECK(size_ > 0);
    IndexLinks& l = Field::Of(*n);
    if (l.prev != kNoPlace) {
      Field::Of(*At(l.prev)).next = l.next;
    } else {
      head_ = l.next;
    }
    if (l.next != kNoPlace) {
      Field::Of(*At(l.next)).prev = l.prev;
    } else {
      tail_ = l.prev;
    }
    l = IndexLinks{};
    size_--;
  }
  bool Holds(Node& n) const { return Field::Of(n).prev != kNoPlace || head_ == PlaceOf(&n); }

 private:
  Node* At(uint32_t i) const { return i == kNoPlace ? nullptr : nodes_ + i; }
  uint32_t PlaceOf(const Node* n) const { return static_cast<uint32_t>(n - nodes_); }

  Node* const nodes_;
  uint32_t head_ = kNoPlace;
  uint32_t tail_ = kNoPlace;
  uint64_t size_ = 0;
};

// The list for a Field's links.
template <typename Node, typename Field>
using NodeList = std::conditional_t<
    std::is_same_v<std::remove_cvref_t<decltype(Field::Of(std::declval<Node&>()))>, IndexLinks>,
    IndexedNodeList<Node, Field>, LinkedNodeList<Node, Field>>;

}  // namespace arcstore::arc
