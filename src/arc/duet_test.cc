// Duet (duet.h) on hand-made traces: the invariants of both orderings and of
// the shadows after every request, the leader the selector settles on for a
// loop and for a recency-friendly trace, LIRS's provisional LIR pages when
// another ordering evicts its LIR pages, the lists that link nodes by their
// place in an array, and the options' checks.
#include "arc/duet.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <vector>

#include "base/random.h"

namespace arcstore::arc {
namespace {

DuetOptions Options(uint64_t c) {
  DuetOptions o;
  o.cache_pages = c;
  return o;
}

std::vector<uint64_t> Loop(uint64_t distinct, uint64_t rounds) {
  std::vector<uint64_t> keys;
  for (uint64_t r = 0; r < rounds; r++) {
    for (uint64_t k = 0; k < distinct; k++) keys.push_back(k);
  }
  return keys;
}

TEST(DuetTest, InvariantsHoldAfterEveryRequest) {
  SeededRandom rng = SeededRandom::FromEnvironment("DuetTest");
  for (uint64_t c : {2u, 3u, 17u, 64u, 300u, 600u}) {  // 600: scouts of 150 pages
    for (uint64_t shadow : {2u, 8u, 4096u}) {
      DuetOptions o = Options(c);
      o.shadow_pages = shadow;
      o.selector_limit = 8;  // switches often
      ASSERT_TRUE(o.Validate().ok());
      Duet d(o);
      for (int i = 0; i < 8000; i++) {
        // Hot keys, a warm range, and loops over a range larger than c.
        const uint64_t kind = rng.Uniform(4);
        const uint64_t key = kind == 0   ? rng.Uniform(8)
                             : kind == 1 ? 100 + rng.Uniform(4 * c)
                                         : 100000 + static_cast<uint64_t>(i) % (3 * c + 7);
        d.Access(key);
        Status s = d.CheckInvariants();
        ASSERT_TRUE(s.ok()) << "c=" << c << " shadow=" << shadow << " request " << i << ": "
                            << s.ToString();
        ASSERT_LE(d.resident(), c);
      }
      EXPECT_EQ(d.stats().requests, 8000u);
      EXPECT_EQ(d.stats().evictions_by_arc + d.stats().evictions_by_lirs + d.resident(),
                d.stats().requests - d.hits());
    }
  }
}

// A loop of 10 keys through 5 pages: ARC and LRU never hit; the LIRS shadow
// keeps 4 pages and hits 4 times a round, the selector hands LIRS the cache
// and the cache then hits 4 times a round as well.
TEST(DuetTest, LoopHandsTheCacheToLirs) {
  Duet d(Options(5));
  uint64_t round_hits = 0;
  const std::vector<uint64_t> keys = Loop(10, 200);
  for (size_t i = 0; i < keys.size(); i++) {
    const bool hit = d.Access(keys[i]);
    if (i >= keys.size() - 10) round_hits += hit ? 1 : 0;
  }
  EXPECT_EQ(d.leader(), DuetLeader::kLirs);
  EXPECT_EQ(round_hits, 4u);
  EXPECT_EQ(d.duel().stats().shadow_arc_hits, 0u);
  EXPECT_GE(d.hits(), 4u * 190u);
}

// A working set that fits: nothing is ever evicted after warm-up, the
// shadows never disagree and ARC keeps the lead.
TEST(DuetTest, FittingWorkingSetStaysWithArc) {
  Duet d(Options(100));
  SeededRandom rng(7);
  for (int i = 0; i < 20000; i++) d.Access(rng.Uniform(90));
  EXPECT_EQ(d.leader(), DuetLeader::kArc);
  EXPECT_EQ(d.duel().stats().leader_switches, 0u);
  EXPECT_EQ(d.hits(), 20000u - 90u);
}

// A loop that fits the cache but not the scouts (a quarter of it): the
// shadows agree on every reference and the scouts, where LIRS wins, name
// the leader; a loop longer than the cache makes the shadows disagree, and
// from then on they alone decide. Without scouts ARC leads meanwhile.
TEST(DuetTest, ScoutsNameTheLeaderUntilTheShadowsDisagree) {
  Duet d(Options(400));  // shadows of 400 pages, scouts of 100
  ASSERT_TRUE(d.duel().scouting());
  for (uint64_t key : Loop(300, 20)) d.Access(key);
  EXPECT_EQ(d.duel().stats().shadow_arc_hits, d.duel().stats().shadow_lirs_hits);
  EXPECT_GT(d.duel().stats().scout_disagreements, 0u);
  EXPECT_EQ(d.duel().stats().scout_sampled, d.duel().stats().sampled);
  EXPECT_TRUE(d.duel().scouting());
  EXPECT_EQ(d.leader(), DuetLeader::kLirs);
  EXPECT_LT(d.duel().selector(), 0);  // the scouts'
  EXPECT_EQ(d.hits(), 19u * 300);

  for (uint64_t key : Loop(600, 10)) d.Access(1000 + key);
  EXPECT_FALSE(d.duel().scouting());
  EXPECT_GT(d.duel().stats().shadow_lirs_hits, d.duel().stats().shadow_arc_hits);
  EXPECT_LT(d.duel().stats().scout_sampled, d.duel().stats().sampled);
  EXPECT_EQ(d.leader(), DuetLeader::kLirs);
  Status s = d.CheckInvariants();
  EXPECT_TRUE(s.ok()) << s.ToString();

  DuetOptions o = Options(400);
  o.scout_divisor = 0;
  Duet plain(o);
  EXPECT_FALSE(plain.duel().scouting());
  for (uint64_t key : Loop(300, 20)) plain.Access(key);
  EXPECT_EQ(plain.leader(), DuetLeader::kArc);
  EXPECT_EQ(plain.duel().stats().scout_sampled, 0u);
}

// A forgotten node stays indexed until kErasesInFlight more nodes are
// forgotten: referenced again meanwhile, its key finds the same node, empty,
// and it is no longer erased; otherwise it leaves the index and its key
// gets a new node.
TEST(DuetNodesTest, ForgottenNodesLeaveTheIndexAfterTheErasesInFlight) {
  constexpr uint64_t kRing = DuetNodes::kErasesInFlight;
  DuetNodes nodes(4 * kRing);
  auto track = [&](uint64_t key) {
    OrderNode* n = nodes.FindAndPin(key);
    n->lirs_where = OrderNode::kHir;  // tracked, as an ordering would
    nodes.Unpin();
    return n;
  };
  auto forget = [&](OrderNode* n) {
    n->lirs_where = OrderNode::kNone;
    nodes.OnForgotten(n);
  };
  auto check = [&] {
    Status s = nodes.CheckInvariants(/*same_resident_set=*/false);
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  OrderNode* a = track(1);
  forget(a);
  EXPECT_EQ(nodes.size(), 0u);
  check();
  // Back before its erase: the same node, empty.
  OrderNode* again = nodes.FindAndPin(1);
  EXPECT_EQ(again, a);
  EXPECT_FALSE(again->tracked());
  again->lirs_where = OrderNode::kHir;
  nodes.Unpin();
  EXPECT_EQ(nodes.size(), 1u);
  check();
  // Forgotten again, then as many others as the ring holds: key 1 is erased.
  forget(a);
  for (uint64_t k = 100; k < 100 + kRing; k++) forget(track(k));
  check();
  EXPECT_EQ(nodes.size(), 0u);
  OrderNode* fresh = nodes.FindAndPin(1);
  EXPECT_FALSE(fresh->tracked());
  EXPECT_EQ(fresh->key(), 1u);
  fresh->lirs_where = OrderNode::kHir;
  nodes.Unpin();
  check();
  EXPECT_EQ(nodes.size(), 1u);
  // Tracking the most keys the pool was built for, with the ring full, fits.
  for (uint64_t k = 200; k < 200 + kRing; k++) forget(track(k));
  for (uint64_t k = 300; k < 300 + 4 * kRing - 1; k++) track(k);
  check();
  EXPECT_EQ(nodes.size(), 4 * kRing);
}

// LIRS over 10 pages (Llirs 9) whose LIR pages another ordering evicts: the
// pages that refill the LIR set are provisional, and the first to become
// HIR (newest first) when an evicted page comes back, before S's bottom; a
// hit makes one ordinary. LIRS choosing its own victims has none.
TEST(LirsOrderTest, RefillsAreProvisionalAndGiveWayFirst) {
  DuetNodes nodes(64);
  LirsOrder lirs(LirsOrderOptions{10}, &nodes, nodes.nodes());
  auto ref = [&](uint64_t key) {
    OrderNode* n = nodes.FindAndPin(key);
    lirs.Reference(n);
    nodes.Unpin();
    return n;
  };
  auto check = [&] {
    Status s = lirs.CheckInvariants();
    ASSERT_TRUE(s.ok()) << s.ToString();
  };
  std::vector<OrderNode*> n;
  for (uint64_t k = 0; k < 10; k++) n.push_back(ref(k));  // 0..8 LIR, 9 HIR
  EXPECT_EQ(lirs.lir(), 9u);
  EXPECT_EQ(n[9]->lirs_where, OrderNode::kHir);
  lirs.Evict(n[4]);  // ARC's choices: two LIR pages
  lirs.Evict(n[5]);
  EXPECT_EQ(n[4]->lirs_where, OrderNode::kNonResident);
  EXPECT_EQ(lirs.provisional(), 0u);
  OrderNode* ten = ref(10);
  OrderNode* eleven = ref(11);
  check();
  EXPECT_EQ(ten->lirs_where, OrderNode::kLir);
  EXPECT_EQ(eleven->lirs_where, OrderNode::kLir);
  EXPECT_EQ(lirs.provisional(), 2u);
  // 4 comes back: Q's oldest (9) makes room, and 4's promotion takes the
  // newest provisional page's place in the LIR set, not S's bottom (0).
  ASSERT_EQ(lirs.Victim(), n[9]);
  lirs.Evict(n[9]);
  ref(4);
  check();
  EXPECT_EQ(n[4]->lirs_where, OrderNode::kLir);
  EXPECT_EQ(eleven->lirs_where, OrderNode::kHir);
  EXPECT_EQ(n[0]->lirs_where, OrderNode::kLir);
  EXPECT_EQ(lirs.Bottom(), n[0]);
  EXPECT_EQ(lirs.provisional(), 1u);
  ref(10);  // reused: an ordinary LIR page
  check();
  EXPECT_EQ(lirs.provisional(), 0u);
  EXPECT_EQ(lirs.lir(), 9u);

  // Alone, LIRS never refills and has no provisional page.
  DuetNodes alone_nodes(64);
  LirsOrder alone(LirsOrderOptions{10}, &alone_nodes, alone_nodes.nodes());
  SeededRandom rng(11);
  for (int i = 0; i < 5000; i++) {
    OrderNode* e = alone_nodes.FindAndPin(i % 3 == 0 ? rng.Uniform(30) : rng.Uniform(8));
    if (!LirsOrder::Resident(*e) && alone.resident() == 10) alone.Evict(alone.Victim());
    alone.Reference(e);
    alone_nodes.Unpin();
    ASSERT_EQ(alone.provisional(), 0u) << "request " << i;
  }
  EXPECT_TRUE(alone.CheckInvariants().ok());
}

// Two IndexedNodeLists through the same links of 12 nodes, against a model:
// ends, walks both ways and Holds() (asked of a node on neither list or on
// that one; a node alone on a list has no neighbour either side) after
// every push and removal.
TEST(IndexedNodeListTest, MatchesAModelOfTwoListsOverOneArray) {
  std::vector<OrderNode> nodes(12);
  using List = IndexedNodeList<OrderNode, ArcLinkField>;
  List a(nodes.data()), b(nodes.data());
  std::deque<OrderNode*> ma, mb;
  SeededRandom rng(5);
  auto check = [&](const List& l, const std::deque<OrderNode*>& m) {
    ASSERT_EQ(l.size(), m.size());
    ASSERT_EQ(l.empty(), m.empty());
    ASSERT_EQ(l.front(), m.empty() ? nullptr : m.front());
    ASSERT_EQ(l.back(), m.empty() ? nullptr : m.back());
    std::vector<OrderNode*> fwd, bwd;
    for (OrderNode* n = l.front(); n != nullptr; n = l.Older(n)) fwd.push_back(n);
    for (OrderNode* n = l.back(); n != nullptr; n = l.Newer(n)) bwd.push_back(n);
    std::reverse(bwd.begin(), bwd.end());
    ASSERT_EQ(fwd, std::vector<OrderNode*>(m.begin(), m.end()));
    ASSERT_EQ(bwd, fwd);
  };
  for (int op = 0; op < 5000; op++) {
    OrderNode* n = &nodes[rng.Uniform(nodes.size())];
    const bool in_a = std::find(ma.begin(), ma.end(), n) != ma.end();
    const bool in_b = std::find(mb.begin(), mb.end(), n) != mb.end();
    if (!in_b) ASSERT_EQ(a.Holds(*n), in_a) << "op " << op;
    if (!in_a) ASSERT_EQ(b.Holds(*n), in_b) << "op " << op;
    if (in_a) {
      a.Remove(n);
      ma.erase(std::find(ma.begin(), ma.end(), n));
    } else if (in_b) {
      b.Remove(n);
      mb.erase(std::find(mb.begin(), mb.end(), n));
    } else if (rng.Uniform(2) == 0) {
      a.PushFront(n);
      ma.push_front(n);
    } else {
      b.PushFront(n);
      mb.push_front(n);
    }
    check(a, ma);
    check(b, mb);
  }
}

TEST(DuetTest, BadOptionsAreRejected) {
  EXPECT_FALSE(DuetOptions{}.Validate().ok());
  DuetOptions o = Options(10);
  o.shadow_pages = 1;
  EXPECT_FALSE(o.Validate().ok());
  o = Options(10);
  o.selector_limit = 0;
  EXPECT_FALSE(o.Validate().ok());
  o = Options(10);
  o.arc_win_weight = 0;
  EXPECT_FALSE(o.Validate().ok());
  o.arc_win_weight = o.selector_limit + 1;
  EXPECT_FALSE(o.Validate().ok());
  o = Options(10);
  o.scout_divisor = 1;
  EXPECT_FALSE(o.Validate().ok());
  o.scout_divisor = 1025;
  EXPECT_FALSE(o.Validate().ok());
  o.scout_divisor = 0;
  EXPECT_TRUE(o.Validate().ok());
  EXPECT_TRUE(Options(10).Validate().ok());
}

}  // namespace
}  // namespace arcstore::arc
