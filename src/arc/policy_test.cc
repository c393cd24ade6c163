// ArcPolicy against a line-by-line transcription of the paper's Fig. 4 (in
// pages, std::list), on random traces, after every request; and the byte
// generalisation, pins, sublists and the ZFS refinements on small cases.
#include "arc/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <list>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/random.h"

namespace arcstore::arc {
namespace {

// Fig. 4 of Megiddo & Modha, verbatim, in pages. Lists are front = MRU.
class PaperArc {
 public:
  explicit PaperArc(int64_t c) : c_(c) {}

  bool Access(uint64_t x) {
    auto where = Find(x);
    if (where == kT1 || where == kT2) {  // Case I
      Erase(where, x);
      PushFront(kT2, x);
      return true;
    }
    if (where == kB1) {  // Case II
      double delta = std::max(double(Len(kB2)) / double(Len(kB1)), 1.0);
      p_ = std::min(double(c_), p_ + delta);
      Replace(x, false);
      Erase(kB1, x);
      PushFront(kT2, x);
      return false;
    }
    if (where == kB2) {  // Case III
      double delta = std::max(double(Len(kB1)) / double(Len(kB2)), 1.0);
      p_ = std::max(0.0, p_ - delta);
      Replace(x, true);
      Erase(kB2, x);
      PushFront(kT2, x);
      return false;
    }
    // Case IV
    const int64_t l1 = Len(kT1) + Len(kB1);
    const int64_t l2 = Len(kT2) + Len(kB2);
    if (l1 == c_) {
      if (Len(kT1) < c_) {
        PopBack(kB1);
        Replace(x, false);
      } else {
        PopBack(kT1);
      }
    } else if (l1 < c_ && l1 + l2 >= c_) {
      if (l1 + l2 == 2 * c_) PopBack(kB2);
      Replace(x, false);
    }
    PushFront(kT1, x);
    return false;
  }

  double p() const { return p_; }
  int64_t Len(int l) const { return int64_t(lists_[l].size()); }
  enum { kT1, kT2, kB1, kB2, kNotFound };

 private:
  void Replace(uint64_t, bool in_b2) {
    const int64_t t1 = Len(kT1);
    if (t1 > 0 && (double(t1) > p_ || (in_b2 && double(t1) == p_))) {
      PushFront(kB1, PopBack(kT1));
    } else {
      PushFront(kB2, PopBack(kT2));
    }
  }
  int Find(uint64_t x) const {
    auto it = where_.find(x);
    return it == where_.end() ? kNotFound : it->second.first;
  }
  void Erase(int l, uint64_t x) {
    lists_[l].erase(where_.at(x).second);
    where_.erase(x);
  }
  void PushFront(int l, uint64_t x) {
    lists_[l].push_front(x);
    where_[x] = {l, lists_[l].begin()};
  }
  uint64_t PopBack(int l) {
    EXPECT_FALSE(lists_[l].empty());
    uint64_t x = lists_[l].back();
    lists_[l].pop_back();
    where_.erase(x);
    return x;
  }

  int64_t c_;
  double p_ = 0;
  std::list<uint64_t> lists_[4];
  std::unordered_map<uint64_t, std::pair<int, std::list<uint64_t>::iterator>> where_;
};

// ArcPolicy driven the way the simulator drives it, nodes in a map.
class PolicyHarness : public PolicyHooks {
 public:
  struct Node : PolicyNode {
    uint64_t key = 0;
  };

  explicit PolicyHarness(const PolicyOptions& o) : policy_(o, this) {}

  // A reference of `key` with `bytes` (bytes matter only on a miss).
  bool Access(uint64_t key, uint64_t bytes, uint64_t now_ns = 0) {
    auto it = nodes_.find(key);
    if (it != nodes_.end()) {
      Node* n = it->second.get();
      if (IsResident(n->state)) {
        policy_.Hit(n, now_ns);
        return true;
      }
      ArcState g = policy_.GhostHit(n);
      policy_.Insert(n, ArcState::kMfu, g == ArcState::kMfuGhost, now_ns, false);
      return false;
    }
    auto n = std::make_unique<Node>();
    n->key = key;
    n->bytes = bytes;
    n->sublist = static_cast<uint16_t>(key % policy_.options().sublists);
    Node* raw = n.get();
    nodes_[key] = std::move(n);
    policy_.Insert(raw, ArcState::kMru, false, now_ns, false);
    return false;
  }

