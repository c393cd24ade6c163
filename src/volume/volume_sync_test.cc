// The volume engine's txg sync (volume_sync.cc) against a fake environment
// (testing/volume/): what SyncTxg writes and frees (records and the tree's
// indirect blocks, copy-on-write), what readers see between SyncTxg and
// TxgCommitted and after it (the records published to the ARC), partial
// copies completed from the store, in parallel, or from the version held
// since the txg before committed, and syncs that fail.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "base/random.h"
#include "testing/volume/volume_env_fixture.h"

namespace arcstore::volume {
namespace {

using testing::VolumeEnvFixture;
using testing::VolumeFixtureOptions;

class VolumeSyncTest : public testing::VolumeTest {
 protected:
  // Syncs, returning the threads that completed partial copies.
  std::set<std::thread::id> SyncNotingCompletingThreads() {
    std::mutex mu;
    std::set<std::thread::id> threads;
    vol().SetCompleteHookForTest([&](uint64_t) {
      std::lock_guard<std::mutex> l(mu);
      threads.insert(std::this_thread::get_id());
    });
    Status s = f_->Sync();
    vol().SetCompleteHookForTest(nullptr);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return threads;
  }
  // Records [0, n): `fill(r)` with bytes [100, 200) of 0x99 over it.
  void ExpectPatchedRecords(uint64_t n, uint8_t (*fill)(uint64_t)) {
    for (uint64_t r = 0; r < n; r++) {
      std::vector<uint8_t> expect = Filled(rb_, fill(r));
      std::fill_n(expect.begin() + 100, 100, 0x99);
      EXPECT_EQ(ReadOk(r * rb_, rb_), expect) << "record " << r;
    }
  }
};

TEST_F(VolumeSyncTest, AnEmptyTxgWritesNothing) {
  Make();
  ASSERT_TRUE(f_->Sync().ok());
  const auto c = counts();
  EXPECT_EQ(c.record_writes + c.block_writes + c.data_frees + c.indirect_frees, 0u);
  EXPECT_TRUE(f_->synced_entry().root.IsHole());
}

// 64 records, fan-out 4: level-1 blocks cover 4 records, level-2 blocks
// 16, the root (level 3) all 64.
TEST_F(VolumeSyncTest, SyncWritesEachDirtyRecordAndTheTreeCopyOnWrite) {
  Make();
  for (uint64_t r : {5, 1, 3}) WriteOk(r * rb_, Filled(rb_, uint8_t(r)));
  ASSERT_TRUE(f_->Sync().ok());
  auto c = counts();
  EXPECT_EQ(c.record_writes, 3u);
  EXPECT_EQ(c.block_writes, 4u) << "level-1 blocks 0 and 1, level-2 block 0, the root";
  EXPECT_EQ(c.data_frees + c.indirect_frees, 0u) << "everything replaced a hole";
  EXPECT_EQ(c.undirty_bytes, 3u * rb_);
  format::VolumeEntry e = f_->synced_entry();
  EXPECT_EQ(e.root.type, format::BlockType::kIndirect);
  EXPECT_EQ(e.root.level, 3u);
  EXPECT_EQ(e.root.birth_txg, 1u);
  EXPECT_EQ(e.root.fill, 3u) << "three data records below the root";
  EXPECT_EQ(f_->PointerOf(5).birth_txg, 1u);
  // Rewriting record 5 rewrites its path: the record, its level-1 and
  // level-2 blocks and the root, each freeing its old block.
  WriteOk(5 * rb_, Filled(rb_, 0x55));
  ASSERT_TRUE(f_->Sync().ok());
  c = counts();
  EXPECT_EQ(c.record_writes, 4u);
  EXPECT_EQ(c.block_writes, 7u);
  EXPECT_EQ(c.data_frees, 1u);
  EXPECT_EQ(c.indirect_frees, 3u);
  EXPECT_EQ(c.bad_frees, 0u);
  EXPECT_EQ(f_->store().LiveBlocks(format::BlockType::kIndirect), 4u);
  EXPECT_EQ(f_->synced_entry().root.birth_txg, 2u);
  EXPECT_EQ(f_->PointerOf(1).birth_txg, 1u) << "untouched records keep their blocks";
}

// Between SyncTxg and TxgCommitted the txg's records are on the store and
// still dirty copies: readers get them from the copies (no store read, the
// ARC has no version yet). TxgCommitted makes each the cached version.
TEST_F(VolumeSyncTest, TxgCommittedPublishesTheRecordsItWrote) {
  Make();
  for (uint64_t r = 0; r < 4; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(0x40 + r)));
  std::atomic<bool> looked{false};
  f_->SetBetweenHook([&](uint64_t txg) {
    EXPECT_EQ(counts().record_writes, 4u);
    for (uint64_t r = 0; r < 4; r++) {
      EXPECT_FALSE(f_->Cached(r)) << "record " << r << " was published before its commit";
      EXPECT_EQ(ReadOk(r * rb_, rb_), Filled(rb_, uint8_t(0x40 + r)));
    }
    EXPECT_EQ(counts().data_reads, 0u);
    looked = true;
  });
  ASSERT_TRUE(f_->Sync().ok());
  ASSERT_TRUE(looked);
  f_->SetBetweenHook(nullptr);
  for (uint64_t r = 0; r < 4; r++) {
    EXPECT_TRUE(f_->Cached(r)) << "record " << r;
    EXPECT_EQ(ReadOk(r * rb_, rb_), Filled(rb_, uint8_t(0x40 + r)));
  }
  EXPECT_EQ(counts().data_reads, 0u);
  EXPECT_EQ(f_->Stat("dirty_read_hits"), 4);
}

TEST_F(VolumeSyncTest, PartialCopiesOfManyRecordsAreCompletedInParallel) {
  Make();
  for (uint64_t r = 0; r < 20; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(r)));
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  for (uint64_t r = 0; r < 20; r++) WriteOk(r * rb_ + r * 10, Filled(7, 0xf0));
  EXPECT_EQ(counts().data_reads, 0u);
  ASSERT_TRUE(f_->Sync().ok());
  EXPECT_EQ(counts().data_reads, 20u);
  EXPECT_EQ(f_->Stat("rmw_reads"), 20);
  EXPECT_EQ(f_->Stat("rmw_held_bases"), 0);
  f_->Evict();
  for (uint64_t r = 0; r < 20; r++) {
    std::vector<uint8_t> expect = Filled(rb_, uint8_t(r));
    std::fill_n(expect.begin() + r * 10, 7, 0xf0);
    EXPECT_EQ(ReadOk(r * rb_, rb_), expect) << "record " << r;
  }
}

