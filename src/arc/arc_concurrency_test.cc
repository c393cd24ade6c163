// The ARC under 2-8 threads of hits, misses, fills, abandons, holds, anon
// buffers and publishes, with the background evictor running and a control
// thread moving c (pressure ticks, caps) and a handle-cache double sized
// from c. At quiescent points (every thread parked at a barrier, the
// evictor idle) every accounting invariant is checked. Labelled
// `concurrency`: CI runs it under TSan. ARCSTORE_SEED=N replays the
// choices (not the interleaving).
//
// SizeNeverPassesTheSevereLine: 16 threads missing and allocating at once
// (128 KiB and 4 KiB buffers, fills and anon buffers, each released soon)
// against a fixed c, while a sampler reads size without pause: size is
// never above c + 1.5 ovf, at any sample or right after any allocation
// (the reservation is one compare-and-swap; before it, every allocator
// passed the check and then added its bytes).
#include <gtest/gtest.h>

#include <atomic>
#include <barrier>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "arc/arc.h"
#include "base/random.h"
#include "testing/fake_memory_monitor.h"
#include "testing/arc_test_policy.h"

namespace arcstore::arc {
namespace {

ArcKey RandomKey(SeededRandom& rng, uint64_t universe) {
  const uint64_t id = rng.OneIn(2) ? rng.Uniform(universe / 16 + 1) : rng.Uniform(universe);
  return ArcKey{id % 3 + 1, id / 3, static_cast<uint32_t>(id % 2)};
}

uint64_t SizeOf(const ArcKey& k) {
  return 512 * (1 + ((k.block_id * 3 + k.volume_guid) * 2654435761u) % 64);
}

HolderKind RandomHolder(SeededRandom& rng) {
  static constexpr HolderKind kinds[] = {HolderKind::kNbdRequest, HolderKind::kApiUser,
                                         HolderKind::kSyncWrite, HolderKind::kHandleCache};
  return kinds[rng.Uniform(4)];
}

void Fill(std::span<uint8_t> buf, uint8_t b) { std::fill(buf.begin(), buf.end(), b); }

// Every byte of a buffer is the same: a torn or freed buffer shows.
void ExpectWhole(const ArcHold& h) {
  auto d = h.data();
  ASSERT_EQ(d.front(), d.back()) << h.key().ToString();
}

// A handle cache double: holds of kind handle_cache up to c/32.
class Handles {
 public:
  explicit Handles(Arc* arc)
      : target_(arc->target_bytes() / 32), sub_(arc->SubscribeTarget([this](uint64_t c) {
          std::lock_guard<std::mutex> l(mu_);
          target_ = c / 32;
          Trim();
        })) {}
  ~Handles() { sub_ = Arc::Subscription(); }
  void Add(ArcHold h) {
    std::lock_guard<std::mutex> l(mu_);
    bytes_ += h.bytes();
    lru_.push_back(std::move(h));
    Trim();
  }
  void Clear() {
    std::lock_guard<std::mutex> l(mu_);
    lru_.clear();
    bytes_ = 0;
  }

