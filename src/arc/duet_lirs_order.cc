// LirsOrder (duet_orders.h): LIRS (Jiang & Zhang, SIGMETRICS '02) in pages,
// split so that another ordering may choose the victim. The sim's LIRS
// (tools/sim/lirs.h) is this ordering choosing its own victims.
//
//   stack S (recency order, top = most recent):  LIR pages, resident HIR pages,
//                                                 non-resident HIR pages
//   queue Q (FIFO):                               resident HIR pages only
//
//   hit  LIR          -> top of S; prune S
//   hit  HIR in S     -> becomes LIR, leaves Q; S's bottom LIR -> HIR, end of Q
//   hit  HIR not in S -> top of S, end of Q
//   miss              -> (the owner evicts Victim(), Q's oldest, which stays
//                        in S as non-resident if it is there); LIR if the key
//                        was a non-resident in S, else resident HIR
//   prune             -> pop HIR entries off S's bottom until a LIR page is
//                        there; a non-resident one is forgotten
//
// While fewer than Llirs pages are LIR, every new page becomes LIR (warm-up).
// Lhirs pages are for resident HIR, Llirs = c - Lhirs. The paper leaves S
// unbounded; here non-resident entries are capped (the oldest leaves S
// first), which bounds the entries at c plus the cap.
//
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
namespace {
OrderNode* FromQueue(ListLinks* l) {
  return OwnerOf<OrderNode>(l, offsetof(OrderNode, lirs_queue));
}
OrderNode* FromStack(ListLinks* l) {
  return OwnerOf<OrderNode>(l, offsetof(OrderNode, lirs_stack));
}
}  // namespace

Status LirsOrderOptions::Validate() const {
  if (cache_pages < 2)
    return Status::InvalidArgument("lirs: cache size must be at least two pages");
  if (!(hir_fraction > 0 && hir_fraction < 1)) {
    return Status::InvalidArgument("lirs: the HIR fraction must be in (0, 1)");
  }
  if (!(nonresident_multiple >= 0 && nonresident_multiple <= 64)) {
    return Status::InvalidArgument("lirs: the non-resident multiple must be in [0, 64]");
  }
  return Status::Ok();
}

uint64_t LirsOrderOptions::hir_pages() const {
  const auto h = static_cast<uint64_t>(hir_fraction * static_cast<double>(cache_pages));
  return std::clamp<uint64_t>(h, 1, cache_pages - 1);
}

uint64_t LirsOrderOptions::max_nonresident() const {
  return static_cast<uint64_t>(nonresident_multiple * static_cast<double>(cache_pages));
}

LirsOrder::LirsOrder(const LirsOrderOptions& o, OrderHooks* hooks)
    : c_(o.cache_pages),
      llirs_(o.cache_pages - o.hir_pages()),
      max_nonresident_(o.max_nonresident()),
      hooks_(hooks) {
  ARC_CHECK(o.Validate().ok());
  ARC_CHECK(hooks != nullptr);
  stack_.prev = stack_.next = &stack_;
}

OrderNode* LirsOrder::Bottom() const {
  return stack_.prev == &stack_ ? nullptr : FromStack(stack_.prev);
}

void LirsOrder::StackTop(OrderNode* e) {
  if (e->in_stack) StackRemove(e);
  e->lirs_stack.prev = &stack_;
  e->lirs_stack.next = stack_.next;
  stack_.next->prev = &e->lirs_stack;
  stack_.next = &e->lirs_stack;
  e->in_stack = true;
  stack_size_++;
}

void LirsOrder::StackRemove(OrderNode* e) {
  e->lirs_stack.prev->next = e->lirs_stack.next;
  e->lirs_stack.next->prev = e->lirs_stack.prev;
  e->in_stack = false;
  stack_size_--;
}

void LirsOrder::Forget(OrderNode* e) {
  e->lirs_where = OrderNode::kNone;
  hooks_->OnForgotten(e);
}

// Pops HIR entries off S's bottom until a LIR page is there.
void LirsOrder::Prune() {
  for (OrderNode* b = Bottom(); b != nullptr && b->lirs_where != OrderNode::kLir; b = Bottom()) {
    StackRemove(b);
    if (b->lirs_where == OrderNode::kNonResident) {
      nonres_.Remove(&b->lirs_queue);
      Forget(b);
    }
  }
}

// `e` (out of Q and the non-resident list) goes to S's top as a LIR page;
// past Llirs, S's bottom LIR page makes room.
void LirsOrder::PromoteToLir(OrderNode* e) {
  StackTop(e);
  e->lirs_where = OrderNode::kLir;
  lir_++;
  if (lir_ > llirs_) DemoteBottom();
}

