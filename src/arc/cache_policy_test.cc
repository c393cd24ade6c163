#include "arc/cache_policy.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace arcstore::arc {
namespace {

constexpr uint32_t kPage = 4096;

// Drives a CachePolicy as the engine does (a reference hits, or misses and
// inserts; the evictor then REPLACEs until the cache is under c), over one
// node per key, checking the invariants as it goes.
class Driver final : public PolicyHooks {
 public:
  Driver(PolicyKind kind, uint64_t c_pages, uint64_t keys, DuetOptions duet = {})
      : nodes_(keys), policy_(kind, Options(c_pages), duet, this) {
    for (uint64_t k = 0; k < keys; k++) {
      nodes_[k].bytes = kPage;
      nodes_[k].key_hash = DuetDuel::Mix(k + 1);
    }
  }
  static PolicyOptions Options(uint64_t c_pages) {
    PolicyOptions o = PolicyOptions::Paper(c_pages * kPage);
    o.synchronous_replace = false;
    return o;
  }

  // True on a hit.
  bool Access(uint64_t key) {
    CacheNode* n = &nodes_[key];
    if (IsResident(n->state)) {
      policy_.Hit(n, 0);
      return true;
    }
    bool in_b2 = false;
    ArcState to = ArcState::kMru;
    if (IsGhost(n->state)) {
      in_b2 = policy_.GhostHit(n) == ArcState::kMfuGhost;
      to = ArcState::kMfu;
    }
    policy_.Insert(n, to, in_b2, 0, /*pinned=*/false);
    while (policy_.Resident() > policy_.c()) {
      PolicyNode* v = policy_.Replace(in_b2);
      if (v == nullptr) break;
      EXPECT_TRUE(v->on_list) << "a pinned buffer was evicted";
    }
    policy_.TrimGhosts();
    return false;
  }
  void OnEvicted(PolicyNode* n) override {
    evicted_++;
    EXPECT_TRUE(IsGhost(n->state));
  }
  void OnDropped(PolicyNode*) override { dropped_++; }

  CachePolicy& policy() { return policy_; }
  CacheNode* node(uint64_t key) { return &nodes_[key]; }
  uint64_t evicted() const { return evicted_; }

