// BasicLirsOrder (duet_orders.h): LIRS (Jiang & Zhang, SIGMETRICS '02),
// split so that another ordering may choose the victim. In pages
// (LirsOrder, over OrderNode) it is the sim's LIRS (tools/sim/lirs.h), this
// ordering choosing its own victims, and Duet's; in bytes (over CacheNode)
// it is the engine's Duet (cache_policy.h). Below, a page is one entry and
// sizes are weights (LirsWeight): with every weight 1 the byte rules are
// the page rules exactly.
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
// A victim is Q's oldest evictable page (LirsEvictable: the engine's pinned
// buffers are not), else S's lowest evictable resident one, within a bounded
// walk of each; the owner falls back to its other ordering when there is
// none. A new capacity (the engine's c moves) demotes LIR pages, the
// provisional ones (below) first, then S's bottom ones, until the LIR set
// fits again.
//
// When a page is evicted that LIRS would have kept (a LIR page, on another
// ordering's choice), it becomes non-resident in S, and the LIR set refills
// from the next misses as during warm-up, but a page that is LIR only
// because the set had room, once warm-up is over (a new page has found
// the set full), is provisional: no reuse put it there. The
// provisional pages (a list through their lirs_queue links, which a LIR
// page does not otherwise use) are the first to become HIR when a page
// with a short reuse distance needs room in the LIR set, newest first,
// before S's bottom; a hit on one makes it an ordinary LIR page. So when
// LIRS takes over a cache that ARC has shaped, the pages ARC evicted come
// back as LIR at the cost of ARC's recent misses rather than of LIRS's
// own oldest LIR pages. Alone, LIRS never runs short of LIR pages after
// warm-up and has no provisional page. If another ordering has evicted
// every LIR page, S has no bottom to measure reuse against and is emptied
// until a LIR page exists again.
//
//   LIR set:  ordinary (S order)  +  provisional (newest first out)
//   promote:  provisional -> HIR first, then S's bottom LIR -> HIR
#include <algorithm>

#include "arc/cache_node.h"
#include "arc/duet_orders.h"
#include "base/check.h"