// S's bottom LIR page becomes a resident HIR page at the end of Q.
void LirsOrder::DemoteBottom() {
  OrderNode* b = Bottom();
  ARC_DCHECK(b->lirs_where == OrderNode::kLir);
  StackRemove(b);
  b->lirs_where = OrderNode::kHir;
  lir_--;
  q_.PushFront(&b->lirs_queue);
  Prune();
}

// `e` (in S) stays there as a non-resident entry, within the cap.
void LirsOrder::MakeNonResident(OrderNode* e) {
  e->lirs_where = OrderNode::kNonResident;
  nonres_.PushFront(&e->lirs_queue);
  if (nonres_.size() > max_nonresident_) {
    OrderNode* old = FromQueue(nonres_.back());
    nonres_.Remove(&old->lirs_queue);
    StackRemove(old);
    Forget(old);
  }
}

OrderNode* LirsOrder::Victim() const { return q_.empty() ? Bottom() : FromQueue(q_.back()); }

void LirsOrder::Evict(OrderNode* e) {
  ARC_DCHECK(Resident(*e));
  if (e->lirs_where == OrderNode::kHir) {
    q_.Remove(&e->lirs_queue);
    if (e->in_stack) {
      MakeNonResident(e);
    } else {
      Forget(e);
    }
    return;
  }
  lir_--;
  MakeNonResident(e);
  Prune();
}

void LirsOrder::Reference(OrderNode* e) {
  switch (e->lirs_where) {
    case OrderNode::kLir: {
      const bool was_bottom = stack_.prev == &e->lirs_stack;
      StackTop(e);
      if (was_bottom) Prune();
      return;
    }
    case OrderNode::kHir:
      q_.Remove(&e->lirs_queue);
      if (e->in_stack) {
        PromoteToLir(e);
        return;
      }
      StackTop(e);
      q_.PushFront(&e->lirs_queue);
      // With no LIR page (another ordering evicted them all) S has no bottom
      // to measure reuse against and holds nothing.
      if (lir_ == 0) Prune();
      return;
    case OrderNode::kNonResident:
      // Its reuse distance beat the bottom LIR page's.
      nonres_.Remove(&e->lirs_queue);
      PromoteToLir(e);
      return;
    default:
      // A new page: LIR while the LIR set is short (Llirs >= 1, so S then
      // has a LIR page at its bottom), else resident HIR.
      StackTop(e);
      if (lir_ < llirs_) {
        e->lirs_where = OrderNode::kLir;
        lir_++;
        return;
      }
      e->lirs_where = OrderNode::kHir;
      q_.PushFront(&e->lirs_queue);
      return;
  }
}

Status LirsOrder::CheckInvariants() const {
  if (lir_ > llirs_) return Status::Internal("lirs order: more than Llirs LIR pages");
  if (resident() > c_) return Status::Internal("lirs order: more than c pages resident");
  if (nonres_.size() > max_nonresident_)
    return Status::Internal("lirs order: too many non-residents");
  uint64_t lir = 0, nonres = 0, in_s = 0;
  for (const ListLinks* l = stack_.next; l != &stack_; l = l->next) {
    const OrderNode* e = FromStack(const_cast<ListLinks*>(l));
    in_s++;
    if (!e->in_stack || e->lirs_where == OrderNode::kNone)
      return Status::Internal("lirs order: a stale entry in S");
    lir += e->lirs_where == OrderNode::kLir ? 1 : 0;
    nonres += e->lirs_where == OrderNode::kNonResident ? 1 : 0;
  }
  if (in_s != stack_size_ || lir != lir_ || nonres != nonres_.size()) {
    return Status::Internal("lirs order: S does not hold every LIR and non-resident page");
  }
  if (Bottom() != nullptr && Bottom()->lirs_where != OrderNode::kLir) {
    return Status::Internal("lirs order: S's bottom is not LIR");
  }
  uint64_t in_q = 0;
  for (const ListLinks* l = q_.sentinel()->next; l != q_.sentinel(); l = l->next) {
    if (FromQueue(const_cast<ListLinks*>(l))->lirs_where != OrderNode::kHir) {
      return Status::Internal("lirs order: Q holds a page that is not resident HIR");
    }
    in_q++;
  }
  if (in_q != q_.size()) return Status::Internal("lirs order: Q's count is wrong");
  return Status::Ok();
}

}  // namespace arcstore::arc
