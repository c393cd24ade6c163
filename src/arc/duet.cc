// Duet: theory of operation.
//
// PURPOSE
//   ARC adapts between recency and frequency and wins wherever those two
//   explain the workload, but a loop or scan longer than the cache defeats
//   it: every page is evicted before its reuse, no ghost is hit, and ARC's
//   hit ratio falls to LRU's, near zero. LIRS keeps a stable set of pages
//   with short reuse distances and rides out loops and scans, but loses to
//   ARC (and to LRU) where recency matters: on zigzag and backf it keeps
//   almost nothing, on OLTP it is 4 points under ARC. Duet runs both
//   orderings over one cache and lets the one that is winning choose.
//
// MODEL
//
//        request ----------------------+---------------------------+
//           |                          | one key in R (hash)        |
//           v                          v                            v
//   +------------------------+   +-------------+            +-------------+
//   | resident set (<= c)    |   | shadow ARC  |            | shadow LIRS |
//   |  ArcOrder:  T1 T2 B1 B2 p  |  c / R pages|            |  c / R pages|
//   |  LirsOrder: S  Q  non-res |  evicts for |            |  evicts for |
//   +------------------------+   |  itself     |            |  itself     |
//        ^ victim                +------+------+            +------+------+
//        |                              | hit, other missed:       |
//   leader's Victim()                   +---> selector +1 / -1 <---+
//        |                                     |
//        +------------- leader = ARC while selector >= 0, else LIRS
//
//   - Both orderings see every request: a hit is a hit in both, a miss is
//     admitted by both. On a miss with c pages resident, the leader names
//     the victim (ARC: REPLACE with its p; LIRS: Q's oldest page) and both
//     evict it: ARC moves it to its ghost list, LIRS keeps it as a
//     non-resident entry in S when it is there. A leader that keeps leading
//     is therefore exactly its own policy; the follower keeps a consistent
//     state and takes over with the cache as it is.
//   - ARC's p keeps adapting on ARC's ghost hits whoever leads, and LIRS's
//     LIR set refills from misses after ARC has evicted LIR pages; those
//     refills are provisional, the first LIR pages LIRS gives up when a
//     page it evicted comes back (duet_lirs_order.cc).
//   - The selector is set dueling (Qureshi et al., ISCA '07) between two
//     miniature simulations (Waldspurger et al., ATC '17): full policies on
//     one key in R = max(1, c / shadow_pages), with c / R pages each. A
//     sampled request that hits one shadow and misses the other moves the
//     selector towards the winner: arc_win_weight steps for ARC, one for
//     LIRS, saturating at +-selector_limit. The sample keeps the shadows'
//     cost at about 2 / R of a full policy.
//   - Why ARC's wins weigh more: a hand-over costs hits of its own (the
//     new leader evicts what the other kept, and its ordering only starts
//     to shape the cache), and a shadow that leads by a few percent of the
//     disagreements is within a sample's noise. On the ARC paper's P
//     traces LIRS's shadow wins phases of that kind, and with equal
//     weights every hand-over to it and back costs more than the phase
//     gains; where LIRS is the right policy (loops and scans longer than
//     the cache) its shadow wins nearly every disagreement, far beyond
//     two thirds, and the weight barely delays its lead.
//   - Scouts: shadows of a full cache's size can agree on every hit for a
//     long time, until the pages the two would keep are reused (on ps at
//     30% not before a third of the trace), and ARC, leading by default,
//     meanwhile evicts the pages LIRS would have kept. Until the
//     shadows first disagree, a second pair a quarter their size (the
//     scouts) plays the same sampled keys: a smaller cache feels the
//     difference between the two orderings sooner, and the scouts' own
//     selector (same weights) names the leader. The first disagreement of
//     the shadows hands the choice to them for good and frees the scouts.
//
//        sampled key --> shadows (c / R) --- disagree? --yes--> selector -> leader
//                              |                                 (scouts freed)
//                              no, and scouting
//                              v
//                        scouts (c / 4R) --- disagree? --yes--> scout selector -> leader
//
//   - There is nothing to tune per workload: ARC's p, the LIR set and the
//     selectors all move on their own evidence.
//
// INVARIANTS (CheckInvariants)
//   - Both orderings hold the same resident set, of at most c pages.
//   - ARC: |T1| + |B1| <= c, |T1| + |T2| + |B1| + |B2| <= 2c, p in [0, c].
//   - LIRS: |LIR| <= c - Lhirs, S's bottom is LIR, non-residents <= 2c.
//   - Both selectors stay in [-selector_limit, +selector_limit].
//   - Scouts exist only until the shadows' first disagreement.
//
// LIMITS
//   Memory: one 32-byte node per key that either ordering tracks, at most
//   4c + 3 (ARC's lists hold 2c keys, LIRS's non-residents 2c more), each
//   carrying both orderings' state and the key (48 bits), in one pool
//   allocated up front, and a flat index of 8 bytes a slot (duet_nodes.h);
//   the shadows share another, of 4c / R nodes, and the scouts, while
//   they exist, a quarter of that. Time: one index lookup and two
//   orderings' list moves per request, and for a sampled key the same
//   again in the shadows (and the scouts, until the shadows disagree);
//   nothing allocates per request.
//
// TUNABLES (DuetOptions)
//   shadow_pages   (512)  the shadows' size; smaller is cheaper and noisier.
//   selector_limit (4096) the selector's memory, in disagreements.
//   arc_win_weight (2)    what an ARC win counts against a LIRS win.
//   scout_divisor  (4)    the scouts' size as a fraction of the shadows'.
#include "arc/duet.h"

