// VolumeImpl::MayWait (volume_hint.cc): reads of cached records and of
// dirty copies do not wait, misses may; writes may wait once the throttle
// would delay them, or when a partial record must be read first.
//
// The volume runs on a bare engine: an ARC, a txg manager that is never
// started (nothing syncs, so dirty bytes only grow) and no pool, log or
// space accounting. Its records are never written to disk, so the tree
// says "hole" for every committed record; the ARC's content is set by the
// test directly.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "arc/arc.h"
#include "format/indirect_block.h"
#include "testing/fake_memory_monitor.h"
#include "testing/manual_clock.h"
#include "txg/txg_manager.h"
#include "volume/volume_impl.h"

namespace arcstore::volume {
namespace {

constexpr uint64_t kGuid = 9;

class VolumeHintTest : public ::testing::Test {
 protected:
  void Make(uint32_t record_bytes, uint64_t records, bool defer_partial_reads = true,
            uint64_t dirty_max_bytes = 64 * kMiB) {
    arc::ArcOptions ao;
    ao.c_max_bytes = 16 * kMiB;
    ao.c_min_bytes = 4 * kMiB;
    ao.evictor = arc::EvictorMode::kInline;
    ao.monitor_interval_ns = 0;
    auto a = arc::Arc::Create(ao, arc::ArcEnv{&clock_, &monitor_, &registry_});
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    arc_ = std::move(*a);
    txg::TxgOptions to;
    to.dirty_max_bytes = dirty_max_bytes;
    txg_ = std::make_unique<txg::TxgManager>(
        to, &clock_, &registry_, [](uint64_t) { return Status::Ok(); }, 1);
    format::VolumeEntry e;
    e.name = "vol";
    e.guid = kGuid;
    e.record_size_bytes = record_bytes;
    e.size_bytes = records * record_bytes;
    e.compression = format::Compression::kOff;
    e.tree_depth = static_cast<uint8_t>(format::TreeDepthFor(records, e.indirect_shift));
    VolumeEnv env;
    env.txg = txg_.get();
    env.arc = arc_.get();
    env.registry = &registry_;
    env.defer_partial_reads = defer_partial_reads;
    stats_ = std::make_unique<VolumeStats>(&registry_);
    vol_ = std::make_unique<VolumeImpl>(e, env, stats_.get());
    record_bytes_ = record_bytes;
  }
  // Puts the committed version of `record` in the ARC (unheld).
  void Cache(uint64_t record) {
    arc::LookupResult r = arc_->Lookup(arc::ArcKey{kGuid, record, 0}, {.bytes = record_bytes_});
    if (r.hit()) return;
    r.fill.buffer();
    r.fill.Finish().Reset();
  }
  bool ReadMayWait(uint64_t offset, uint64_t length) {
    return vol_->MayWait(VolumeOp::kRead, offset, length);
  }
  Status WriteAt(uint64_t offset, uint64_t length) {
    std::vector<uint8_t> data(length, 0x5a);
    return vol_->Write(offset, data, kWriteNone);
  }

