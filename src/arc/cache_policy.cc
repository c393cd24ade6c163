// CachePolicy: theory of operation of Duet in the engine.
//
// PURPOSE
//   The engine's ARC runs ArcPolicy (policy.h) with ZFS's refinements, in
//   bytes, with holds, anon buffers and a background evictor. Duet (duet.cc)
//   is the page-granular policy `arcstore sim` proves on traces. This file
//   runs Duet's idea over the engine's own ArcPolicy, so that everything the
//   ARC counts and promises (sizes and evictable bytes per state, ghosts,
//   p, c, holds never evicted) stays ArcPolicy's, and only the choice of
//   victims changes.
//
// MODEL
//
//     Hit / Insert (a reference)                 Replace (the evictor)
//        |                                          |
//        +--> ArcPolicy: T1 T2 B1 B2 p, sizes       +--> leader = ARC:  ArcPolicy's REPLACE
//        +--> LIRS in bytes: S, Q, non-residents    +--> leader = LIRS: LIRS's Victim(),
//        +--> key_hash sampled? --> DuetDuel             then ArcPolicy::Evict(it)
//               (shadow ARC, shadow LIRS,                 (none evictable: REPLACE)
//                selector -> leader)
//
//     either way the victim goes to its ARC ghost list (OnEvicted), and LIRS
//     makes it non-resident (kept in S) or forgets it.
//
//   - One resident set: a node is resident in LIRS exactly when it is MRU
//     or MFU in ArcPolicy (CheckInvariants compares the bytes). Anon
//     buffers are in neither ordering's lists.
//   - LIRS's non-resident entries with a header are ArcPolicy's ghosts: a
//     ghost hit removes the node from ArcPolicy and leaves it non-resident
//     in S until the fill inserts it, when its reuse distance makes it LIR.
//     When ArcPolicy drops a ghost (its bounds: MRU + MRU-ghost <= c keeps
//     almost no MRU ghost while MRU holds nearly all of c, as under a scan)
//     the header goes, and LIRS keeps only its key and the stamp of its
//     last reference (a count of references) in a bounded table, one entry
//     per page of c. A new header whose key is there, with a stamp later
//     than S's bottom LIR buffer's, is an entry S would still hold: it
//     becomes LIR at once. An earlier stamp is one S would have pruned (a
//     loop longer than the cache): it is new, and HIR. Without the table a
//     working set that arrives while a scan fills MRU would never reach
//     the LIR set.
//   - Pinned buffers (held, or with I/O in flight) are off ArcPolicy's
//     lists; LIRS's Victim() walks past them (LirsEvictable) at most 64
//     entries of Q and 64 of S, and when it finds none the evictor falls
//     back to REPLACE for that victim (counted as lirs_fallbacks).
//   - LIRS weighs bytes: its LIR set holds at most c - Lhirs bytes. Lhirs
//     is c / 100, as in the sim, plus the resident bytes pinned now (the
//     volume layer's handle cache holds the buffers it read last, a few
//     percent of c, and those are exactly the newest HIR buffers): without
//     that room every buffer in Q would be pinned, and LIRS would have to
//     give up its LIR buffers one by one. Lhirs is refitted before each
//     LIRS victim (grown at once, shrunk when twice too large) and on a
//     new c; a smaller LIR set demotes S's bottom LIR buffers to Q.
//   - The duel is the sim's (DuetDuel) on one key_hash in R, in pages of
//     the mean size of the sampled references: its shadows stand for
//     c / mean pages, and are built anew (empty, the selector kept) when c
//     or the mean moves that figure by more than a quarter; its scouts
//     (duet.cc) name the leader until the shadows first disagree.
//
// INVARIANTS (CheckInvariants)
//   - ArcPolicy's, unchanged.
//   - LIRS's (duet_lirs_order.cc) and LIRS's resident bytes == ArcPolicy's.
//   - The duel's: selector within its limit, shadows within their size.
//
// LIMITS
//   Memory: 48 bytes per header for LIRS's links, stamp and state
//   (cache_node.h), paid under ARC too; the remembered keys, one per page
//   of c at most (about 64 bytes each in the hash table and its queue);
//   the duel's shadows, at most 4 x 2 x shadow_pages + 3 nodes of 32 bytes
//   and their index (under 1 MiB), and until they first disagree its
//   scouts, a quarter of that. Neither is counted in the ARC's size.
//   Time: a reference moves the node in LIRS's S and Q as well; a sampled
//   one plays two miniature policies; a new header looks its key up among
//   the remembered ones.
#include "arc/cache_policy.h"