 private:
  void Trim() {
    while (bytes_ > target_ && !lru_.empty()) {
      bytes_ -= lru_.front().bytes();
      lru_.pop_front();
    }
  }
  std::mutex mu_;
  uint64_t target_;
  uint64_t bytes_ = 0;
  std::deque<ArcHold> lru_;
  Arc::Subscription sub_;
};

void Worker(Arc* arc, Handles* handles, SeededRandom rng, uint64_t universe, int rounds,
            int ops_per_round, std::barrier<>* pause, std::barrier<>* resume) {
  std::vector<ArcHold> holds;
  for (int round = 0; round < rounds; round++) {
    for (int i = 0; i < ops_per_round; i++) {
      const uint64_t op = rng.Uniform(100);
      if (op < 60) {
        const ArcKey key = RandomKey(rng, universe);
        LookupOptions lo{.bytes = SizeOf(key),
                         .kind = key.level == 1 ? BufKind::kMetadata : BufKind::kData,
                         .holder = RandomHolder(rng),
                         .access = rng.OneIn(8) ? AccessKind::kPrefetch : AccessKind::kDemand};
        LookupResult r = arc->Lookup(key, lo);
        if (!r.hit()) {
          if (rng.OneIn(6)) {
            if (rng.OneIn(2)) r.fill.buffer();
            r.fill.Abandon();  // a failed read
            continue;
          }
          Fill(r.fill.buffer(), static_cast<uint8_t>(rng.Next()));
          r.hold = r.fill.Finish();
        }
        ExpectWhole(r.hold);
        if (lo.holder == HolderKind::kHandleCache) {
          handles->Add(std::move(r.hold));
        } else if (holds.size() < 8 && rng.OneIn(3)) {
          holds.push_back(std::move(r.hold));
        }
      } else if (op < 70 && !holds.empty()) {
        holds.erase(holds.begin() + static_cast<ptrdiff_t>(rng.Uniform(holds.size())));
      } else if (op < 75 && !holds.empty() && holds.size() < 8) {
        holds.push_back(holds[rng.Uniform(holds.size())].Clone(RandomHolder(rng)));
      } else if (op < 90) {
        const ArcKey key = RandomKey(rng, universe);
        ArcHold dirty = arc->AllocateAnon(SizeOf(key), BufKind::kData, HolderKind::kDirtyRecord);
        Fill(dirty.mutable_data(), static_cast<uint8_t>(rng.Next()));
        if (rng.OneIn(5)) continue;  // dropped before its txg synced
        ArcHold pub = arc->Publish(std::move(dirty), key);
        ExpectWhole(pub);
      } else if (op < 91) {
        arc->RemoveVolume(rng.Range(1, 3));
      } else if (!holds.empty()) {
        for (const ArcHold& h : holds) ExpectWhole(h);
      }
    }
    if (rng.OneIn(2)) holds.clear();
    pause->arrive_and_wait();   // parked: the checker runs
    resume->arrive_and_wait();
  }
}

TEST(ArcConcurrencyTest, InvariantsHoldAtQuiescentPoints) {
  SeededRandom rng = SeededRandom::FromEnvironment("ArcConcurrencyTest");
  const int threads = static_cast<int>(rng.Range(2, 8));
  const int rounds = static_cast<int>(ScaledIterations(40));
  const int ops = 1000;
  testing::FakeMemoryMonitor mon(256 * kMiB);
  stats::Registry registry;
  SystemClock clock;
  ArcOptions o;
  o.c_max_bytes = rng.Range(1, 8) * kMiB;
  o.c_min_bytes = 512 * kKiB;
  o.hash_shards = 1u << rng.Uniform(7);
  o.list_sublists = static_cast<uint32_t>(rng.Range(1, 4));
  o.min_residence_ns = rng.OneIn(2) ? 0 : 1'000'000;
  o.evict_batch = static_cast<uint32_t>(rng.Range(1, 64));
  o.monitor_interval_ns = 0;  // the control thread ticks
  o.grow_holdoff_ns = 10'000'000;
  o.initial_largest_bytes = 32 * kKiB;
  // Workers park at the barriers holding handles, so an allocation may find
  // nothing evictable until the next round: a short wait for a release.
  o.stuck_wait_ns = 1'000'000;
  std::fprintf(stderr, "threads=%d shards=%u sublists=%u c_max=%llu\n", threads, o.hash_shards,
               o.list_sublists, static_cast<unsigned long long>(o.c_max_bytes));
  testing::ApplyTestArcPolicy(&o);
  auto created = Arc::Create(o, ArcEnv{&clock, &mon, &registry});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Arc> arc = std::move(*created);
  const uint64_t universe = rng.Range(64, 4000);
  {
    Handles handles(arc.get());
    // Workers, the control thread and this checker meet at two barriers per
    // round: `pause` (everyone parked), then `resume`.
    std::barrier<> pause(threads + 2), resume(threads + 2);
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; t++) {
      workers.emplace_back(Worker, arc.get(), &handles, rng.Fork(), universe, rounds, ops, &pause,
                           &resume);
    }
    std::thread control([&, crng = rng.Fork()]() mutable {
      for (int round = 0; round < rounds; round++) {
        // Move c around while the workers run, until they park.
        for (int step = 0; step < 20; step++) {
          const uint64_t op = crng.Uniform(10);
          if (op < 5) {
            mon.SetPressure(crng.OneIn(3), "psi some avg10 25.0% > 10%");
            arc->Tick();
          } else if (op < 7) {
            arc->SetMaxBytes(crng.OneIn(2) ? 0 : crng.Range(1, 8) * kMiB);
          } else {
            std::this_thread::sleep_for(std::chrono::microseconds(crng.Uniform(300)));
          }
        }
        pause.arrive_and_wait();
        resume.arrive_and_wait();
      }
    });
    for (int round = 0; round < rounds; round++) {
      pause.arrive_and_wait();
      arc->WaitEvictorIdle();
      Status s = arc->CheckInvariants();
      EXPECT_TRUE(s.ok()) << "round " << round << ": " << s.ToString();
      resume.arrive_and_wait();
    }
    for (auto& w : workers) w.join();
    control.join();
    handles.Clear();
  }
  arc->WaitEvictorIdle();
  Status s = arc->CheckInvariants();
  EXPECT_TRUE(s.ok()) << s.ToString();
  ArcSizes z = arc->Sizes();
  for (int k = 0; k < kNumHolderKinds; k++) EXPECT_EQ(z.held_bytes[k], 0u) << k;
  stats::Snapshot snap = registry.TakeSnapshot();
  std::fprintf(stderr, "hits=%lld iohits=%lld misses=%lld evict_passes=%lld no_progress=%lld waits=%lld "
               "c_changes_pressure=%lld grow=%lld\n",
               (long long)snap.Get("arcstats", "hits"), (long long)snap.Get("arcstats", "iohits"),
               (long long)snap.Get("arcstats", "misses"), (long long)snap.Get("arcstats", "evict_passes"),
               (long long)snap.Get("arcstats", "evict_passes_no_progress"),
               (long long)snap.Get("arcstats", "evict_waits"),
               (long long)snap.Get("arcstats", "c_changes_pressure"),
               (long long)snap.Get("arcstats", "c_changes_grow"));
  EXPECT_GT(snap.Get("arcstats", "hits"), 0);
}

TEST(ArcConcurrencyTest, SizeNeverPassesTheSevereLine) {
  SeededRandom rng = SeededRandom::FromEnvironment("ArcSevereLineTest");
  constexpr int kThreads = 16;
  const int ops = static_cast<int>(ScaledIterations(3000));
  testing::FakeMemoryMonitor mon(1 * kGiB);
  stats::Registry registry;
  SystemClock clock;
  ArcOptions o;
  o.c_max_bytes = 8 * kMiB;
  o.c_min_bytes = 8 * kMiB;
  o.monitor_interval_ns = 0;
  o.min_residence_ns = 0;
  o.initial_largest_bytes = 128 * kKiB;
  o.evict_batch = static_cast<uint32_t>(rng.Range(1, 64));
  o.hash_shards = 1u << rng.Uniform(7);
  testing::ApplyTestArcPolicy(&o);
  auto created = Arc::Create(o, ArcEnv{&clock, &mon, &registry});
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<Arc> arc = std::move(*created);
  // ovf = max(largest record, c / 256) = 128 KiB.
  const uint64_t bound = 8 * kMiB + 3 * 128 * kKiB / 2;
  std::atomic<uint64_t> max_seen{0};
  std::atomic<uint64_t> samples{0};
  std::atomic<bool> stop{false};
  auto note = [&](uint64_t size) {
    uint64_t m = max_seen.load(std::memory_order_relaxed);
    while (size > m && !max_seen.compare_exchange_weak(m, size, std::memory_order_relaxed)) {
    }
  };
  std::thread sampler([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      note(arc->size_bytes());
      samples.fetch_add(1, std::memory_order_relaxed);
    }
  });
  std::vector<std::thread> workers;
  for (int t = 0; t < kThreads; t++) {
    workers.emplace_back([&, wrng = rng.Fork(), t]() mutable {
      for (int i = 0; i < ops; i++) {
        const uint64_t bytes = wrng.OneIn(4) ? 4 * kKiB : 128 * kKiB;
        if (wrng.OneIn(3)) {
          ArcHold h = arc->AllocateAnon(bytes, BufKind::kData, HolderKind::kDirtyRecord);
          note(arc->size_bytes());
          h.mutable_data()[0] = 1;
          if (wrng.OneIn(2)) arc->Publish(std::move(h), ArcKey{2, uint64_t(t) << 32 | uint64_t(i), 0});
          continue;
        }
        const ArcKey key{1, wrng.Uniform(4096), 0};
        LookupResult r = arc->Lookup(key, {.bytes = 128 * kKiB});
        if (!r.hit()) {
          r.fill.buffer()[0] = 1;
          note(arc->size_bytes());
          r.hold = r.fill.Finish();
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  stop = true;
  sampler.join();
  arc->WaitEvictorIdle();
  stats::Snapshot snap = registry.TakeSnapshot();
  std::fprintf(stderr, "samples=%llu max size=%llu bound=%llu evict_waits=%lld reserve_forced=%lld\n",
               static_cast<unsigned long long>(samples.load()),
               static_cast<unsigned long long>(max_seen.load()), static_cast<unsigned long long>(bound),
               static_cast<long long>(snap.Get("arcstats", "evict_waits")),
               static_cast<long long>(snap.Get("arcstats", "reserve_forced")));
  EXPECT_LE(max_seen.load(), bound) << "size passed c + 1.5 ovf";
  EXPECT_EQ(snap.Get("arcstats", "reserve_forced"), 0) << "nothing was pinned: no allocation may be forced";
  EXPECT_GT(snap.Get("arcstats", "evict_waits"), 0) << "the allocators never reached the SEVERE line";
  Status s = arc->CheckInvariants();
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace arcstore::arc
