// The ARC's eviction sink: what REPLACE evicts is offered, with its key,
// origin, kind, prefetch mark and bytes, before its memory is freed; what is
// dropped (a newer version published, a volume removed) or has no known
// origin is not; SetEvictionSink waits for the calls in progress.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "arc/arc.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "testing/arc_test_policy.h"

namespace arcstore::arc {
namespace {

struct Offered {
  ArcKey key;
  ArcOrigin origin;
  BufKind kind;
  bool prefetched;
  std::vector<uint8_t> bytes;
};

class RecordingSink final : public EvictionSink {
 public:
  void OnEvict(const ArcKey& key, const ArcOrigin& origin, BufKind kind, bool prefetched,
               std::span<const uint8_t> data) override {
    std::lock_guard<std::mutex> l(mu);
    offered.push_back({key, origin, kind, prefetched, {data.begin(), data.end()}});
  }
  std::mutex mu;
  std::vector<Offered> offered;
};

class ArcEvictionSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ArcOptions o;
    o.c_max_bytes = 1 * kMiB;
    o.c_min_bytes = 256 * kKiB;
    o.min_residence_ns = 0;
    o.p_min_shift = 0;
    o.initial_largest_bytes = 4096;
    o.evictor = EvictorMode::kManual;
    o.monitor_interval_ns = 0;
    testing::ApplyTestArcPolicy(&o);
    auto a = Arc::Create(o, ArcEnv{&clock_, &mon_, &registry_});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    arc_ = std::move(*a);
  }
  void TearDown() override {
    if (arc_) arc_->SetEvictionSink(nullptr);
  }
  // Fills `key` (4 KiB of `fill`) with origin `origin`, then lets go of it.
  void Fill(const ArcKey& key, const ArcOrigin& origin, uint8_t fill,
            AccessKind access = AccessKind::kDemand) {
    LookupResult r = arc_->Lookup(key, {.bytes = 4096, .access = access});
    ASSERT_FALSE(r.hit()) << key.ToString();
    auto buf = r.fill.buffer();
    std::fill(buf.begin(), buf.end(), fill);
    r.fill.set_origin(origin);
    (void)r.fill.Finish();
  }
  // Shrinks c to its floor and evicts down to it.
  void EvictAll() {
    arc_->SetMaxBytes(256 * kKiB);
    arc_->RunEvictionPass();
  }

  testing::ManualClock clock_;
  testing::FakeMemoryMonitor mon_{4 * kGiB};
  stats::Registry registry_;
  std::unique_ptr<Arc> arc_;
};

TEST_F(ArcEvictionSinkTest, EvictedBuffersAreOfferedWithKeyOriginAndBytes) {
  RecordingSink sink;
  arc_->SetEvictionSink(&sink);
  // 200 x 4 KiB = 800 KiB: fits 1 MiB, not the 256 KiB floor.
  for (uint64_t b = 0; b < 200; b++) Fill(ArcKey{7, b, 0}, ArcOrigin{1000 + b, 5}, uint8_t(b));
  EXPECT_TRUE(sink.offered.empty());  // nothing evicted yet
  EvictAll();
  ASSERT_GE(sink.offered.size(), 100u);
  for (const Offered& o : sink.offered) {
    EXPECT_EQ(o.key.volume_guid, 7u);
    EXPECT_EQ(o.origin.where, 1000 + o.key.block_id);
    EXPECT_EQ(o.origin.birth, 5u);
    EXPECT_EQ(o.kind, BufKind::kData);
    EXPECT_FALSE(o.prefetched);
    ASSERT_EQ(o.bytes.size(), 4096u);
    EXPECT_EQ(o.bytes[0], uint8_t(o.key.block_id));
    EXPECT_EQ(o.bytes[4095], uint8_t(o.key.block_id));
    EXPECT_FALSE(arc_->Cached(o.key)) << "offered but still cached: " << o.key.ToString();
  }
  EXPECT_TRUE(arc_->CheckInvariants().ok());
}

TEST_F(ArcEvictionSinkTest, BuffersWithoutOriginAreNotOffered) {
  RecordingSink sink;
  arc_->SetEvictionSink(&sink);
  for (uint64_t b = 0; b < 200; b++) {
    Fill(ArcKey{7, b, 0}, b % 2 == 0 ? ArcOrigin{b, 9} : ArcOrigin{}, 1);
  }
  EvictAll();
  ASSERT_GE(sink.offered.size(), 40u);
  for (const Offered& o : sink.offered) {
    EXPECT_EQ(o.key.block_id % 2, 0u) << "offered without an origin: " << o.key.ToString();
    EXPECT_TRUE(o.origin.known());
  }
}

