// TxgWriter's aggregation: which device writes a txg's blocks become; and
// where BlockReader reads a block into.
#include "pool/block_io.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <thread>
#include <utility>

#include "base/random.h"
#include "base/units.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kBlock = 128 * kKiB;

// Passes requests on and records (offset, bytes, parts) of each write, and
// where each read went.
class WriteLog final : public io::ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  struct Write {
    uint64_t offset_bytes;
    uint64_t length_bytes;
    uint32_t parts;
    const uint8_t* first_iov;  // where the device read the first part from
  };
  void Submit(io::IoRequest r) override {
    if (r.op == io::IoOp::kWrite) {
      uint64_t len = 0;
      for (const io::IoVec& v : r.iov) len += v.size_bytes;
      MutexLock l(&mu_);
      writes_.push_back(Write{r.offset, len, static_cast<uint32_t>(r.iov.size()), r.iov[0].data});
    } else if (r.op == io::IoOp::kRead) {
      MutexLock l(&mu_);
      read_into_.push_back(r.iov[0].data);
    }
    ForwardingDevice::Submit(std::move(r));
  }
  std::vector<Write> writes() {
    MutexLock l(&mu_);
    return writes_;
  }
  // Where each read since the last call went (its first iovec).
  std::vector<const uint8_t*> TakeReads() {
    MutexLock l(&mu_);
    return std::exchange(read_into_, {});
  }

 private:
  Mutex mu_;
  std::vector<Write> writes_ ARC_GUARDED_BY(mu_);
  std::vector<const uint8_t*> read_into_ ARC_GUARDED_BY(mu_);
};

class TxgWriterTest : public ::testing::Test {
 protected:
  TxgWriterTest()
      : mem_(*io::MemoryDevice::Create({.size_bytes = 64 * kMiB})),
        dev_(mem_.get()),
        stats_(&registry_) {}

  // Writes blocks of kBlock at the given block indexes (in that order),
  // each filled with its index, through one TxgWriter; returns the device
  // writes and checks every block landed.
  std::vector<WriteLog::Write> WriteBlocks(const std::vector<uint64_t>& indexes) {
    uint64_t undirtied = 0;
    {
      TxgWriter w(&dev_, &allocator_, 1, TxgWriterOptions{}, &stats_, &buffers_,
                  [&](uint64_t bytes) { undirtied += bytes; });
      for (uint64_t i : indexes) {
        io::AlignedBuffer buf(kBlock, 4096);
        std::memset(buf.data(), static_cast<int>(i & 0xff), kBlock);
        EXPECT_TRUE(w.WriteAt(space::Extent{i * kBlock, kBlock}, std::move(buf)).ok());
      }
      EXPECT_TRUE(w.Finish().ok());
    }
    EXPECT_EQ(undirtied, 0u);  // WriteAt blocks clean no dirty bytes
    std::vector<uint8_t> back(kBlock);
    for (uint64_t i : indexes) {
      EXPECT_TRUE(io::ReadSync(*mem_, i * kBlock, back).ok());
      EXPECT_EQ(back[0], i & 0xff);
      EXPECT_EQ(back[kBlock - 1], i & 0xff);
    }
    return dev_.writes();
  }

  static std::vector<uint64_t> Range(uint64_t first, uint64_t n) {
    std::vector<uint64_t> v;
    for (uint64_t i = 0; i < n; i++) v.push_back(first + i);
    return v;
  }
  static std::vector<uint64_t> Lengths(const std::vector<WriteLog::Write>& ws) {
    std::vector<uint64_t> v;
    for (const auto& w : ws) v.push_back(w.length_bytes / kBlock);
    return v;
  }

  std::unique_ptr<io::MemoryDevice> mem_;
  WriteLog dev_;
  stats::Registry registry_;
  BlockIoStats stats_;
  io::BufferCache buffers_{4096, 64, 1 * kMiB};
  space::SpaceAllocator allocator_{space::SpaceOptions{.start_bytes = 0, .end_bytes = 64 * kMiB}};
};

