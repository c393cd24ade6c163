#include "tools/sim/tinylfu.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace arcstore::sim {
namespace {
constexpr uint64_t kSeeds[4] = {0x9E3779B97F4A7C15ULL, 0xC2B2AE3D27D4EB4FULL,
                                0x165667B19E3779F9ULL, 0xD6E8FEB86659FD93ULL};
constexpr double kStepFraction = 0.0625;
constexpr double kStepDecay = 0.98;
constexpr double kRestartDelta = 0.05;

uint64_t Mix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDULL;
  x ^= x >> 33;
  return x;
}
}  // namespace

FrequencySketch::FrequencySketch(uint64_t cache_pages, uint64_t sample_multiple)
    : mask_(std::bit_ceil(std::max<uint64_t>(64, 4 * cache_pages)) - 1),
      counters_(std::make_unique<uint8_t[]>(4 * (mask_ + 1))),
      sample_size_(std::max<uint64_t>(16, sample_multiple * cache_pages)) {}

uint64_t FrequencySketch::Index(uint64_t key, int row) const {
  return static_cast<uint64_t>(row) * (mask_ + 1) + (Mix(key * kSeeds[row] + static_cast<uint64_t>(row)) & mask_);
}

void FrequencySketch::Increment(uint64_t key) {
  for (int r = 0; r < 4; r++) {
    uint8_t& v = counters_[Index(key, r)];
    if (v < 15) v++;
  }
  if (++additions_ < sample_size_) return;
  for (uint64_t i = 0; i < 4 * (mask_ + 1); i++) counters_[i] >>= 1;
  additions_ /= 2;
  resets_++;
}

uint32_t FrequencySketch::Estimate(uint64_t key) const {
  uint32_t m = 15;
  for (int r = 0; r < 4; r++) m = std::min<uint32_t>(m, counters_[Index(key, r)]);
  return m;
}

Status WTinyLfuOptions::Validate() const {
  if (cache_pages < 2) return Status::InvalidArgument("wtinylfu: cache size must be at least two pages");
  if (!(initial_window_fraction > 0 && initial_window_fraction < 1) ||
      !(protected_fraction >= 0 && protected_fraction < 1)) {
    return Status::InvalidArgument("wtinylfu: window and protected fractions must be in (0, 1)");
  }
  if (sample_multiple == 0 || climb_period_multiple == 0) {
    return Status::InvalidArgument("wtinylfu: sample and climb periods must be positive");
  }
  return Status::Ok();
}

WTinyLfuSim::WTinyLfuSim(const WTinyLfuOptions& o)
    : options_(o),
      c_(o.cache_pages),
      pool_(c_ + 1),
      table_(c_ + 1),
      sketch_(c_, o.sample_multiple),
      window_target_(std::max(1.0, o.initial_window_fraction * static_cast<double>(c_))),
      step_(kStepFraction * static_cast<double>(c_)) {
  window_max_ = std::clamp<uint64_t>(static_cast<uint64_t>(window_target_), 1, c_ - 1);
  protected_max_ = static_cast<uint64_t>(o.protected_fraction * static_cast<double>(c_ - window_max_));
}

void WTinyLfuSim::Forget(PageNode* n) {
  table_.Erase(n->key);
  pool_.Put(n);
}

bool WTinyLfuSim::Access(uint64_t key) {
  sketch_.Increment(key);
  PageNode* n = table_.Find(key);
  const bool hit = n != nullptr;
  if (hit) {
    hits_++;
    OnHit(n);
  } else {
    n = pool_.Get(key);
    table_.Insert(key, n);
    n->where = kWindow;
    window_.PushFront(n);
    Rebalance();
  }
  if (options_.climb) Climb(hit);
  return hit;
}

void WTinyLfuSim::OnHit(PageNode* n) {
  if (n->where == kWindow) {
    window_.MoveToFront(n);
  } else if (n->where == kProbation) {
    probation_.Remove(n);
    n->where = kProtected;
    protected_.PushFront(n);
    while (protected_.size() > protected_max_) DemoteProtected();
  } else {
    protected_.MoveToFront(n);
  }
}

void WTinyLfuSim::DemoteProtected() {
  PageNode* d = protected_.PopBack();
  d->where = kProbation;
  probation_.PushFront(d);
}

// Window overflow moves candidates to probation; each one duels a victim
// when the cache is over c.
void WTinyLfuSim::Rebalance() {
  while (window_.size() > window_max_) {
    PageNode* cand = window_.PopBack();
    cand->where = kProbation;
    probation_.PushFront(cand);
    if (resident() > c_) Duel(cand);
  }
  while (resident() > c_) EvictAny();
  while (protected_.size() > protected_max_) DemoteProtected();
}

void WTinyLfuSim::Duel(PageNode* cand) {
  PageNode* victim = probation_.back();
  if (victim == cand) victim = protected_.back();
  if (victim == nullptr) {
    probation_.Remove(cand);
    Forget(cand);
    return;
  }
  PageList& vl = victim->where == kProbation ? probation_ : protected_;
  if (sketch_.Estimate(cand->key) > sketch_.Estimate(victim->key)) {
    vl.Remove(victim);
    Forget(victim);
  } else {
    probation_.Remove(cand);
    Forget(cand);
  }
}

void WTinyLfuSim::EvictAny() {
  PageList* l = !probation_.empty() ? &probation_ : !protected_.empty() ? &protected_ : &window_;
  Forget(l->PopBack());
}

void WTinyLfuSim::Climb(bool hit) {
  period_requests_++;
  if (hit) period_hits_++;
  if (period_requests_ < options_.climb_period_multiple * c_) return;
  const double ratio = static_cast<double>(period_hits_) / static_cast<double>(period_requests_);
  period_requests_ = period_hits_ = 0;
  if (previous_ratio_ >= 0) {
    const double delta = ratio - previous_ratio_;
    if (delta < 0) step_ = -step_;
    step_ = std::abs(delta) >= kRestartDelta
                ? std::copysign(kStepFraction * static_cast<double>(c_), step_)
                : step_ * kStepDecay;
    window_target_ = std::clamp(window_target_ + step_, 1.0, static_cast<double>(c_ - 1));
    window_max_ = static_cast<uint64_t>(window_target_);
    protected_max_ = static_cast<uint64_t>(options_.protected_fraction * static_cast<double>(c_ - window_max_));
    while (protected_.size() > protected_max_) DemoteProtected();
  }
  previous_ratio_ = ratio;
}

Status WTinyLfuSim::CheckInvariants() const {
  if (resident() > c_) return Status::Internal("wtinylfu: more than c pages resident");
  if (protected_.size() > protected_max_) return Status::Internal("wtinylfu: protected over its share");
  if (window_max_ < 1 || window_max_ >= c_) return Status::Internal("wtinylfu: window out of [1, c)");
  if (window_.CountByWalk() != window_.size() || probation_.CountByWalk() != probation_.size() ||
      protected_.CountByWalk() != protected_.size()) {
    return Status::Internal("wtinylfu: a list's count differs from its length");
  }
  if (pool_.in_use() != table_.size() || table_.size() != resident()) {
    return Status::Internal("wtinylfu: table, pool and lists disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::sim
