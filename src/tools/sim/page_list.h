// PageList and NodePool: the building blocks of the page-granular reference
// policies of `arcstore sim` (2Q, LIRS, S3-FIFO, W-TinyLFU).
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

#include "arc/policy.h"
#include "base/check.h"

namespace arcstore::sim {

// Which structure of its policy a node is in; the meaning is per policy.
using Where = uint8_t;
inline constexpr Where kNowhere = 0;

struct PageNode;
// A second set of links that knows its node (LIRS's stack S).
struct OwnedLinks : arc::ListLinks {
  PageNode* owner = nullptr;
};

struct PageNode : arc::ListLinks {
  uint64_t key = 0;
  Where where = kNowhere;
  uint8_t freq = 0;       // S3-FIFO: 0..3
  bool in_stack = false;  // LIRS: also in the stack S
  OwnedLinks stack;       // LIRS: the stack S links
};

class PageList {
 public:
  PageList() { head_.prev = head_.next = &head_; }
  PageList(const PageList&) = delete;
  PageList& operator=(const PageList&) = delete;

  uint64_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  PageNode* front() const { return empty() ? nullptr : static_cast<PageNode*>(head_.next); }
  PageNode* back() const { return empty() ? nullptr : static_cast<PageNode*>(head_.prev); }

  void PushFront(PageNode* n) {
    n->prev = &head_;
    n->next = head_.next;
    head_.next->prev = n;
    head_.next = n;
    size_++;
  }
  void Remove(PageNode* n) {
    ARC_DCHECK(size_ > 0);
    n->prev->next = n->next;
    n->next->prev = n->prev;
    n->prev = n->next = nullptr;
    size_--;
  }
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
    for (const arc::ListLinks* x = head_.next; x != &head_; x = x->next) n++;
    return n;
  }

 private:
  arc::ListLinks head_;
  uint64_t size_ = 0;
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