  void OnEvicted(PolicyNode*) override { evicted_++; }
  void OnDropped(PolicyNode* p) override { nodes_.erase(static_cast<Node*>(p)->key); }

  ArcPolicy policy_;
  std::unordered_map<uint64_t, std::unique_ptr<Node>> nodes_;
  uint64_t evicted_ = 0;
};

// A random trace with locality: a hot set, a scan, and noise.
uint64_t NextKey(SeededRandom& rng, uint64_t universe, uint64_t* scan) {
  switch (rng.Uniform(4)) {
    case 0: return rng.Uniform(universe / 8 + 1);          // hot
    case 1: return (*scan)++ % (universe * 4);              // scan
    default: return rng.Uniform(universe);
  }
}

TEST(ArcPolicyTest, MatchesPaperPseudocodeOnRandomTraces) {
  SeededRandom rng = SeededRandom::FromEnvironment("ArcPolicyTest.MatchesPaper");
  const uint64_t iterations = ScaledIterations(40);
  for (uint64_t round = 0; round < iterations; round++) {
    const int64_t c = static_cast<int64_t>(rng.Range(1, 64));
    const uint64_t page = uint64_t{1} << rng.Uniform(13);  // 1 .. 4096 bytes per page
    const uint64_t universe = rng.Range(2, 6 * uint64_t(c));
    PaperArc paper(c);
    PolicyHarness h(PolicyOptions::Paper(uint64_t(c) * page));
    uint64_t scan = 0;
    for (int i = 0; i < 3000; i++) {
      const uint64_t key = NextKey(rng, universe, &scan);
      const bool want = paper.Access(key);
      const bool got = h.Access(key, page);
      ASSERT_EQ(got, want) << "round " << round << " request " << i << " c=" << c;
      ASSERT_EQ(h.policy_.p(), paper.p() * double(page)) << "round " << round << " request " << i;
      ASSERT_EQ(h.policy_.Size(ArcState::kMru), uint64_t(paper.Len(PaperArc::kT1)) * page);
      ASSERT_EQ(h.policy_.Size(ArcState::kMfu), uint64_t(paper.Len(PaperArc::kT2)) * page);
      ASSERT_EQ(h.policy_.Size(ArcState::kMruGhost), uint64_t(paper.Len(PaperArc::kB1)) * page);
      ASSERT_EQ(h.policy_.Size(ArcState::kMfuGhost), uint64_t(paper.Len(PaperArc::kB2)) * page);
      if (i % 97 == 0) ASSERT_TRUE(h.policy_.CheckInvariants().ok()) << h.policy_.CheckInvariants().ToString();
    }
  }
}

TEST(ArcPolicyTest, VariableSizesKeepTheBounds) {
  SeededRandom rng = SeededRandom::FromEnvironment("ArcPolicyTest.VariableSizes");
  for (uint64_t round = 0; round < ScaledIterations(20); round++) {
    const uint64_t c = rng.Range(64 * 1024, 4 * 1024 * 1024);
    PolicyHarness h(PolicyOptions::Paper(c));
    uint64_t scan = 0;
    for (int i = 0; i < 5000; i++) {
      const uint64_t key = NextKey(rng, 400, &scan);
      const uint64_t bytes = 512 * rng.Range(1, 256);  // 512 B .. 128 KiB, fixed per key below
      h.Access(key, std::min<uint64_t>(bytes, c));
      Status s = h.policy_.CheckInvariants();
      ASSERT_TRUE(s.ok()) << "round " << round << " request " << i << ": " << s.ToString();
      ASSERT_LE(h.policy_.Resident(), c);
    }
  }
}

TEST(ArcPolicyTest, ReplaceTieRuleEvictsMruOnMfuGhostHit) {
  // c = 2 pages of 1 byte. Build T1 = {a}, T2 = {b}, B2 = {d}, p = 1.
  PolicyHarness h(PolicyOptions::Paper(2));
  h.Access(1, 1);  // T1 = [1]
  h.Access(2, 1);  // T1 = [2, 1]
  h.Access(2, 1);  // T2 = [2], T1 = [1]
  h.Access(1, 1);  // T2 = [1, 2]
  h.Access(3, 1);  // miss: REPLACE (T1 empty) -> 2 to B2; T1 = [3]
  ASSERT_EQ(h.policy_.Size(ArcState::kMfuGhost), 1u);
  ASSERT_EQ(h.policy_.p(), 0.0);
  h.Access(4, 1);  // L1 = 1 < c, total = 3 >= c: REPLACE: T1 = 1 > p = 0 -> 3 to B1
  ASSERT_EQ(h.policy_.Size(ArcState::kMruGhost), 1u);
  h.Access(3, 1);  // B1 hit: p = min(2, 0 + max(1/1, 1)) = 1; REPLACE: T1 = 1 == p, not B2 -> T2's LRU
  ASSERT_EQ(h.policy_.p(), 1.0);
  ASSERT_EQ(h.policy_.Size(ArcState::kMru), 1u);
  // Now T1 = [4] (1 byte) == p: a hit in B2 takes T1's LRU by the tie rule.
  PolicyNode* b2_lru = nullptr;
  h.policy_.ForEachListed(ArcState::kMfuGhost, [&](const PolicyNode* n) {
    if (b2_lru == nullptr) b2_lru = const_cast<PolicyNode*>(n);
  });
  ASSERT_NE(b2_lru, nullptr);
  const uint64_t key = static_cast<PolicyHarness::Node*>(b2_lru)->key;
  const double p_before = h.policy_.p();
  h.Access(key, 1);
  EXPECT_LT(h.policy_.p(), p_before);
  // p dropped to 0 before REPLACE, so T1 (1 byte) > p: MRU is evicted either way;
  // check the rule directly with p == T1.
  PolicyHarness t(PolicyOptions::Paper(4));
  for (uint64_t k : {10, 11, 11, 12, 12, 13, 14}) t.Access(k, 1);
  EXPECT_TRUE(t.policy_.CheckInvariants().ok());
}

// REPLACE's decision in isolation: T1 == p takes MRU only for a B2 hit.
TEST(ArcPolicyTest, ReplaceDecisionAtTie) {
  struct Hooks : PolicyHooks {
    void OnEvicted(PolicyNode*) override {}
    void OnDropped(PolicyNode*) override {}
  } hooks;
  PolicyOptions o = PolicyOptions::Paper(4);
  o.synchronous_replace = false;
  ArcPolicy p(o, &hooks);
  PolicyNode a, b, g;
  a.bytes = b.bytes = g.bytes = 1;
  p.Insert(&g, ArcState::kMru, false, 0, false);
  p.Insert(&a, ArcState::kMru, false, 0, false);
  p.Insert(&b, ArcState::kMfu, false, 0, false);
  ASSERT_EQ(p.Replace(false), &g);  // T1 = 2 > p = 0: MRU's LRU
  // A B1 hit on g: p = 0 + 1 * max(B2 / B1 = 0, 1) = 1; g goes to MFU.
  p.GhostHit(&g);
  ASSERT_EQ(p.p(), 1.0);
  p.Insert(&g, ArcState::kMfu, false, 0, false);
  // T1 = {a} = 1 byte == p.
  EXPECT_EQ(p.Replace(false), &b);  // not a B2 hit: MFU's LRU
  EXPECT_EQ(p.Replace(true), &a);                            // a B2 hit: MRU
}

TEST(ArcPolicyTest, GhostHitAdaptsByRatioOfGhostSizes) {
  struct Hooks : PolicyHooks {
    void OnEvicted(PolicyNode*) override {}
    void OnDropped(PolicyNode*) override {}
  } hooks;
  PolicyOptions o = PolicyOptions::Paper(1000);
  o.synchronous_replace = false;
  ArcPolicy p(o, &hooks);
  std::vector<PolicyNode> n(6);
  for (int i = 0; i < 6; i++) {
    n[i].bytes = 10;
    p.Insert(&n[i], i < 2 ? ArcState::kMru : ArcState::kMfu, false, 0, false);
  }
  // B1: 2 x 10 bytes; B2: 4 x 10 bytes.
  while (p.Resident() > 0) ASSERT_NE(p.Replace(false), nullptr);
  ASSERT_EQ(p.Size(ArcState::kMruGhost), 20u);
  ASSERT_EQ(p.Size(ArcState::kMfuGhost), 40u);
  p.GhostHit(&n[0]);                 // B1 hit: delta = 10 * max(1, 40/20) = 20
  EXPECT_EQ(p.p(), 20.0);
  p.GhostHit(&n[2]);                 // B2 hit: B1 = 10, B2 = 40: delta = 10 * 1
  EXPECT_EQ(p.p(), 10.0);
}

TEST(ArcPolicyTest, PinnedNodesAreNotEvictable) {
  struct Hooks : PolicyHooks {
    void OnEvicted(PolicyNode*) override {}
    void OnDropped(PolicyNode*) override {}
  } hooks;
  PolicyOptions o = PolicyOptions::Paper(100);
  o.synchronous_replace = false;
  ArcPolicy p(o, &hooks);
  PolicyNode a, b;
  a.bytes = 30;
  b.bytes = 40;
  p.Insert(&a, ArcState::kMru, false, 0, /*pinned=*/true);
  p.Insert(&b, ArcState::kMru, false, 0, false);
  EXPECT_EQ(p.Size(ArcState::kMru), 70u);
  EXPECT_EQ(p.Evictable(ArcState::kMru), 40u);
  EXPECT_EQ(p.Replace(false), &b);
  EXPECT_EQ(p.Replace(false), nullptr);  // only a, pinned
  p.Hit(&a, 0);                          // promotes while pinned: state only
  EXPECT_EQ(a.state, ArcState::kMfu);
  EXPECT_FALSE(a.on_list);
  p.Unpin(&a);
  EXPECT_EQ(p.Evictable(ArcState::kMfu), 30u);
  EXPECT_EQ(p.Replace(false), &a);
  EXPECT_TRUE(p.CheckInvariants().ok()) << p.CheckInvariants().ToString();
}

TEST(ArcPolicyTest, MinResidenceDelaysPromotion) {
  PolicyOptions o = PolicyOptions::Paper(100);
  o.min_residence_ns = 1000;
  PolicyHarness h(o);
  h.Access(1, 10, 0);
  h.Access(1, 10, 500);  // within 1000 ns: stays in MRU
  EXPECT_EQ(h.nodes_[1]->state, ArcState::kMru);
  h.Access(1, 10, 1500);
  EXPECT_EQ(h.nodes_[1]->state, ArcState::kMfu);
}

TEST(ArcPolicyTest, PFloorKeepsPInRange) {
  PolicyOptions o = PolicyOptions::Paper(1600);
  o.p_min_shift = 4;  // p in [100, 1500]
  PolicyHarness h(o);
  EXPECT_EQ(h.policy_.p(), 100.0);
  SeededRandom rng(7);
  uint64_t scan = 0;
  for (int i = 0; i < 20000; i++) {
    h.Access(NextKey(rng, 600, &scan), 10);
    ASSERT_GE(h.policy_.p(), 100.0);
    ASSERT_LE(h.policy_.p(), 1500.0);
  }
}

TEST(ArcPolicyTest, SublistsKeepAccountingAndBounds) {
  PolicyOptions o = PolicyOptions::Paper(5000);
  o.sublists = 8;
  PolicyHarness h(o);
  SeededRandom rng(11);
  uint64_t scan = 0;
  for (int i = 0; i < 20000; i++) {
    h.Access(NextKey(rng, 2000, &scan), 10);
    if (i % 101 == 0) ASSERT_TRUE(h.policy_.CheckInvariants().ok()) << h.policy_.CheckInvariants().ToString();
  }
  EXPECT_LE(h.policy_.Resident(), 5000u);
}

TEST(ArcPolicyTest, ShrinkingCTrimsGhostsAndClampsP) {
  PolicyHarness h(PolicyOptions::Paper(1000));
  SeededRandom rng(3);
  uint64_t scan = 0;
  for (int i = 0; i < 5000; i++) h.Access(NextKey(rng, 300, &scan), 10);
  h.policy_.SetTarget(400);
  EXPECT_LE(h.policy_.p(), 400.0);
  // Resident may exceed the new c until something evicts; the ghost bounds hold.
  EXPECT_TRUE(h.policy_.Size(ArcState::kMruGhost) == 0 ||
              h.policy_.Size(ArcState::kMru) + h.policy_.Size(ArcState::kMruGhost) <= 400);
  while (h.policy_.Resident() > 400) ASSERT_NE(h.policy_.Replace(false), nullptr);
  h.policy_.TrimGhosts();
  EXPECT_TRUE(h.policy_.CheckInvariants().ok()) << h.policy_.CheckInvariants().ToString();
}

TEST(ArcPolicyTest, OptionsValidate) {
  EXPECT_FALSE(PolicyOptions::Paper(0).Validate().ok());
  PolicyOptions o = PolicyOptions::Paper(10);
  o.sublists = 0;
  EXPECT_FALSE(o.Validate().ok());
  EXPECT_TRUE(PolicyOptions::Paper(10).Validate().ok());
}

}  // namespace
}  // namespace arcstore::arc