// WriteStable: a record stored as it is goes to the device from the
// caller's memory; one that compresses, or memory the device cannot take
// (unaligned), goes through a buffer. Each reads back the same.
TEST_F(TxgWriterTest, AStoredRecordIsWrittenFromItsOwnMemory) {
  io::AlignedBuffer random(kBlock, 4096), repeating(kBlock, 4096), unaligned(kBlock + 64, 4096);
  SeededRandom rnd(7);
  rnd.Fill(random.data(), kBlock);
  for (uint64_t i = 0; i < kBlock; i++) repeating.data()[i] = static_cast<uint8_t>(i % 7);
  rnd.Fill(unaligned.data(), kBlock + 64);
  const std::span<const uint8_t> records[] = {random.span(), repeating.span(),
                                              unaligned.span().subspan(1, kBlock)};
  format::BlockPointer base;
  base.type = format::BlockType::kData;
  base.compression = format::Compression::kLz4;
  std::vector<format::BlockPointer> bps;
  uint64_t undirtied = 0;
  {
    // One I/O per record (a gap between them would do too): no aggregation.
    TxgWriter w(&dev_, &allocator_, 1, TxgWriterOptions{.aggregation_limit_bytes = kBlock}, &stats_,
                &buffers_, [&](uint64_t bytes) { undirtied += bytes; });
    for (const auto& r : records) {
      auto bp = w.WriteStable(base, r, space::AllocClass::kData, kBlock);
      ASSERT_TRUE(bp.ok()) << bp.status().ToString();
      bps.push_back(*bp);
    }
    ASSERT_TRUE(w.Finish().ok());
  }
  EXPECT_EQ(undirtied, 3 * kBlock);
  EXPECT_EQ(bps[0].compression, format::Compression::kOff);
  EXPECT_EQ(bps[1].compression, format::Compression::kLz4);
  EXPECT_EQ(bps[2].compression, format::Compression::kOff);
  const std::vector<WriteLog::Write> writes = dev_.writes();
  ASSERT_EQ(writes.size(), 3u);
  EXPECT_EQ(writes[0].first_iov, random.data()) << "zero copy";
  EXPECT_NE(writes[1].first_iov, repeating.data()) << "the compressed bytes";
  EXPECT_NE(writes[2].first_iov, records[2].data()) << "an unaligned record is copied";
  BlockReader reader(mem_.get(), 4096, &stats_);
  for (size_t i = 0; i < bps.size(); i++) {
    Result<std::vector<uint8_t>> back = reader.ReadBlock(bps[i]);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(std::equal(back->begin(), back->end(), records[i].begin(), records[i].end()))
        << "record " << i;
  }
}

// BlockReader::ReadBlockInto: a block stored as it is, read into memory
// the device can take, is read straight there; a compressed block, or
// memory the device cannot take, goes through a buffer. Each path reads
// back the record, and each reports a flipped byte as Corruption.
TEST_F(TxgWriterTest, AStoredBlockIsReadStraightIntoItsDestination) {
  io::AlignedBuffer random(kBlock, 4096), repeating(kBlock, 4096);
  SeededRandom(11).Fill(random.data(), kBlock);
  for (uint64_t i = 0; i < kBlock; i++) repeating.data()[i] = static_cast<uint8_t>(i % 5);
  format::BlockPointer base;
  base.type = format::BlockType::kData;
  base.compression = format::Compression::kLz4;
  format::BlockPointer raw_bp, lz4_bp;
  {
    TxgWriter w(&dev_, &allocator_, 1, TxgWriterOptions{}, &stats_, &buffers_, nullptr);
    auto a = w.WriteStable(base, random.span(), space::AllocClass::kData, 0);
    auto b = w.WriteStable(base, repeating.span(), space::AllocClass::kData, 0);
    ASSERT_TRUE(a.ok() && b.ok());
    raw_bp = *a;
    lz4_bp = *b;
    ASSERT_TRUE(w.Finish().ok());
  }
  ASSERT_EQ(raw_bp.compression, format::Compression::kOff);
  ASSERT_EQ(lz4_bp.compression, format::Compression::kLz4);
  io::AlignedBuffer out(kBlock + 4096, 4096);
  struct Case {
    const format::BlockPointer* bp;
    std::span<uint8_t> into;
    std::span<const uint8_t> want;
    bool straight;
  };
  const Case cases[] = {
      {&raw_bp, out.span().first(kBlock), random.span(), true},
      {&lz4_bp, out.span().first(kBlock), repeating.span(), false},
      {&raw_bp, out.span().subspan(1, kBlock), random.span(), false},  // unaligned
  };
  BlockReader reader(&dev_, 4096, &stats_);
  for (size_t i = 0; i < std::size(cases); i++) {
    const Case& c = cases[i];
    std::memset(out.data(), 0, out.size());
    dev_.TakeReads();
    Status s = reader.ReadBlockInto(*c.bp, c.into);
    ASSERT_TRUE(s.ok()) << "case " << i << ": " << s.ToString();
    EXPECT_TRUE(std::equal(c.into.begin(), c.into.end(), c.want.begin(), c.want.end()))
        << "case " << i;
    const std::vector<const uint8_t*> reads = dev_.TakeReads();
    ASSERT_EQ(reads.size(), 1u) << "case " << i;
    EXPECT_EQ(reads[0] == c.into.data(), c.straight) << "case " << i;
  }
  // A flipped byte in each block: every path says Corruption, and counts it.
  for (const format::BlockPointer* bp : {&raw_bp, &lz4_bp}) {
    io::AlignedBuffer unit(4096, 4096);
    const uint64_t at = bp->offset_units * 4096;
    ASSERT_TRUE(io::ReadSync(*mem_, at, unit.span()).ok());
    unit.data()[100] ^= 0x40;
    ASSERT_TRUE(io::WriteSync(*mem_, at, unit.span()).ok());
  }
  for (size_t i = 0; i < std::size(cases); i++) {
    Status s = reader.ReadBlockInto(*cases[i].bp, cases[i].into);
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << "case " << i << ": " << s.ToString();
  }
  EXPECT_EQ(stats_.checksum_errors->Value(), std::size(cases));
}

