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
          ASSERT_TRUE(v->Write(base + off, d).ok());
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
      ASSERT_TRUE(v->Read(off, buf).ok());
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
  EXPECT_TRUE(pool->arc().CheckInvariants().ok());
  v.reset();
  ASSERT_TRUE(pool->Close().ok());
}

}  // namespace
}  // namespace arcstore::pool