// A partial write into a record whose whole copy is syncing makes a
// partial copy over it; when that txg commits, the copy holds the version
// just committed, and its own sync completes from it without a read, even
// after the ARC dropped the record.
TEST_F(VolumeSyncTest, APartialCopyOverASyncingRecordCompletesFromTheHeldVersion) {
  Make();
  WriteOk(2 * rb_, Filled(rb_, 0x20));
  ASSERT_TRUE(f_->Sync().ok());
  WriteOk(2 * rb_, Filled(rb_, 0x21));  // txg 2: a whole copy
  f_->store().write_gate().Arm();
  Status first;
  std::thread syncer([&] { first = f_->Sync(); });
  f_->store().write_gate().WaitArrived();     // txg 2 is writing record 2
  WriteOk(2 * rb_ + 100, Filled(100, 0x22));  // txg 3: a partial copy over it
  EXPECT_EQ(f_->Stat("rmw_deferred"), 1);
  std::vector<uint8_t> expect = Filled(rb_, 0x21);
  std::fill_n(expect.begin() + 100, 100, 0x22);
  EXPECT_EQ(ReadOk(2 * rb_, rb_), expect) << "the syncing copy under the partial one";
  f_->store().write_gate().Release();
  syncer.join();
  ASSERT_TRUE(first.ok()) << first.ToString();
  f_->Evict();  // the committed version stays held by the partial copy
  ASSERT_TRUE(f_->Sync().ok());
  EXPECT_EQ(f_->Stat("rmw_reads"), 1);
  EXPECT_EQ(f_->Stat("rmw_held_bases"), 1);
  EXPECT_EQ(counts().data_reads, 0u) << "the completion read nothing";
  f_->Evict();
  EXPECT_EQ(ReadOk(2 * rb_, rb_), expect);
  EXPECT_EQ(counts().data_reads, 1u);
  EXPECT_EQ(counts().reads_of_freed, 0u);
}

