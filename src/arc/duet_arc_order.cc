// ArcOrder and OrderList (duet_orders.h): the paper's ARC (Megiddo & Modha,
// FAST '03, Fig. 4) in pages, split so that another ordering may choose the
// victim. Driven by its own Victim() it reproduces the paper's hit counts
// (duet_test.cc checks them against ../shared/traces/README.md section 5).
#include <algorithm>

#include "arc/duet_orders.h"
#include "base/check.h"

namespace arcstore::arc {

OrderNode* OrderList::front() const { return empty() ? nullptr : static_cast<OrderNode*>(head_.next); }
OrderNode* OrderList::back() const { return empty() ? nullptr : static_cast<OrderNode*>(head_.prev); }

void OrderList::PushFront(OrderNode* n) {
  n->prev = &head_;
  n->next = head_.next;
  head_.next->prev = n;
  head_.next = n;
  size_++;
}

void OrderList::Remove(OrderNode* n) {
  n->prev->next = n->next;
  n->next->prev = n->prev;
  n->prev = n->next = nullptr;
  size_--;
}

uint64_t OrderList::CountByWalk() const {
  uint64_t n = 0;
  for (const ListLinks* x = head_.next; x != &head_; x = x->next) n++;
  return n;
}

ArcOrder::ArcOrder(uint64_t cache_pages) : c_(cache_pages) {
  ARC_CHECK_GT(cache_pages, 0u);
  nodes_.reserve(2 * cache_pages + 2);
}

OrderNode* ArcOrder::Find(uint64_t key) const {
  auto it = nodes_.find(key);
  return it == nodes_.end() ? nullptr : const_cast<OrderNode*>(&it->second);
}

OrderList& ArcOrder::ListOf(uint8_t where) {
  switch (where) {
    case kT1: return t1_;
    case kT2: return t2_;
    case kB1: return b1_;
    default: return b2_;
  }
}

void ArcOrder::Move(OrderNode* n, uint8_t to) {
  if (n->where != 0) ListOf(n->where).Remove(n);
  n->where = to;
  ListOf(to).PushFront(n);
}

void ArcOrder::Drop(OrderList& list) {
  OrderNode* n = list.back();
  list.Remove(n);
  nodes_.erase(n->key);
}

bool ArcOrder::Resident(uint64_t key) const {
  const OrderNode* n = Find(key);
  return n != nullptr && (n->where == kT1 || n->where == kT2);
}

void ArcOrder::NoteMiss(uint64_t key) {
  const OrderNode* n = Find(key);
  if (n == nullptr) return;
  const auto b1 = static_cast<double>(b1_.size());
  const auto b2 = static_cast<double>(b2_.size());
  if (n->where == kB1) {
    p_ = std::min(static_cast<double>(c_), p_ + (b1 >= b2 ? 1.0 : b2 / b1));
  } else if (n->where == kB2) {
    p_ = std::max(0.0, p_ - (b2 >= b1 ? 1.0 : b1 / b2));
  }
}

uint64_t ArcOrder::Victim(uint64_t key) const {
  const OrderNode* n = Find(key);
  const bool in_b2 = n != nullptr && n->where == kB2;
  const bool new_key = n == nullptr;
  const auto t1 = static_cast<double>(t1_.size());
  // Case IV(A) with T1 holding c pages: T1's LRU page goes.
  bool from_t1 = new_key && t1_.size() + b1_.size() >= c_ && t1_.size() >= c_;
  from_t1 = from_t1 || (!t1_.empty() && ((in_b2 && t1 == p_) || t1 > p_));
  if (t2_.empty()) from_t1 = true;
  if (t1_.empty()) from_t1 = false;
  return (from_t1 ? t1_.back() : t2_.back())->key;
}

void ArcOrder::Evict(uint64_t key) {
  OrderNode* n = Find(key);
  ARC_DCHECK(n != nullptr && (n->where == kT1 || n->where == kT2));
  Move(n, n->where == kT1 ? kB1 : kB2);
}

void ArcOrder::Reference(uint64_t key) {
  auto [it, inserted] = nodes_.try_emplace(key);
  OrderNode* n = &it->second;
  if (!inserted) {
    Move(n, kT2);  // a hit (case I) or a ghost (cases II, III)
    return;
  }
  n->key = key;
  Move(n, kT1);  // case IV
  // The paper deletes B1's (or, with |T1| + |B1| < c, B2's) LRU entry before
  // its REPLACE; trimming after the insert removes the same entry.
  if (t1_.size() + b1_.size() > c_ && !b1_.empty()) Drop(b1_);
  if (t1_.size() + t2_.size() + b1_.size() + b2_.size() > 2 * c_) Drop(b2_.empty() ? b1_ : b2_);
}

Status ArcOrder::CheckInvariants() const {
  if (resident() > c_) return Status::Internal("arc order: more than c pages resident");
  if (t1_.size() + b1_.size() > c_) return Status::Internal("arc order: |T1| + |B1| > c");
  if (t1_.size() + t2_.size() + b1_.size() + b2_.size() > 2 * c_) {
    return Status::Internal("arc order: the four lists hold more than 2c");
  }
  if (p_ < 0 || p_ > static_cast<double>(c_)) return Status::Internal("arc order: p out of [0, c]");
  const uint64_t walked = t1_.CountByWalk() + t2_.CountByWalk() + b1_.CountByWalk() + b2_.CountByWalk();
  if (walked != nodes_.size()) return Status::Internal("arc order: lists and index disagree");
  return Status::Ok();
}

}  // namespace arcstore::arc
