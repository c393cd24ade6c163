// Randomized single-threaded sequences against the engine's ARC: lookups
// that hit, miss, fill, abandon; holds of every kind taken and released;
// anon buffers published; volumes removed; pressure ticks, caps, eviction
// passes, time moving. Every accounting invariant is checked after every
// operation. The seed is printed; ARCSTORE_SEED=N replays a failure.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <vector>

#include "arc/arc.h"
#include "base/random.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "testing/arc_test_policy.h"

namespace arcstore::arc {
namespace {

struct Model {
  explicit Model(uint64_t seed) : rng(seed) {}
  SeededRandom rng;
  std::vector<ArcHold> holds;
  std::vector<FillToken> tokens;        // outstanding fills (never looked up again while open)
  std::map<uint64_t, uint8_t> fill_byte;  // key id -> the byte its data was filled with
};

ArcKey KeyOf(uint64_t id) { return ArcKey{id % 3 + 1, id / 3, static_cast<uint32_t>(id % 2)}; }
uint64_t IdOf(const ArcKey& k) { return k.block_id * 3 + (k.volume_guid - 1); }

HolderKind RandomHolder(SeededRandom& rng) {
  static constexpr HolderKind kinds[] = {HolderKind::kHandleCache, HolderKind::kNbdRequest,
                                         HolderKind::kApiUser, HolderKind::kSyncWrite};
  return kinds[rng.Uniform(4)];
}

bool TokenOpen(const Model& m, const ArcKey& key) {
  for (const FillToken& t : m.tokens) {
    if (t && t.key() == key) return true;
  }
  return false;
}

void RunSequence(uint64_t seed, int ops) {
  Model m(seed);
  SeededRandom& rng = m.rng;
  testing::ManualClock clock;
  testing::FakeMemoryMonitor mon(rng.Range(64, 512) * kMiB);
  stats::Registry registry;
  ArcOptions o;
  o.evictor = EvictorMode::kInline;
  o.monitor_interval_ns = 0;
  o.c_max_bytes = rng.Range(1, 8) * kMiB;
  o.c_min_bytes = rng.Range(128, 1024) * kKiB;
  o.hash_shards = 1u << rng.Uniform(5);
  o.list_sublists = static_cast<uint32_t>(rng.Range(1, 4));
  o.min_residence_ns = rng.OneIn(2) ? 0 : 62'000'000;
  o.p_min_shift = rng.OneIn(2) ? 0 : 4;
  o.evict_batch = static_cast<uint32_t>(rng.Range(1, 64));
  o.initial_largest_bytes = 4 * kKiB;
  testing::ApplyTestArcPolicy(&o);
  auto created = Arc::Create(o, ArcEnv{&clock, &mon, &registry});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Arc> arc = std::move(*created);
  const uint64_t universe = rng.Range(16, 2000);
  const size_t max_holds = rng.Range(2, 40);

  for (int i = 0; i < ops; i++) {
    uint64_t op = rng.Uniform(100);
    if (m.holds.size() > max_holds) op = 60;  // release one
    std::string what;
    if (op < 45) {  // lookup
      const uint64_t id = rng.OneIn(2) ? rng.Uniform(universe / 16 + 1) : rng.Uniform(universe);
      const ArcKey key = KeyOf(id);
      if (TokenOpen(m, key)) continue;
      what = "lookup " + key.ToString();
      LookupOptions lo;
      lo.bytes = 512 * (1 + (id * 2654435761u) % 64);  // each block keeps its size
      lo.kind = rng.OneIn(4) ? BufKind::kMetadata : BufKind::kData;
      lo.holder = RandomHolder(rng);
      lo.access = rng.OneIn(5) ? AccessKind::kPrefetch : AccessKind::kDemand;
      LookupResult r = arc->Lookup(key, lo);
      if (r.hit()) {
        ASSERT_TRUE(m.fill_byte.count(id)) << what;
        ASSERT_EQ(r.hold.data()[0], m.fill_byte[id]) << what;
        if (rng.OneIn(2)) m.holds.push_back(std::move(r.hold));
      } else {
        const uint64_t choice = rng.Uniform(10);
        if (choice < 6) {
          auto buf = r.fill.buffer();
          const uint8_t b = static_cast<uint8_t>(rng.Next());
          std::fill(buf.begin(), buf.end(), b);
          m.fill_byte[id] = b;
          ArcHold h = r.fill.Finish();
          if (rng.OneIn(2)) m.holds.push_back(std::move(h));
        } else if (choice < 8) {
          if (rng.OneIn(2)) r.fill.buffer();
          m.tokens.push_back(std::move(r.fill));  // finished or dropped later
        }  // else: abandoned right away
      }
    } else if (op < 55 && !m.tokens.empty()) {  // finish or drop an open fill
      const size_t t = rng.Uniform(m.tokens.size());
      FillToken tok = std::move(m.tokens[t]);
      m.tokens.erase(m.tokens.begin() + static_cast<ptrdiff_t>(t));
      what = "finish/abandon fill";
      if (rng.OneIn(3)) {
        tok.Abandon();
      } else {
        const uint64_t id = IdOf(tok.key());
        auto buf = tok.buffer();
        const uint8_t b = static_cast<uint8_t>(rng.Next());
        std::fill(buf.begin(), buf.end(), b);
        ArcHold h = tok.Finish(RandomHolder(rng));
        m.fill_byte[id] = b;  // a version removed meanwhile still reads this byte
        if (rng.OneIn(2)) m.holds.push_back(std::move(h));
      }
    } else if (op < 70 && !m.holds.empty()) {  // release or clone a hold
      const size_t h = rng.Uniform(m.holds.size());
      if (rng.OneIn(4)) {
        what = "clone hold";
        m.holds.push_back(m.holds[h].Clone(RandomHolder(rng)));
      } else {
        what = "release hold";
        m.holds.erase(m.holds.begin() + static_cast<ptrdiff_t>(h));
      }
    } else if (op < 78) {  // a dirty record, published or dropped
      what = "anon";
      ArcHold a = arc->AllocateAnon(512 * rng.Range(1, 64),
                                    rng.OneIn(4) ? BufKind::kMetadata : BufKind::kData,
                                    HolderKind::kDirtyRecord);
      const uint8_t b = static_cast<uint8_t>(rng.Next());
      std::fill(a.mutable_data().begin(), a.mutable_data().end(), b);
      const uint64_t id = rng.Uniform(universe);
      if (rng.OneIn(4) || TokenOpen(m, KeyOf(id))) {
        m.holds.push_back(std::move(a));  // still dirty
      } else {
        ArcHold pub = arc->Publish(std::move(a), KeyOf(id));
        m.fill_byte[id] = b;
        if (rng.OneIn(2)) m.holds.push_back(std::move(pub));
      }
    } else if (op < 82) {
      what = "eviction pass";
      arc->RunEvictionPass();
    } else if (op < 86) {
      what = "tick";
      if (rng.OneIn(6)) {
        mon.SetPressure(true, "random pressure");
      } else {
        mon.SetPressure(false);
      }
      if (rng.OneIn(8)) mon.SetLimit(rng.Range(64, 512) * kMiB);
      arc->Tick();
    } else if (op < 88) {
      what = "cap";
      arc->SetMaxBytes(rng.OneIn(3) ? 0 : rng.Range(512, 8192) * kKiB);
    } else if (op < 90) {
      what = "remove volume";
      arc->RemoveVolume(rng.Range(1, 3));
    } else {
      what = "time";
      clock.AdvanceNs(rng.Uniform(200) * kNsPerMs);
      continue;
    }
    Status s = arc->CheckInvariants();
    ASSERT_TRUE(s.ok()) << "seed " << seed << " op " << i << " (" << what << "): " << s.ToString();
  }
  if (getenv("ARC_RANDOM_VERBOSE")) {
    stats::Snapshot snap = registry.TakeSnapshot();
    for (const char* n : {"hits", "iohits", "misses", "mru_ghost_hits", "mfu_ghost_hits", "deleted", "evict_passes",
                          "evict_freed_bytes", "evict_skip", "evict_passes_no_progress", "evict_waits",
                          "c_changes_pressure", "c_changes_grow", "c_changes_shrink_stopped", "fills_abandoned", "p", "c", "size"}) {
      fprintf(stderr, "%s=%lld ", n, (long long)snap.Get("arcstats", n));
    }
    fprintf(stderr, "\n");
  }
  m.tokens.clear();
  m.holds.clear();
  Status s = arc->CheckInvariants();
  ASSERT_TRUE(s.ok()) << "seed " << seed << " at the end: " << s.ToString();
  ArcSizes z = arc->Sizes();
  for (int k = 0; k < kNumHolderKinds; k++) EXPECT_EQ(z.held_bytes[k], 0u);
  EXPECT_EQ(z.state_size[static_cast<int>(ArcState::kAnon)][0] + z.state_size[static_cast<int>(ArcState::kAnon)][1], 0u);
}

TEST(ArcRandomTest, InvariantsAfterEveryOperation) {
  SeededRandom seeds = SeededRandom::FromEnvironment("ArcRandomTest");
  const uint64_t rounds = ScaledIterations(30);
  for (uint64_t r = 0; r < rounds; r++) {
    const uint64_t seed = seeds.Next();
    SCOPED_TRACE("round seed " + std::to_string(seed));
    RunSequence(seed, 1500);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

}  // namespace
}  // namespace arcstore::arc
