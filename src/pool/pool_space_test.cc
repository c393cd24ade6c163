// Pool space under copy-on-write (pool/space_admission.cc): a pool mostly
// full of live data is rewritten end to end without a write failing, the
// syncs that make room are recorded with reason `space`, and a pool truly
// full of live data refuses new data with a message that says why.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

constexpr uint32_t kRecord = 128 * 1024;

class SpaceTest : public ::testing::TestWithParam<uint32_t> {
 protected:
  void SetUp() override {
    io::MemoryDeviceOptions o;
    o.size_bytes = kDeviceBytes;
    dev_ = *io::MemoryDevice::Create(o);
    ASSERT_TRUE(PoolImpl::Format(dev_.get(), "space").ok());
    Reopen();
  }
  void Reopen() {
    if (pool_) ASSERT_TRUE(pool_->Close().ok());
    pool_.reset();
    PoolOptions po;
    // Only space ends a txg (or a test's Sync): no timeout, no dirty
    // threshold, no log kicks within reach.
    po.txg_timeout_ns = 600 * kNsPerSec;
    po.dirty_max_bytes = 4 * kGiB;
    // c fixed at 1 GiB: the ARC's dirty limit (c/2, kick at 30% of it) is
    // out of reach too.
    po.arc_max_bytes = 1 * kGiB;
    po.arc_min_bytes = 1 * kGiB;
    po.intent_log_sync_kick_percent = 0;
    po.space_sync_kick_percent = GetParam();
    po.work_threads = 0;
    auto p = PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(dev_.get()), po);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
  }
  std::shared_ptr<Volume> MakeVolume(uint64_t size_bytes, uint32_t record_bytes = kRecord) {
    VolumeOptions vo;
    vo.name = "vol";
    vo.size_bytes = size_bytes;
    vo.record_size_bytes = record_bytes;
    vo.compression = "off";
    Status s = pool_->CreateVolume(vo);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return *pool_->OpenVolume("vol");
  }
  int64_t Stat(const char* name) { return pool_->stats().TakeSnapshot().Get("txg", name); }
  void ExpectClean() {
    PoolImpl::Census c = pool_->Check();
    for (const auto& p : c.problems) ADD_FAILURE() << p;
  }

  static constexpr uint64_t kDeviceBytes = 128 * kMiB;
  std::unique_ptr<io::MemoryDevice> dev_;
  std::unique_ptr<PoolImpl> pool_;
};

// A volume of 104 MiB on a 128 MiB device (the pool's free space after
// the intent log arena and the reserve is about 13 MiB more than the
// volume): every rewrite needs the frees of earlier txgs.
TEST_P(SpaceTest, ANearlyFullPoolIsRewrittenEndToEndWithoutAFailedWrite) {
  constexpr uint64_t kVolumeBytes = 104 * kMiB;
  auto v = MakeVolume(kVolumeBytes);
  SeededRandom rnd(GetParam() + 17);
  std::vector<uint8_t> model(kVolumeBytes);
  rnd.Fill(model.data(), model.size());
  for (uint64_t off = 0; off < kVolumeBytes; off += kMiB) {
    ASSERT_TRUE(v->Write(off, std::span(model.data() + off, kMiB)).ok()) << "fill at " << off;
  }
  // The fill commits: each pass's new copies then need the frees of the
  // txg before (a pass rewritten in the fill's txg would take no space).
  ASSERT_TRUE(pool_->Sync().ok());
  const uint64_t passes = ScaledIterations(4);
  for (uint64_t pass = 0; pass < passes; pass++) {
    if (pass % 2 == 0) {
      // Whole records, 1 MiB at a time.
      for (uint64_t off = 0; off < kVolumeBytes; off += kMiB) {
        rnd.Fill(model.data() + off, kMiB);
        Status s = v->Write(off, std::span(model.data() + off, kMiB));
        ASSERT_TRUE(s.ok()) << "pass " << pass << " at " << off << ": " << s.ToString();
      }
    } else {
      // 8 KiB inside every record: each dirties a whole record, completed
      // from the committed one at sync.
      for (uint64_t rec = 0; rec < kVolumeBytes / kRecord; rec++) {
        const uint64_t off = rec * kRecord + (rec * 8192 + pass * 4096) % (kRecord - 8192);
        rnd.Fill(model.data() + off, 8192);
        Status s = v->Write(off, std::span(model.data() + off, 8192));
        ASSERT_TRUE(s.ok()) << "pass " << pass << " at " << off << ": " << s.ToString();
      }
    }
  }
  EXPECT_GT(Stat("syncs_space"), 0);
  for (const char* other : {"syncs_timeout", "syncs_dirty_threshold"}) {
    EXPECT_EQ(Stat(other), 0) << other;
  }
  EXPECT_EQ(Stat("space_refusals"), 0);
  if (GetParam() == 0) {
    EXPECT_GT(Stat("space_waits"), 0) << "without the early kick, writers wait for room";
    EXPECT_EQ(Stat("space_kicks"), 0);
  } else {
    EXPECT_GT(Stat("space_kicks"), 0);
  }
  std::vector<uint8_t> out(kVolumeBytes);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == model) << "dirty and committed records read back";
  ASSERT_TRUE(pool_->Sync().ok());
  ExpectClean();
  v.reset();
  Reopen();
  v = *pool_->OpenVolume("vol");
  std::fill(out.begin(), out.end(), 0);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == model) << "after reopen";
  ExpectClean();
}

