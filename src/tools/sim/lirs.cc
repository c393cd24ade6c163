#include "tools/sim/lirs.h"

#include <algorithm>

namespace arcstore::sim {

Status LirsOptions::Validate() const {
  if (cache_pages < 2) return Status::InvalidArgument("lirs: cache size must be at least two pages");
  if (!(hir_fraction > 0 && hir_fraction < 1)) {
    return Status::InvalidArgument("lirs: the HIR fraction must be in (0, 1)");
  }
  if (!(nonresident_multiple >= 0 && nonresident_multiple <= 64)) {
    return Status::InvalidArgument("lirs: the non-resident multiple must be in [0, 64]");
  }
  return Status::Ok();
}

namespace {
uint64_t Lhirs(const LirsOptions& o) {
  const auto h = static_cast<uint64_t>(o.hir_fraction * static_cast<double>(o.cache_pages));
  return std::clamp<uint64_t>(h, 1, o.cache_pages - 1);
}
uint64_t MaxNonResident(const LirsOptions& o) {
  return static_cast<uint64_t>(o.nonresident_multiple * static_cast<double>(o.cache_pages));
}
}  // namespace

LirsSim::LirsSim(const LirsOptions& o)
    : c_(o.cache_pages),
      lhirs_(Lhirs(o)),
      llirs_(c_ - lhirs_),
      max_nonresident_(MaxNonResident(o)),
      pool_(c_ + max_nonresident_ + 2),
      table_(c_ + max_nonresident_ + 2) {
  stack_.prev = stack_.next = &stack_;
}

PageNode* LirsSim::FromStack(arc::ListLinks* l) const {
  return static_cast<OwnedLinks*>(l)->owner;
}

void LirsSim::StackPushTop(PageNode* n) {
  if (n->in_stack) StackRemove(n);
  n->stack.owner = n;
  n->stack.prev = &stack_;
  n->stack.next = stack_.next;
  stack_.next->prev = &n->stack;
  stack_.next = &n->stack;
  n->in_stack = true;
  stack_size_++;
}

void LirsSim::StackRemove(PageNode* n) {
  n->stack.prev->next = n->stack.next;
  n->stack.next->prev = n->stack.prev;
  n->in_stack = false;
  stack_size_--;
}

void LirsSim::Forget(PageNode* n) {
  table_.Erase(n->key);
  pool_.Put(n);
}

// Pops HIR entries off S's bottom until a LIR page is there; a non-resident
// one leaves the policy altogether.
void LirsSim::Prune() {
  while (stack_.prev != &stack_) {
    PageNode* b = FromStack(stack_.prev);
    if (b->where == kLir) return;
    StackRemove(b);
    if (b->where == kNonResident) {
      nonres_.Remove(b);
      Forget(b);
    }
  }
}

// S's bottom LIR page becomes a resident HIR page at the end of Q.
void LirsSim::DemoteBottomLir() {
  PageNode* b = FromStack(stack_.prev);
  ARC_DCHECK(b->where == kLir);
  StackRemove(b);
  b->where = kHir;
  lir_count_--;
  q_.PushFront(b);
  Prune();
}

// Q's oldest page leaves the cache: a non-resident entry if S holds it.
void LirsSim::EvictFromQ() {
  PageNode* v = q_.PopBack();
  if (!v->in_stack) {
    Forget(v);
    return;
  }
  v->where = kNonResident;
  nonres_.PushFront(v);
  if (nonres_.size() > max_nonresident_) {
    PageNode* old = nonres_.PopBack();
    StackRemove(old);
    Forget(old);
  }
}

bool LirsSim::Access(uint64_t key) {
  PageNode* n = table_.Find(key);
  if (n != nullptr && n->where == kLir) {
    hits_++;
    const bool was_bottom = stack_.prev == &n->stack;
    StackPushTop(n);
    if (was_bottom) Prune();
    return true;
  }
  if (n != nullptr && n->where == kHir) {
    hits_++;
    if (n->in_stack) {
      q_.Remove(n);
      StackPushTop(n);
      n->where = kLir;
      lir_count_++;
      if (lir_count_ > llirs_) DemoteBottomLir();
    } else {
      StackPushTop(n);
      q_.MoveToFront(n);
    }
    return true;
  }
  if (resident() >= c_) EvictFromQ();
  // EvictFromQ may have forgotten n itself (the oldest non-resident).
  n = table_.Find(key);
  if (n == nullptr) {
    n = pool_.Get(key);
    table_.Insert(key, n);
    if (lir_count_ < llirs_) {
      n->where = kLir;
      lir_count_++;
      StackPushTop(n);
      return false;
    }
    n->where = kHir;
    StackPushTop(n);
    q_.PushFront(n);
    return false;
  }
  // A non-resident page still in S: its reuse distance beat the bottom LIR's.
  nonres_.Remove(n);
  StackPushTop(n);
  n->where = kLir;
  lir_count_++;
  if (lir_count_ > llirs_) DemoteBottomLir();
  return false;
}

Status LirsSim::CheckInvariants() const {
  if (lir_count_ > llirs_) return Status::Internal("lirs: more than Llirs LIR pages");
  if (resident() > c_) return Status::Internal("lirs: more than c pages resident");
  if (nonres_.size() > max_nonresident_) return Status::Internal("lirs: too many non-residents");
  uint64_t lir = 0, in_s = 0, nonres_in_s = 0;
  for (const arc::ListLinks* l = stack_.next; l != &stack_; l = l->next) {
    const PageNode* n = FromStack(const_cast<arc::ListLinks*>(l));
    in_s++;
    if (n->where == kLir) lir++;
    if (n->where == kNonResident) nonres_in_s++;
  }
  if (in_s != stack_size_ || lir != lir_count_ || nonres_in_s != nonres_.size()) {
    return Status::Internal("lirs: S does not hold every LIR and non-resident page");
  }
  if (stack_size_ > 0 && FromStack(stack_.prev)->where != kLir) {
    return Status::Internal("lirs: S's bottom is not LIR");
  }
  if (q_.CountByWalk() != q_.size() || pool_.in_use() != table_.size() ||
      table_.size() != resident() + nonres_.size()) {
    return Status::Internal("lirs: table, pool and lists disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::sim
