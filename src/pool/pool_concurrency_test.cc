// Many writers, readers and flushes on one pool while txgs sync in the
// background (label "concurrency": CI runs it under TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>

#include "base/random.h"
#include "io/memory_device.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

// A PreparedWrite of `v` at `offset` holding `bytes`.
std::unique_ptr<PreparedWrite> Prepared(Volume* v, uint64_t offset,
                                        std::span<const uint8_t> bytes) {
  std::unique_ptr<PreparedWrite> p = v->PrepareWrite(offset, bytes.size());
  size_t at = 0;
  for (std::span<uint8_t> piece : p->pieces()) {
    std::memcpy(piece.data(), bytes.data() + at, piece.size());
    at += piece.size();
  }
  return p;
}

// A pool `name` on a 64 MiB memory device, with default options and one
// volume "v" of `records` records of `record_bytes` (nulls on a failure).
struct TestPool {
  std::unique_ptr<PoolImpl> pool;
  std::shared_ptr<Volume> v;
};
TestPool OneVolumePool(const std::string& name, int records, uint32_t record_bytes) {
  io::MemoryDeviceOptions mo;
  mo.size_bytes = 64 * kMiB;
  auto dev = *io::MemoryDevice::Create(mo);
  EXPECT_TRUE(PoolImpl::Format(dev.get(), name).ok());
  Result<std::unique_ptr<PoolImpl>> pool = PoolImpl::OpenOnDevice(std::move(dev), PoolOptions{});
  if (!pool.ok()) return {};
  VolumeOptions vo;
  vo.name = "v";
  vo.size_bytes = uint64_t(records) * record_bytes;
  vo.record_size_bytes = record_bytes;
  EXPECT_TRUE((*pool)->CreateVolume(vo).ok());
  Result<std::shared_ptr<Volume>> v = (*pool)->OpenVolume("v");
  if (!v.ok()) return {};
  return {std::move(*pool), std::move(*v)};
}

// The ARC's invariants, checked at a quiescent point (the reads of a test
// may have started prefetches, and the handle cache's evictor runs on its
// own).
void ExpectArcConsistent(PoolImpl* pool) {
  ASSERT_TRUE(pool->QuiesceForCheck().ok());
  const Status s = pool->arc().CheckInvariants();
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(PoolConcurrencyTest, WritersReadersAndSyncsAgree) {
  io::MemoryDeviceOptions mo;
  mo.size_bytes = 128 * kMiB;
  auto dev = *io::MemoryDevice::Create(mo);
  ASSERT_TRUE(PoolImpl::Format(dev.get(), "conc").ok());
  PoolOptions po;
  po.dirty_max_bytes = 8 * kMiB;  // small: syncs kick often, the throttle works
  po.arc_max_bytes = 64 * kMiB;
  auto pool = *PoolImpl::OpenOnDevice(std::move(dev), po);
  VolumeOptions vo;
  vo.name = "v";
  vo.size_bytes = 16 * kMiB;
  vo.record_size_bytes = 16 * 1024;
  ASSERT_TRUE(pool->CreateVolume(vo).ok());
  std::shared_ptr<Volume> v = *pool->OpenVolume("v");

  const int writers = 4;
  const uint64_t region = vo.size_bytes / writers;
  const uint64_t ops = ScaledIterations(1500);
  SeededRandom seeds = SeededRandom::FromEnvironment("PoolConcurrencyTest");
  std::vector<std::vector<uint8_t>> models(writers, std::vector<uint8_t>(region, 0));
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; w++) {
    threads.emplace_back([&, w, rnd = seeds.Fork()]() mutable {
      std::vector<uint8_t>& m = models[w];
      const uint64_t base = region * w;
      for (uint64_t i = 0; i < ops; i++) {
        const uint64_t off = rnd.Uniform(region - 1);
        const uint64_t len = rnd.Range(1, std::min<uint64_t>(region - off, 40000));
        if (rnd.OneIn(8)) {
          ASSERT_TRUE(v->Trim(base + off, len).ok());
          std::memset(m.data() + off, 0, len);
        } else {
          std::vector<uint8_t> d(len);
          rnd.Fill(d.data(), len);
          if (rnd.OneIn(2)) {
            ASSERT_TRUE(v->Write(base + off, d).ok());
          } else {  // into buffers the volume lends (whole records adopted)
            ASSERT_TRUE(v->WritePrepared(Prepared(v.get(), base + off, d)).ok());
          }
          std::memcpy(m.data() + off, d.data(), len);
        }
        if (rnd.OneIn(10)) {  // read back what this thread owns
          std::vector<uint8_t> got(len);
          ASSERT_TRUE(v->Read(base + off, got).ok());
          ASSERT_EQ(0, std::memcmp(got.data(), m.data() + off, len)) << "writer " << w;
        }
      }
    });
  }
  threads.emplace_back([&, rnd = seeds.Fork()]() mutable {  // flushes
    while (!stop.load()) {
      ASSERT_TRUE(v->Flush().ok());
      if (rnd.OneIn(4)) ASSERT_TRUE(pool->DropCaches().ok());
    }
  });
  threads.emplace_back([&, rnd = seeds.Fork()]() mutable {  // readers of anything
    std::vector<uint8_t> buf(64 * 1024);
    while (!stop.load()) {
      const uint64_t off = rnd.Uniform(vo.size_bytes - buf.size());
      const Status read = v->Read(off, buf);
      ASSERT_TRUE(read.ok()) << read.ToString();
      std::vector<Extent> e;
      ASSERT_TRUE(v->BlockStatus(off, buf.size(), &e).ok());
    }
  });
  for (int w = 0; w < writers; w++) threads[w].join();
  stop = true;
  for (size_t t = writers; t < threads.size(); t++) threads[t].join();
  ASSERT_TRUE(v->Flush().ok());
  for (int w = 0; w < writers; w++) {
    std::vector<uint8_t> got(region);
    ASSERT_TRUE(v->Read(region * w, got).ok());
    EXPECT_TRUE(got == models[w]) << "region of writer " << w;
  }
  PoolImpl::Census c = pool->Check();
  for (const auto& p : c.problems) ADD_FAILURE() << p;
  EXPECT_GT(pool->stats().TakeSnapshot().Get("txg", "syncs_dirty_threshold") +
                pool->stats().TakeSnapshot().Get("txg", "syncs_explicit_wait"),
            1);
  ExpectArcConsistent(pool.get());
  v.reset();
  ASSERT_TRUE(pool->Close().ok());
}