// 4 KiB records rewritten at random cut the free space into 4 KiB holes:
// the space log's blocks (1 MiB when there is room) must still find space,
// including when the log is condensed (every 64 blocks: the whole map, over
// 600 KiB here).
TEST_P(SpaceTest, RandomRewritesOfSmallRecordsFragmentTheSpaceWithoutFailingASync) {
  constexpr uint64_t kVolumeBytes = 96 * kMiB;
  constexpr uint64_t kBlocks = kVolumeBytes / 4096;
  auto v = MakeVolume(kVolumeBytes, 4096);
  std::vector<uint8_t> model(kVolumeBytes);
  SeededRandom rnd(GetParam() + 29);
  rnd.Fill(model.data(), model.size());
  for (uint64_t off = 0; off < kVolumeBytes; off += kMiB) {
    ASSERT_TRUE(v->Write(off, std::span(model.data() + off, kMiB)).ok());
  }
  ASSERT_TRUE(pool_->Sync().ok());
  const uint64_t writes = ScaledIterations(3 * kBlocks);
  for (uint64_t i = 0; i < writes; i++) {
    const uint64_t off = rnd.Uniform(kBlocks) * 4096;
    rnd.Fill(model.data() + off, 4096);
    Status s = v->Write(off, std::span(model.data() + off, 4096));
    ASSERT_TRUE(s.ok()) << "write " << i << " at " << off << ": " << s.ToString();
  }
  // (With the early kick and the full count of writes, txgs are small:
  // enough of them to condense. ARCSTORE_TEST_SCALE < 1 makes fewer.)
  const bool condenses = GetParam() != 0 && writes >= 3 * kBlocks;
  EXPECT_GT(Stat("syncs_space"), condenses ? 64 : 0);
  EXPECT_EQ(Stat("space_refusals"), 0);
  ASSERT_TRUE(pool_->Sync().ok());
  ExpectClean();
  // The space map's shape is exported (as of the last committed txg).
  {
    const stats::Snapshot snap = pool_->stats().TakeSnapshot();
    const int64_t free_bytes = snap.Get("pool", "free_bytes");
    EXPECT_EQ(free_bytes, static_cast<int64_t>(pool_->Info().free_bytes));
    EXPECT_GT(snap.Get("pool", "free_extents"), 1) << "random rewrites leave holes";
    EXPECT_GT(snap.Get("pool", "largest_free_bytes"), 0);
    EXPECT_LE(snap.Get("pool", "largest_free_bytes"), free_bytes);
    EXPECT_LE(snap.Get("pool", "large_free_bytes"), free_bytes);
    EXPECT_GE(snap.Get("pool", "hole_allocations", -1), 0) << "exported";
  }
  v.reset();
  Reopen();
  v = *pool_->OpenVolume("vol");
  std::vector<uint8_t> out(kVolumeBytes);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == model);
}