TEST_F(ArcEvictionSinkTest, PublishedOriginIsOfferedAndAReplacedVersionIsNot) {
  RecordingSink sink;
  arc_->SetEvictionSink(&sink);
  const ArcKey key{3, 1, 0};
  ArcHold v1 = arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord);
  std::fill(v1.mutable_data().begin(), v1.mutable_data().end(), 1);
  v1 = arc_->Publish(std::move(v1), key, ArcOrigin{50, 10});
  v1.Reset();
  ArcHold v2 = arc_->AllocateAnon(4096, BufKind::kData, HolderKind::kDirtyRecord);
  std::fill(v2.mutable_data().begin(), v2.mutable_data().end(), 2);
  v2 = arc_->Publish(std::move(v2), key, ArcOrigin{60, 11});  // drops version 1
  v2.Reset();
  for (uint64_t b = 10; b < 210; b++) Fill(ArcKey{3, b, 0}, ArcOrigin{b, 12}, 0);
  EvictAll();
  int seen = 0;
  for (const Offered& o : sink.offered) {
    if (!(o.key == key)) continue;
    seen++;
    EXPECT_EQ(o.origin, (ArcOrigin{60, 11}));
    EXPECT_EQ(o.bytes[0], 2);
  }
  EXPECT_EQ(seen, 1);  // version 2 once; version 1 never
}

TEST_F(ArcEvictionSinkTest, PrefetchedUntilADemandHit) {
  RecordingSink sink;
  arc_->SetEvictionSink(&sink);
  Fill(ArcKey{4, 0, 0}, ArcOrigin{1, 1}, 0, AccessKind::kPrefetch);  // never asked for
  Fill(ArcKey{4, 1, 0}, ArcOrigin{2, 1}, 0, AccessKind::kPrefetch);  // then a demand hit
  {
    LookupResult r = arc_->Lookup(ArcKey{4, 1, 0}, {.bytes = 4096});
    ASSERT_TRUE(r.hit());
  }
  // Fillers hit after it: in MFU, block 1 is the least recent.
  for (uint64_t b = 10; b < 210; b++) {
    Fill(ArcKey{4, b, 0}, ArcOrigin{b, 1}, 0);
    ASSERT_TRUE(arc_->Lookup(ArcKey{4, b, 0}, {.bytes = 4096}).hit());
  }
  EvictAll();
  int found = 0;
  for (const Offered& o : sink.offered) {
    if (o.key.block_id == 0) {
      EXPECT_TRUE(o.prefetched);
      found++;
    }
    if (o.key.block_id == 1) {
      EXPECT_FALSE(o.prefetched);
      found++;
    }
  }
  EXPECT_EQ(found, 2);
}

// A sink that blocks inside OnEvict until released.
class BlockingSink final : public EvictionSink {
 public:
  void OnEvict(const ArcKey&, const ArcOrigin&, BufKind, bool, std::span<const uint8_t>) override {
    std::unique_lock<std::mutex> l(mu);
    if (calls++ == 0) {
      entered = true;
      cv.notify_all();
      cv.wait(l, [&] { return released; });
      replaced_while_inside = replaced.load();
    }
  }
  std::mutex mu;
  std::condition_variable cv;
  int calls = 0;
  bool entered = false, released = false;
  std::atomic<bool> replaced{false};
  bool replaced_while_inside = true;
};

TEST_F(ArcEvictionSinkTest, SetEvictionSinkWaitsForTheCallInProgress) {
  BlockingSink sink;
  arc_->SetEvictionSink(&sink);
  for (uint64_t b = 0; b < 200; b++) Fill(ArcKey{5, b, 0}, ArcOrigin{b, 1}, 0);
  std::thread evictor([&] { EvictAll(); });
  {
    std::unique_lock<std::mutex> l(sink.mu);
    sink.cv.wait(l, [&] { return sink.entered; });
  }
  std::thread setter([&] {
    arc_->SetEvictionSink(nullptr);
    sink.replaced = true;
  });
  {
    std::lock_guard<std::mutex> l(sink.mu);
    sink.released = true;
  }
  sink.cv.notify_all();
  setter.join();
  evictor.join();
  EXPECT_FALSE(sink.replaced_while_inside);  // the setter returned only after the call
  EXPECT_TRUE(sink.replaced);
}

}  // namespace
}  // namespace arcstore::arc