TEST(PoolConcurrencyTest, PreparedAndPlainWritesRacingOnRecordsLeaveEachRecordWhole) {
  // Whole-record writes from four threads, half of them from lent buffers,
  // into the same eight records while txgs sync and the log commits: every
  // record ends as exactly one of the versions written to it (a stamp
  // repeated through the record), and no lent buffer is used after it
  // goes (ASan, TSan).
  constexpr uint32_t kRecord = 16 * 1024;
  constexpr int kRecords = 8, kThreads = 4;
  const int writes = static_cast<int>(ScaledIterations(150));
  TestPool made = OneVolumePool("race", kRecords, kRecord);
  std::unique_ptr<PoolImpl>& pool = made.pool;
  std::shared_ptr<Volume>& v = made.v;
  ASSERT_TRUE(pool && v);
  auto stamped = [](uint32_t stamp) {
    std::vector<uint8_t> b(kRecord);
    for (size_t i = 0; i < b.size(); i += 4) std::memcpy(&b[i], &stamp, 4);
    return b;
  };
  std::atomic<bool> stop{false};
  std::thread syncer([&] {
    while (!stop) {
      ASSERT_TRUE(pool->Sync().ok());
      ASSERT_TRUE(v->Flush().ok());
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; t++) {
    writers.emplace_back([&, t] {
      SeededRandom random(77 + t);
      for (int i = 0; i < writes; i++) {
        const uint64_t offset = random.Uniform(kRecords) * kRecord;
        const std::vector<uint8_t> b = stamped(uint32_t(t) << 16 | uint32_t(i));
        if (i % 2 == 0) {
          ASSERT_TRUE(v->WritePrepared(Prepared(v.get(), offset, b)).ok());
        } else {
          ASSERT_TRUE(v->Write(offset, b).ok());
        }
      }
    });
  }
  for (auto& w : writers) w.join();
  stop = true;
  syncer.join();
  EXPECT_EQ(pool->stats().TakeSnapshot().Get("volumes", "adopted_buffers"),
            kThreads * ((writes + 1) / 2));
  for (int r = 0; r < kRecords; r++) {
    std::vector<uint8_t> out(kRecord);
    ASSERT_TRUE(v->Read(uint64_t(r) * kRecord, out).ok());
    uint32_t stamp;
    std::memcpy(&stamp, out.data(), 4);
    EXPECT_EQ(out, stamped(stamp)) << "record " << r << " is torn";
    EXPECT_LT(stamp >> 16, uint32_t(kThreads));
    EXPECT_LT(stamp & 0xffff, uint32_t(writes));
  }
  PoolImpl::Census c = pool->Check();
  for (const auto& p : c.problems) ADD_FAILURE() << p;
  ExpectArcConsistent(pool.get());
  v.reset();
  ASSERT_TRUE(pool->Close().ok());
}

TEST(PoolConcurrencyTest, ChecksWhileTxgsSyncSeeOneCommittedTxgWhole) {
  // Check (fsck's walk) racing syncs: a sync sets the tree's pointers
  // before its blocks reach the device, so a walk in the middle of one
  // would read blocks not yet written. Syncs wait for a walk and a walk
  // for a sync: every walk finds every block whole.
  constexpr uint32_t kRecord = 16 * 1024;
  constexpr int kRecords = 64;
  const int syncs = static_cast<int>(ScaledIterations(60));
  TestPool made = OneVolumePool("check", kRecords, kRecord);
  std::unique_ptr<PoolImpl>& pool = made.pool;
  std::shared_ptr<Volume>& v = made.v;
  ASSERT_TRUE(pool && v);
  std::atomic<bool> done{false};
  std::thread writer([&] {
    SeededRandom random(5);
    std::vector<uint8_t> b(kRecord);
    for (int i = 0; i < syncs; i++) {
      for (int r = 0; r < kRecords / 4; r++) {
        random.Fill(b.data(), b.size());
        ASSERT_TRUE(v->Write(random.Uniform(kRecords) * kRecord, b).ok());
      }
      ASSERT_TRUE(pool->Sync().ok());
    }
    done = true;
  });
  int checks = 0;
  while (!done.load()) {
    PoolImpl::Census c = pool->Check();
    for (const auto& p : c.problems) ADD_FAILURE() << "check " << checks << ": " << p;
    if (!c.problems.empty()) break;
    checks++;
  }
  writer.join();
  EXPECT_GT(checks, 0);
  v.reset();
  ASSERT_TRUE(pool->Close().ok());
}

}  // namespace
}  // namespace arcstore::pool
