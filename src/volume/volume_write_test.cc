// The volume engine's write path (volume_write.cc) against a fake
// environment (testing/volume/): partial writes to committed records with
// and without deferred reads (and the read-modify-writes they count), the
// limit on a partial copy's ranges, overlapping writes within a txg and
// across txgs (a seeded random mix checked against a model), trims and
// zeroing, FUA and Flush with and without the intent log.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/random.h"
#include "testing/volume/volume_env_fixture.h"

namespace arcstore::volume {
namespace {

using testing::VolumeEnvFixture;
using testing::VolumeFixtureOptions;

class VolumeWriteTest : public testing::VolumeTest {
 protected:
  // A write through buffers the volume lends (PrepareWrite, volume_lend.cc)
  // instead of the caller's.
  Status WriteLent(uint64_t offset, const std::vector<uint8_t>& data, uint32_t flags) {
    std::unique_ptr<PreparedWrite> p = vol().PrepareWrite(offset, data.size());
    size_t at = 0;
    for (std::span<uint8_t> piece : p->pieces()) {
      std::copy_n(data.begin() + at, piece.size(), piece.begin());
      at += piece.size();
    }
    EXPECT_EQ(at, data.size());
    return vol().WritePrepared(std::move(p), flags);
  }
  // A partial write of [1000, 1300) into committed, uncached record 1:
  // with deferred reads the write reads nothing and the sync completes the
  // copy; without, the write reads the record itself. Either way one read
  // of the store and one rmw, and the bytes after the sync are the same.
  void PartialWriteToUncachedRecord(bool defer) {
    Make(VolumeFixtureOptions{.defer_partial_reads = defer});
    Commit(1, 0x11);
    f_->Evict();
    WriteOk(rb_ + 1000, Filled(300, 0xaa));
    EXPECT_EQ(counts().data_reads, defer ? 0u : 1u);
    EXPECT_EQ(f_->Stat("rmw_reads"), defer ? 0 : 1);
    EXPECT_EQ(f_->Stat("rmw_deferred"), defer ? 1 : 0);
    ASSERT_TRUE(f_->Sync().ok());
    EXPECT_EQ(counts().data_reads, 1u);
    EXPECT_EQ(f_->Stat("rmw_reads"), 1);
    EXPECT_EQ(counts().record_writes, 2u);
    EXPECT_EQ(counts().data_frees, 1u) << "the old version of record 1";
    std::vector<uint8_t> expect = Filled(rb_, 0x11);
    std::fill_n(expect.begin() + 1000, 300, 0xaa);
    EXPECT_EQ(ReadOk(rb_, rb_), expect);
    EXPECT_EQ(counts().data_reads, 1u) << "the sync published the whole record";
    f_->Evict();
    EXPECT_EQ(ReadOk(rb_, rb_), expect) << "and that is what the store holds";
    EXPECT_EQ(counts().data_reads, 2u);
    EXPECT_EQ(ReadOk(0, rb_), Filled(rb_, 0)) << "its neighbour is untouched";
  }

