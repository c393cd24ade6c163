// The reference policies of `arcstore sim` on traces small enough to work out
// by hand, their invariants after every request of random traces, and MIN's
// optimality: no online policy may beat it on any trace.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "arc/flat_table.h"
#include "base/random.h"
#include "tools/sim/belady.h"
#include "tools/sim/lirs.h"
#include "tools/sim/s3fifo.h"
#include "tools/sim/sim_table.h"
#include "tools/sim/simulators.h"
#include "tools/sim/tinylfu.h"
#include "tools/sim/two_q.h"

namespace arcstore::sim {
namespace {

template <typename Sim>
uint64_t Replay(Sim& sim, const std::vector<uint64_t>& keys) {
  for (uint64_t k : keys) sim.Access(k);
  return sim.hits();
}

uint64_t MinHits(const std::vector<uint64_t>& keys, uint64_t cache_pages) {
  auto next = NextReferences(keys);
  EXPECT_TRUE(next.ok());
  return BeladyHits(*next, cache_pages);
}

std::vector<uint64_t> Loop(uint64_t distinct, uint64_t rounds) {
  std::vector<uint64_t> keys;
  for (uint64_t r = 0; r < rounds; r++) {
    for (uint64_t k = 0; k < distinct; k++) keys.push_back(k);
  }
  return keys;
}

// The textbook reference string: OPT takes 7 faults with 3 frames, 6 with 4.
TEST(BeladyTest, TextbookString) {
  const std::vector<uint64_t> keys = {1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5};
  EXPECT_EQ(MinHits(keys, 3), 12u - 7u);
  EXPECT_EQ(MinHits(keys, 4), 12u - 6u);
  EXPECT_EQ(MinHits(keys, 5), 12u - 5u);  // only cold misses
}

// MIN written the slow obvious way: on a miss with a full cache, scan the
// future for the cached page used furthest ahead (or never) and evict it.
uint64_t NaiveMinHits(const std::vector<uint64_t>& keys, uint64_t c) {
  std::vector<uint64_t> cache;
  uint64_t hits = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    if (std::find(cache.begin(), cache.end(), keys[i]) != cache.end()) {
      hits++;
      continue;
    }
    if (cache.size() == c) {
      size_t victim = 0, furthest = 0;
      for (size_t j = 0; j < cache.size(); j++) {
        size_t next = i + 1;
        while (next < keys.size() && keys[next] != cache[j]) next++;
        if (next > furthest) furthest = next, victim = j;
      }
      cache.erase(cache.begin() + static_cast<std::ptrdiff_t>(victim));
    }
    cache.push_back(keys[i]);
  }
  return hits;
}

TEST(BeladyTest, AgreesWithTheObviousAlgorithm) {
  SeededRandom rng = SeededRandom::FromEnvironment("BeladyTest");
  for (uint64_t c : {1u, 2u, 5u, 16u}) {
    for (int t = 0; t < 20; t++) {
      std::vector<uint64_t> keys;
      const uint64_t range = 2 + rng.Uniform(40);
      for (int i = 0; i < 400; i++) keys.push_back(rng.Uniform(range));
      ASSERT_EQ(MinHits(keys, c), NaiveMinHits(keys, c)) << "c=" << c << " range=" << range;
    }
  }
  EXPECT_EQ(MinHits(Loop(10, 50), 4), NaiveMinHits(Loop(10, 50), 4));
  EXPECT_EQ(MinHits(Loop(10, 50), 10), 49u * 10u);
}

// LIRS on a loop longer than the cache: the first Llirs keys become LIR for
// good and hit once a round; the one HIR slot never hits.
TEST(LirsTest, LoopHitsLlirsARound) {
  LirsOptions o;
  o.cache_pages = 5;  // Lhirs = 1, Llirs = 4
  ASSERT_TRUE(o.Validate().ok());
  LirsSim lirs(o);
  EXPECT_EQ(Replay(lirs, Loop(10, 100)), 4u * 99u);
  EXPECT_EQ(lirs.lir_pages(), 4u);
  EXPECT_TRUE(lirs.CheckInvariants().ok());
  LruSim lru(5);
  EXPECT_EQ(Replay(lru, Loop(10, 100)), 0u);
}

// 2Q with c = 4 (Kin = 1, Kout = 2): a key seen twice within A1in's and
// A1out's reach reaches Am and survives a scan through A1in.
TEST(TwoQTest, SecondReferenceReachesAmAndSurvivesAScan) {
  TwoQOptions o;
  o.cache_pages = 4;
  ASSERT_TRUE(o.Validate().ok());
  TwoQSim q(o);
  // a: A1in. 1..4 fill; at 4 the cache is full and A1in (5 > Kin) sheds a
  // into A1out. a again: a ghost hit, to Am (a miss). Then a scan 10..19
  // passes through A1in only, and a still hits.
  std::vector<uint64_t> keys = {100, 1, 2, 3, 4, 100};
  for (uint64_t k = 10; k < 20; k++) keys.push_back(k);
  keys.push_back(100);
  EXPECT_EQ(Replay(q, keys), 1u);
  EXPECT_TRUE(q.CheckInvariants().ok());
}

// S3-FIFO with c = 10 (S = 1, M = 9): a key reused in S moves to M when S is
// full and survives; a key evicted from S unused comes back through G into M.
TEST(S3FifoTest, ReusedInSmallMovesToMainAndGhostHitsGoToMain) {
  S3FifoOptions o;
  o.cache_pages = 10;
  ASSERT_TRUE(o.Validate().ok());
  S3FifoSim s(o);
  std::vector<uint64_t> keys = {100, 100};               // hit 1
  for (uint64_t k = 1; k <= 10; k++) keys.push_back(k);  // at 10: 100 -> M, 1 -> G
  keys.push_back(100);                                   // hit 2 (in M)
  keys.push_back(1);                                     // G hit: a miss, into M
  keys.push_back(1);                                     // hit 3
  EXPECT_EQ(Replay(s, keys), 3u);
  EXPECT_EQ(s.ghosts(), 1u);  // 2 went to G when 1 came back
  EXPECT_TRUE(s.CheckInvariants().ok());
  LruSim lru(10);
  EXPECT_EQ(Replay(lru, keys), 2u);
}

// W-TinyLFU: a hot set seen five times, then a scan of ten times the cache
// of keys seen once: the scan's keys lose every duel, the hot set stays.
TEST(WTinyLfuTest, ScanDoesNotFlushAFrequentSet) {
  WTinyLfuOptions o;
  o.cache_pages = 1000;
  ASSERT_TRUE(o.Validate().ok());
  WTinyLfuSim w(o);
  std::vector<uint64_t> hot = Loop(500, 5);
  Replay(w, hot);
  for (uint64_t k = 0; k < 5000; k++) w.Access(1'000'000 + k);
  const uint64_t before = w.hits();
  for (uint64_t k = 0; k < 500; k++) w.Access(k);
  // A scan key whose four counters all collide with hot keys can win a duel
  // (the sketch's error); LRU would keep none of the hot set.
  EXPECT_GE(w.hits() - before, 495u);
  LruSim lru(1000);
  Replay(lru, hot);
  for (uint64_t k = 0; k < 5000; k++) lru.Access(1'000'000 + k);
  const uint64_t lru_before = lru.hits();
  for (uint64_t k = 0; k < 500; k++) lru.Access(k);
  EXPECT_EQ(lru.hits() - lru_before, 0u);
  EXPECT_TRUE(w.CheckInvariants().ok());
}

TEST(FrequencySketchTest, CountsSaturateAndAge) {
  FrequencySketch s(64, 10);  // ages after 640 increments
  for (int i = 0; i < 20; i++) s.Increment(7);
  EXPECT_EQ(s.Estimate(7), 15u);
  for (uint64_t k = 0; k < 620; k++) s.Increment(1000 + k);
  EXPECT_EQ(s.resets(), 1u);
  EXPECT_LE(s.Estimate(7), 8u);
  EXPECT_GE(s.Estimate(7), 7u);
}

// A skewed random trace: hot keys, a warm range and one-off scans.
std::vector<uint64_t> RandomTrace(SeededRandom& rng, size_t n) {
  std::vector<uint64_t> keys;
  while (keys.size() < n) {
    const uint64_t kind = rng.Uniform(10);
    if (kind < 5) {
      keys.push_back(rng.Uniform(50));
    } else if (kind < 9) {
      keys.push_back(100 + rng.Uniform(400));
    } else {
      const uint64_t start = 10'000 + rng.Uniform(1'000'000);
      for (uint64_t k = 0; k < 1 + rng.Uniform(60); k++) keys.push_back(start + k);
    }
  }
  return keys;
}

template <typename Sim, typename Opts>
void CheckEveryRequest(const std::vector<uint64_t>& keys, uint64_t c, uint64_t min_hits) {
  Opts o;
  o.cache_pages = c;
  ASSERT_TRUE(o.Validate().ok());
  Sim sim(o);
  for (size_t i = 0; i < keys.size(); i++) {
    sim.Access(keys[i]);
    Status s = sim.CheckInvariants();
    ASSERT_TRUE(s.ok()) << "request " << i << ": " << s.ToString();
    ASSERT_LE(sim.resident(), c);
  }
  EXPECT_LE(sim.hits(), min_hits) << "an online policy beat MIN";
}

TEST(PolicyInvariantsTest, RandomTracesKeepBoundsAndNeverBeatMin) {
  SeededRandom rng = SeededRandom::FromEnvironment("PolicyInvariantsTest");
  for (uint64_t c : {2u, 3u, 17u, 64u, 300u}) {
    SCOPED_TRACE("c=" + std::to_string(c));
    const std::vector<uint64_t> keys = RandomTrace(rng, 6000);
    const uint64_t min_hits = MinHits(keys, c);
    CheckEveryRequest<TwoQSim, TwoQOptions>(keys, c, min_hits);
    CheckEveryRequest<LirsSim, LirsOptions>(keys, c, min_hits);
    CheckEveryRequest<S3FifoSim, S3FifoOptions>(keys, c, min_hits);
    CheckEveryRequest<WTinyLfuSim, WTinyLfuOptions>(keys, c, min_hits);
    LruSim lru(c);
    EXPECT_LE(Replay(lru, keys), min_hits);
    ArcSim arc(c, 512);
    EXPECT_LE(Replay(arc, keys), min_hits);
  }
}

// FlatTable and FlatIndex filled to their bound and churned, long probe
// runs wrapping around the end of the array included: after every insert
// and erase each key is found exactly when a map holds it.
TEST(FlatIndexTest, AgreesWithAMapUnderChurn) {
  SeededRandom rng = SeededRandom::FromEnvironment("FlatIndexTest");
  struct Node {
    uint64_t k = 0;
    uint64_t key() const { return k; }
  };
  constexpr uint64_t kMaxEntries = 40;  // 64 slots
  arc::FixedPool<Node> pool(kMaxEntries);
  arc::FlatIndex<Node> index(kMaxEntries, &pool);
  arc::FlatTable<Node> table(kMaxEntries);
  std::unordered_map<uint64_t, Node*> map;
  auto key_of = [&](uint64_t i) { return i < 150 ? i : (i << 40) + 7; };
  for (int op = 0; op < 20000; op++) {
    const uint64_t key = key_of(rng.Uniform(200));
    auto it = map.find(key);
    if (it == map.end() && map.size() < kMaxEntries) {
      Node* n = pool.Get();
      n->k = key;
      index.Insert(n);
      table.Insert(key, n);
      map[key] = n;
    } else if (it != map.end()) {
      index.Erase(it->second);
      table.Erase(key);
      pool.Put(it->second);
      map.erase(it);
    }
    ASSERT_EQ(index.size(), map.size());
    ASSERT_EQ(pool.in_use(), map.size());
    for (uint64_t i = 0; i < 200; i++) {
      const uint64_t k = key_of(i);
      auto m = map.find(k);
      Node* want = m == map.end() ? nullptr : m->second;
      ASSERT_EQ(index.Find(k), want) << "op " << op << " key " << k;
      ASSERT_EQ(table.Find(k), want) << "op " << op << " key " << k;
    }
  }
}

TEST(PolicyOptionsTest, BadOptionsAreRejected) {
  EXPECT_FALSE(TwoQOptions{}.Validate().ok());
  EXPECT_FALSE((LirsOptions{.cache_pages = 1}).Validate().ok());
  EXPECT_FALSE((S3FifoOptions{.cache_pages = 10, .small_fraction = 1.0}).Validate().ok());
  EXPECT_FALSE((WTinyLfuOptions{.cache_pages = 10, .sample_multiple = 0}).Validate().ok());
  EXPECT_FALSE((BeladyOptions{.max_requests = 0}).Validate().ok());
}

// The curve's JSON holds any trace path, quotes, backslashes and control
// characters included, and gives back each cell's figures.
TEST(SimCurveJson, ParsesBackWithEveryCellAndAnyTracePath) {
  const std::string trace = std::string("dir/\"odd\"\\name\n\t") + '\x01' + ".trace";
  SimTableOptions o;
  o.base.page_bytes = 4096;
  o.policies = {SimPolicy::kLru, SimPolicy::kArc};
  o.cache_pages = {10, 20};
  std::vector<SimCell> cells;
  for (uint64_t pages : o.cache_pages) {
    for (SimPolicy policy : o.policies) {
      SimCell c;
      c.policy = policy;
      c.cache_pages = pages;
      c.result.requests = 1000;
      c.result.hits = pages * (policy == SimPolicy::kArc ? 3 : 2);
      cells.push_back(c);
    }
  }
  const std::string text = FormatSimCurveJson(trace, o, cells);
  nlohmann::json doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["trace"], trace);
  EXPECT_EQ(doc["page_bytes"], 4096);
  ASSERT_EQ(doc["curve"].size(), cells.size());
  for (size_t i = 0; i < cells.size(); i++) {
    const nlohmann::json& row = doc["curve"][i];
    EXPECT_EQ(row["policy"], std::string(SimPolicyName(cells[i].policy)));
    EXPECT_EQ(row["cache_pages"], cells[i].cache_pages);
    EXPECT_EQ(row["hits"], cells[i].result.hits);
    EXPECT_EQ(row["requests"], 1000);
    EXPECT_DOUBLE_EQ(row["ratio"].get<double>(), cells[i].result.hit_ratio());
  }
}

}  // namespace
}  // namespace arcstore::sim
