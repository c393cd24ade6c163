// ArcOrder (duet_orders.h): the paper's ARC (Megiddo & Modha,
// FAST '03, Fig. 4) in pages, split so that another ordering may choose the
// victim. Driven by its own Victim() it reproduces the paper's hit counts
// (duet_test.cc checks them against ../shared/traces/README.md section 5).
#include <algorithm>

#include "arc/duet_orders.h"
#include "base/check.h"

namespace arcstore::arc {

ArcOrder::ArcOrder(uint64_t cache_pages, OrderHooks* hooks, OrderNode* nodes)
    : c_(cache_pages),
      hooks_(hooks),
      lists_{List(nodes), List(nodes), List(nodes), List(nodes), List(nodes)} {
  ARC_CHECK_GT(cache_pages, 0u);
  ARC_CHECK(hooks != nullptr);
}

void ArcOrder::Move(OrderNode* e, uint8_t to) {
  if (e->arc_where != OrderNode::kNone) lists_[e->arc_where].Remove(e);
  e->arc_where = to;
  lists_[to].PushFront(e);
}

void ArcOrder::Drop(uint8_t from) {
  OrderNode* e = lists_[from].back();
  lists_[from].Remove(e);
  e->arc_where = OrderNode::kNone;
  hooks_->OnForgotten(e);
}

void ArcOrder::NoteMiss(const OrderNode& e) {
  const auto b1 = static_cast<double>(this->b1());
  const auto b2 = static_cast<double>(this->b2());
  if (e.arc_where == OrderNode::kB1) {
    p_ = std::min(static_cast<double>(c_), p_ + (b1 >= b2 ? 1.0 : b2 / b1));
  } else if (e.arc_where == OrderNode::kB2) {
    p_ = std::max(0.0, p_ - (b2 >= b1 ? 1.0 : b1 / b2));
  }
}

OrderNode* ArcOrder::Victim(const OrderNode& e) const {
  const bool in_b2 = e.arc_where == OrderNode::kB2;
  const bool new_key = e.arc_where == OrderNode::kNone;
  const uint64_t t1 = this->t1();
  // Case IV(A) with T1 holding c pages: T1's LRU page goes.
  bool from_t1 = new_key && t1 + b1() >= c_ && t1 >= c_;
  const auto t1_pages = static_cast<double>(t1);
  from_t1 = from_t1 || (t1 != 0 && ((in_b2 && t1_pages == p_) || t1_pages > p_));
  if (t2() == 0) from_t1 = true;
  if (t1 == 0) from_t1 = false;
  return lists_[from_t1 ? OrderNode::kT1 : OrderNode::kT2].back();
}

void ArcOrder::Evict(OrderNode* e) {
  ARC_DCHECK(Resident(*e));
  Move(e, e->arc_where == OrderNode::kT1 ? OrderNode::kB1 : OrderNode::kB2);
}

void ArcOrder::Reference(OrderNode* e) {
  if (e->arc_where != OrderNode::kNone) {
    Move(e, OrderNode::kT2);  // a hit (case I) or a ghost (cases II, III)
    return;
  }
  Move(e, OrderNode::kT1);  // case IV
  // The paper deletes B1's (or, with |T1| + |B1| < c, B2's) LRU entry before
  // its REPLACE; trimming after the insert removes the same entry.
  if (t1() + b1() > c_ && b1() != 0) Drop(OrderNode::kB1);
  if (tracked() > 2 * c_) Drop(b2() == 0 ? OrderNode::kB1 : OrderNode::kB2);
}

Status ArcOrder::CheckInvariants() const {
  if (resident() > c_) return Status::Internal("arc order: more than c pages resident");
  if (t1() + b1() > c_) return Status::Internal("arc order: |T1| + |B1| > c");
  if (tracked() > 2 * c_) return Status::Internal("arc order: the four lists hold more than 2c");
  if (p_ < 0 || p_ > static_cast<double>(c_)) return Status::Internal("arc order: p out of [0, c]");
  for (uint8_t w = OrderNode::kT1; w <= OrderNode::kB2; w++) {
    uint64_t walked = 0;
    for (OrderNode* x = lists_[w].front(); x != nullptr; x = lists_[w].Older(x)) {
      if (x->arc_where != w)
        return Status::Internal("arc order: an entry on the wrong list");
      walked++;
    }
    if (walked != lists_[w].size()) return Status::Internal("arc order: a list's count is wrong");
  }
  return Status::Ok();
}

}  // namespace arcstore::arc