// Writers on several threads rewrite disjoint quarters of the volume: they
// wait for room together, and none fails.
TEST_P(SpaceTest, ConcurrentRewritersOfANearlyFullPoolAllSucceed) {
  constexpr uint64_t kVolumeBytes = 100 * kMiB;
  constexpr int kThreads = 4;
  auto v = MakeVolume(kVolumeBytes);
  std::vector<uint8_t> model(kVolumeBytes);
  SeededRandom(3).Fill(model.data(), model.size());
  ASSERT_TRUE(v->Write(0, model).ok());
  ASSERT_TRUE(pool_->Sync().ok());  // the rewrites below all need new space
  const uint64_t passes = ScaledIterations(2);
  std::vector<Status> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      const uint64_t quarter = kVolumeBytes / kThreads;
      SeededRandom rnd(100 + t);
      for (uint64_t pass = 0; pass < passes; pass++) {
        for (uint64_t off = t * quarter; off < (t + 1) * quarter; off += 256 * 1024) {
          rnd.Fill(model.data() + off, 256 * 1024);
          Status s = v->Write(off, std::span(model.data() + off, 256 * 1024));
          if (!s.ok()) {
            results[t] = s;
            return;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < kThreads; t++) EXPECT_TRUE(results[t].ok()) << results[t].ToString();
  EXPECT_GT(Stat("syncs_space"), 0);
  EXPECT_EQ(Stat("space_refusals"), 0);
  std::vector<uint8_t> out(kVolumeBytes);
  ASSERT_TRUE(v->Read(0, out).ok());
  EXPECT_TRUE(out == model);
  ASSERT_TRUE(pool_->Sync().ok());
  ExpectClean();
}

// New data beyond the pool's space: the writer waits while syncs can still
// make room, then gets NoSpace naming the volume and the numbers; the pool
// stays healthy, and a trim makes room again (the next writes wait for its
// frees to ripen instead of failing).
TEST_P(SpaceTest, NewDataOnAFullPoolIsRefusedWithTheNumbersAndFitsAfterATrim) {
  constexpr uint64_t kVolumeBytes = 256 * kMiB;  // twice the device
  auto v = MakeVolume(kVolumeBytes);
  std::vector<uint8_t> chunk(kMiB);
  SeededRandom(5).Fill(chunk.data(), chunk.size());
  Status s;
  uint64_t written = 0;
  for (; written < kVolumeBytes; written += kMiB) {
    s = v->Write(written, chunk);
    if (!s.ok()) break;
  }
  ASSERT_EQ(s.code(), StatusCode::kNoSpace) << s.ToString();
  for (const char* part : {"volume vol", "no space for 128.0 KiB of new data", "pool space",
                           "free of", "reserved for metadata", "not yet committed",
                           "waiting for txgs to commit"}) {
    EXPECT_NE(s.message().find(part), std::string::npos) << part << " in " << s.ToString();
  }
  EXPECT_GT(written, 90 * kMiB) << "the pool filled up before refusing";
  EXPECT_EQ(Stat("space_refusals"), 1);
  ASSERT_TRUE(pool_->Sync().ok()) << "the refused write never joined a txg";
  ExpectClean();
  ASSERT_TRUE(v->Trim(0, 32 * kMiB).ok());
  for (uint64_t off = 0; off < 16 * kMiB; off += kMiB) {
    Status again = v->Write(written + off, chunk);
    ASSERT_TRUE(again.ok()) << "after the trim, at " << written + off << ": " << again.ToString();
  }
  ASSERT_TRUE(pool_->Sync().ok());
  ExpectClean();
}

INSTANTIATE_TEST_SUITE_P(Kick, SpaceTest, ::testing::Values(0u, 25u),
                         [](const auto& info) { return "kick" + std::to_string(info.param); });

}  // namespace
}  // namespace arcstore::pool