// Partial copies whose committed records are held need no read: the sync
// completes them on its own thread, one after another, so that no helper
// thread holds the volume's lock for its swap while preempted.
TEST_F(VolumeSyncTest, HeldPartialCopiesAreCompletedOnTheSyncingThreadAlone) {
  Make();
  constexpr uint64_t kRecords = 16;
  for (uint64_t r = 0; r < kRecords; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(r)));
  ASSERT_TRUE(f_->Sync().ok());
  for (uint64_t r = 0; r < kRecords; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(0x40 + r)));
  f_->store().write_gate().Arm();
  Status first;
  std::thread syncer([&] { first = f_->Sync(); });
  f_->store().write_gate().WaitArrived();
  for (uint64_t r = 0; r < kRecords; r++) WriteOk(r * rb_ + 100, Filled(100, 0x99));
  f_->store().write_gate().Release();
  syncer.join();
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(SyncNotingCompletingThreads().size(), 1u);
  EXPECT_EQ(f_->Stat("rmw_held_bases"), static_cast<int64_t>(kRecords));
  ExpectPatchedRecords(kRecords, [](uint64_t r) { return uint8_t(0x40 + r); });
}

// The same for partial copies over committed records that are cached but
// not held (written after their record's txg committed): no read either.
TEST_F(VolumeSyncTest, CachedPartialCopiesAreCompletedOnTheSyncingThreadAlone) {
  Make();
  constexpr uint64_t kRecords = 16;
  for (uint64_t r = 0; r < kRecords; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(r)));
  ASSERT_TRUE(f_->Sync().ok());
  for (uint64_t r = 0; r < kRecords; r++) WriteOk(r * rb_ + 100, Filled(100, 0x99));
  const uint64_t reads = counts().data_reads;
  EXPECT_EQ(SyncNotingCompletingThreads().size(), 1u);
  EXPECT_EQ(f_->Stat("rmw_held_bases"), 0);
  EXPECT_EQ(counts().data_reads, reads) << "the completions read nothing";
  ExpectPatchedRecords(kRecords, [](uint64_t r) { return uint8_t(r); });
}

// A destroyed volume's blocks: FreeAll frees every record and indirect
// block of its tree, each once.
TEST_F(VolumeSyncTest, FreeAllFreesEveryBlockOfTheTreeOnce) {
  Make();
  for (uint64_t r : {0, 9, 33, 63}) WriteOk(r * rb_, Filled(rb_, 1));
  ASSERT_TRUE(vol().Trim(9 * rb_, rb_).ok());
  ASSERT_TRUE(vol().WriteZeroes(10 * rb_, rb_, kZeroNone).ok());
  ASSERT_TRUE(f_->Sync().ok());
  WriteOk(33 * rb_, Filled(rb_, 2));  // a second version: the first is freed at sync
  ASSERT_TRUE(f_->Sync().ok());
  const auto before = counts();
  const size_t indirect = f_->store().LiveBlocks(format::BlockType::kIndirect);
  EXPECT_EQ(f_->store().LiveBlocks(format::BlockType::kData), 3u);
  ASSERT_TRUE(vol().FreeAll(&f_->store()).ok());
  const auto after = counts();
  EXPECT_EQ(after.data_frees - before.data_frees, 3u);
  EXPECT_EQ(after.indirect_frees - before.indirect_frees, indirect);
  EXPECT_EQ(after.bad_frees, 0u);
  EXPECT_EQ(f_->store().LiveBlocks(format::BlockType::kData), 0u);
  EXPECT_EQ(f_->store().LiveBlocks(format::BlockType::kIndirect), 0u);
}

