#include "tools/sim/lirs.h"

#include "tools/sim/trace_reader.h"

namespace arcstore::sim {

// Every key a trace yields fits an OrderNode (LIRS's here, arc::Duet's).
static_assert(kMaxTraceKey <= arc::OrderNode::kMaxKey);

// Resident pages, the non-residents' cap, and the new page while room is made.
LirsSim::LirsSim(const LirsOptions& o)
    : c_(o.cache_pages),
      pool_(o.cache_pages + o.max_nonresident() + 2),
      index_(o.cache_pages + o.max_nonresident() + 2, &pool_),
      order_(o, this, pool_.data()) {}

void LirsSim::OnForgotten(arc::OrderNode* n) {
  if (n == pinned_) return;
  index_.Erase(n);
  pool_.Put(n);
}

bool LirsSim::Access(uint64_t key) {
  arc::OrderNode* n = index_.Find(key);
  if (n != nullptr && arc::LirsOrder::Resident(*n)) {
    hits_++;
    order_.Reference(n);
    return true;
  }
  if (n == nullptr) {
    n = pool_.Get();
    n->set_key(key);
    index_.Insert(n);
  }
  // Making room may forget this very key (the oldest non-resident); pinned,
  // its node stays, empty, and comes back as a new page.
  pinned_ = n;
  if (order_.resident() >= c_) order_.Evict(order_.Victim());
  order_.Reference(n);
  pinned_ = nullptr;
  return false;
}

Status LirsSim::CheckInvariants() const {
  ARC_RETURN_IF_ERROR(order_.CheckInvariants());
  if (order_.resident() > c_) return Status::Internal("lirs: more than c pages resident");
  if (index_.size() != order_.tracked() || pool_.in_use() != index_.size()) {
    return Status::Internal("lirs: table, pool and policy disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::sim