 private:
  std::vector<CacheNode> nodes_;
  CachePolicy policy_;
  uint64_t evicted_ = 0;
  uint64_t dropped_ = 0;
};

DuetOptions LirsLeads() {
  DuetOptions d;
  d.fixed_leader = true;
  d.leader = DuetLeader::kLirs;
  return d;
}

// Hits of `rounds` passes over keys [0, n).
uint64_t Loop(Driver* d, uint64_t n, int rounds) {
  uint64_t hits = 0;
  for (int r = 0; r < rounds; r++) {
    for (uint64_t k = 0; k < n; k++) hits += d->Access(k) ? 1 : 0;
    EXPECT_TRUE(d->policy().CheckInvariants().ok()) << d->policy().CheckInvariants().ToString();
  }
  return hits;
}

// A loop half again as long as the cache: ARC evicts every buffer before
// its reuse; LIRS victims keep the LIR set, most of the cache, hitting.
TEST(CachePolicyTest, LirsVictimsKeepALoopLongerThanTheCache) {
  Driver arc(PolicyKind::kArc, 100, 150);
  Driver duet(PolicyKind::kDuet, 100, 150, LirsLeads());
  const uint64_t arc_hits = Loop(&arc, 150, 20);
  const uint64_t duet_hits = Loop(&duet, 150, 20);
  EXPECT_EQ(arc_hits, 0u);
  // 19 rounds after the first, each hitting nearly the whole LIR set (99 pages).
  EXPECT_GE(duet_hits, 19u * 90);
  const DuetState s = duet.policy().duet_state();
  EXPECT_GT(s.evictions_by_lirs, 0u);
  EXPECT_EQ(s.evictions_by_arc, 0u);
  EXPECT_LE(s.lir_bytes, 100u * kPage - s.hir_bytes);
}

// Left to its duel, Duet hands such a loop to LIRS and hits on it; on a
// working set that fits, nothing is evicted, the shadows never disagree,
// and it matches ARC hit for hit (the leader, whichever the scouts name,
// never chooses a victim).
TEST(CachePolicyTest, TheDuelHandsALoopToLirs) {
  Driver duet(PolicyKind::kDuet, 3000, 4500);
  const uint64_t hits = Loop(&duet, 4500, 30);
  const DuetState s = duet.policy().duet_state();
  EXPECT_EQ(s.leader, DuetLeader::kLirs);
  EXPECT_GT(s.duel.sampled, 0u);
  EXPECT_GT(s.duel.shadow_lirs_hits, s.duel.shadow_arc_hits);
  EXPECT_GT(hits, 30u * 4500 / 4) << "LIRS led for most of the run";

  Driver fits(PolicyKind::kDuet, 3000, 2000);
  Driver arc(PolicyKind::kArc, 3000, 2000);
  EXPECT_EQ(Loop(&fits, 2000, 5), Loop(&arc, 2000, 5));
  const DuetState f = fits.policy().duet_state();
  EXPECT_GT(f.duel.sampled, 0u);
  EXPECT_EQ(f.duel.shadow_arc_hits, f.duel.shadow_lirs_hits);
  EXPECT_EQ(f.evictions_by_arc + f.evictions_by_lirs, 0u);
}

// LIRS never names a pinned buffer; when everything it would look at is
// pinned, ARC's REPLACE chooses, and with nothing evictable at all,
// nothing is evicted.
TEST(CachePolicyTest, PinnedBuffersAreNeverVictims) {
  Driver d(PolicyKind::kDuet, 100, 400, LirsLeads());
  for (uint64_t k = 0; k < 100; k++) d.Access(k);
  ASSERT_EQ(d.policy().Resident(), 100u * kPage);
  // Pin the 99 oldest: only key 99 is evictable.
  for (uint64_t k = 0; k < 99; k++) d.policy().Pin(d.node(k));
  PolicyNode* v = d.policy().Replace(false);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v, d.node(99));
  EXPECT_EQ(d.policy().Replace(false), nullptr) << "everything left is pinned";
  EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
  for (uint64_t k = 0; k < 99; k++) d.policy().Unpin(d.node(k));
  // Every resident buffer pinned: LIRS finds no victim, falls back to
  // REPLACE, which finds none either.
  for (uint64_t k = 100; k < 200; k++) d.Access(k);
  for (uint64_t k = 0; k < 400; k++) {
    if (IsResident(d.node(k)->state)) d.policy().Pin(d.node(k));
  }
  EXPECT_EQ(d.policy().Replace(false), nullptr);
  const uint64_t fallbacks = d.policy().duet_state().lirs_fallbacks;
  EXPECT_GT(fallbacks, 0u);
  EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
}

// A smaller c shrinks the LIR set to c - Lhirs, moving the rest to HIR,
// without evicting: the evictor does that.
TEST(CachePolicyTest, ANewTargetShrinksTheLirSet) {
  Driver d(PolicyKind::kDuet, 1000, 1000, LirsLeads());
  for (uint64_t k = 0; k < 1000; k++) d.Access(k);
  const uint64_t lir_before = d.policy().duet_state().lir_bytes;
  EXPECT_GE(lir_before, 980u * kPage);
  d.policy().SetTarget(500 * kPage);
  const DuetState s = d.policy().duet_state();
  EXPECT_LE(s.lir_bytes, 500u * kPage - 5 * kPage);
  EXPECT_EQ(s.lir_bytes + s.hir_bytes, 1000u * kPage) << "nothing evicted yet";
  EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
  while (d.policy().Resident() > d.policy().c()) ASSERT_NE(d.policy().Replace(false), nullptr);
  d.policy().TrimGhosts();  // as the evictor does after its REPLACEs
  EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
}