// Incompressible streaks: after 32 records in a row stored raw, only one in
// 16 is tried; a compressible record between probes is stored raw (and
// reads back), and one that compresses at a probe ends the streak.
TEST_F(TxgWriterTest, AStreakOfIncompressibleRecordsIsProbedNotCompressedEachTime) {
  constexpr uint64_t kRecord = 16 * kKiB;
  constexpr int kRecords = 50;
  io::AlignedBuffer data(kRecords * kRecord, 4096);
  SeededRandom rnd(11);
  rnd.Fill(data.data(), data.size());
  auto compressible = [&](int i) {
    uint8_t* p = data.data() + i * kRecord;
    for (uint64_t j = 0; j < kRecord; j++) p[j] = static_cast<uint8_t>(j / 512);
  };
  compressible(33);  // inside the streak, between probes
  compressible(48);  // the probe after 48 raw records
  compressible(49);  // tried again: the streak is over
  format::BlockPointer base;
  base.type = format::BlockType::kData;
  base.compression = format::Compression::kLz4;
  std::vector<format::BlockPointer> bps;
  const int64_t skipped_before = registry_.TakeSnapshot().Get("io", "compress_skipped");
  io::AlignedBuffer one_unit(4096, 4096);
  rnd.Fill(one_unit.data(), one_unit.size());
  format::BlockPointer after_small;
  {
    TxgWriter w(&dev_, &allocator_, 1, TxgWriterOptions{}, &stats_, &buffers_, [](uint64_t) {});
    for (int i = 0; i < kRecords; i++) {
      auto bp = w.WriteStable(base, std::span<const uint8_t>(data.data() + i * kRecord, kRecord),
                              space::AllocClass::kData, kRecord);
      ASSERT_TRUE(bp.ok()) << bp.status().ToString();
      bps.push_back(*bp);
    }
    // Records of one unit cannot pay for compression: they are not tried
    // and do not start a streak, so the compressible record after 40 of
    // them is still compressed.
    for (int i = 0; i < 40; i++) {
      auto bp = w.WriteStable(base, one_unit.span(), space::AllocClass::kData, 4096);
      ASSERT_TRUE(bp.ok()) << bp.status().ToString();
      EXPECT_EQ(bp->compression, format::Compression::kOff);
    }
    auto bp = w.WriteStable(base, std::span<const uint8_t>(data.data() + 49 * kRecord, kRecord),
                            space::AllocClass::kData, kRecord);
    ASSERT_TRUE(bp.ok()) << bp.status().ToString();
    after_small = *bp;
    ASSERT_TRUE(w.Finish().ok());
  }
  EXPECT_EQ(after_small.compression, format::Compression::kLz4);
  for (int i = 0; i < kRecords; i++) {
    const bool compressed = i == 48 || i == 49;
    EXPECT_EQ(bps[i].compression,
              compressed ? format::Compression::kLz4 : format::Compression::kOff)
        << "record " << i;
  }
  EXPECT_EQ(registry_.TakeSnapshot().Get("io", "compress_skipped") - skipped_before, 15)
      << "records 33 to 47";
  BlockReader reader(mem_.get(), 4096, &stats_);
  for (int i : {33, 47, 48, 49}) {
    Result<std::vector<uint8_t>> back = reader.ReadBlock(bps[i]);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(std::equal(back->begin(), back->end(), data.data() + i * kRecord))
        << "record " << i;
  }
}

