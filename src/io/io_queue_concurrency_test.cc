// Concurrency of the device I/O queue (run under TSan): many threads
// submitting every class to a device that completes on its own threads,
// with the async-write fraction moving; the limits hold at the device,
// every request completes once with its own bytes. And the io_uring and
// psync backends under the queue leave identical bytes for one workload.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <deque>
#include <thread>

#include "base/random.h"
#include "io/aligned_buffer.h"
#include "io/file_device.h"
#include "io/forwarding_device.h"
#include "io/io_queue.h"
#include "io/memory_device.h"
#include "io/uring_device.h"
#include "stats/registry.h"
#include "testing/temp_dir.h"

namespace arcstore::io {
namespace {

constexpr uint64_t kBlock = 4096;

// Completes requests on two worker threads (out of order), executing them
// on a memory device, and records the most requests of each class it ever
// held at once.
class ThreadedDevice final : public ForwardingDevice {
 public:
  explicit ThreadedDevice(Device* inner) : ForwardingDevice(inner) {
    for (int i = 0; i < 2; i++) workers_.emplace_back([this] { Work(); });
  }
  ~ThreadedDevice() override {
    {
      MutexLock l(&mu_);
      stop_ = true;
      cv_.SignalAll();
    }
    for (auto& t : workers_) t.join();
  }
  void Submit(IoRequest r) override {
    const int c = static_cast<int>(r.EffectiveClass());
    const uint32_t now = ++active_[c];
    const uint32_t total = ++total_;
    for (uint32_t seen = max_[c].load(); now > seen && !max_[c].compare_exchange_weak(seen, now);) {
    }
    for (uint32_t seen = max_total_.load();
         total > seen && !max_total_.compare_exchange_weak(seen, total);) {
    }
    MutexLock l(&mu_);
    q_.push_back(std::move(r));
    cv_.Signal();
  }
  uint32_t max_active(IoClass c) const { return max_[static_cast<int>(c)].load(); }
  uint32_t max_total() const { return max_total_.load(); }

