// The volume engine's read path (volume_read.cc) against a fake
// environment (testing/volume/): holes, the committed record's one read
// from the store and its caching, errors that name the volume and offset
// and are not cached, reads through a partial copy, and a read that raced
// a newer version's commit.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "testing/volume/volume_env_fixture.h"

namespace arcstore::volume {
namespace {

using testing::VolumeEnvFixture;
using testing::VolumeFixtureOptions;

class VolumeReadTest : public testing::VolumeTest {};

TEST_F(VolumeReadTest, HolesReadAsZerosWithoutTouchingTheStore) {
  Make();
  EXPECT_EQ(ReadOk(0, f_->size_bytes()), Filled(f_->size_bytes(), 0));
  EXPECT_EQ(ReadOk(rb_ - 3, 7), Filled(7, 0)) << "across a record boundary";
  const auto c = counts();
  EXPECT_EQ(c.data_reads, 0u);
  EXPECT_EQ(c.indirect_reads, 0u) << "the tree's root is a hole: nothing to load";
  EXPECT_EQ(f_->Stat("record_reads"), 0);
  // A synced volume with one record written: the other records are still
  // holes, and reading them reads no data block.
  Commit(5, 0x55);
  f_->Evict();
  EXPECT_EQ(ReadOk(3 * rb_, rb_), Filled(rb_, 0));
  EXPECT_EQ(ReadOk(63 * rb_, rb_), Filled(rb_, 0));
  EXPECT_EQ(counts().data_reads, 0u);
}

TEST_F(VolumeReadTest, ACommittedRecordIsReadOnceAfterEvictionThenCached) {
  Make();
  Commit(2, 0x22);
  EXPECT_TRUE(f_->Cached(2)) << "the txg's commit published the record";
  EXPECT_EQ(ReadOk(2 * rb_, rb_), Filled(rb_, 0x22));
  EXPECT_EQ(counts().data_reads, 0u) << "served by the published copy";
  f_->Evict();
  EXPECT_FALSE(f_->Cached(2));
  EXPECT_EQ(ReadOk(2 * rb_ + 100, 1000), Filled(1000, 0x22));
  EXPECT_EQ(counts().data_reads, 1u);
  EXPECT_EQ(f_->Stat("record_reads"), 1);
  EXPECT_TRUE(f_->Cached(2));
  for (int i = 0; i < 3; i++) EXPECT_EQ(ReadOk(2 * rb_, rb_), Filled(rb_, 0x22));
  EXPECT_EQ(counts().data_reads, 1u) << "later reads hit the ARC";
  EXPECT_EQ(counts().reads_of_freed, 0u);
}

TEST_F(VolumeReadTest, AReopenedVolumeLoadsItsTreeAndReadsEachRecordOnce) {
  Make();
  std::vector<uint8_t> expect(f_->size_bytes(), 0);
  for (uint64_t r : {0, 9, 10, 63}) {
    ASSERT_TRUE(vol().Write(r * rb_, Filled(rb_, uint8_t(r + 1)), kWriteNone).ok());
    std::memset(expect.data() + r * rb_, int(r + 1), rb_);
  }
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  std::unique_ptr<VolumeImpl> again = f_->Reopen();
  std::vector<uint8_t> got(f_->size_bytes());
  ASSERT_TRUE(again->Read(0, got).ok());
  EXPECT_EQ(got, expect);
  const auto c = counts();
  EXPECT_EQ(c.data_reads, 4u) << "one read per written record, none for holes";
  // Three levels of fan-out 4 over 64 records: the root, the level-2
  // blocks over records 0-15 and 48-63, and the level-1 blocks over
  // records 0-3, 8-11 and 60-63. Subtrees that are holes load nothing.
  EXPECT_EQ(c.indirect_reads, 6u);
  again->Close();
}

TEST_F(VolumeReadTest, AReadErrorNamesTheVolumeAndOffsetAndIsNotCached) {
  Make();
  Commit(7, 0x77);
  f_->Evict();
  f_->store().FailNextReads(1, Status::IOError("injected EIO"));
  std::vector<uint8_t> out(100);
  const uint64_t at = 7 * rb_ + 50;
  Status s = vol().Read(at, out);
  EXPECT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("injected EIO"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("volume vol offset " + std::to_string(at)), std::string::npos)
      << s.ToString();
  EXPECT_NE(s.message().find("record 7"), std::string::npos) << s.ToString();
  EXPECT_FALSE(f_->Cached(7)) << "a failed fill is not cached";
  EXPECT_EQ(ReadOk(at, 100), Filled(100, 0x77)) << "the next read goes to the store again";
  EXPECT_EQ(counts().data_reads, 2u);
  EXPECT_EQ(counts().failed_reads, 1u);
}

TEST_F(VolumeReadTest, ACorruptRecordIsAnErrorEveryTimeNeverData) {
  Make();
  Commit(4, 0x44);
  f_->Evict();
  f_->store().CorruptBlock(f_->PointerOf(4));
  for (int i = 0; i < 2; i++) {
    std::vector<uint8_t> out(rb_, 0xee);
    Status s = vol().Read(4 * rb_, out);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    EXPECT_NE(s.message().find("volume vol offset " + std::to_string(4 * rb_)), std::string::npos)
        << s.ToString();
    EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos) << s.ToString();
  }
  EXPECT_EQ(counts().data_reads, 2u) << "nothing was cached: each read went to the store";
  EXPECT_FALSE(f_->Cached(4));
  // Neighbours are unaffected, and a read spanning the bad record fails.
  EXPECT_EQ(ReadOk(3 * rb_, rb_), Filled(rb_, 0));
  std::vector<uint8_t> span(2 * rb_);
  EXPECT_EQ(vol().Read(3 * rb_, span).code(), StatusCode::kCorruption);
}

TEST_F(VolumeReadTest, APartialCopyIsLaidOverTheCommittedRecord) {
  Make();
  Commit(1, 0x11);
  f_->Evict();
  ASSERT_TRUE(vol().Write(rb_ + 1000, Filled(500, 0xab), kWriteNone).ok());
  EXPECT_EQ(counts().data_reads, 0u) << "the partial write did not read the record";
  std::vector<uint8_t> expect = Filled(rb_, 0x11);
  std::memset(expect.data() + 1000, 0xab, 500);
  EXPECT_EQ(ReadOk(rb_ + 1200, 100), Filled(100, 0xab)) << "known bytes only: no read";
  EXPECT_EQ(counts().data_reads, 0u);
  EXPECT_EQ(ReadOk(rb_, rb_), expect);
  EXPECT_EQ(counts().data_reads, 1u);
  EXPECT_EQ(ReadOk(rb_, rb_), expect);
  EXPECT_EQ(counts().data_reads, 1u) << "the committed record is cached now";
}

// A reader that read the tree before a newer version of its record
// committed, and whose ARC lookup missed after that version was evicted,
// reads the old block: its bytes go to that reader only, never into the
// cache, so the next read sees the new version.
TEST_F(VolumeReadTest, AReadRacingANewerCommitIsNotCached) {
  Make();
  Commit(3, 0x01);
  f_->Evict();
  testing::Gate paused;
  paused.Arm();
  vol().SetTreeReadHookForTest([&](uint64_t record, VolumeImpl::TreeReadPoint point) {
    if (record == 3 && point == VolumeImpl::TreeReadPoint::kBeforeLookup) paused.Pass();
  });
  std::vector<uint8_t> first(rb_);
  Status first_status;
  std::thread reader([&] { first_status = vol().Read(3 * rb_, first); });
  paused.WaitArrived();  // the reader has the old pointer
  Commit(3, 0x02);
  f_->Evict();  // the new version is no longer cached: the reader misses
  paused.Release();
  reader.join();
  ASSERT_TRUE(first_status.ok()) << first_status.ToString();
  EXPECT_EQ(first, Filled(rb_, 0x01)) << "it read before the write: the old bytes are right";
  EXPECT_EQ(f_->Stat("reads_uncached"), 1);
  EXPECT_FALSE(f_->Cached(3)) << "the old bytes were not cached";
  vol().SetTreeReadHookForTest(nullptr);
  EXPECT_EQ(ReadOk(3 * rb_, rb_), Filled(rb_, 0x02));
  EXPECT_EQ(counts().data_reads, 2u);
}

// A reader stopped in the store's read of the committed record while a
// newer version commits: its fill is orphaned and the newer version stays
// the cached one.
TEST_F(VolumeReadTest, AReadAtTheStoreDuringACommitLeavesTheNewVersionCached) {
  Make();
  Commit(6, 0x61);
  f_->Evict();
  f_->store().read_gate().Arm();
  std::vector<uint8_t> first(rb_);
  Status first_status;
  std::thread reader([&] { first_status = vol().Read(6 * rb_, first); });
  f_->store().read_gate().WaitArrived();
  Commit(6, 0x62);
  f_->store().read_gate().Release();
  reader.join();
  ASSERT_TRUE(first_status.ok()) << first_status.ToString();
  EXPECT_EQ(first, Filled(rb_, 0x61));
  EXPECT_EQ(ReadOk(6 * rb_, rb_), Filled(rb_, 0x62));
  EXPECT_EQ(counts().data_reads, 1u) << "the new version was served from the ARC";
}

// A reader that read the tree, then stalled while newer versions committed
// for long enough that the allocator may reuse its block's space, reads
// other bytes (Corruption): since txgs committed meanwhile it looks again
// and returns the newest version, not the error.
TEST_F(VolumeReadTest, AReadOfABlockReusedWhileItStalledRetries) {
  Make();
  f_->store().SetReuseFreedAfterTxgs(2);
  Commit(3, 0x01);
  f_->Evict();
  testing::Gate paused;
  paused.Arm();
  vol().SetTreeReadHookForTest([&](uint64_t record, VolumeImpl::TreeReadPoint point) {
    if (record == 3 && point == VolumeImpl::TreeReadPoint::kBeforeLookup) paused.Pass();
  });
  std::vector<uint8_t> got(rb_);
  Status status;
  std::thread reader([&] { status = vol().Read(3 * rb_, got); });
  paused.WaitArrived();
  Commit(3, 0x02);  // txg 2 frees the block the reader is about to read
  Status synced;
  for (int i = 0; i < 3 && synced.ok(); i++) synced = f_->Sync();  // txg 5 may reuse it
  const uint64_t reused = counts().reused_blocks;
  f_->Evict();
  paused.Release();
  reader.join();
  vol().SetTreeReadHookForTest(nullptr);
  ASSERT_TRUE(synced.ok()) << synced.ToString();
  ASSERT_EQ(reused, 4u) << "the old record and the three indirect blocks above it";
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(got, Filled(rb_, 0x02));
  EXPECT_EQ(counts().failed_reads, 1u) << "the reused block failed its checksum";
  EXPECT_EQ(counts().data_reads, 2u) << "and the read went again, to the new block";
}

TEST_F(VolumeReadTest, CacheReadsOnlyTheMissingCommittedRecordsAsPrefetches) {
  Make();
  for (uint64_t r = 0; r < 4; r++) {
    ASSERT_TRUE(vol().Write(r * rb_, Filled(rb_, uint8_t(0x80 + r)), kWriteNone).ok());
  }
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  EXPECT_EQ(ReadOk(rb_, 10), Filled(10, 0x81));  // record 1 is cached again
  ASSERT_TRUE(vol().Cache(0, 6 * rb_).ok());     // records 4 and 5 are holes
  EXPECT_EQ(counts().data_reads, 4u);
  EXPECT_EQ(counts().prefetch_reads, 3u) << "records 0, 2 and 3";
  for (uint64_t r = 0; r < 6; r++) {
    EXPECT_EQ(ReadOk(r * rb_, rb_), Filled(rb_, r < 4 ? uint8_t(0x80 + r) : 0)) << "record " << r;
  }
  EXPECT_EQ(counts().data_reads, 4u) << "every record was cached or a hole";
}

TEST_F(VolumeReadTest, OutOfRangeAndClosedReadsFail) {
  Make();
  std::vector<uint8_t> out(10);
  EXPECT_FALSE(vol().Read(f_->size_bytes() - 5, out).ok());
  vol().Close();
  EXPECT_EQ(vol().Read(0, out).code(), StatusCode::kAborted);
  EXPECT_EQ(counts().data_reads, 0u);
}

}  // namespace
}  // namespace arcstore::volume