// Block buffers go back to the pool's cache as their writes complete, and
// the next txg's compressed records and metadata blocks reuse them: no new
// buffer, the bytes read back, and the padding past a block's compressed
// bytes is zeros on the device, not what the reused buffer held.
TEST_F(TxgWriterTest, BlockBuffersAreReusedByTheNextTxg) {
  constexpr int kRecords = 8;
  constexpr uint64_t kRecord = 64 * kKiB;
  format::BlockPointer base;
  base.type = format::BlockType::kData;
  base.compression = format::Compression::kLz4;
  std::vector<std::vector<uint8_t>> records;
  std::vector<format::BlockPointer> bps;
  uint64_t made_by_first = 0;
  for (uint64_t txg = 1; txg <= 2; txg++) {
    TxgWriter w(&dev_, &allocator_, txg, TxgWriterOptions{}, &stats_, &buffers_, nullptr);
    for (int i = 0; i < kRecords; i++) {
      // Compressible (runs of a byte), and each txg's compress to other sizes.
      io::AlignedBuffer rec(kRecord, 4096);
      SeededRandom rnd(txg * 100 + i);
      for (uint64_t j = 0; j < kRecord; j += 64 * txg) {
        std::memset(rec.data() + j, static_cast<int>(rnd.Next() & 0xff), 64 * txg);
      }
      auto bp = i % 2 == 0 ? w.WriteStable(base, rec.span(), space::AllocClass::kData, 0)
                           : w.WriteBlock(base, rec.span());  // a metadata block
      ASSERT_TRUE(bp.ok()) << bp.status().ToString();
      ASSERT_EQ(bp->compression, format::Compression::kLz4) << "txg " << txg << " block " << i;
      records.emplace_back(rec.data(), rec.data() + kRecord);
      bps.push_back(*bp);
    }
    ASSERT_TRUE(w.Finish().ok());
    if (txg == 1) made_by_first = buffers_.made();
  }
  EXPECT_GT(made_by_first, 0u);
  EXPECT_EQ(buffers_.made(), made_by_first) << "the second txg made no buffer";
  EXPECT_EQ(stats_.write_buffers_made->Value(), made_by_first);
  BlockReader reader(mem_.get(), 4096, &stats_);
  for (size_t i = 0; i < bps.size(); i++) {
    Result<std::vector<uint8_t>> back = reader.ReadBlock(bps[i]);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_EQ(*back, records[i]) << "block " << i;
    const uint64_t allocated = bps[i].AllocatedBytes(4096);
    std::vector<uint8_t> on_disk(allocated);
    ASSERT_TRUE(io::ReadSync(*mem_, bps[i].offset_units * 4096, on_disk).ok());
    EXPECT_TRUE(std::all_of(on_disk.begin() + bps[i].physical_bytes, on_disk.end(),
                            [](uint8_t b) { return b == 0; }))
        << "padding of block " << i;
  }
}

// Holds every write until Release(), so that a test can look at the cache
// while blocks are at the device.
class HeldWrites final : public io::ForwardingDevice {
 public:
  using ForwardingDevice::ForwardingDevice;
  void Submit(io::IoRequest r) override {
    if (r.op != io::IoOp::kWrite) return ForwardingDevice::Submit(std::move(r));
    MutexLock l(&mu_);
    held_.push_back(std::move(r));
    cv_.SignalAll();
  }
  // Waits for a held write; returns where its first iovec points.
  const uint8_t* WaitForOne() {
    MutexLock l(&mu_);
    while (held_.empty()) cv_.Wait(&mu_);
    return held_.front().iov[0].data;
  }
  void Release() {
    std::vector<io::IoRequest> go;
    {
      MutexLock l(&mu_);
      go.swap(held_);
    }
    for (io::IoRequest& r : go) ForwardingDevice::Submit(std::move(r));
  }

 private:
  Mutex mu_;
  CondVar cv_;
  std::vector<io::IoRequest> held_ ARC_GUARDED_BY(mu_);
};