// Leaving the cache by the engine's other paths (anon, removal, a dropped
// ghost) takes the node out of LIRS too: the accounts stay exact.
TEST(CachePolicyTest, EveryWayOutLeavesLirs) {
  Driver d(PolicyKind::kDuet, 100, 300, LirsLeads());
  Loop(&d, 300, 3);  // residents, ghosts, non-residents
  CachePolicy& p = d.policy();
  int moved = 0, removed = 0;
  for (uint64_t k = 0; k < 300; k++) {
    CacheNode* n = d.node(k);
    if (IsResident(n->state) && moved < 10) {
      p.Pin(n);
      p.MoveToAnon(n);
      moved++;
    } else if (IsGhost(n->state) && removed < 10) {
      p.Remove(n);
      removed++;
    }
    ASSERT_TRUE(p.CheckInvariants().ok()) << p.CheckInvariants().ToString();
  }
  EXPECT_EQ(moved, 10);
  EXPECT_EQ(removed, 10);
  p.SetTarget(20 * kPage);  // trims ghosts: OnDropped
  ASSERT_TRUE(p.CheckInvariants().ok()) << p.CheckInvariants().ToString();
  for (uint64_t k = 0; k < 300; k++) {
    CacheNode* n = d.node(k);
    if (n->state == ArcState::kAnon || n->state == ArcState::kNone) {
      EXPECT_EQ(n->lirs_where, 0) << "key " << k << " left the cache but not LIRS";
    }
  }
}

// A working set that arrives while a scan four times the cache runs stays
// resident once it has reached the LIR set.
TEST(CachePolicyTest, AWorkingSetStaysThroughAScan) {
  Driver d(PolicyKind::kDuet, 100, 1000, LirsLeads());
  for (uint64_t k = 600; k < 1000; k++) d.Access(k);  // the scan fills the cache first
  uint64_t scan = 600, hot_hits = 0;
  for (int i = 0; i < 20000; i++) {
    const bool hit = d.Access(static_cast<uint64_t>(i * 7) % 50);  // 50 hot keys
    if (i >= 10000) hot_hits += hit ? 1 : 0;
    d.Access(scan);
    scan = scan == 999 ? 600 : scan + 1;
  }
  EXPECT_GE(hot_hits, 9900u);
  EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
}

// ARC drops the ghost of a full MRU's victim at once; LIRS remembers the
// key with the stamp of its last reference. Referenced again while that
// stamp is above S's bottom LIR entry's, the key is LIR at once, as the
// non-resident entry S would have kept; after every LIR entry has been
// referenced since (S would have pruned it), it is new: HIR.
TEST(CachePolicyTest, ARememberedKeyAboveTheBottomIsLir) {
  for (const bool lir_referenced_since : {false, true}) {
    SCOPED_TRACE(lir_referenced_since ? "LIR entries referenced since" : "nothing since");
    Driver d(PolicyKind::kDuet, 10, 30, LirsLeads());
    for (uint64_t k = 0; k < 9; k++) d.Access(k);  // Llirs = 9 pages: all LIR
    d.Access(20);  // HIR
    d.Access(21);  // evicts 20, whose ghost ARC drops (MRU + MRU-ghost <= c)
    ASSERT_EQ(d.node(20)->state, ArcState::kNone);
    ASSERT_EQ(d.policy().duet_state().remembered, 1u);
    if (lir_referenced_since) {
      for (uint64_t k = 0; k < 9; k++) ASSERT_TRUE(d.Access(k));
    }
    d.Access(20);
    const DuetState s = d.policy().duet_state();
    EXPECT_EQ(s.remembered_lir, lir_referenced_since ? 0u : 1u);
    EXPECT_EQ(d.node(20)->lirs_where, lir_referenced_since ? OrderNode::kHir : OrderNode::kLir);
    EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
  }
}
// Pinned buffers take room from the HIR part, not from the LIR set's
// victims: Lhirs grows to c / 100 plus the pinned bytes, so Q keeps
// unpinned buffers to give and LIRS never falls back to ARC (Lhirs is at
// most c / 2).
TEST(CachePolicyTest, TheHirRoomGrowsWithThePins) {
  Driver d(PolicyKind::kDuet, 100, 300, LirsLeads());
  for (uint64_t k = 0; k < 100; k++) d.Access(k);
  for (uint64_t k = 0; k < 40; k++) d.policy().Pin(d.node(k));
  for (uint64_t k = 100; k < 300; k++) d.Access(k);
  const DuetState s = d.policy().duet_state();
  EXPECT_EQ(s.hir_target, 41u * kPage);
  EXPECT_LE(s.lir_bytes, 59u * kPage);
  EXPECT_EQ(s.lirs_fallbacks, 0u);
  for (uint64_t k = 0; k < 40; k++) EXPECT_TRUE(IsResident(d.node(k)->state)) << k;
  EXPECT_TRUE(d.policy().CheckInvariants().ok()) << d.policy().CheckInvariants().ToString();
}

}  // namespace
}  // namespace arcstore::arc