// The sync of txg T has built the whole copy of a partial record but not
// swapped it in when a writer of T + 1 changes the record (copying T's
// partial copy) and a reader reads it: both see T's bytes over the
// committed record, and each txg writes its own version.
TEST_F(VolumeSyncTest, WritersAndReadersGoOnWhileASyncCompletesAPartialCopy) {
  Make();
  WriteOk(7 * rb_, Filled(rb_, 0x70));
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  // The evicted record's memory goes to another record's copy, so that
  // the partial copy's unknown bytes are not the committed record's by
  // chance (a copy that took them as known would go unnoticed).
  WriteOk(8 * rb_, Filled(rb_, 0x80));
  WriteOk(7 * rb_ + 100, Filled(100, 0x71));  // txg 2: a partial copy
  testing::Gate completing;
  completing.Arm();
  vol().SetCompleteHookForTest([&](uint64_t record) {
    if (record == 7) completing.Pass();
  });
  std::vector<uint8_t> in_txg2;
  f_->SetBetweenHook([&](uint64_t txg) {
    if (txg == 2) in_txg2 = ReadOk(7 * rb_, rb_);
  });
  Status first;
  std::thread syncer([&] { first = f_->Sync(); });
  completing.WaitArrived();
  WriteOk(7 * rb_ + 150, Filled(100, 0x72));  // txg 3, overlapping txg 2's bytes
  EXPECT_EQ(f_->Stat("rmw_dirty"), 1) << "txg 3's copy was made from txg 2's partial one";
  std::vector<uint8_t> expect2 = Filled(rb_, 0x70);
  std::fill_n(expect2.begin() + 100, 100, 0x71);
  std::vector<uint8_t> expect3 = expect2;
  std::fill_n(expect3.begin() + 150, 100, 0x72);
  EXPECT_EQ(ReadOk(7 * rb_, rb_), expect3);
  completing.Release();
  syncer.join();
  vol().SetCompleteHookForTest(nullptr);
  f_->SetBetweenHook(nullptr);
  ASSERT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(in_txg2, expect3) << "readers see the newest version, txg 3's";
  f_->Evict();
  // What txg 2 wrote is on the store: a volume opened from its entry.
  std::unique_ptr<VolumeImpl> at2 = f_->Reopen();
  std::vector<uint8_t> stored(rb_);
  ASSERT_TRUE(at2->Read(7 * rb_, stored).ok());
  at2->Close();
  EXPECT_EQ(stored, expect2) << "txg 2 wrote its own version, not txg 3's";
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  EXPECT_EQ(ReadOk(7 * rb_, rb_), expect3);
  EXPECT_EQ(counts().bad_frees, 0u);
}

// A sink error fails the sync (and the txg manager): the error says which
// txg, the data stays readable from the dirty copies, and nothing more is
// accepted.
TEST_F(VolumeSyncTest, ASinkErrorFailsTheSyncAndLeavesTheDataReadable) {
  Make();
  for (uint64_t r = 0; r < 3; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(0x30 + r)));
  ASSERT_TRUE(f_->Sync().ok());
  for (uint64_t r = 0; r < 3; r++) WriteOk(r * rb_ + 5, Filled(5, uint8_t(0x60 + r)));
  // Record 0 is written (and the tree changed, its old block freed); the
  // write of record 1 fails.
  f_->store().FailNextWrites(1, Status::IOError("injected write error"), /*skip=*/1);
  Status s = f_->Sync();
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("injected write error"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("txg 2"), std::string::npos) << s.ToString();
  const uint64_t reads_before = counts().data_reads;
  for (uint64_t r = 0; r < 3; r++) {
    std::vector<uint8_t> expect = Filled(rb_, uint8_t(0x30 + r));
    std::fill_n(expect.begin() + 5, 5, uint8_t(0x60 + r));
    EXPECT_EQ(ReadOk(r * rb_, rb_), expect) << "record " << r;
  }
  EXPECT_EQ(counts().data_reads, reads_before) << "served by the dirty copies";
  EXPECT_FALSE(vol().Write(0, Filled(10, 1), kWriteNone).ok()) << "the pipeline has failed";
}

TEST_F(VolumeSyncTest, AReadErrorCompletingAPartialCopyFailsTheSync) {
  Make();
  WriteOk(2 * rb_, Filled(rb_, 0x20));
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  WriteOk(2 * rb_ + 10, Filled(10, 0x21));
  f_->store().FailNextReads(1, Status::IOError("injected EIO"));
  Status s = f_->Sync();
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("volume vol: completing record 2"), std::string::npos) << s.ToString();
  EXPECT_EQ(counts().record_writes, 1u) << "nothing of txg 2 was written";
  EXPECT_EQ(f_->Stat("rmw_reads"), 0);
  EXPECT_EQ(ReadOk(2 * rb_ + 10, 10), Filled(10, 0x21)) << "the written bytes stay readable";
  std::vector<uint8_t> expect = Filled(rb_, 0x20);
  std::fill_n(expect.begin() + 10, 10, 0x21);
  EXPECT_EQ(ReadOk(2 * rb_, rb_), expect) << "with the committed record under them";
}

