// Records that trims or zeroing leave all zeros in parts (VolumeImpl's
// Dirty::zeroed_as): a filesystem's discards cover a record in pieces (ext4
// trims per block group, and its groups are not record-aligned), and the
// record must then take no data space, as a whole-record trim would. A
// zeroing with NO_HOLE keeps its record as data.
//
// The volume runs in a real pool on a memory device, compression off, so a
// data record takes exactly its record size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"

namespace arcstore::volume {
namespace {

constexpr uint32_t kRecord = 128 * 1024;
constexpr uint32_t kHalf = kRecord / 2;
// What each sync adds besides the records (indirect blocks, space and
// intent log blocks): far less than a record.
constexpr uint64_t kSlack = kRecord / 4;

class ZeroedRecordTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io::MemoryDeviceOptions o;
    o.size_bytes = 64 * kMiB;
    dev_ = *io::MemoryDevice::Create(o);
    ASSERT_TRUE(pool::PoolImpl::Format(dev_.get(), "zeroed").ok());
    PoolOptions po;
    po.txg_timeout_ns = 600 * kNsPerSec;  // only the test's Sync ends a txg
    po.work_threads = 0;
    auto p = pool::PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(dev_.get()), po);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
    VolumeOptions vo;
    vo.name = "vol";
    vo.size_bytes = 8 * kRecord;
    vo.record_size_bytes = kRecord;
    vo.compression = "off";
    ASSERT_TRUE(pool_->CreateVolume(vo).ok());
    vol_ = *pool_->OpenVolume("vol");
    std::vector<uint8_t> data(8 * kRecord);
    SeededRandom rng(5);
    for (auto& b : data) b = static_cast<uint8_t>(rng.Next() | 1);  // no zero byte
    ASSERT_TRUE(vol_->Write(0, data).ok());
    ASSERT_TRUE(pool_->Sync().ok());
  }
  void TearDown() override {
    vol_.reset();
    if (pool_) EXPECT_TRUE(pool_->Close().ok());
  }
  uint64_t Allocated() { return pool_->Info().allocated_bytes; }
  // The extent that starts record r.
  Extent StatusOf(uint64_t r) {
    std::vector<Extent> e;
    EXPECT_TRUE(vol_->BlockStatus(r * kRecord, kRecord, &e).ok());
    EXPECT_FALSE(e.empty());
    return e.empty() ? Extent{} : e[0];
  }
  bool ReadsZeros(uint64_t offset, uint64_t n) {
    std::vector<uint8_t> got(n, 0xff);
    EXPECT_TRUE(vol_->Read(offset, got).ok());
    return std::all_of(got.begin(), got.end(), [](uint8_t b) { return b == 0; });
  }

  std::unique_ptr<io::MemoryDevice> dev_;
  std::unique_ptr<pool::PoolImpl> pool_;
  std::shared_ptr<Volume> vol_;
};

TEST_F(ZeroedRecordTest, TrimsCoveringARecordInPartsFreeItInOneTxgOrAcrossTwo) {
  const uint64_t before = Allocated();
  // Record 0: both halves in one txg. Record 1: one half per txg, the
  // second completed from the committed record.
  ASSERT_TRUE(vol_->Trim(0 * kRecord, kHalf).ok());
  ASSERT_TRUE(vol_->Trim(0 * kRecord + kHalf, kHalf).ok());
  ASSERT_TRUE(vol_->Trim(1 * kRecord, kHalf).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  ASSERT_TRUE(vol_->Trim(1 * kRecord + kHalf, kHalf).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_TRUE(ReadsZeros(0, 2 * kRecord));
  EXPECT_TRUE(StatusOf(0).hole);
  EXPECT_TRUE(StatusOf(1).hole);
  // Two records' data space went.
  EXPECT_LE(Allocated() + 2 * kRecord, before + kSlack) << "before " << before;
  // Trims at sector granularity across a record boundary: record 2 whole
  // in three pieces, record 3 only in part (it keeps its data).
  ASSERT_TRUE(vol_->Trim(2 * kRecord, 1024).ok());
  ASSERT_TRUE(vol_->Trim(2 * kRecord + 1024, kRecord - 2048).ok());
  ASSERT_TRUE(vol_->Trim(3 * kRecord - 1024, 2048).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_TRUE(StatusOf(2).hole);
  EXPECT_FALSE(StatusOf(3).zero);
  EXPECT_TRUE(ReadsZeros(2 * kRecord, kRecord + 1024));
  EXPECT_FALSE(ReadsZeros(3 * kRecord + 1024, 1024));
  EXPECT_LE(Allocated() + 3 * kRecord, before + kSlack);
  EXPECT_TRUE(pool_->Check().problems.empty());
}

TEST_F(ZeroedRecordTest, ZeroingInPartsStoresAZeroMarkerAndNoHoleKeepsData) {
  const uint64_t before = Allocated();
  // Record 4: a trim and a zeroing; record 5: two zeroings; record 6: a
  // trim and a NO_HOLE zeroing (the caller wants it allocated).
  ASSERT_TRUE(vol_->Trim(4 * kRecord, kHalf).ok());
  ASSERT_TRUE(vol_->WriteZeroes(4 * kRecord + kHalf, kHalf).ok());
  ASSERT_TRUE(vol_->WriteZeroes(5 * kRecord, kHalf).ok());
  ASSERT_TRUE(vol_->WriteZeroes(5 * kRecord + kHalf, kHalf).ok());
  ASSERT_TRUE(vol_->Trim(6 * kRecord, kHalf).ok());
  ASSERT_TRUE(vol_->WriteZeroes(6 * kRecord + kHalf, kHalf, kZeroNoHole).ok());
  ASSERT_TRUE(pool_->Sync().ok());
  EXPECT_TRUE(ReadsZeros(4 * kRecord, 3 * kRecord));
  for (uint64_t r : {4, 5}) {
    const Extent e = StatusOf(r);
    EXPECT_TRUE(e.zero && !e.hole) << "record " << r;
  }
  EXPECT_FALSE(StatusOf(6).zero);
  EXPECT_LE(Allocated() + 2 * kRecord, before + kSlack);
  EXPECT_GT(Allocated() + 3 * kRecord, before + kSlack) << "the NO_HOLE record was freed";
  EXPECT_TRUE(pool_->Check().problems.empty());
}

}  // namespace
}  // namespace arcstore::volume
