// SlowDevice: reads complete no sooner than the set latency after they were
// submitted (by Submit or Execute) and carry the inner device's bytes;
// writes pass straight through; bad latencies are refused.
#include "io/slow_device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <condition_variable>
#include <vector>

#include "io/memory_device.h"

namespace arcstore::io {
namespace {

constexpr uint64_t kLatencyNs = 20 * 1000 * 1000;

std::unique_ptr<SlowDevice> Make() {
  auto mem = MemoryDevice::Create({.name = "mem0", .size_bytes = 1 << 20});
  EXPECT_TRUE(mem.ok());
  auto slow = SlowDevice::Create(std::move(*mem), kLatencyNs, DefaultClock());
  EXPECT_TRUE(slow.ok()) << slow.status().ToString();
  return std::move(*slow);
}

TEST(SlowDevice, ReadsTakeAtLeastTheLatencyAndOverlap) {
  auto dev = Make();
  std::vector<uint8_t> data(4096, 0xab);
  ASSERT_TRUE(WriteSync(*dev, 8192, data).ok());
  constexpr int kReads = 8;
  std::vector<std::vector<uint8_t>> out(kReads, std::vector<uint8_t>(4096));
  std::vector<uint64_t> done_ns(kReads, 0);
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;
  const uint64_t start = DefaultClock()->NowNs();
  for (int i = 0; i < kReads; i++) {
    IoRequest r;
    r.op = IoOp::kRead;
    r.offset = 8192;
    r.iov = {IoVec{out[i].data(), out[i].size()}};
    r.done = [&, i](const Status& s) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      std::lock_guard<std::mutex> l(mu);
      done_ns[i] = DefaultClock()->NowNs();
      done++;
      cv.notify_all();
    };
    dev->Submit(std::move(r));
  }
  {
    std::unique_lock<std::mutex> l(mu);
    cv.wait(l, [&] { return done == kReads; });
  }
  for (int i = 0; i < kReads; i++) {
    EXPECT_GE(done_ns[i] - start, kLatencyNs) << "read " << i;
    EXPECT_EQ(out[i], data) << "read " << i;
  }
}

TEST(SlowDevice, ExecuteWaitsTheLatencyWritesPassStraightThrough) {
  auto dev = Make();
  std::vector<uint8_t> data(4096, 0x5c);
  bool written = false;
  IoRequest w;
  w.op = IoOp::kWrite;
  w.offset = 0;
  w.iov = {IoVec{data.data(), data.size()}};
  w.done = [&](const Status& s) { written = s.ok(); };
  dev->Submit(std::move(w));
  EXPECT_TRUE(written);  // the memory device completes inline, and so does the wrapper
  std::vector<uint8_t> out(4096);
  const uint64_t start = DefaultClock()->NowNs();
  ASSERT_TRUE(ReadSync(*dev, 0, out).ok());
  EXPECT_GE(DefaultClock()->NowNs() - start, kLatencyNs);
  EXPECT_EQ(out, data);
}

TEST(SlowDevice, BadLatenciesAreRefused) {
  for (uint64_t ns : {uint64_t{0}, SlowDevice::kMaxLatencyNs + 1}) {
    auto mem = MemoryDevice::Create({.name = "mem0", .size_bytes = 1 << 20});
    ASSERT_TRUE(mem.ok());
    auto slow = SlowDevice::Create(std::move(*mem), ns, DefaultClock());
    ASSERT_FALSE(slow.ok());
    EXPECT_NE(slow.status().message().find("read latency"), std::string::npos);
  }
}

}  // namespace
}  // namespace arcstore::io