  testing::ManualClock clock_{1'000'000'000, /*auto_advance=*/true};
  testing::FakeMemoryMonitor monitor_{4 * kGiB};
  stats::Registry registry_;
  std::unique_ptr<arc::Arc> arc_;
  std::unique_ptr<txg::TxgManager> txg_;
  std::unique_ptr<VolumeStats> stats_;
  std::unique_ptr<VolumeImpl> vol_;
  uint32_t record_bytes_ = 0;
};

TEST_F(VolumeHintTest, AReadOfCachedRecordsDoesNotWaitAMissMay) {
  Make(4096, 64);
  EXPECT_TRUE(ReadMayWait(0, 4096)) << "record 0 is in no cache";
  Cache(0);
  EXPECT_FALSE(ReadMayWait(0, 4096));
  EXPECT_FALSE(ReadMayWait(100, 200)) << "any part of it";
  EXPECT_TRUE(ReadMayWait(2048, 4096)) << "record 1 is not cached";
  Cache(1);
  EXPECT_FALSE(ReadMayWait(2048, 4096));
  // A held buffer (the handle cache's, say) counts as cached too.
  arc::LookupResult held = arc_->Lookup(arc::ArcKey{kGuid, 5, 0}, {.bytes = 4096});
  held.fill.buffer();
  arc::ArcHold h = held.fill.Finish();
  EXPECT_FALSE(ReadMayWait(5 * 4096, 4096));
  Cache(7);
  arc_->RemoveVolume(kGuid);
  h.Reset();
  EXPECT_TRUE(ReadMayWait(0, 4096)) << "the volume's buffers were dropped";
  EXPECT_TRUE(ReadMayWait(7 * 4096, 4096));
}

TEST_F(VolumeHintTest, DirtyCopiesServeReadsWithoutWaiting) {
  Make(16384, 64);
  ASSERT_TRUE(WriteAt(0, 4096).ok());  // a partial copy of record 0: [0, 4K) known
  EXPECT_FALSE(ReadMayWait(0, 4096));
  EXPECT_FALSE(ReadMayWait(1024, 1024));
  EXPECT_TRUE(ReadMayWait(2048, 4096)) << "bytes 4K.. are the committed record's";
  EXPECT_TRUE(ReadMayWait(8192, 4096));
  Cache(0);
  EXPECT_FALSE(ReadMayWait(8192, 4096)) << "the committed record is cached";
  ASSERT_TRUE(WriteAt(16384, 16384).ok());  // record 1 whole
  EXPECT_FALSE(ReadMayWait(16384 + 5000, 3000));
  ASSERT_TRUE(vol_->Trim(2 * 16384, 16384).ok());  // record 2: a hole
  EXPECT_FALSE(ReadMayWait(2 * 16384, 16384));
  EXPECT_FALSE(ReadMayWait(16384, 2 * 16384)) << "records 1 and 2 together";
  EXPECT_TRUE(ReadMayWait(16384, 3 * 16384)) << "record 3 is neither dirty nor cached";
  EXPECT_GT(registry_.TakeSnapshot().Get("volumes", "rmw_deferred"), 0);
}

TEST_F(VolumeHintTest, WritesMayWaitOnceTheThrottleWouldDelayThem) {
  Make(4096, 256, /*defer_partial_reads=*/true, /*dirty_max_bytes=*/1 * kMiB);
  // Each write dirties a new 4 KiB record; nothing syncs. The throttle
  // delays writers from 60% of dirty_max: 629,145.6 bytes, reached by the
  // 154th record.
  int writes = 0;
  while (!vol_->MayWait(VolumeOp::kWrite, uint64_t(writes) * 4096, 4096)) {
    ASSERT_LT(writes, 256) << "the hint never said wait";
    ASSERT_TRUE(WriteAt(uint64_t(writes) * 4096, 4096).ok());
    writes++;
  }
  EXPECT_EQ(writes, 154);
  EXPECT_EQ(clock_.sleeps(), 0u) << "no write the hint let through was delayed";
  EXPECT_TRUE(vol_->MayWait(VolumeOp::kTrim, 200 * 4096, 4096));
  EXPECT_TRUE(vol_->MayWait(VolumeOp::kWriteZeroes, 200 * 4096, 4096));
  EXPECT_FALSE(ReadMayWait(0, 4096)) << "reads of dirty records are not throttled";
  ASSERT_TRUE(WriteAt(uint64_t(writes) * 4096, 4096).ok());
  EXPECT_EQ(clock_.sleeps(), 1u) << "the next write was delayed, as the hint said";
  EXPECT_EQ(registry_.TakeSnapshot().Get("txg", "delayed_writes"), 1);
}

TEST_F(VolumeHintTest, WithoutDeferralAPartialWriteOfAnUncachedRecordMayWait) {
  Make(16384, 64, /*defer_partial_reads=*/false);
  EXPECT_TRUE(vol_->MayWait(VolumeOp::kWrite, 0, 4096)) << "record 0 would be read first";
  EXPECT_FALSE(vol_->MayWait(VolumeOp::kWrite, 0, 16384)) << "a whole record is not read";
  EXPECT_TRUE(vol_->MayWait(VolumeOp::kWrite, 8192, 16384)) << "both ends partial";
  Cache(0);
  Cache(1);
  EXPECT_FALSE(vol_->MayWait(VolumeOp::kWrite, 8192, 16384));
  ASSERT_TRUE(WriteAt(3 * 16384, 16384).ok());
  EXPECT_FALSE(vol_->MayWait(VolumeOp::kWrite, 3 * 16384 + 100, 100)) << "a dirty copy";
  EXPECT_FALSE(vol_->MayWait(VolumeOp::kTrim, 5 * 16384, 16384)) << "a whole-record trim";
  EXPECT_TRUE(vol_->MayWait(VolumeOp::kWriteZeroes, 5 * 16384, 100));
}

TEST_F(VolumeHintTest, RequestsThatFailAtOnceDoNotWaitLongOnesMay) {
  Make(4096, 256);
  EXPECT_FALSE(ReadMayWait(256 * 4096, 4096)) << "past the end: refused at once";
  EXPECT_FALSE(ReadMayWait(0, 0));
  for (uint64_t r = 0; r < 128; r++) Cache(r);
  EXPECT_FALSE(ReadMayWait(0, 64 * 4096));
  EXPECT_TRUE(ReadMayWait(0, 65 * 4096)) << "more records than the hint looks at";
  vol_->Close();
  EXPECT_FALSE(ReadMayWait(0, 4096)) << "a closed volume fails at once";
  EXPECT_FALSE(vol_->MayWait(VolumeOp::kWrite, 0, 4096));
}

}  // namespace
}  // namespace arcstore::volume