  // A crash now: the volume as a pool would open it (the last committed
  // txg's tree from the store, then the log records of later txgs applied
  // in order, as pool_impl.cc's ReplayLog does) must read as `model`.
  void ExpectCrashRecovers(const std::vector<uint8_t>& model, const std::string& when) {
    const uint64_t committed = f_->txg().last_committed_txg();
    Result<zil::LogReplay> log = f_->ReadLog(committed);
    ASSERT_TRUE(log.ok()) << log.status().ToString();
    f_->Evict();
    std::unique_ptr<VolumeImpl> again = f_->Reopen();
    for (const format::LogRecord& r : log->records) {
      if (r.txg <= committed) continue;
      Status s = again->ApplyLogRecord(r);
      ASSERT_TRUE(s.ok()) << s.ToString();
    }
    std::vector<uint8_t> got(model.size());
    Status s = again->Read(0, got);
    again->Close();
    ASSERT_TRUE(s.ok()) << s.ToString();
    if (got == model) return;
    uint64_t first = 0;
    while (got[first] == model[first]) first++;
    FAIL() << when << " (txg " << committed << " committed, " << log->records.size()
           << " log records): byte " << first << " (record " << first / rb_ << ") is "
           << int(got[first]) << ", expected " << int(model[first]);
  }
};

TEST_F(VolumeWriteTest, DeferredPartialWriteIsCompletedFromTheStoreAtSync) {
  PartialWriteToUncachedRecord(/*defer=*/true);
}

TEST_F(VolumeWriteTest, UndeferredPartialWriteReadsTheRecordItself) {
  PartialWriteToUncachedRecord(/*defer=*/false);
}

TEST_F(VolumeWriteTest, APartialWriteToAHoleReadsNothing) {
  Make();
  WriteOk(5 * rb_ + 10, Filled(20, 0x5));
  ASSERT_TRUE(f_->Sync().ok());
  std::vector<uint8_t> expect = Filled(rb_, 0);
  std::fill_n(expect.begin() + 10, 20, 0x5);
  f_->Evict();
  EXPECT_EQ(ReadOk(5 * rb_, rb_), expect);
  EXPECT_EQ(counts().data_reads, 1u) << "only this read: the completion read no hole";
  EXPECT_EQ(counts().record_writes, 1u);
  EXPECT_EQ(counts().data_frees, 0u);
}

// A partial copy keeps at most 64 disjoint ranges; the write that would
// make a 65th reads the committed record and completes the copy at once.
TEST_F(VolumeWriteTest, AFragmentedPartialCopyIsCompletedByTheWriter) {
  Make();
  Commit(2, 0x20);
  f_->Evict();
  std::vector<uint8_t> expect = Filled(rb_, 0x20);
  for (int i = 0; i < 64; i++) {
    WriteOk(2 * rb_ + 2 * i, Filled(1, uint8_t(i)));
    expect[2 * i] = uint8_t(i);
  }
  EXPECT_EQ(counts().data_reads, 0u);
  EXPECT_EQ(f_->Stat("rmw_reads"), 0);
  WriteOk(2 * rb_ + 1000, Filled(1, 0xff));
  expect[1000] = 0xff;
  EXPECT_EQ(counts().data_reads, 1u) << "the 65th range made the writer read";
  EXPECT_EQ(f_->Stat("rmw_reads"), 1);
  EXPECT_EQ(ReadOk(2 * rb_, rb_), expect);
  ASSERT_TRUE(f_->Sync().ok());
  EXPECT_EQ(counts().data_reads, 1u) << "the copy was whole: the sync read nothing";
  EXPECT_EQ(f_->Stat("rmw_reads"), 1);
  f_->Evict();
  EXPECT_EQ(ReadOk(2 * rb_, rb_), expect);
}

TEST_F(VolumeWriteTest, OverlappingWritesInOneTxgMakeOneRecordWrite) {
  Make();
  std::vector<uint8_t> expect = Filled(rb_, 0x01);
  WriteOk(3 * rb_, expect);
  WriteOk(3 * rb_ + 100, Filled(1000, 0x02));
  std::fill_n(expect.begin() + 100, 1000, 0x02);
  WriteOk(3 * rb_ + 600, Filled(1000, 0x03));  // overlaps the previous one
  std::fill_n(expect.begin() + 600, 1000, 0x03);
  WriteOk(3 * rb_ + rb_ - 10, Filled(20, 0x04));  // into record 4 too
  std::fill_n(expect.end() - 10, 10, 0x04);
  EXPECT_EQ(ReadOk(3 * rb_, rb_), expect);
  EXPECT_EQ(f_->Stat("rmw_deferred"), 1) << "only record 4's piece made a partial copy";
  ASSERT_TRUE(f_->Sync().ok());
  EXPECT_EQ(counts().record_writes, 2u) << "records 3 and 4, once each";
  EXPECT_EQ(counts().data_reads, 0u);
  f_->Evict();
  EXPECT_EQ(ReadOk(3 * rb_, rb_), expect);
  std::vector<uint8_t> four = Filled(rb_, 0);
  std::fill_n(four.begin(), 10, 0x04);
  EXPECT_EQ(ReadOk(4 * rb_, rb_), four);
}

// A seeded mix of writes, trims and zeroing of random extents (often
// overlapping, often partial records), with syncs and evictions between
// them, against a byte model of the volume. After every step a random
// range is read back; at the end the whole volume, and a volume reopened
// from the store.
TEST_F(VolumeWriteTest, RandomOverlappingChangesMatchAModel) {
  for (bool defer : {true, false}) {
    SCOPED_TRACE(defer ? "deferred partial reads" : "partial writes read at once");
    Make(VolumeFixtureOptions{.record_bytes = 4096, .records = 48, .defer_partial_reads = defer});
    SeededRandom rnd = SeededRandom::FromEnvironment("VolumeWriteTest.RandomOverlappingChanges");
    SCOPED_TRACE("seed=" + std::to_string(rnd.seed()));
    const uint64_t size = f_->size_bytes();
    std::vector<uint8_t> model(size, 0);
    const uint64_t steps = ScaledIterations(400);
    for (uint64_t step = 0; step < steps; step++) {
      const uint64_t offset = rnd.Uniform(size);
      const uint64_t length = 1 + rnd.Uniform(std::min<uint64_t>(size - offset, 3 * rb_));
      const uint64_t op = rnd.Uniform(10);
      if (op < 7) {
        std::vector<uint8_t> data(length);
        rnd.Fill(data.data(), data.size());
        WriteOk(offset, data);
        std::copy(data.begin(), data.end(), model.begin() + offset);
      } else if (op == 7) {
        ASSERT_TRUE(vol().Trim(offset, length).ok());
        std::fill_n(model.begin() + offset, length, 0);
      } else {
        ASSERT_TRUE(vol().WriteZeroes(offset, length, op == 8 ? kZeroNone : kZeroNoHole).ok());
        std::fill_n(model.begin() + offset, length, 0);
      }
      if (rnd.OneIn(8)) ASSERT_TRUE(f_->Sync().ok()) << "step " << step;
      if (rnd.OneIn(6)) f_->Evict();
      const uint64_t at = rnd.Uniform(size);
      const uint64_t n = 1 + rnd.Uniform(std::min<uint64_t>(size - at, 2 * rb_));
      ASSERT_EQ(ReadOk(at, n), std::vector<uint8_t>(model.begin() + at, model.begin() + at + n))
          << "step " << step << " read [" << at << ", " << at + n << ")";
    }
    ExpectSyncedAndStored(model);
    const auto c = counts();
    EXPECT_EQ(c.bad_frees, 0u);
    EXPECT_EQ(c.reads_of_freed, 0u);
    EXPECT_EQ(c.failed_reads, 0u);
  }
}

// Trim and zeroing of whole records store a hole or a zero marker (no
// block; the old one freed at sync); of part of a record, zeros in a copy.
TEST_F(VolumeWriteTest, TrimAndWriteZeroesMakeHolesAndZerosAndFreeBlocksAtSync) {
  Make();
  for (uint64_t r = 0; r < 4; r++) WriteOk(r * rb_, Filled(rb_, uint8_t(0x10 + r)));
  ASSERT_TRUE(f_->Sync().ok());
  ASSERT_EQ(counts().record_writes, 4u);
  ASSERT_TRUE(vol().WriteZeroes(0, rb_, kZeroNoHole).ok());      // real zeros
  ASSERT_TRUE(vol().Trim(rb_, rb_).ok());                        // a hole
  ASSERT_TRUE(vol().Trim(2 * rb_ + 100, 50).ok());               // zeros in a copy
  ASSERT_TRUE(vol().WriteZeroes(3 * rb_, rb_, kZeroNone).ok());  // a zero marker
  std::vector<uint8_t> two = Filled(rb_, 0x12);
  std::fill_n(two.begin() + 100, 50, 0);
  auto check = [&] {
    EXPECT_EQ(ReadOk(0, 2 * rb_), Filled(2 * rb_, 0));
    EXPECT_EQ(ReadOk(2 * rb_, rb_), two);
    EXPECT_EQ(ReadOk(3 * rb_, rb_), Filled(rb_, 0));
    std::vector<Extent> ext;
    ASSERT_TRUE(vol().BlockStatus(0, 5 * rb_, &ext).ok());
    ASSERT_EQ(ext.size(), 5u);
    EXPECT_TRUE(!ext[0].hole && !ext[0].zero) << "real zeros are data";
    EXPECT_TRUE(ext[1].hole && ext[1].zero);
    EXPECT_TRUE(!ext[2].hole && !ext[2].zero);
    EXPECT_TRUE(!ext[3].hole && ext[3].zero);
    EXPECT_TRUE(ext[4].hole && ext[4].zero) << "never written";
  };
  check();
  EXPECT_EQ(counts().data_frees, 0u) << "nothing is freed before the sync";
  ASSERT_TRUE(f_->Sync().ok());
  const auto c = counts();
  EXPECT_EQ(c.data_frees, 4u) << "every old version: two replaced, a hole, a zero marker";
  EXPECT_EQ(c.record_writes, 6u) << "records 0 and 2 rewritten, 1 and 3 need no block";
  EXPECT_EQ(f_->store().LiveBlocks(format::BlockType::kData), 2u);
  EXPECT_TRUE(f_->PointerOf(1).type == format::BlockType::kHole);
  EXPECT_TRUE(f_->PointerOf(3).type == format::BlockType::kZero);
  f_->Evict();
  check();
  EXPECT_EQ(counts().data_reads, 2u) << "records 0 and 2; holes and zeros read nothing";
}

TEST_F(VolumeWriteTest, FuaAndFlushCommitTheIntentLogWithoutATxgSync) {
  Make(VolumeFixtureOptions{.with_log = true});
  WriteOk(8192, Filled(4096, 0x5a), kFua);  // part of record 0: logged as a copy
  WriteOk(rb_, Filled(rb_, 0x6b));          // record 1 whole: logged by reference
  ASSERT_TRUE(vol().Flush().ok());
  EXPECT_EQ(counts().record_writes, 0u) << "no txg synced";
  EXPECT_EQ(f_->txg().last_committed_txg(), 0u);
  Result<zil::LogReplay> log = f_->ReadLog(0);
  ASSERT_TRUE(log.ok()) << log.status().ToString();
  ASSERT_EQ(log->records.size(), 2u);
  EXPECT_EQ(log->records[0].type, format::LogRecordType::kWrite);
  EXPECT_EQ(log->records[0].volume_guid, VolumeEnvFixture::kGuid);
  EXPECT_EQ(log->records[0].offset, 8192u);
  EXPECT_EQ(log->records[0].data, Filled(4096, 0x5a));
  EXPECT_EQ(log->records[1].offset, rb_);
  EXPECT_EQ(log->records[1].data, Filled(rb_, 0x6b));
  // A write after the commit and before a sync is not in the log's blocks.
  WriteOk(2 * rb_, Filled(10, 0x7c));
  log = f_->ReadLog(0);
  ASSERT_TRUE(log.ok());
  EXPECT_EQ(log->records.size(), 2u);
  ASSERT_TRUE(f_->Sync().ok());
  EXPECT_EQ(counts().record_writes, 3u);
  log = f_->ReadLog(1);
  ASSERT_TRUE(log.ok());
  EXPECT_TRUE(log->records.empty()) << "txg 1 holds every change logged";
  std::vector<uint8_t> zero = Filled(rb_, 0);
  std::fill_n(zero.begin() + 8192, 4096, 0x5a);
  EXPECT_EQ(ReadOk(0, rb_), zero);
  EXPECT_EQ(ReadOk(rb_, rb_), Filled(rb_, 0x6b));
}

// After every Flush or FUA write, a crash: the volume as a pool would open
// it (the last committed txg's tree from the store, then the log records
// of later txgs applied in order, as pool_impl.cc's ReplayLog does) holds
// every change made so far. Changes are a seeded random mix of whole and
// partial writes (half of them through lent buffers), trims and zeroing,
// with txg syncs between them; once with only commits writing the log, once
// with its writer also writing changes early, beside the test's thread.
TEST_F(VolumeWriteTest, FlushedChangesSurviveACrashThroughTheLog) {
  for (bool early : {false, true}) {
    SCOPED_TRACE(early ? "early log writes" : "only commits write the log");
    Make(VolumeFixtureOptions{
        .record_bytes = 4096, .records = 32, .with_log = true, .early_log_writes = early});
    SeededRandom rnd = SeededRandom::FromEnvironment("VolumeWriteTest.FlushedChangesSurvive");
    SCOPED_TRACE("seed=" + std::to_string(rnd.seed()));
    const uint64_t size = f_->size_bytes();
    std::vector<uint8_t> model(size, 0);
    int crashes = 0;
    const uint64_t steps = ScaledIterations(300);
    for (uint64_t step = 0; step < steps; step++) {
      uint64_t offset = rnd.Uniform(size);
      uint64_t length = 1 + rnd.Uniform(std::min<uint64_t>(size - offset, 2 * rb_));
      if (rnd.OneIn(3)) {  // whole records: logged by reference
        offset = offset / rb_ * rb_;
        length = std::min<uint64_t>(size - offset, (1 + rnd.Uniform(2)) * rb_);
      }
      const uint64_t op = rnd.Uniform(10);
      bool durable = false;
      if (op < 7) {
        std::vector<uint8_t> data(length);
        rnd.Fill(data.data(), data.size());
        durable = rnd.OneIn(6);
        if (rnd.OneIn(2)) {
          Status s = WriteLent(offset, data, durable ? kFua : kWriteNone);
          ASSERT_TRUE(s.ok()) << s.ToString();
        } else {
          WriteOk(offset, data, durable ? kFua : kWriteNone);
        }
        std::copy(data.begin(), data.end(), model.begin() + offset);
      } else if (op == 7) {
        ASSERT_TRUE(vol().Trim(offset, length).ok());
        std::fill_n(model.begin() + offset, length, 0);
      } else {
        ASSERT_TRUE(vol().WriteZeroes(offset, length, op == 8 ? kZeroNone : kZeroNoHole).ok());
        std::fill_n(model.begin() + offset, length, 0);
      }
      if (rnd.OneIn(10)) ASSERT_TRUE(f_->Sync().ok());
      if (rnd.OneIn(12)) {
        ASSERT_TRUE(vol().Flush().ok());
        durable = true;
      }
      if (!durable) continue;
      crashes++;
      ExpectCrashRecovers(model, "step " + std::to_string(step));
      if (HasFatalFailure() || HasFailure()) return;
    }
    EXPECT_GT(crashes, 0);
    if (early) EXPECT_GT(f_->Stat("early_writes", "zil"), 0);
  }
}

// The same with writers changing the same records at once (each owns
// every fourth 256-byte stripe, so the result is known), some with FUA,
// while txgs sync back to back; after each round, a Flush and a crash.
TEST_F(VolumeWriteTest, ConcurrentFlushedChangesSurviveACrashThroughTheLog) {
  constexpr int kWriters = 4;
  constexpr uint64_t kStripe = 256;
  for (bool defer : {true, false}) {
    SCOPED_TRACE(defer ? "deferred partial reads" : "partial writes read at once");
    Make(VolumeFixtureOptions{
        .record_bytes = 4096, .records = 16, .defer_partial_reads = defer, .with_log = true});
    SeededRandom rnd = SeededRandom::FromEnvironment("VolumeWriteTest.ConcurrentFlushed");
    SCOPED_TRACE("seed=" + std::to_string(rnd.seed()));
    const uint64_t size = f_->size_bytes();
    const uint64_t stripes = size / kStripe;
    std::vector<uint8_t> model(size, 0);  // each writer changes its own stripes only
    const uint64_t rounds = ScaledIterations(15);
    for (uint64_t round = 0; round < rounds; round++) {
      // The writers go on until the syncer has synced this many txgs.
      const uint64_t txgs = 1 + rnd.Uniform(4);
      std::atomic<uint64_t> synced{0};
      std::vector<std::thread> threads;
      for (int t = 0; t < kWriters; t++) {
        threads.emplace_back([&, t, r = rnd.Fork()]() mutable {
          while (synced < txgs) {
            const uint64_t stripe = r.Uniform(stripes / kWriters) * kWriters + t;
            const uint64_t begin = r.OneIn(4) ? 0 : r.Uniform(kStripe);
            const uint64_t n = 1 + r.Uniform(kStripe - begin);
            const uint64_t at = stripe * kStripe + begin;
            std::vector<uint8_t> data(n, 0);
            const bool zero = r.OneIn(5);
            if (!zero) r.Fill(data.data(), n);
            const uint32_t flags = r.OneIn(20) ? kFua : kWriteNone;
            Status s = zero         ? vol().WriteZeroes(at, n, kZeroNone)
                       : r.OneIn(2) ? WriteLent(at, data, flags)
                                    : vol().Write(at, data, flags);
            if (!s.ok()) {
              ADD_FAILURE() << "writer " << t << ": " << s.ToString();
              return;
            }
            std::copy(data.begin(), data.end(), model.begin() + at);
          }
        });
      }
      std::thread syncer([&] {
        while (synced < txgs) {
          Status s = f_->Sync();
          if (!s.ok()) ADD_FAILURE() << s.ToString();
          synced++;
          if (!s.ok()) synced = txgs;
        }
      });
      for (auto& th : threads) th.join();
      syncer.join();
      ASSERT_TRUE(vol().Flush().ok());
      ExpectCrashRecovers(model, "round " + std::to_string(round));
      if (HasFailure()) return;
    }
  }
}

TEST_F(VolumeWriteTest, FlushWithoutALogCommitsTheOpenTxg) {
  Make();
  WriteOk(0, Filled(rb_, 0x31));
  ASSERT_TRUE(vol().Flush().ok());
  EXPECT_EQ(f_->txg().last_committed_txg(), 1u);
  EXPECT_EQ(counts().record_writes, 1u);
  EXPECT_TRUE(f_->Cached(0));
  WriteOk(rb_, Filled(100, 0x32), kFua);
  EXPECT_EQ(f_->txg().last_committed_txg(), 2u) << "FUA waited for its txg too";
  EXPECT_EQ(counts().record_writes, 2u);
  ASSERT_TRUE(vol().Flush().ok()) << "nothing dirty: nothing to wait for";
  EXPECT_EQ(f_->txg().last_committed_txg(), 2u);
}

TEST_F(VolumeWriteTest, WritesToACorruptRecord) {
  Make(VolumeFixtureOptions{.defer_partial_reads = false});
  Commit(6, 0x66);
  f_->Evict();
  f_->store().CorruptBlock(f_->PointerOf(6));
  Status s = vol().Write(6 * rb_ + 10, Filled(10, 1), kWriteNone);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("volume vol write at offset " + std::to_string(6 * rb_ + 10)),
            std::string::npos)
      << s.ToString();
  EXPECT_EQ(f_->Stat("rmw_reads"), 0) << "a failed read completes nothing";
  // A whole-record write needs no read: it replaces the corrupt block.
  WriteOk(6 * rb_, Filled(rb_, 0x67));
  ASSERT_TRUE(f_->Sync().ok());
  f_->Evict();
  EXPECT_EQ(ReadOk(6 * rb_, rb_), Filled(rb_, 0x67));
}

TEST_F(VolumeWriteTest, WritesOutOfRangeOrClosedFailAndChangeNothing) {
  Make();
  EXPECT_FALSE(vol().Write(f_->size_bytes() - 1, Filled(2, 1), kWriteNone).ok());
  EXPECT_FALSE(vol().Trim(f_->size_bytes(), 1).ok());
  vol().Close();
  EXPECT_EQ(vol().Write(0, Filled(2, 1), kWriteNone).code(), StatusCode::kAborted);
  ASSERT_TRUE(f_->Sync().ok());
  EXPECT_EQ(counts().record_writes, 0u);
}

}  // namespace
}  // namespace arcstore::volume
