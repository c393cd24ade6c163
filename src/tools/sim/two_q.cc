#include "tools/sim/two_q.h"

#include <algorithm>
#include <cmath>

namespace arcstore::sim {

Status TwoQOptions::Validate() const {
  if (cache_pages == 0) return Status::InvalidArgument("2q: cache size must be at least one page");
  if (!(kin_fraction > 0 && kin_fraction < 1) || !(kout_fraction >= 0 && kout_fraction <= 4)) {
    return Status::InvalidArgument("2q: Kin must be in (0, 1) of c and Kout in [0, 4]");
  }
  return Status::Ok();
}

TwoQSim::TwoQSim(const TwoQOptions& o)
    : c_(o.cache_pages),
      kin_(std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(o.kin_fraction * static_cast<double>(o.cache_pages))))),
      kout_(static_cast<uint64_t>(std::llround(o.kout_fraction * static_cast<double>(o.cache_pages)))),
      pool_(c_ + kout_ + 1),
      table_(c_ + kout_ + 1) {}

bool TwoQSim::Access(uint64_t key) {
  PageNode* n = table_.Find(key);
  if (n != nullptr && n->where == kAm) {
    am_.MoveToFront(n);
    hits_++;
    return true;
  }
  if (n != nullptr && n->where == kA1in) {
    hits_++;
    return true;
  }
  if (resident() >= c_) {
    MakeRoom();
    n = table_.Find(key);  // MakeRoom may have pushed n out of A1out
  }
  if (n != nullptr) {  // in A1out: the second reference goes to Am
    a1out_.Remove(n);
    n->where = kAm;
    am_.PushFront(n);
    return false;
  }
  n = pool_.Get(key);
  table_.Insert(key, n);
  n->where = kA1in;
  a1in_.PushFront(n);
  return false;
}

// Frees one resident slot (the cache is full).
void TwoQSim::MakeRoom() {
  if (a1in_.size() > kin_ || am_.empty()) {
    PageNode* v = a1in_.PopBack();
    if (kout_ == 0) {
      table_.Erase(v->key);
      pool_.Put(v);
      return;
    }
    v->where = kA1out;
    a1out_.PushFront(v);
    if (a1out_.size() > kout_) {
      PageNode* g = a1out_.PopBack();
      table_.Erase(g->key);
      pool_.Put(g);
    }
    return;
  }
  PageNode* v = am_.PopBack();
  table_.Erase(v->key);
  pool_.Put(v);
}

Status TwoQSim::CheckInvariants() const {
  if (resident() > c_) return Status::Internal("2q: more than c pages resident");
  if (a1out_.size() > kout_) return Status::Internal("2q: A1out over Kout");
  if (a1in_.CountByWalk() != a1in_.size() || am_.CountByWalk() != am_.size() ||
      a1out_.CountByWalk() != a1out_.size()) {
    return Status::Internal("2q: a list's count differs from its length");
  }
  if (table_.size() != resident() + ghosts() || pool_.in_use() != table_.size()) {
    return Status::Internal("2q: table, pool and lists disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::sim