#include <algorithm>
#include <bit>
#include <utility>

#include "base/check.h"

namespace arcstore::arc {
namespace {

// Keys tracked at once: ARC's lists hold at most 2c, LIRS's non-residents at
// most 2c more, one more each while a bound is restored, and the pinned key.
uint64_t MaxNodes(uint64_t c) { return 4 * c + 3; }

// Scouts smaller than this are not built: in a cache of a few pages the two
// orderings disagree on nearly any pattern, which says nothing about a cache
// four times the size.
constexpr uint64_t kMinScoutPages = 64;

}  // namespace

// The two miniature policies over one index, each evicting its own victims.
struct DuetDuel::Shadows {
  explicit Shadows(uint64_t pages)
      : c(pages),
        nodes(MaxNodes(pages)),
        arc(pages, &nodes, nodes.nodes()),
        lirs(LirsOrderOptions{pages}, &nodes, nodes.nodes()) {}
  // Whether `key` hits in each.
  std::pair<bool, bool> Access(uint64_t key) {
    OrderNode* n = nodes.FindAndPin(key);
    const bool arc_hit = ArcAccess(n);
    const bool lirs_hit = LirsAccess(n);
    nodes.Unpin();
    return {arc_hit, lirs_hit};
  }
  bool ArcAccess(OrderNode* e) {
    const bool hit = ArcOrder::Resident(*e);
    if (!hit) {
      arc.NoteMiss(*e);
      if (arc.resident() == c) arc.Evict(arc.Victim(*e));
    }
    arc.Reference(e);
    return hit;
  }
  bool LirsAccess(OrderNode* e) {
    const bool hit = LirsOrder::Resident(*e);
    if (!hit && lirs.resident() == c) lirs.Evict(lirs.Victim());
    lirs.Reference(e);
    return hit;
  }
  const uint64_t c;
  DuetNodes nodes;
  ArcOrder arc;
  LirsOrder lirs;
};

Status DuetOptions::Validate() const {
  if (cache_pages < 2)
    return Status::InvalidArgument("duet: cache size must be at least two pages");
  if (shadow_pages < 2) return Status::InvalidArgument("duet: shadows need at least two pages");
  if (selector_limit < 1) return Status::InvalidArgument("duet: selector limit must be positive");
  if (arc_win_weight < 1 || arc_win_weight > selector_limit) {
    return Status::InvalidArgument("duet: the weight of an ARC win must be in [1, selector_limit]");
  }
  if (scout_divisor == 1 || scout_divisor > 1024) {
    return Status::InvalidArgument("duet: the scout divisor must be 0 (no scouts) or in [2, 1024]");
  }
  return Status::Ok();
}

DuetDuel::DuetDuel(const DuetOptions& o, uint64_t cache_pages)
    : selector_limit_(o.selector_limit),
      arc_win_weight_(o.arc_win_weight),
      shadow_pages_(o.shadow_pages),
      scout_divisor_(o.scout_divisor) {
  Resize(cache_pages);
  stats_.resizes = 0;
}

DuetDuel::~DuetDuel() = default;

void DuetDuel::Resize(uint64_t cache_pages) {
  cache_pages_ = std::max<uint64_t>(2, cache_pages);
  sample_every_ = std::max<uint64_t>(1, cache_pages_ / shadow_pages_);
  sample_mask_ = std::has_single_bit(sample_every_) ? sample_every_ - 1 : 0;
  const uint64_t shadow = std::max<uint64_t>(2, cache_pages_ / sample_every_);
  shadows_ = std::make_unique<Shadows>(shadow);
  // Scouts at the start and after a resize while they still lead.
  const uint64_t scout = scout_divisor_ == 0 ? 0 : shadow / scout_divisor_;
  scouts_.reset();
  if (!decided_ && scout >= kMinScoutPages) scouts_ = std::make_unique<Shadows>(scout);
  stats_.resizes++;
}

void DuetDuel::Vote(int32_t* selector, bool arc_won) {
  *selector = std::clamp(*selector + (arc_won ? arc_win_weight_ : -1), -selector_limit_,
                         selector_limit_);
  const DuetLeader next = *selector >= 0 ? DuetLeader::kArc : DuetLeader::kLirs;
  if (next == leader_) return;
  stats_.leader_switches++;
  leader_ = next;
}

void DuetDuel::Reference(uint64_t key) {
  stats_.sampled++;
  // The shadows' nodes keep 48 bits of a key (the engine's keys are 64-bit
  // hashes); two keys that share them count as one in the sample.
  const uint64_t k = key & OrderNode::kMaxKey;
  const auto [a, l] = shadows_->Access(k);
  stats_.shadow_arc_hits += a ? 1 : 0;
  stats_.shadow_lirs_hits += l ? 1 : 0;
  if (a != l) {
    decided_ = true;  // the shadows decide from now on
    scouts_.reset();
    Vote(&selector_, a);
    return;
  }
  if (scouts_ == nullptr) return;
  stats_.scout_sampled++;
  const auto [sa, sl] = scouts_->Access(k);
  if (sa == sl) return;
  stats_.scout_disagreements++;
  Vote(&scout_selector_, sa);
}

Status DuetDuel::CheckInvariants() const {
  for (int32_t s : {selector_, scout_selector_}) {
    if (s < -selector_limit_ || s > selector_limit_)
      return Status::Internal("duet: selector out of bounds");
  }
  if (scouts_ != nullptr && decided_)
    return Status::Internal("duet: scouts kept after the shadows disagreed");
  for (const Shadows* s : {shadows_.get(), scouts_.get()}) {
    if (s == nullptr) continue;
    ARC_RETURN_IF_ERROR(s->arc.CheckInvariants());
    ARC_RETURN_IF_ERROR(s->lirs.CheckInvariants());
    if (s->lirs.resident() > s->c)
      return Status::Internal("duet: a LIRS shadow holds more than its size");
    ARC_RETURN_IF_ERROR(s->nodes.CheckInvariants(/*same_resident_set=*/false));
  }
  return Status::Ok();
}

Duet::Duet(const DuetOptions& o)
    : options_(o),
      c_(o.cache_pages),
      nodes_(MaxNodes(c_)),
      arc_(c_, &nodes_, nodes_.nodes()),
      lirs_(LirsOrderOptions{c_}, &nodes_, nodes_.nodes()),
      duel_(o, c_) {}

Duet::~Duet() = default;

bool Duet::Access(uint64_t key) {
  if (!options_.fixed_leader && duel_.Sampled(key)) duel_.Reference(key);
  stats_.requests++;
  OrderNode* n = nodes_.FindAndPin(key);
  const bool hit = ArcOrder::Resident(*n);
  if (hit) {
    stats_.hits++;
  } else {
    arc_.NoteMiss(*n);
    if (arc_.resident() == c_) {
      const bool by_arc = leader() == DuetLeader::kArc;
      OrderNode* victim = by_arc ? arc_.Victim(*n) : lirs_.Victim();
      (by_arc ? stats_.evictions_by_arc : stats_.evictions_by_lirs)++;
      arc_.Evict(victim);
      lirs_.Evict(victim);
    }
  }
  arc_.Reference(n);
  lirs_.Reference(n);
  nodes_.Unpin();
  return hit;
}

Status Duet::CheckInvariants() const {
  ARC_RETURN_IF_ERROR(arc_.CheckInvariants());
  ARC_RETURN_IF_ERROR(lirs_.CheckInvariants());
  if (arc_.resident() != lirs_.resident())
    return Status::Internal("duet: the orderings' resident sets differ");
  ARC_RETURN_IF_ERROR(nodes_.CheckInvariants(/*same_resident_set=*/true));
  return duel_.CheckInvariants();
}

Status DuetNodes::CheckInvariants(bool same_resident_set) const {
  uint64_t erasing = 0;
  for (const OrderNode* n : erasing_) {
    if (n == nullptr) continue;
    erasing++;
    if (n->tracked() || index_.Find(n->key()) != n)
      return Status::Internal("duet nodes: an erase in flight of a tracked or unindexed node");
  }
  if (erasing != erasing_count_) return Status::Internal("duet nodes: erases in flight miscounted");
  uint64_t tracked = 0;
  for (const OrderNode* n = pool_.begin(); n != pool_.end(); n++) {
    if (!n->tracked()) continue;
    tracked++;
    if (index_.Find(n->key()) != n)
      return Status::Internal("duet nodes: a tracked node is not indexed");
    if (same_resident_set && ArcOrder::Resident(*n) != LirsOrder::Resident(*n)) {
      return Status::Internal("duet nodes: a key resident in one ordering only");
    }
  }
  if (tracked + erasing != index_.size() || tracked + erasing != pool_.in_use()) {
    return Status::Internal("duet nodes: index, pool and orderings disagree");
  }
  return Status::Ok();
}

}  // namespace arcstore::arc
