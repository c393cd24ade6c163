// Volume operations against a byte model (label "unit"): random writes, FUA
// writes, trims and write-zeroes (with and without NO_HOLE) at any byte
// offset and length, on volumes of 4 KiB, 16 KiB and 64 KiB records, with
// flushes, cache drops and reopens in between; every read, after each step
// and after every reopen, must equal the model byte for byte. Single-threaded
// here so that a mismatch points at one operation; the kill stress loop runs
// the same operations from many threads.
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

#include "base/random.h"
#include "io/forwarding_device.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

struct Case {
  uint32_t record_size;
  const char* compression;
};

class VolumeModelTest : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    io::MemoryDeviceOptions o;
    o.size_bytes = 64 * kMiB;
    mem_ = *io::MemoryDevice::Create(o);
    ASSERT_TRUE(PoolImpl::Format(mem_.get(), "model").ok());
    Open();
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = kSize;
    vo.record_size_bytes = GetParam().record_size;
    vo.compression = GetParam().compression;
    ASSERT_TRUE(pool_->CreateVolume(vo).ok());
    v_ = *pool_->OpenVolume("v");
    model_.assign(kSize, 0);
  }
  void Open() {
    v_.reset();
    pool_.reset();
    PoolOptions po;
    po.work_threads = 0;
    auto p = PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(mem_.get()), po);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
    if (pool_->OpenVolume("v").ok()) v_ = *pool_->OpenVolume("v");
  }
  // The first byte where the volume and the model differ, or "".
  std::string Compare() {
    std::vector<uint8_t> got(kSize);
    Status s = v_->Read(0, got);
    if (!s.ok()) return s.ToString();
    for (uint64_t i = 0; i < kSize; i++) {
      if (got[i] != model_[i]) {
        return "byte " + std::to_string(i) + " (record " +
               std::to_string(i / GetParam().record_size) + ") is " + std::to_string(got[i]) +
               ", the model says " + std::to_string(model_[i]);
      }
    }
    return "";
  }

  static constexpr uint64_t kSize = 1 * kMiB;
  std::unique_ptr<io::MemoryDevice> mem_;
  std::unique_ptr<PoolImpl> pool_;
  std::shared_ptr<Volume> v_;
  std::vector<uint8_t> model_;
};

TEST_P(VolumeModelTest, EveryReadEqualsTheModel) {
  SeededRandom r = SeededRandom::FromEnvironment("VolumeModelTest");
  const uint64_t steps = ScaledIterations(600);
  std::string log;
  for (uint64_t step = 0; step < steps; step++) {
    // Lengths from 1 byte to 3 records, often aligned to 4 KiB or a record.
    const uint64_t rs = GetParam().record_size;
    uint64_t off = r.Uniform(kSize), len = r.Range(1, 3 * rs);
    if (r.OneIn(2)) off = off / 4096 * 4096, len = (len + 4095) / 4096 * 4096;
    if (r.OneIn(3)) off = off / rs * rs, len = (len + rs - 1) / rs * rs;
    len = std::min(len, kSize - off);
    if (len == 0) continue;
    const uint64_t dice = r.Uniform(100);
    Status s;
    std::string what;
    if (dice < 50) {
      std::vector<uint8_t> d(len);
      r.Fill(d.data(), d.size());
      const bool fua = r.OneIn(5);
      s = v_->Write(off, d, fua ? kFua : kWriteNone);
      std::memcpy(model_.data() + off, d.data(), len);
      what = fua ? "fua write" : "write";
    } else if (dice < 65) {
      s = v_->Trim(off, len);
      std::memset(model_.data() + off, 0, len);
      what = "trim";
    } else if (dice < 80) {
      const bool no_hole = r.OneIn(2);
      s = v_->WriteZeroes(off, len, no_hole ? kZeroNoHole : kZeroNone);
      std::memset(model_.data() + off, 0, len);
      what = no_hole ? "zero no_hole" : "zero";
    } else if (dice < 90) {
      s = v_->Flush();
      what = "flush";
    } else if (dice < 95) {
      s = pool_->DropCaches();
      what = "drop caches";
    } else {
      ASSERT_TRUE(pool_->Close().ok());
      Open();
      what = "reopen";
    }
    log += "  " + what + " " + std::to_string(off) + " +" + std::to_string(len) + "\n";
    ASSERT_TRUE(s.ok()) << what << ": " << s.ToString();
    std::string e = Compare();
    ASSERT_EQ(e, "") << "after step " << step << ", the last steps:\n"
                     << log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
  }
}

