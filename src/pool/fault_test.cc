// Device faults (label "crash"): EIO and ENOSPC on writes, reads and
// flushes, and bit flips in data and metadata blocks. The pool reports
// each with its location, never returns bad data, and stays consistent.
//
// After a failed write or flush during a sync the pool FAILS: that txg and
// every later one are refused (writes and flushes return the error), no
// uberblock is written after the failure, and reads go on from what was
// committed. Reopening gives the last committed txg.
#include <gtest/gtest.h>

#include <cstring>

#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"
#include "testing/io/fault_device.h"

namespace arcstore::pool {
namespace {

using Ref = io::ForwardingDevice;

class FaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    io::MemoryDeviceOptions o;
    o.size_bytes = 64 * kMiB;
    mem_ = *io::MemoryDevice::Create(o);
    ASSERT_TRUE(PoolImpl::Format(mem_.get(), "faults").ok());
    faults_ = std::make_unique<io::FaultDevice>(mem_.get(), 7);
    Open(faults_.get());
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = 4 * kMiB;
    vo.record_size_bytes = 64 * 1024;
    vo.compression = "off";
    ASSERT_TRUE(pool_->CreateVolume(vo).ok());
    v_ = *pool_->OpenVolume("v");
    good_.resize(vo.size_bytes);
    SeededRandom(1).Fill(good_.data(), good_.size());
    ASSERT_TRUE(v_->Write(0, good_).ok());
    ASSERT_TRUE(v_->Flush().ok());
  }
  void Open(io::Device* d) {
    v_.reset();
    pool_.reset();
    PoolOptions po;
    po.txg_timeout_ns = 600 * kNsPerSec;
    po.intent_log_sync_kick_percent = 0;  // txgs end only when a test asks
    // Most tests here are about a failing txg sync: flushes sync txgs. The
    // intent log's own failures have their tests below.
    po.intent_log = intent_log_;
    auto p = PoolImpl::OpenOnDevice(std::make_unique<Ref>(d), po, unsafe_);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
  }
  // Reopens on the healthy device, checks the pool and reads the volume.
  std::vector<uint8_t> ReopenCheckAndRead() {
    faults_->ClearRules();
    Open(mem_.get());
    PoolImpl::Census c = pool_->Check();
    for (const auto& p : c.problems) ADD_FAILURE() << p;
    auto v = *pool_->OpenVolume("v");
    std::vector<uint8_t> got(good_.size());
    EXPECT_TRUE(v->Read(0, got).ok());
    return got;
  }
  // Reopens on the healthy device and checks the committed state.
  void ExpectCommittedStateIntact() {
    EXPECT_TRUE(ReopenCheckAndRead() == good_) << "the last committed txg's data is intact";
  }
  void FailNext(io::FaultKind kind, uint32_t ops, uint64_t count = 1) {
    io::FaultRule r;
    r.kind = kind;
    r.ops = ops;
    r.fire_count = count;
    ASSERT_TRUE(faults_->AddRule(r).ok());
  }

  std::unique_ptr<io::MemoryDevice> mem_;
  std::unique_ptr<io::FaultDevice> faults_;
  std::unique_ptr<PoolImpl> pool_;
  std::shared_ptr<Volume> v_;
  std::vector<uint8_t> good_;
  bool intent_log_ = false;
  UnsafeTestSwitches unsafe_;
};

// With the intent log on: the fixture's data committed by a txg, then a
// flush that goes through the log.
class LogFaultTest : public FaultTest {
 protected:
  void SetUp() override {
    intent_log_ = true;
    FaultTest::SetUp();
    ASSERT_TRUE(pool_->Sync().ok());
  }
  // After reopening on the healthy device, the volume is either the
  // committed state or that state with `change` at offset 0: a failed log
  // write or flush may have reached the media, whole, and is replayed.
  void ExpectCommittedOrWithChange(const std::vector<uint8_t>& change) {
    const std::vector<uint8_t> got = ReopenCheckAndRead();
    std::vector<uint8_t> with = good_;
    std::copy(change.begin(), change.end(), with.begin());
    EXPECT_TRUE(got == good_ || got == with)
        << "replayed " << pool_->open_report().log_records_replayed << " records";
  }
};

TEST_F(LogFaultTest, LogWriteErrorFailsThePool) {
  FailNext(io::FaultKind::kIoError, io::kFaultOnWrite);
  const std::vector<uint8_t> change(8192, 0x31);
  ASSERT_TRUE(v_->Write(0, change).ok());
  Status s = v_->Flush();
  ASSERT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("intent log commit"), std::string::npos) << s.ToString();
  EXPECT_EQ(v_->Write(0, std::vector<uint8_t>(10)).code(), StatusCode::kIOError)
      << "a failed pool takes no more writes";
  EXPECT_EQ(v_->Flush().code(), StatusCode::kIOError) << "the failure sticks";
  EXPECT_EQ(pool_->Close().code(), StatusCode::kIOError) << "and no txg syncs at close";
  ExpectCommittedOrWithChange(change);
}

TEST_F(LogFaultTest, FailedLogFlushFailsThePool) {
  // Commits flush the device (a commit whose blocks lie one after another
  // is otherwise one FUA write, no flush).
  unsafe_.log_flush_not_fua = true;
  Open(faults_.get());
  v_ = *pool_->OpenVolume("v");
  FailNext(io::FaultKind::kIoError, io::kFaultOnFlush);
  const std::vector<uint8_t> change(1536 * 1024, 0x32);
  Status s = v_->Write(0, change, kFua);
  ASSERT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
  EXPECT_EQ(v_->Write(0, std::vector<uint8_t>(4096, 0x33), kFua).code(), StatusCode::kIOError)
      << "no write is acknowledged as durable after a failed flush";
  std::vector<uint8_t> got(64 * 1024);
  ASSERT_TRUE(v_->Read(1 * kMiB, got).ok()) << "reads go on";
  EXPECT_EQ(pool_->Close().code(), StatusCode::kIOError);
  ExpectCommittedOrWithChange(change);
}

