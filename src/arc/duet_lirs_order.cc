// LirsOrder (duet_orders.h): LIRS (Jiang & Zhang, SIGMETRICS '02) in pages,
// split so that another ordering may choose the victim. Lhirs = max(1, 1% of
// c); non-resident entries in S are capped at 2c, the oldest leaving first.
// When a page is evicted that LIRS would have kept (a LIR page, on another
// ordering's choice), it becomes non-resident in S, and the LIR set refills
// from the next misses as during warm-up. (Alone, LIRS never runs short of
// LIR pages after warm-up, so this changes nothing there.) If another
// ordering has evicted every LIR page, S has no bottom to measure reuse
// against and is emptied until a LIR page exists again.
#include <algorithm>

#include "arc/duet_orders.h"
#include "base/check.h"

namespace arcstore::arc {

LirsOrder::LirsOrder(uint64_t cache_pages)
    : c_(cache_pages),
      lhirs_(std::clamp<uint64_t>(cache_pages / 100, 1, cache_pages - 1)),
      llirs_(cache_pages - lhirs_),
      max_nonresident_(2 * cache_pages) {
  ARC_CHECK_GE(cache_pages, 2u);
  stack_.prev = stack_.next = &stack_;
  nodes_.reserve(c_ + max_nonresident_ + 2);
}

OrderNode* LirsOrder::Find(uint64_t key) const {
  auto it = nodes_.find(key);
  return it == nodes_.end() ? nullptr : const_cast<OrderNode*>(&it->second);
}

OrderNode* LirsOrder::Bottom() const {
  return stack_.prev == &stack_ ? nullptr : static_cast<StackLinks*>(stack_.prev)->owner;
}

void LirsOrder::StackTop(OrderNode* n) {
  if (n->in_stack) StackRemove(n);
  n->stack.owner = n;
  n->stack.prev = &stack_;
  n->stack.next = stack_.next;
  stack_.next->prev = &n->stack;
  stack_.next = &n->stack;
  n->in_stack = true;
  stack_size_++;
}

void LirsOrder::StackRemove(OrderNode* n) {
  n->stack.prev->next = n->stack.next;
  n->stack.next->prev = n->stack.prev;
  n->in_stack = false;
  stack_size_--;
}

void LirsOrder::Forget(OrderNode* n) { nodes_.erase(n->key); }

// Pops HIR entries off S's bottom until a LIR page is there.
void LirsOrder::Prune() {
  for (OrderNode* b = Bottom(); b != nullptr && b->where != kLir; b = Bottom()) {
    StackRemove(b);
    if (b->where == kNonResident) {
      nonres_.Remove(b);
      Forget(b);
    }
  }
}

void LirsOrder::DemoteBottom() {
  OrderNode* b = Bottom();
  StackRemove(b);
  b->where = kHir;
  lir_--;
  q_.PushFront(b);
  Prune();
}

// `n` (in S) stays there as a non-resident entry, within the cap.
void LirsOrder::MakeNonResident(OrderNode* n) {
  n->where = kNonResident;
  nonres_.PushFront(n);
  if (nonres_.size() > max_nonresident_) {
    OrderNode* old = nonres_.back();
    nonres_.Remove(old);
    StackRemove(old);
    Forget(old);
  }
}

bool LirsOrder::Resident(uint64_t key) const {
  const OrderNode* n = Find(key);
  return n != nullptr && (n->where == kLir || n->where == kHir);
}

uint64_t LirsOrder::Victim() const {
  return q_.empty() ? Bottom()->key : q_.back()->key;
}

void LirsOrder::Evict(uint64_t key) {
  OrderNode* n = Find(key);
  ARC_DCHECK(n != nullptr && (n->where == kLir || n->where == kHir));
  if (n->where == kHir) {
    q_.Remove(n);
    if (!n->in_stack) {
      Forget(n);
      return;
    }
    MakeNonResident(n);
    return;
  }
  lir_--;
  MakeNonResident(n);
  Prune();
}

void LirsOrder::Reference(uint64_t key) {
  OrderNode* n = Find(key);
  if (n != nullptr && n->where == kLir) {
    const bool was_bottom = Bottom() == n;
    StackTop(n);
    if (was_bottom) Prune();
    return;
  }
  if (n != nullptr && n->where == kHir) {
    q_.Remove(n);
    if (n->in_stack) {
      StackTop(n);
      n->where = kLir;
      lir_++;
      if (lir_ > llirs_) DemoteBottom();
    } else {
      StackTop(n);
      q_.PushFront(n);
      if (lir_ == 0) Prune();  // see ReferenceMiss
    }
    return;
  }
  ReferenceMiss(n, key);
}

// A miss: a non-resident entry still in S becomes LIR; a new page becomes
// LIR while the LIR set is short, else resident HIR.
void LirsOrder::ReferenceMiss(OrderNode* n, uint64_t key) {
  if (n != nullptr) {
    nonres_.Remove(n);
    StackTop(n);
    n->where = kLir;
    lir_++;
    if (lir_ > llirs_) DemoteBottom();
    return;
  }
  n = &nodes_[key];
  n->key = key;
  StackTop(n);
  if (lir_ < llirs_) {
    n->where = kLir;
    lir_++;
    return;
  }
  n->where = kHir;
  q_.PushFront(n);
  // With no LIR page (another ordering evicted them all) S has no bottom to
  // measure reuse against and holds nothing.
  if (lir_ == 0) Prune();
}

Status LirsOrder::CheckInvariants() const {
  if (lir_ > llirs_) return Status::Internal("lirs order: more than Llirs LIR pages");
  if (resident() > c_) return Status::Internal("lirs order: more than c pages resident");
  if (nonres_.size() > max_nonresident_) return Status::Internal("lirs order: too many non-residents");
  uint64_t lir = 0, nonres = 0, in_s = 0;
  for (const ListLinks* l = stack_.next; l != &stack_; l = l->next) {
    const OrderNode* n = static_cast<const StackLinks*>(l)->owner;
    in_s++;
    lir += n->where == kLir ? 1 : 0;
    nonres += n->where == kNonResident ? 1 : 0;
  }
  if (in_s != stack_size_ || lir != lir_ || nonres != nonres_.size()) {
    return Status::Internal("lirs order: S does not hold every LIR and non-resident page");
  }
  if (Bottom() != nullptr && Bottom()->where != kLir) return Status::Internal("lirs order: S's bottom is not LIR");
  if (nodes_.size() != resident() + nonres_.size() || q_.CountByWalk() != q_.size()) {
    return Status::Internal("lirs order: lists and index disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::arc
