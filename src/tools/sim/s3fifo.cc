#include "tools/sim/s3fifo.h"

#include <algorithm>
#include <cmath>

namespace arcstore::sim {

Status S3FifoOptions::Validate() const {
  if (cache_pages < 2) return Status::InvalidArgument("s3fifo: cache size must be at least two pages");
  if (!(small_fraction > 0 && small_fraction < 1)) {
    return Status::InvalidArgument("s3fifo: the small queue's fraction must be in (0, 1)");
  }
  if (move_threshold > 3) return Status::InvalidArgument("s3fifo: move threshold must be in [0, 3]");
  return Status::Ok();
}

namespace {
uint64_t SmallTarget(const S3FifoOptions& o) {
  const auto s = static_cast<uint64_t>(std::llround(o.small_fraction * static_cast<double>(o.cache_pages)));
  return std::clamp<uint64_t>(s, 1, o.cache_pages - 1);
}
}  // namespace

S3FifoSim::S3FifoSim(const S3FifoOptions& o)
    : c_(o.cache_pages),
      small_target_(SmallTarget(o)),
      ghost_max_(c_ - small_target_),
      move_threshold_(o.move_threshold),
      pool_(2 * c_ + 2),
      table_(2 * c_ + 2) {}

void S3FifoSim::Forget(PageNode* n) {
  table_.Erase(n->key);
  pool_.Put(n);
}

bool S3FifoSim::Access(uint64_t key) {
  PageNode* n = table_.Find(key);
  if (n != nullptr && n->where != kGhost) {
    hits_++;
    if (n->freq < 3) n->freq++;
    return true;
  }
  while (resident() >= c_) MakeRoom();
  // MakeRoom may have pushed the oldest ghost out, n among them.
  n = table_.Find(key);
  if (n != nullptr) {
    ghost_.Remove(n);
    n->where = kMain;
    n->freq = 0;
    main_.PushFront(n);
    return false;
  }
  n = pool_.Get(key);
  table_.Insert(key, n);
  n->where = kSmall;
  small_.PushFront(n);
  return false;
}

void S3FifoSim::MakeRoom() {
  if (small_.size() >= small_target_ || main_.empty()) {
    EvictSmall();
  } else {
    EvictMain();
  }
}

// S's tail goes to M if it was reused enough while in S, else to G. Moving
// to M frees nothing, so this repeats until a page leaves the cache.
void S3FifoSim::EvictSmall() {
  while (!small_.empty()) {
    PageNode* t = small_.PopBack();
    if (t->freq >= move_threshold_ && move_threshold_ > 0) {
      t->where = kMain;
      t->freq = 0;
      main_.PushFront(t);
      if (main_.size() > c_ - small_target_) EvictMain();
      if (resident() < c_) return;
      continue;
    }
    t->where = kGhost;
    t->freq = 0;
    ghost_.PushFront(t);
    if (ghost_.size() > ghost_max_) Forget(ghost_.PopBack());
    return;
  }
  EvictMain();
}

// M's tail gets a second chance per remaining reference, else is forgotten.
void S3FifoSim::EvictMain() {
  while (!main_.empty()) {
    PageNode* t = main_.PopBack();
    if (t->freq > 0) {
      t->freq--;
      main_.PushFront(t);
      continue;
    }
    Forget(t);
    return;
  }
}

Status S3FifoSim::CheckInvariants() const {
  if (resident() > c_) return Status::Internal("s3fifo: more than c pages resident");
  if (ghost_.size() > ghost_max_) return Status::Internal("s3fifo: ghost over its bound");
  if (small_.CountByWalk() != small_.size() || main_.CountByWalk() != main_.size() ||
      ghost_.CountByWalk() != ghost_.size()) {
    return Status::Internal("s3fifo: a list's count differs from its length");
  }
  if (pool_.in_use() != table_.size() || table_.size() != resident() + ghosts()) {
    return Status::Internal("s3fifo: table, pool and lists disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::sim