namespace arcstore::arc {
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

LirsOrder::LirsOrder(const LirsOrderOptions& o, OrderHooks* hooks, OrderNode* nodes)
    : BasicLirsOrder(o.cache_pages, o.hir_pages(), o.max_nonresident(), hooks, nodes) {
  ARC_CHECK(o.Validate().ok());
}

template <typename Node>
BasicLirsOrder<Node>::BasicLirsOrder(uint64_t capacity, uint64_t hir, uint64_t max_nonresident,
                                     BasicOrderHooks<Node>* hooks, Node* nodes)
    : c_(capacity),
      llirs_(capacity - hir),
      max_nonresident_(max_nonresident),
      hooks_(hooks),
      stack_(nodes),
      q_(nodes),
      nonres_(nodes),
      provisional_(nodes) {
  ARC_CHECK(hir > 0 && hir < capacity) << hir << " of " << capacity;
  ARC_CHECK(hooks != nullptr);
}

template <typename Node>
Node* BasicLirsOrder<Node>::Bottom() const {
  return stack_.back();
}

template <typename Node>
void BasicLirsOrder<Node>::StackTop(Node* e) {
  if (stack_.Holds(*e)) stack_.Remove(e);
  stack_.PushFront(e);
}

template <typename Node>
void BasicLirsOrder<Node>::QueuePush(Node* e) {
  q_.PushFront(e);
  hir_ += LirsWeight(*e);
}

template <typename Node>
void BasicLirsOrder<Node>::QueueRemove(Node* e) {
  q_.Remove(e);
  hir_ -= LirsWeight(*e);
}

template <typename Node>
void BasicLirsOrder<Node>::Forget(Node* e) {
  e->lirs_where = OrderNode::kNone;
  hooks_->OnForgotten(e);
}

// `e` (LIR) is not provisional any more: reused, or no longer LIR.
template <typename Node>
void BasicLirsOrder<Node>::LeaveProvisional(Node* e) {
  // A LIR entry is linked through lirs_queue only on the provisional list.
  if (provisional_.Holds(*e)) provisional_.Remove(e);
}

// `e` (LIR) stops being LIR: the weights and the provisional list.
template <typename Node>
void BasicLirsOrder<Node>::LeaveLir(Node* e) {
  lir_ -= LirsWeight(*e);
  lir_entries_--;
  LeaveProvisional(e);
}

// The newest provisional LIR entry becomes resident HIR (it stays in S).
template <typename Node>
void BasicLirsOrder<Node>::DemoteProvisional() {
  Node* p = provisional_.front();
  LeaveLir(p);
  p->lirs_where = OrderNode::kHir;
  QueuePush(p);
  if (Bottom() == p) Prune();
}

// Pops HIR entries off S's bottom until a LIR page is there.
template <typename Node>
void BasicLirsOrder<Node>::Prune() {
  for (Node* b = Bottom(); b != nullptr && b->lirs_where != OrderNode::kLir; b = Bottom()) {
    stack_.Remove(b);
    if (b->lirs_where == OrderNode::kNonResident) {
      nonres_.Remove(b);
      Forget(b);
    }
  }
}

// `e` (out of Q and the non-resident list) goes to S's top as a LIR page;
// past Llirs, S's bottom LIR pages make room (never `e` itself).
template <typename Node>
void BasicLirsOrder<Node>::PromoteToLir(Node* e) {
  StackTop(e);
  e->lirs_where = OrderNode::kLir;
  lir_ += LirsWeight(*e);
  lir_entries_++;
  while (lir_ > llirs_ && !provisional_.empty()) DemoteProvisional();
  while (lir_ > llirs_ && Bottom() != e) DemoteBottom();
}

// S's bottom LIR page becomes a resident HIR page at the end of Q.
template <typename Node>
void BasicLirsOrder<Node>::DemoteBottom() {
  Node* b = Bottom();
  ARC_DCHECK(b->lirs_where == OrderNode::kLir);
  stack_.Remove(b);
  LeaveLir(b);
  b->lirs_where = OrderNode::kHir;
  QueuePush(b);
  Prune();
}

// `e` (in S) stays there as a non-resident entry, within the cap.
template <typename Node>
void BasicLirsOrder<Node>::MakeNonResident(Node* e) {
  e->lirs_where = OrderNode::kNonResident;
  nonres_.PushFront(e);
  if (nonres_.size() > max_nonresident_) {
    Node* old = nonres_.back();
    nonres_.Remove(old);
    stack_.Remove(old);
    Forget(old);
  }
}

template <typename Node>
Node* BasicLirsOrder<Node>::Victim(uint32_t max_walk) const {
  uint32_t walked = 0;
  for (Node* e = q_.back(); e != nullptr && walked < max_walk; e = q_.Newer(e), walked++) {
    if (LirsEvictable(*e)) return e;
  }
  walked = 0;
  for (Node* e = stack_.back(); e != nullptr && walked < max_walk; e = stack_.Newer(e), walked++) {
    if (Resident(*e) && LirsEvictable(*e)) return e;
  }
  return nullptr;
}

template <typename Node>
void BasicLirsOrder<Node>::Evict(Node* e) {
  ARC_DCHECK(Resident(*e));
  if (e->lirs_where == OrderNode::kHir) {
    QueueRemove(e);
    if (stack_.Holds(*e)) {
      MakeNonResident(e);
    } else {
      Forget(e);
    }
    return;
  }
  LeaveLir(e);
  MakeNonResident(e);
  Prune();
}

template <typename Node>
void BasicLirsOrder<Node>::Remove(Node* e) {
  switch (e->lirs_where) {
    case OrderNode::kLir:
      LeaveLir(e);
      break;
    case OrderNode::kHir:
      QueueRemove(e);
      break;
    case OrderNode::kNonResident:
      nonres_.Remove(e);
      break;
    default:
      return;
  }
  e->lirs_where = OrderNode::kNone;
  if (stack_.Holds(*e)) {
    stack_.Remove(e);
    Prune();
  }
}

template <typename Node>
void BasicLirsOrder<Node>::SetCapacity(uint64_t capacity, uint64_t hir) {
  ARC_CHECK(hir > 0 && hir < capacity) << hir << " of " << capacity;
  c_ = capacity;
  llirs_ = capacity - hir;
  while (lir_ > llirs_ && !provisional_.empty()) DemoteProvisional();
  while (lir_ > llirs_ && Bottom() != nullptr) DemoteBottom();
}

template <typename Node>
void BasicLirsOrder<Node>::Reference(Node* e) {
  switch (e->lirs_where) {
    case OrderNode::kLir: {
      const bool was_bottom = stack_.back() == e;
      LeaveProvisional(e);  // reused
      StackTop(e);
      if (was_bottom) Prune();
      return;
    }
    case OrderNode::kHir:
      QueueRemove(e);
      if (stack_.Holds(*e)) {
        PromoteToLir(e);
        return;
      }
      StackTop(e);
      QueuePush(e);
      // With no LIR page (another ordering evicted them all) S has no bottom
      // to measure reuse against and holds nothing.
      if (lir_entries_ == 0) Prune();
      return;
    case OrderNode::kNonResident:
      // Its reuse distance beat the bottom LIR page's.
      nonres_.Remove(e);
      PromoteToLir(e);
      return;
    default:
      // A new page: LIR while the LIR set has room for it (so S then has a
      // LIR page at its bottom), else resident HIR.
      StackTop(e);
      if (lir_ + LirsWeight(*e) <= llirs_) {
        e->lirs_where = OrderNode::kLir;
        lir_ += LirsWeight(*e);
        lir_entries_++;
        if (filled_) provisional_.PushFront(e);
        return;
      }
      filled_ = true;
      e->lirs_where = OrderNode::kHir;
      QueuePush(e);
      if (lir_entries_ == 0) Prune();
      return;
  }
}

template <typename Node>
void BasicLirsOrder<Node>::ReferenceRemembered(Node* e) {
  ARC_DCHECK(e->lirs_where == OrderNode::kNone);
  PromoteToLir(e);
}

template <typename Node>
Status BasicLirsOrder<Node>::CheckInvariants() const {
  if (lir_ > llirs_ && lir_entries_ > 1)
    return Status::Internal("lirs order: more than Llirs in LIR pages");
  if (nonres_.size() > max_nonresident_)
    return Status::Internal("lirs order: too many non-residents");
  uint64_t lir = 0, lir_entries = 0, nonres = 0, in_s = 0;
  for (Node* e = stack_.front(); e != nullptr; e = stack_.Older(e)) {
    in_s++;
    if (e->lirs_where == OrderNode::kNone)
      return Status::Internal("lirs order: a stale entry in S");
    if (e->lirs_where == OrderNode::kLir) {
      lir += LirsWeight(*e);
      lir_entries++;
    }
    nonres += e->lirs_where == OrderNode::kNonResident ? 1 : 0;
  }
  if (in_s != stack_.size() || lir != lir_ || lir_entries != lir_entries_ ||
      nonres != nonres_.size()) {
    return Status::Internal("lirs order: S does not hold every LIR and non-resident page");
  }
  if (Bottom() != nullptr && Bottom()->lirs_where != OrderNode::kLir) {
    return Status::Internal("lirs order: S's bottom is not LIR");
  }
  uint64_t in_q = 0, hir = 0;
  for (Node* e = q_.front(); e != nullptr; e = q_.Older(e)) {
    if (e->lirs_where != OrderNode::kHir) {
      return Status::Internal("lirs order: Q holds a page that is not resident HIR");
    }
    in_q++;
    hir += LirsWeight(*e);
  }
  if (in_q != q_.size() || hir != hir_) return Status::Internal("lirs order: Q's count is wrong");
  uint64_t provisional = 0;
  for (Node* e = provisional_.front(); e != nullptr; e = provisional_.Older(e)) {
    if (e->lirs_where != OrderNode::kLir || !stack_.Holds(*e)) {
      return Status::Internal("lirs order: a provisional entry that is not LIR in S");
    }
    provisional++;
  }
  if (provisional != provisional_.size() || provisional > lir_entries_) {
    return Status::Internal("lirs order: the provisional list's count is wrong");
  }
  return Status::Ok();
}

template class BasicLirsOrder<OrderNode>;
template class BasicLirsOrder<CacheNode>;

}  // namespace arcstore::arc
