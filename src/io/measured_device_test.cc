// MeasuredDevice: every request is counted by kind with its bytes and its
// latency from submission to completion, on both the Submit and the
// Execute path; failures are counted; the observer sees each completed
// read and write.
#include "io/measured_device.h"

#include <gtest/gtest.h>

#include <vector>

#include "io/memory_device.h"
#include "testing/manual_clock.h"

namespace arcstore::io {
namespace {

// Holds submitted requests until the test completes them, so that the
// manual clock can move between submission and completion.
class HeldDevice final : public ForwardingDevice {
 public:
  explicit HeldDevice(Device* inner) : ForwardingDevice(inner) {}
  void Submit(IoRequest request) override { held_.push_back(std::move(request)); }
  void CompleteAll() {
    std::vector<IoRequest> all;
    all.swap(held_);
    for (IoRequest& r : all) inner()->Submit(std::move(r));
  }

 private:
  std::vector<IoRequest> held_;
};

class MeasuredDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto mem = MemoryDevice::Create({.name = "mem0", .size_bytes = 1 << 20});
    ASSERT_TRUE(mem.ok());
    mem_ = std::move(*mem);
  }
  uint64_t Counter(std::string_view name) {
    return static_cast<uint64_t>(registry_.TakeSnapshot().Get("l2arc.0", name));
  }
  stats::HistogramData Hist(std::string_view name) {
    stats::Snapshot s = registry_.TakeSnapshot();
    const stats::StatValue* v = s.Find("l2arc.0", name);
    EXPECT_NE(v, nullptr) << name;
    return v == nullptr ? stats::HistogramData{} : v->histogram;
  }

  arcstore::testing::ManualClock clock_;
  stats::Registry registry_;
  std::unique_ptr<MemoryDevice> mem_;
};

TEST_F(MeasuredDeviceTest, SubmittedRequestsAreCountedWithTheirLatency) {
  HeldDevice held(mem_.get());
  MeasuredDevice dev(&held, &clock_, &registry_, "l2arc.0");
  std::vector<uint8_t> data(8192, 0x5a);
  int done = 0;
  IoRequest w;
  w.op = IoOp::kWrite;
  w.offset = 4096;
  w.iov = {{data.data(), data.size()}};
  w.done = [&](const Status& s) {
    EXPECT_TRUE(s.ok()) << s.ToString();
    done++;
  };
  dev.Submit(std::move(w));
  clock_.AdvanceNs(3'000'000);
  EXPECT_EQ(Counter("device_writes"), 0u) << "counted before it completed";
  held.CompleteAll();
  ASSERT_EQ(done, 1);
  EXPECT_EQ(Counter("device_writes"), 1u);
  EXPECT_EQ(Counter("device_write_bytes"), 8192u);
  stats::HistogramData h = Hist("device_write_latency_ns");
  EXPECT_EQ(h.count, 1u);
  EXPECT_EQ(h.sum, 3'000'000u);

  std::vector<uint8_t> out(4096);
  IoRequest r;
  r.op = IoOp::kRead;
  r.offset = 8192;
  r.iov = {{out.data(), out.size()}};
  r.done = [&](const Status& s) {
    EXPECT_TRUE(s.ok()) << s.ToString();
    done++;
  };
  dev.Submit(std::move(r));
  clock_.AdvanceNs(250'000);
  held.CompleteAll();
  ASSERT_EQ(done, 2);
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 0x5a));
  EXPECT_EQ(Counter("device_reads"), 1u);
  EXPECT_EQ(Counter("device_read_bytes"), 4096u);
  EXPECT_EQ(Hist("device_read_latency_ns").sum, 250'000u);
  EXPECT_EQ(Counter("device_errors"), 0u);
}

TEST_F(MeasuredDeviceTest, ExecuteIsMeasuredAndFailuresCounted) {
  MeasuredDevice dev(mem_.get(), &clock_, &registry_, "l2arc.0");
  std::vector<uint8_t> data(4096, 1);
  ASSERT_TRUE(WriteSync(dev, 0, data).ok());
  ASSERT_TRUE(ReadSync(dev, 0, std::span<uint8_t>(data)).ok());
  ASSERT_TRUE(FlushSync(dev).ok());
  ASSERT_TRUE(DiscardSync(dev, 0, 4096).ok());
  // Past the end: fails, and is still a read.
  EXPECT_FALSE(ReadSync(dev, 1 << 20, std::span<uint8_t>(data)).ok());
  EXPECT_EQ(Counter("device_reads"), 2u);
  EXPECT_EQ(Counter("device_writes"), 2u);  // the write and the discard
  EXPECT_EQ(Counter("device_write_bytes"), 4096u);
  EXPECT_EQ(Counter("device_flushes"), 1u);
  EXPECT_EQ(Counter("device_errors"), 1u);
}

TEST_F(MeasuredDeviceTest, TheObserverSeesReadsAndWrites) {
  std::vector<TracedIo> seen;
  MeasuredDevice dev(mem_.get(), &clock_, &registry_, "l2arc.0",
                     [&](const TracedIo& io) { seen.push_back(io); });
  std::vector<uint8_t> data(4096, 7);
  ASSERT_TRUE(WriteSync(dev, 12288, data, IoClass::kAsyncWrite).ok());
  ASSERT_TRUE(ReadSync(dev, 12288, std::span<uint8_t>(data), IoClass::kSyncRead).ok());
  ASSERT_TRUE(FlushSync(dev).ok());
  ASSERT_EQ(seen.size(), 2u) << "a flush is not an I/O of the trace";
  EXPECT_EQ(seen[0].op, IoOp::kWrite);
  EXPECT_EQ(seen[0].cls, IoClass::kAsyncWrite);
  EXPECT_EQ(seen[0].offset, 12288u);
  EXPECT_EQ(seen[0].bytes, 4096u);
  EXPECT_TRUE(seen[0].ok);
  EXPECT_EQ(seen[1].op, IoOp::kRead);
  EXPECT_EQ(seen[1].cls, IoClass::kSyncRead);
}

}  // namespace
}  // namespace arcstore::io
