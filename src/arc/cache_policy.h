// CachePolicy: the engine's replacement policy, ARC or Duet, behind the
// calls the ARC makes (arc.cc). With PolicyKind::kArc it is ArcPolicy
// (policy.h) and nothing else; with kDuet it adds a LIRS ordering in bytes
// over the same nodes and the duel of duet.h, and the duel's leader names
// each victim (cache_policy.cc has the theory of operation).
//
// Nodes are CacheNodes (cache_node.h): the policy reads their key_hash to
// sample keys for the duel and keeps LIRS's state in them.
//
// Thread-safety: none. The ARC calls it under its policy lock.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <unordered_map>
#include <utility>

#include "arc/arc_types.h"
#include "arc/cache_node.h"
#include "arc/duet.h"
#include "arc/duet_orders.h"
#include "arc/policy.h"
#include "arcstore/status.h"

namespace arcstore::arc {

// Duet's state, for arcstats (all zero under ARC).
struct DuetState {
  DuetLeader leader = DuetLeader::kArc;
  int32_t selector = 0;
  uint64_t lir_bytes = 0;        // LIRS's protected set
  uint64_t hir_bytes = 0;        // resident HIR (LIRS's queue Q)
  uint64_t hir_target = 0;       // Lhirs: c / 100 plus the pinned bytes
  uint64_t nonresident = 0;      // LIRS's non-resident entries (all of them ARC ghosts)
  uint64_t provisional = 0;      // LIR buffers with no reuse yet, the first to become HIR
  uint64_t shadow_pages = 0;     // the cache the shadows stand for, in pages
  uint64_t evictions_by_lirs = 0;
  uint64_t evictions_by_arc = 0;
  uint64_t lirs_fallbacks = 0;   // LIRS led and had nothing evictable: ARC chose
  uint64_t remembered = 0;       // keys remembered past their ARC ghost (below)
  uint64_t remembered_lir = 0;   // references of those that went straight to LIR
  bool scouting = false;         // the duel's scouts name the leader (duet.h)
  DuetDuelStats duel;
};

class CachePolicy final : private PolicyHooks, private BasicOrderHooks<CacheNode> {
 public:
  // `options` must Validate() and, with kDuet, not ask for synchronous
  // REPLACE (the ARC's Insert would then choose victims by itself). `duet`:
  // the duel's tunables and, for tests, a fixed leader (cache_pages is
  // ignored: the shadows follow c).
  CachePolicy(PolicyKind kind, const PolicyOptions& options, const DuetOptions& duet,
              PolicyHooks* hooks);
  CachePolicy(const CachePolicy&) = delete;
  CachePolicy& operator=(const CachePolicy&) = delete;

  PolicyKind kind() const { return kind_; }

  // ArcPolicy's calls, with the same meaning (policy.h). Hit and Insert are
  // references: under Duet, LIRS sees them and a sampled key plays the duel.
  void Hit(CacheNode* node, uint64_t now_ns);
  ArcState GhostHit(CacheNode* node) { return arc_.GhostHit(node); }
  void Insert(CacheNode* node, ArcState to, bool hit_in_mfu_ghost, uint64_t now_ns, bool pinned);
  // The leader's victim (Duet), or REPLACE's; nullptr if nothing is evictable.
  PolicyNode* Replace(bool hit_in_mfu_ghost);
  void InsertAnon(CacheNode* node);
  void MoveToAnon(CacheNode* node);
  void Remove(CacheNode* node);
  void Pin(CacheNode* node) { arc_.Pin(node); }
  void Unpin(CacheNode* node) { arc_.Unpin(node); }
  void SetTarget(uint64_t c_bytes);
  void TrimGhosts() { arc_.TrimGhosts(); }

  uint64_t c() const { return arc_.c(); }
  double p() const { return arc_.p(); }
  uint64_t Size(ArcState s) const { return arc_.Size(s); }
  uint64_t Size(ArcState s, BufKind k) const { return arc_.Size(s, k); }
  uint64_t Evictable(ArcState s, BufKind k) const { return arc_.Evictable(s, k); }
  uint64_t Evictable(ArcState s) const { return arc_.Evictable(s); }
  uint64_t Resident() const { return arc_.Resident(); }
  uint64_t evict_skips() const { return arc_.evict_skips(); }
  const ArcPolicy& arc() const { return arc_; }
  DuetState duet_state() const;

  // ArcPolicy's invariants; under Duet also LIRS's, the duel's, and that
  // LIRS holds exactly ARC's resident bytes.
  Status CheckInvariants() const;

 private:
  void OnEvicted(PolicyNode* node) override;
  void OnDropped(PolicyNode* node) override;
  void OnForgotten(CacheNode*) override {}  // the node is still ARC's ghost
  void Reference(CacheNode* node);
  void Remember(const CacheNode& node);
  // Lhirs for the current c and pins (cache_policy.cc).
  uint64_t HirBytes() const;
  void FitHir();

  DuetLeader leader() const {
    return duet_.fixed_leader ? duet_.leader : duel_->leader();
  }

  const PolicyKind kind_;
  const DuetOptions duet_;
  PolicyHooks* const hooks_;
  ArcPolicy arc_;
  // Duet only.
  std::optional<BasicLirsOrder<CacheNode>> lirs_;
  std::unique_ptr<DuetDuel> duel_;
  double mean_bytes_ = 0;  // of the sampled references: pages = c / mean
  // LIRS's non-resident entries that ARC dropped as ghosts: key_hash ->
  // stamp of the last reference, oldest first in remembered_order_, at most
  // one per page of c (cache_policy.cc).
  std::unordered_map<uint64_t, uint64_t> remembered_;
  std::deque<std::pair<uint64_t, uint64_t>> remembered_order_;
  uint64_t references_ = 0;  // the stamp clock
  uint64_t remembered_lir_ = 0;
  uint64_t evictions_by_lirs_ = 0;
  uint64_t evictions_by_arc_ = 0;
  uint64_t lirs_fallbacks_ = 0;
};

}  // namespace arcstore::arc