 private:
  void Work() {
    for (;;) {
      IoRequest r;
      {
        MutexLock l(&mu_);
        while (!stop_ && q_.empty()) cv_.Wait(&mu_);
        if (q_.empty()) return;
        r = std::move(q_.front());
        q_.pop_front();
      }
      const int c = static_cast<int>(r.EffectiveClass());
      IoCallback done = std::move(r.done);
      r.done = [this, c, done](const Status& s) {
        active_[c]--;
        total_--;
        done(s);
      };
      inner()->Submit(std::move(r));
    }
  }
  std::array<std::atomic<uint32_t>, kNumIoClasses> active_{}, max_{};
  std::atomic<uint32_t> total_{0}, max_total_{0};
  Mutex mu_;
  CondVar cv_;
  std::deque<IoRequest> q_ ARC_GUARDED_BY(mu_);
  bool stop_ ARC_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

TEST(IoQueueConcurrency, LimitsHoldAndEveryRequestCompletesOnce) {
  auto mem = std::move(*MemoryDevice::Create({.size_bytes = 16 * kMiB}));
  auto threaded = std::make_unique<ThreadedDevice>(mem.get());
  ThreadedDevice* dev = threaded.get();
  IoQueueOptions o;
  o.limits = {IoClassLimits{2, 4}, IoClassLimits{1, 3}, IoClassLimits{1, 2},
              IoClassLimits{1, 6}, IoClassLimits{2, 2}};
  o.max_active_total = 9;
  stats::Registry registry;
  QueuedDevice q(std::move(threaded), o, &registry, DefaultClock());
  std::atomic<double> fraction{0.0};
  q.SetAsyncWriteFraction([&] { return fraction.load(); });
  constexpr int kThreads = 6;
  const uint64_t per_thread = ScaledIterations(1500);
  std::atomic<uint64_t> requests{0};
  std::atomic<bool> done_writing{false};
  std::thread mover([&] {
    SeededRandom r(3);
    while (!done_writing.load()) {
      fraction = r.NextDouble() * 1.2;
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      SeededRandom r(100 + t);
      // Each thread owns 64 blocks, 64 blocks (more than the read gap limit)
      // away from the next thread's: with one request per thread at a
      // time, no two reads merge. Writes a block, then reads it back in
      // some read class.
      std::vector<uint8_t> buf(kBlock), back(kBlock);
      const IoClass writes[] = {IoClass::kSyncWrite, IoClass::kAsyncWrite, IoClass::kLogWrite};
      const IoClass reads[] = {IoClass::kSyncRead, IoClass::kAsyncRead};
      for (uint64_t i = 0; i < per_thread; i++) {
        const uint64_t at = (t * 128 + r.Uniform(64)) * kBlock;
        std::fill(buf.begin(), buf.end(), static_cast<uint8_t>(i + t));
        ASSERT_TRUE(WriteSync(q, at, buf, writes[r.Uniform(3)]).ok());
        ASSERT_TRUE(ReadSync(q, at, back, reads[r.Uniform(2)]).ok());
        ASSERT_EQ(back, buf) << "thread " << t << " request " << i;
        requests += 2;
        if (r.OneIn(50)) {
          ASSERT_TRUE(FlushSync(q).ok());
          requests++;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  done_writing = true;
  mover.join();
  for (int c = 0; c < kNumIoClasses; c++) {
    EXPECT_LE(dev->max_active(static_cast<IoClass>(c)), o.limits[c].max_active)
        << IoClassName(static_cast<IoClass>(c));
  }
  EXPECT_LE(dev->max_total(), o.max_active_total);
  const stats::Snapshot s = registry.TakeSnapshot();
  int64_t ops = s.Get("io", "flushes");
  for (int c = 0; c < kNumIoClasses; c++) {
    const std::string n(IoClassName(static_cast<IoClass>(c)));
    ops += s.Get("io", n + "_ops");
    EXPECT_EQ(s.Get("io", n + "_active"), 0) << n;
    EXPECT_EQ(s.Get("io", n + "_queued"), 0) << n;
  }
  EXPECT_EQ(static_cast<uint64_t>(ops), requests.load());  // nothing merged
}

// One seeded workload (rounds of concurrent vectored writes in disjoint
// slots, flushes, reads checked against a model) through the queue over
// each backend; the two files end byte-identical and equal to the model.
class BackendsTest : public ::testing::Test {
 protected:
  std::vector<uint8_t> Run(std::unique_ptr<Device> dev, uint64_t seed) {
    stats::Registry registry;
    QueuedDevice q(std::move(dev), IoQueueOptions(), &registry, DefaultClock());
    const uint64_t size = q.size_bytes();
    std::vector<uint8_t> model(size, 0);
    SeededRandom r(seed);
    constexpr uint64_t kSlot = 64 * 1024;
    const uint64_t rounds = ScaledIterations(40);
    const size_t align = std::max<size_t>(q.buffer_alignment(), 64);
    for (uint64_t round = 0; round < rounds; round++) {
      std::vector<uint64_t> slots(size / kSlot);
      for (size_t i = 0; i < slots.size(); i++) slots[i] = i;
      for (size_t i = slots.size() - 1; i > 0; i--) std::swap(slots[i], slots[r.Uniform(i + 1)]);
      std::vector<AlignedBuffer> bufs;
      std::atomic<int> pending{0};
      Mutex mu;
      CondVar cv;
      const int writes = 32;
      for (int w = 0; w < writes; w++) {
        const uint64_t parts = 1 + r.Uniform(8);
        const uint64_t at = slots[w] * kSlot + r.Uniform(8) * kBlock;
        IoRequest req{.op = IoOp::kWrite, .offset = at};
        req.io_class = w % 2 ? IoClass::kAsyncWrite : IoClass::kSyncWrite;
        req.parts = static_cast<uint32_t>(parts);
        uint64_t pos = at;
        for (uint64_t p = 0; p < parts; p++) {
          bufs.emplace_back(kBlock, align);
          r.Fill(bufs.back().data(), kBlock);
          std::memcpy(model.data() + pos, bufs.back().data(), kBlock);
          req.iov.push_back(IoVec{bufs.back().data(), kBlock});
          pos += kBlock;
        }
        pending++;
        req.done = [&](const Status& s) {
          EXPECT_TRUE(s.ok()) << s.ToString();
          MutexLock l(&mu);
          pending--;
          cv.SignalAll();
        };
        q.Submit(std::move(req));
      }
      {
        MutexLock l(&mu);
        while (pending.load() > 0) cv.Wait(&mu);
      }
      EXPECT_TRUE(FlushSync(q).ok());
      AlignedBuffer back(kSlot, align);
      const uint64_t check = r.Uniform(size / kSlot) * kSlot;
      EXPECT_TRUE(ReadSync(q, check, back.span(), IoClass::kAsyncRead).ok());
      EXPECT_EQ(std::memcmp(back.data(), model.data() + check, kSlot), 0) << "round " << round;
    }
    return model;
  }

  std::vector<uint8_t> FileBytes(const std::string& path) {
    std::vector<uint8_t> out(kSize);
    FILE* f = std::fopen(path.c_str(), "rb");
    EXPECT_NE(f, nullptr);
    EXPECT_EQ(std::fread(out.data(), 1, out.size(), f), out.size());
    std::fclose(f);
    return out;
  }

  static constexpr uint64_t kSize = 8 * kMiB;
  arcstore::testing::TempDir dir_{"arcstore_backends"};
};

TEST_F(BackendsTest, UringAndPsyncLeaveIdenticalBytes) {
  const std::string a = dir_.File("psync"), b = dir_.File("uring");
  ASSERT_TRUE(CreateFileForDevice(a, {.size_bytes = kSize}).ok());
  ASSERT_TRUE(CreateFileForDevice(b, {.size_bytes = kSize}).ok());
  auto psync = FileDevice::Open(a, {});
  ASSERT_TRUE(psync.ok()) << psync.status().ToString();
  auto uring = UringDevice::Open(b, {});
  if (!uring.ok()) GTEST_SKIP() << "io_uring unavailable here: " << uring.status().ToString();
  const uint64_t seed = SeededRandom::FromEnvironment("UringAndPsyncLeaveIdenticalBytes").Next();
  std::vector<uint8_t> model_a = Run(std::move(*psync), seed);
  std::vector<uint8_t> model_b = Run(std::move(*uring), seed);
  ASSERT_EQ(model_a, model_b);
  const std::vector<uint8_t> file_a = FileBytes(a), file_b = FileBytes(b);
  EXPECT_TRUE(file_a == file_b) << "the two backends left different bytes";
  EXPECT_TRUE(file_a == model_a) << "the files differ from the model";
}

}  // namespace
}  // namespace arcstore::io
