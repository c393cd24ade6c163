// PageList and NodePool: the building blocks of the page-granular reference
// policies of `arcstore sim` (2Q, S3-FIFO, W-TinyLFU).
//
// A PageList is an intrusive doubly linked list with a sentinel and a count;
// its front is the most recent end (MRU / FIFO head), its back the oldest.
// A NodePool hands out a fixed number of nodes allocated up front, so a
// policy never allocates per request; with a FlatTable (arc/flat_table.h) over
// the same bound, a request costs a probe and a few pointer moves.
//
// Thread-safety: none; each simulator owns its lists and pool.
#pragma once

#include <cstdint>
#include <memory>

#include "arc/order_lists.h"
#include "arc/policy.h"
#include "base/check.h"

namespace arcstore::sim {

// Which structure of its policy a node is in; the meaning is per policy.
using Where = uint8_t;
inline constexpr Where kNowhere = 0;

struct PageNode : arc::ListLinks {
  uint64_t key = 0;
  Where where = kNowhere;
  uint8_t freq = 0;  // S3-FIFO: 0..3
};

// Over arc::OrderList (arc/order_lists.h), the pointer-linked list that the
// engine's LIRS runs on too.
class PageList {
 public:
  PageList() = default;
  PageList(const PageList&) = delete;
  PageList& operator=(const PageList&) = delete;

  uint64_t size() const { return list_.size(); }
  bool empty() const { return list_.empty(); }
  PageNode* front() const { return static_cast<PageNode*>(list_.front()); }
  PageNode* back() const { return static_cast<PageNode*>(list_.back()); }

  void PushFront(PageNode* n) { list_.PushFront(n); }
  void Remove(PageNode* n) { list_.Remove(n); }
  void MoveToFront(PageNode* n) {
    Remove(n);
    PushFront(n);
  }
  PageNode* PopBack() {
    PageNode* n = back();
    if (n != nullptr) Remove(n);
    return n;
  }
  // Counts the nodes by walking the list (tests check it against size()).
  uint64_t CountByWalk() const {
    uint64_t n = 0;
    for (const arc::ListLinks* x = list_.sentinel()->next; x != list_.sentinel(); x = x->next) n++;
    return n;
  }

 private:
  arc::OrderList list_;
};

class NodePool {
 public:
  explicit NodePool(uint64_t max_nodes)
      : nodes_(std::make_unique<PageNode[]>(max_nodes)), max_(max_nodes) {}

  PageNode* Get(uint64_t key) {
    PageNode* n;
    if (free_ != nullptr) {
      n = free_;
      free_ = static_cast<PageNode*>(n->next);
    } else {
      ARC_CHECK_LT(used_, max_);
      n = &nodes_[used_++];
    }
    *n = PageNode{};
    n->key = key;
    in_use_++;
    return n;
  }
  void Put(PageNode* n) {
    n->next = free_;
    free_ = n;
    in_use_--;
  }
  uint64_t in_use() const { return in_use_; }

 private:
  std::unique_ptr<PageNode[]> nodes_;
  uint64_t max_;
  uint64_t used_ = 0;
  uint64_t in_use_ = 0;
  PageNode* free_ = nullptr;
};

}  // namespace arcstore::sim