// DISABLED, engine bug (kill_test.cc's DISABLED_WritersSharingRecords...
// names the cause in VolumeImpl::TryApply): 8 threads each write only
// their own 4 KiB blocks of shared 64 KiB records, 160,000 writes with a
// 16 MiB ARC and 5 ms txgs; at the end every block must hold its owner's
// last write. Fails about every other run (1-2 blocks of 32,768 lost),
// takes about 25 s.
TEST(VolumeSharedRecordsTest, DISABLED_ConcurrentWritersSharingRecordsLoseNothing) {
  io::MemoryDeviceOptions mo;
  mo.size_bytes = 512 * kMiB;
  auto mem = *io::MemoryDevice::Create(mo);
  ASSERT_TRUE(PoolImpl::Format(mem.get(), "shared").ok());
  PoolOptions po;
  po.txg_timeout_ns = 5 * kNsPerMs;
  po.arc_max_bytes = 16 * kMiB;
  po.arc_min_bytes = 16 * kMiB;
  auto pool = *PoolImpl::OpenOnDevice(std::make_unique<io::ForwardingDevice>(mem.get()), po);
  VolumeOptions vo;
  vo.name = "v";
  vo.size_bytes = 128 * kMiB;
  vo.record_size_bytes = 64 * 1024;
  vo.compression = "zstd";
  ASSERT_TRUE(pool->CreateVolume(vo).ok());
  auto v = *pool->OpenVolume("v");
  constexpr uint64_t kThreads = 8, kBlocks = 128 * 256;
  std::vector<uint8_t> last(kBlocks, 0);  // each block's first byte, written by its owner only
  SeededRandom seeds = SeededRandom::FromEnvironment("VolumeSharedRecordsTest");
  const uint64_t writes = ScaledIterations(20'000);
  std::vector<std::thread> ts;
  for (uint64_t t = 0; t < kThreads; t++) {
    ts.emplace_back([&, t, seed = seeds.Next()] {
      SeededRandom r(seed);
      std::vector<uint8_t> buf(4096);
      for (uint64_t i = 0; i < writes; i++) {
        const uint64_t b = r.Uniform(kBlocks / kThreads) * kThreads + t;
        r.Fill(buf.data(), buf.size());
        buf[0] = static_cast<uint8_t>(1 + r.Uniform(255));
        ASSERT_TRUE(v->Write(b * 4096, buf).ok());
        last[b] = buf[0];
      }
    });
  }
  for (auto& t : ts) t.join();
  uint64_t lost = 0;
  std::vector<uint8_t> got(4096);
  for (uint64_t b = 0; b < kBlocks; b++) {
    ASSERT_TRUE(v->Read(b * 4096, got).ok());
    lost += got[0] != last[b];
  }
  EXPECT_EQ(lost, 0u) << lost << " blocks lost their owner's last write";
  ASSERT_TRUE(pool->Close().ok());
}

INSTANTIATE_TEST_SUITE_P(RecordSizes, VolumeModelTest,
                         ::testing::Values(Case{4096, "off"}, Case{16384, "lz4"},
                                           Case{65536, "zstd"}),
                         [](const auto& info) {
                           return std::to_string(info.param.record_size / 1024) + "K_" +
                                  info.param.compression;
                         });

}  // namespace
}  // namespace arcstore::pool