#include <algorithm>

#include "base/check.h"

namespace arcstore::arc {

uint64_t CachePolicy::HirBytes() const {
  const uint64_t c = std::max<uint64_t>(2, arc_.c());
  const uint64_t pinned =
      arc_.Resident() - arc_.Evictable(ArcState::kMru) - arc_.Evictable(ArcState::kMfu);
  return std::clamp<uint64_t>(c / 100 + pinned, 1, c / 2);
}

// Lhirs follows the pinned bytes, with hysteresis: grown at once when the
// pins need more, shrunk when it is more than twice what they need.
void CachePolicy::FitHir() {
  const uint64_t c = std::max<uint64_t>(2, arc_.c());
  const uint64_t want = HirBytes();
  const uint64_t now = lirs_->hir_target();
  if (lirs_->capacity() != c || want > now || want * 2 < now) lirs_->SetCapacity(c, want);
}

CachePolicy::CachePolicy(PolicyKind kind, const PolicyOptions& options, const DuetOptions& duet,
                         PolicyHooks* hooks)
    : kind_(kind), duet_(duet), hooks_(hooks), arc_(options, this) {
  ARC_CHECK(hooks != nullptr);
  if (kind != PolicyKind::kDuet) return;
  ARC_CHECK(!options.synchronous_replace) << "duet chooses victims only in Replace()";
  const uint64_t c = std::max<uint64_t>(2, options.c_bytes);
  lirs_.emplace(c, std::max<uint64_t>(1, c / 100), UINT64_MAX,
                static_cast<BasicOrderHooks<CacheNode>*>(this));
  duel_ = std::make_unique<DuetDuel>(duet, 2);
}

void CachePolicy::Reference(CacheNode* n) {
  if (kind_ != PolicyKind::kDuet) return;
  bool remembered_in_s = false;
  if (n->lirs_where == OrderNode::kNone && !remembered_.empty()) {
    if (auto it = remembered_.find(n->key_hash); it != remembered_.end()) {
      const CacheNode* bottom = lirs_->Bottom();
      remembered_in_s = bottom != nullptr && it->second > bottom->lirs_stamp;
      remembered_.erase(it);
    }
  }
  n->lirs_stamp = ++references_;
  if (remembered_in_s) {
    remembered_lir_++;
    lirs_->ReferenceRemembered(n);
  } else {
    lirs_->Reference(n);
  }
  if (duet_.fixed_leader || !duel_->Sampled(n->key_hash)) return;
  const double bytes = static_cast<double>(n->bytes);
  mean_bytes_ = mean_bytes_ == 0 ? bytes : mean_bytes_ + (bytes - mean_bytes_) / 64;
  const uint64_t pages =
      std::max<uint64_t>(2, static_cast<uint64_t>(static_cast<double>(arc_.c()) / mean_bytes_));
  const uint64_t built = duel_->cache_pages();
  if (pages * 4 > built * 5 || pages * 5 < built * 4) duel_->Resize(pages);
  duel_->Reference(n->key_hash);
}

// A non-resident entry of S that ARC drops as a ghost: its key and the
// stamp of its last reference are kept, within one entry per page of c
// (the oldest go first), so that LIRS still sees its reuse.
void CachePolicy::Remember(const CacheNode& n) {
  const uint64_t max_entries = std::max<uint64_t>(64, duel_->cache_pages());
  remembered_[n.key_hash] = n.lirs_stamp;
  remembered_order_.emplace_back(n.key_hash, n.lirs_stamp);
  while (remembered_.size() > max_entries || remembered_order_.size() > 2 * max_entries) {
    const auto [key, stamp] = remembered_order_.front();
    remembered_order_.pop_front();
    if (auto it = remembered_.find(key); it != remembered_.end() && it->second == stamp) {
      remembered_.erase(it);
    }
  }
}

void CachePolicy::Hit(CacheNode* n, uint64_t now_ns) {
  arc_.Hit(n, now_ns);
  Reference(n);
}

void CachePolicy::Insert(CacheNode* n, ArcState to, bool hit_in_mfu_ghost, uint64_t now_ns,
                         bool pinned) {
  arc_.Insert(n, to, hit_in_mfu_ghost, now_ns, pinned);
  Reference(n);
}

PolicyNode* CachePolicy::Replace(bool hit_in_mfu_ghost) {
  if (kind_ == PolicyKind::kDuet && leader() == DuetLeader::kLirs) {
    FitHir();
    if (CacheNode* v = lirs_->Victim(); v != nullptr) {
      evictions_by_lirs_++;
      arc_.Evict(v);
      return v;
    }
    lirs_fallbacks_++;
  }
  PolicyNode* v = arc_.Replace(hit_in_mfu_ghost);
  if (v != nullptr && kind_ == PolicyKind::kDuet) evictions_by_arc_++;
  return v;
}

void CachePolicy::InsertAnon(CacheNode* n) {
  arc_.InsertAnon(n);
  if (lirs_) lirs_->Remove(n);  // a ghost hit's fill that became an orphan
}

void CachePolicy::MoveToAnon(CacheNode* n) {
  arc_.MoveToAnon(n);
  if (lirs_) lirs_->Remove(n);
}

void CachePolicy::Remove(CacheNode* n) {
  arc_.Remove(n);
  if (lirs_) lirs_->Remove(n);
}

void CachePolicy::SetTarget(uint64_t c_bytes) {
  arc_.SetTarget(c_bytes);
  if (lirs_) FitHir();
}

void CachePolicy::OnEvicted(PolicyNode* n) {
  if (lirs_) lirs_->Evict(static_cast<CacheNode*>(n));
  hooks_->OnEvicted(n);
}

void CachePolicy::OnDropped(PolicyNode* n) {
  if (lirs_) {
    CacheNode* cn = static_cast<CacheNode*>(n);
    if (cn->lirs_where == OrderNode::kNonResident) Remember(*cn);
    lirs_->Remove(cn);
  }
  hooks_->OnDropped(n);
}

DuetState CachePolicy::duet_state() const {
  DuetState s;
  if (kind_ != PolicyKind::kDuet) return s;
  s.leader = leader();
  s.selector = duel_->selector();
  s.lir_bytes = lirs_->lir();
  s.hir_bytes = lirs_->hir();
  s.hir_target = lirs_->hir_target();
  s.nonresident = lirs_->nonresident();
  s.provisional = lirs_->provisional();
  s.shadow_pages = duel_->cache_pages();
  s.evictions_by_lirs = evictions_by_lirs_;
  s.evictions_by_arc = evictions_by_arc_;
  s.lirs_fallbacks = lirs_fallbacks_;
  s.remembered = remembered_.size();
  s.remembered_lir = remembered_lir_;
  s.scouting = duel_->scouting();
  s.duel = duel_->stats();
  return s;
}

Status CachePolicy::CheckInvariants() const {
  ARC_RETURN_IF_ERROR(arc_.CheckInvariants());
  if (kind_ != PolicyKind::kDuet) return Status::Ok();
  ARC_RETURN_IF_ERROR(lirs_->CheckInvariants());
  if (lirs_->resident() != arc_.Resident()) {
    return Status::Internal("duet: LIRS holds " + std::to_string(lirs_->resident()) +
                            " resident bytes, ARC " + std::to_string(arc_.Resident()));
  }
  return duel_->CheckInvariants();
}

}  // namespace arcstore::arc