// A compressed block's buffer is the block's rounded size, not the
// record's, and goes back to the cache only when its write completes: a
// Take meanwhile never gets memory the device is still reading.
TEST_F(TxgWriterTest, ABlockBufferReturnsToTheCacheOnlyWhenItsWriteCompletes) {
  HeldWrites held(mem_.get());
  io::AlignedBuffer rec(kBlock, 4096);
  for (uint64_t j = 0; j < kBlock; j++) rec.data()[j] = static_cast<uint8_t>(j / 1024);
  format::BlockPointer base;
  base.type = format::BlockType::kData;
  base.compression = format::Compression::kLz4;
  TxgWriter w(&held, &allocator_, 1, TxgWriterOptions{}, &stats_, &buffers_, nullptr);
  auto bp = w.WriteStable(base, rec.span(), space::AllocClass::kData, 0);
  ASSERT_TRUE(bp.ok()) << bp.status().ToString();
  ASSERT_EQ(bp->compression, format::Compression::kLz4);
  Status finished;
  std::thread finisher([&] { finished = w.Finish(); });
  const uint8_t* at_device = held.WaitForOne();
  io::AlignedBuffer meanwhile = buffers_.Take(1);
  EXPECT_NE(meanwhile.data(), at_device) << "the cache gave out a buffer still being written";
  buffers_.Give(std::move(meanwhile));
  held.Release();
  finisher.join();
  ASSERT_TRUE(finished.ok()) << finished.ToString();
  // Back now: the smallest kept buffer that holds the block is its own.
  const size_t block_bytes = bp->AllocatedBytes(4096);
  EXPECT_LT(block_bytes, kBlock);
  io::AlignedBuffer again = buffers_.Take(block_bytes);
  EXPECT_EQ(again.data(), at_device);
  EXPECT_EQ(again.size(), block_bytes) << "sized to the block, not the record";
}

TEST_F(TxgWriterTest, AdjacentBlocksUpToTheLimitAreOneWrite) {
  std::vector<WriteLog::Write> ws = WriteBlocks(Range(8, 8));
  ASSERT_EQ(ws.size(), 1u);
  EXPECT_EQ(ws[0].offset_bytes, 8 * kBlock);
  EXPECT_EQ(ws[0].length_bytes, 1 * kMiB);
  EXPECT_EQ(ws[0].parts, 8u);
}

// A run a little over the limit is cut in two nearly equal writes, not the
// limit and a small tail: 9 blocks are 5 + 4, not 8 + 1.
TEST_F(TxgWriterTest, ALongerRunIsCutEvenly) {
  EXPECT_EQ(Lengths(WriteBlocks(Range(0, 9))), (std::vector<uint64_t>{5, 4}));
}

// A long run goes in writes of the limit while it grows; its end is cut
// evenly: 20 blocks are 8 + 6 + 6.
TEST_F(TxgWriterTest, ALongRunGoesInFullWritesThenAnEvenCut) {
  std::vector<WriteLog::Write> ws = WriteBlocks(Range(0, 20));
  EXPECT_EQ(Lengths(ws), (std::vector<uint64_t>{8, 6, 6}));
  for (size_t i = 1; i < ws.size(); i++) {
    EXPECT_EQ(ws[i].offset_bytes, ws[i - 1].offset_bytes + ws[i - 1].length_bytes);
  }
}

// Blocks that are not adjacent are separate writes; a gap ends a run.
TEST_F(TxgWriterTest, AGapEndsARun) {
  std::vector<uint64_t> idx = Range(0, 3);
  for (uint64_t i : Range(10, 3)) idx.push_back(i);
  idx.push_back(40);
  std::vector<WriteLog::Write> ws = WriteBlocks(idx);
  EXPECT_EQ(Lengths(ws), (std::vector<uint64_t>{3, 3, 1}));
  EXPECT_EQ(ws[1].offset_bytes, 10 * kBlock);
  EXPECT_EQ(ws[2].parts, 1u);
}

// Random runs: no write is over the limit, every block is written once,
// and a run longer than the limit has no write under half of it.
TEST_F(TxgWriterTest, RandomRunsRespectTheLimitAndCutEvenly) {
  SeededRandom r = SeededRandom::FromEnvironment("RandomRunsRespectTheLimitAndCutEvenly");
  std::vector<uint64_t> idx;
  std::vector<uint64_t> run_lengths;
  uint64_t at = 0;
  while (true) {
    const uint64_t n = r.Range(1, 40);
    if (at + n > 64 * kMiB / kBlock) break;
    for (uint64_t i : Range(at, n)) idx.push_back(i);
    run_lengths.push_back(n);
    at += n + r.Range(1, 3);
  }
  std::vector<WriteLog::Write> ws = WriteBlocks(idx);
  uint64_t blocks = 0;
  size_t w = 0;
  for (uint64_t n : run_lengths) {
    uint64_t covered = 0;
    while (covered < n) {
      ASSERT_LT(w, ws.size());
      const uint64_t len = ws[w].length_bytes / kBlock;
      EXPECT_LE(ws[w].length_bytes, 1 * kMiB);
      if (n > 8) EXPECT_GE(len, 4u) << "run of " << n << " blocks";
      covered += len;
      w++;
    }
    EXPECT_EQ(covered, n);
    blocks += n;
  }
  EXPECT_EQ(w, ws.size());
  EXPECT_EQ(blocks, idx.size());
}

}  // namespace
}  // namespace arcstore::pool