TEST_F(FaultTest, WriteErrorDuringSyncFailsThePoolAndLosesNothingCommitted) {
  FailNext(io::FaultKind::kIoError, io::kFaultOnWrite);
  ASSERT_TRUE(v_->Write(0, std::vector<uint8_t>(8192, 0x11)).ok());  // buffered
  Status s = v_->Flush();
  ASSERT_EQ(s.code(), StatusCode::kIOError) << s.ToString();
  EXPECT_NE(s.message().find("failed to sync"), std::string::npos) << s.ToString();
  EXPECT_EQ(v_->Write(0, std::vector<uint8_t>(10)).code(), StatusCode::kIOError)
      << "a failed pool takes no more writes";
  std::vector<uint8_t> got(4096);
  EXPECT_TRUE(v_->Read(1 * kMiB, got).ok()) << "reads go on";
  ExpectCommittedStateIntact();
}

TEST_F(FaultTest, FailedDeviceFlushIsNeverTrusted) {
  FailNext(io::FaultKind::kIoError, io::kFaultOnFlush);
  ASSERT_TRUE(v_->Write(0, std::vector<uint8_t>(8192, 0x22)).ok());
  EXPECT_EQ(v_->Flush().code(), StatusCode::kIOError);
  EXPECT_EQ(v_->Flush().code(), StatusCode::kIOError) << "the failure sticks";
  EXPECT_EQ(v_->Write(0, std::vector<uint8_t>(4096, 0x23), kFua).code(), StatusCode::kIOError)
      << "no write is acknowledged as durable after a failed flush";
  std::vector<uint8_t> got(64 * 1024);
  ASSERT_TRUE(v_->Read(1 * kMiB, got).ok()) << "reads go on";
  EXPECT_EQ(0, std::memcmp(got.data(), good_.data() + 1 * kMiB, got.size()));
  EXPECT_EQ(pool_->Close().code(), StatusCode::kIOError) << "close reports the failure too";
  ExpectCommittedStateIntact();
}

TEST_F(FaultTest, DeviceNoSpaceIsReportedAsNoSpace) {
  FailNext(io::FaultKind::kNoSpace, io::kFaultOnWrite);
  ASSERT_TRUE(v_->Write(0, std::vector<uint8_t>(8192, 0x33)).ok());
  EXPECT_EQ(v_->Flush().code(), StatusCode::kNoSpace);
  ExpectCommittedStateIntact();
}

TEST_F(FaultTest, ReadErrorsAndFlipsNameTheVolumeAndOffset) {
  ASSERT_TRUE(pool_->DropCaches().ok());
  FailNext(io::FaultKind::kIoError, io::kFaultOnRead);
  std::vector<uint8_t> got(4096);
  Status s = v_->Read(200 * 1024, got);
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("volume v offset 204800 (record 3)"), std::string::npos)
      << s.ToString();
  FailNext(io::FaultKind::kFlipOnRead, io::kFaultOnRead);
  s = v_->Read(300 * 1024, got);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << "a flipped bit is an error, never data";
  EXPECT_NE(s.message().find("checksum mismatch"), std::string::npos) << s.ToString();
  ASSERT_TRUE(v_->Read(300 * 1024, got).ok()) << "the block itself is fine";
  EXPECT_EQ(0, std::memcmp(got.data(), good_.data() + 300 * 1024, got.size()));
}

// Flips one bit of every block of a kind on the device, reopens, and
// requires the damage to be found where it is.
TEST_F(FaultTest, BitFlipsInEveryKindOfBlockAreFound) {
  v_.reset();
  auto v = static_cast<volume::VolumeImpl*>(pool_->OpenVolume("v")->get());
  format::BlockPointer data_bp = *v->tree().Get(10);
  format::BlockPointer root = v->tree().root();
  ASSERT_EQ(root.type, format::BlockType::kIndirect);
  auto flip = [&](const format::BlockPointer& bp) {
    std::vector<uint8_t> b(4096);
    const uint64_t at = bp.offset_units * 4096;
    ASSERT_TRUE(io::ReadSync(*mem_, at, b).ok());
    b[17] ^= 0x04;
    ASSERT_TRUE(io::WriteSync(*mem_, at, b).ok());
  };
  flip(data_bp);
  Open(mem_.get());
  PoolImpl::Census c = pool_->Check();
  ASSERT_EQ(c.problems.size(), 1u);
  EXPECT_NE(c.problems[0].find("volume v record 10"), std::string::npos) << c.problems[0];
  flip(data_bp);  // repair
  flip(root);     // the volume's top indirect block
  Open(mem_.get());
  c = pool_->Check();
  ASSERT_FALSE(c.problems.empty());
  EXPECT_NE(c.problems[0].find("volume v"), std::string::npos) << c.problems[0];
  auto vv = *pool_->OpenVolume("v");
  std::vector<uint8_t> got(4096);
  Status s = vv->Read(0, got);
  EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
  EXPECT_NE(s.message().find("indirect"), std::string::npos) << s.ToString();
}

}  // namespace
}  // namespace arcstore::pool