TEST_F(VolumeSyncTest, ACorruptBaseFailsTheSyncOfAPartialCopy) {
  Make();
  WriteOk(4 * rb_, Filled(rb_, 0x40));
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  f_->store().CorruptBlock(f_->PointerOf(4));
  WriteOk(4 * rb_ + 10, Filled(10, 0x41));
  Status s = f_->Sync();
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("completing record 4"), std::string::npos) << s.ToString();
  EXPECT_EQ(counts().record_writes, 1u) << "the corrupt bytes were not written as data";
}

// Writers change the same records at once (each owns every fourth
// 256-byte stripe of the volume, so the result is known) while txgs sync
// back to back and the ARC drops the volume's records: partial copies are
// made over syncing and committed versions, completed, published and read
// again, and freed blocks are reused as the allocator would. Each writer
// reads back what it wrote; at the end the volume and the store hold every
// writer's last bytes.
TEST_F(VolumeSyncTest, ConcurrentWritersSyncsAndEvictionsMatchAModel) {
  constexpr int kWriters = 4;
  constexpr uint64_t kStripe = 256;
  for (bool defer : {true, false}) {
    SCOPED_TRACE(defer ? "deferred partial reads" : "partial writes read at once");
    Make(VolumeFixtureOptions{.record_bytes = 4096, .records = 16, .defer_partial_reads = defer});
    SeededRandom rnd = SeededRandom::FromEnvironment("VolumeSyncTest.ConcurrentWriters");
    SCOPED_TRACE("seed=" + std::to_string(rnd.seed()));
    // Readers may read a block a sync has just freed (they read the tree
    // first): the space is reused as the allocator would reuse it.
    f_->store().SetReuseFreedAfterTxgs(2);
    const uint64_t size = f_->size_bytes();
    const uint64_t stripes = size / kStripe;
    std::vector<uint8_t> model(size, 0);  // each writer changes its own stripes only
    // The writers go on until the syncer has synced this many txgs.
    const uint64_t txgs = ScaledIterations(40);
    std::atomic<uint64_t> synced{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kWriters; t++) {
      threads.emplace_back([&, t, r = rnd.Fork()]() mutable {
        for (uint64_t i = 0; synced < txgs; i++) {
          const uint64_t stripe = r.Uniform(stripes / kWriters) * kWriters + t;
          const uint64_t begin = r.Uniform(kStripe);
          const uint64_t n = 1 + r.Uniform(kStripe - begin);
          const uint64_t at = stripe * kStripe + begin;
          std::vector<uint8_t> data(n);
          r.Fill(data.data(), n);
          Status s = vol().Write(at, data, kWriteNone);
          if (!s.ok()) {
            ADD_FAILURE() << "writer " << t << " op " << i << ": " << s.ToString();
            break;
          }
          std::copy(data.begin(), data.end(), model.begin() + at);
          std::vector<uint8_t> back(kStripe);
          s = vol().Read(stripe * kStripe, back);
          if (!s.ok() || !std::equal(back.begin(), back.end(), model.begin() + stripe * kStripe)) {
            ADD_FAILURE() << "writer " << t << " op " << i << " read back stripe " << stripe
                          << " wrong: " << s.ToString();
            break;
          }
        }
      });
    }
    std::thread syncer([&, r = rnd.Fork()]() mutable {
      while (synced < txgs) {
        Status s = f_->Sync();
        if (!s.ok()) {
          ADD_FAILURE() << s.ToString();
          synced = txgs;
          return;
        }
        if (r.OneIn(2)) f_->Evict();
        synced++;
      }
    });
    for (auto& th : threads) th.join();
    syncer.join();
    ExpectSyncedAndStored(model);
    EXPECT_EQ(counts().bad_frees, 0u);
  }
}

}  // namespace
}  // namespace arcstore::volume
