// Tests of the device I/O queue: class limits and priority order, the
// async-write limit following the dirty fraction, merged reads, accounting,
// refusals and option bounds. A HoldingDevice lets each test decide when
// every request completes.
#include "io/io_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "io/memory_device.h"
#include "stats/registry.h"
#include "testing/holding_device.h"
#include "testing/manual_clock.h"

namespace arcstore::io {
namespace {

using testing::HoldingDevice;

constexpr uint64_t kBlock = 4096;

class IoQueueTest : public ::testing::Test {
 protected:
  void Open(const IoQueueOptions& options) {
    mem_ = std::move(MemoryDevice::Create({.size_bytes = 64ull << 20}).value());
    auto holding = std::make_unique<HoldingDevice>(mem_.get());
    hold_ = holding.get();
    queue_ = std::make_unique<QueuedDevice>(std::move(holding), options, &registry_, &clock_);
  }

  // Submits a request of `cls` at block `block` (one block unless `blocks`)
  // and counts its completion in completed_.
  void Submit(IoClass cls, uint64_t block, uint64_t blocks = 1, IoOp op = IoOp::kWrite) {
    buffers_.emplace_back(blocks * kBlock, 0x5a);
    IoRequest r;
    r.op = op;
    r.offset = block * kBlock;
    if (op == IoOp::kRead || op == IoOp::kWrite) {
      r.iov = {IoVec{buffers_.back().data(), buffers_.back().size()}};
    }
    r.io_class = cls;
    r.done = [this](const Status& s) {
      EXPECT_TRUE(s.ok()) << s.ToString();
      completed_++;
    };
    queue_->Submit(std::move(r));
  }

  std::vector<std::string> Classes(const std::vector<HoldingDevice::Seen>& seen) {
    std::vector<std::string> out;
    for (const auto& s : seen) {
      out.push_back(std::string(IoClassName(s.cls)) + "@" + std::to_string(s.offset / kBlock));
    }
    return out;
  }

  const stats::StatValue& Stat(const char* name) {
    snap_ = registry_.TakeSnapshot();
    const stats::StatValue* v = snap_.Find("io", name);
    EXPECT_NE(v, nullptr) << name;
    return *v;
  }

  stats::Registry registry_;
  arcstore::testing::ManualClock clock_;
  std::unique_ptr<MemoryDevice> mem_;
  HoldingDevice* hold_ = nullptr;
  std::unique_ptr<QueuedDevice> queue_;
  std::deque<std::vector<uint8_t>> buffers_;
  std::atomic<int> completed_{0};
  stats::Snapshot snap_;
};

IoQueueOptions AllClasses(uint32_t min, uint32_t max, uint32_t total) {
  IoQueueOptions o;
  for (auto& l : o.limits) l = IoClassLimits{min, max};
  o.max_active_total = total;
  return o;
}

// Fills the device with async work, then frees one slot at a time: the
// slots go first to classes below their min_active, then in priority
// order (sync_read, sync_write, log_write, async_read, async_write).
TEST_F(IoQueueTest, MinActiveFirstThenPriorityOrder) {
  Open(AllClasses(1, 3, 6));
  // Tags: class blocks far apart so that no reads merge.
  const std::vector<std::pair<IoClass, uint64_t>> order = {
      {IoClass::kAsyncWrite, 0},   {IoClass::kAsyncRead, 1000}, {IoClass::kLogWrite, 2000},
      {IoClass::kSyncWrite, 3000}, {IoClass::kSyncRead, 4000}};
  for (const auto& [cls, base] : order) {
    const IoOp op = cls == IoClass::kAsyncRead || cls == IoClass::kSyncRead ? IoOp::kRead
                                                                            : IoOp::kWrite;
    for (uint64_t i = 0; i < 4; i++) Submit(cls, base + i * 100, 1, op);
  }
  EXPECT_EQ(Classes(hold_->Log()),
            (std::vector<std::string>{"async_write@0", "async_write@100", "async_write@200",
                                      "async_read@1000", "async_read@1100", "async_read@1200"}));
  for (int i = 0; i < 10; i++) ASSERT_TRUE(hold_->Release(0));
  std::vector<std::string> after = Classes(hold_->Log());
  after.erase(after.begin(), after.begin() + 6);
  EXPECT_EQ(after, (std::vector<std::string>{
                       "sync_read@4000", "sync_write@3000", "log_write@2000", "async_write@300",
                       "sync_read@4100", "async_read@1300", "sync_read@4200", "sync_write@3100",
                       "log_write@2100", "sync_read@4300"}));
  while (hold_->Release(0)) {
  }
  EXPECT_EQ(completed_.load(), 20);
  EXPECT_EQ(Stat("sync_read_active").gauge, 0);
  EXPECT_EQ(Stat("log_write_queued").gauge, 0);
}

TEST_F(IoQueueTest, TotalCapAndClassMaxHold) {
  Open(AllClasses(1, 2, 3));
  for (uint64_t i = 0; i < 5; i++) Submit(IoClass::kSyncWrite, i * 10);
  EXPECT_EQ(hold_->held(), 2u);  // the class max
  for (uint64_t i = 0; i < 5; i++) Submit(IoClass::kLogWrite, 100 + i * 10);
  EXPECT_EQ(hold_->held(), 3u);  // the total cap
  EXPECT_EQ(Stat("sync_write_active").gauge, 2);
  EXPECT_EQ(Stat("sync_write_queued").gauge, 3);
  EXPECT_EQ(Stat("log_write_active").gauge, 1);
  EXPECT_EQ(Stat("log_write_queued").gauge, 4);
  while (hold_->Release(0)) {
  }
  EXPECT_EQ(completed_.load(), 10);
}

// The async-write max_active is min + f x (max - min) for the fraction the
// txg manager reports at each dispatch.
TEST_F(IoQueueTest, AsyncWriteMaxActiveFollowsDirtyFraction) {
  IoQueueOptions o;
  o.limits[static_cast<int>(IoClass::kAsyncWrite)] = IoClassLimits{2, 10};
  Open(o);
  std::atomic<double> fraction{0.0};
  queue_->SetAsyncWriteFraction([&] { return fraction.load(); });
  EXPECT_EQ(queue_->AsyncWriteMaxActive(0.0), 2u);
  EXPECT_EQ(queue_->AsyncWriteMaxActive(0.5), 6u);
  EXPECT_EQ(queue_->AsyncWriteMaxActive(1.0), 10u);
  EXPECT_EQ(queue_->AsyncWriteMaxActive(7.0), 10u);  // clamped
  for (uint64_t i = 0; i < 30; i++) Submit(IoClass::kAsyncWrite, i * 2);
  EXPECT_EQ(hold_->held(), 2u);
  fraction = 0.5;
  ASSERT_TRUE(hold_->Release(0));  // the completion dispatches at 0.5
  EXPECT_EQ(hold_->held(), 6u);
  fraction = 1.0;
  ASSERT_TRUE(hold_->Release(0));
  EXPECT_EQ(hold_->held(), 10u);
  fraction = 0.0;  // back down: nothing issues until fewer than 2 are active
  for (int i = 0; i < 8; i++) ASSERT_TRUE(hold_->Release(0));
  EXPECT_EQ(hold_->held(), 2u);
  ASSERT_TRUE(hold_->Release(0));
  EXPECT_EQ(hold_->held(), 2u);
  while (hold_->Release(0)) {
  }
  EXPECT_EQ(completed_.load(), 30);
}

// Async reads waiting together become one device read when they are within
// read_gap_limit_bytes of each other; each caller gets its own bytes.
TEST_F(IoQueueTest, WaitingAsyncReadsMergeAcrossSmallGaps) {
  IoQueueOptions o;
  o.limits[static_cast<int>(IoClass::kAsyncRead)] = IoClassLimits{1, 1};
  o.read_gap_limit_bytes = 8 * kBlock;
  Open(o);
  // The device holds block b's number in every byte of it.
  for (uint64_t b = 0; b < 64; b++) {
    std::vector<uint8_t> v(kBlock, static_cast<uint8_t>(b));
    ASSERT_TRUE(WriteSync(*mem_, b * kBlock, v).ok());
  }
  Submit(IoClass::kAsyncRead, 40, 1, IoOp::kRead);  // issued at once
  Submit(IoClass::kAsyncRead, 5, 2, IoOp::kRead);   // blocks 5-6
  Submit(IoClass::kAsyncRead, 1, 1, IoOp::kRead);   // gap of 3 blocks before 5
  Submit(IoClass::kAsyncRead, 7, 1, IoOp::kRead);   // adjacent
  Submit(IoClass::kAsyncRead, 30, 1, IoOp::kRead);  // 22 blocks away: alone
  ASSERT_TRUE(hold_->Release(0));
  std::vector<HoldingDevice::Seen> held = hold_->Held();
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].offset, 1 * kBlock);
  EXPECT_EQ(held[0].bytes, 7 * kBlock);  // blocks 1..7
  EXPECT_EQ(held[0].parts, 3u);
  while (hold_->Release(0)) {
  }
  EXPECT_EQ(completed_.load(), 5);
  // buffers_: 40, 5-6, 1, 7, 30.
  const std::vector<std::vector<uint8_t>> want = {
      std::vector<uint8_t>(kBlock, 40), {}, std::vector<uint8_t>(kBlock, 1),
      std::vector<uint8_t>(kBlock, 7), std::vector<uint8_t>(kBlock, 30)};
  for (size_t i : {0, 2, 3, 4}) EXPECT_EQ(buffers_[i], want[i]) << i;
  EXPECT_EQ(std::vector<uint8_t>(buffers_[1].begin(), buffers_[1].begin() + kBlock),
            std::vector<uint8_t>(kBlock, 5));
  EXPECT_EQ(std::vector<uint8_t>(buffers_[1].begin() + kBlock, buffers_[1].end()),
            std::vector<uint8_t>(kBlock, 6));
  EXPECT_EQ(Stat("async_read_ops").counter, 3u);  // device reads
  EXPECT_EQ(Stat("async_read_bytes").counter, 9 * kBlock);
  EXPECT_EQ(Stat("async_read_size_agg_bytes").histogram.count, 1u);
  EXPECT_EQ(Stat("async_read_size_agg_bytes").histogram.max, 7 * kBlock);
  EXPECT_EQ(Stat("async_read_size_ind_bytes").histogram.count, 2u);
}

// Queue time, device time, sizes, depth and flushes, with a manual clock.
TEST_F(IoQueueTest, AccountsPerClassWithExactTimes) {
  IoQueueOptions o;
  o.limits[static_cast<int>(IoClass::kSyncRead)] = IoClassLimits{1, 1};
  Open(o);
  Submit(IoClass::kFromOp, 0, 1, IoOp::kRead);  // a read: sync_read
  Submit(IoClass::kFromOp, 8, 2, IoOp::kRead);  // waits: max_active 1
  clock_.AdvanceNs(500);
  ASSERT_TRUE(hold_->Release(0));  // first: 500 ns at the device; second issues
  clock_.AdvanceNs(300);
  ASSERT_TRUE(hold_->Release(0));
  EXPECT_EQ(Stat("sync_read_ops").counter, 2u);
  EXPECT_EQ(Stat("sync_read_bytes").counter, 3 * kBlock);
  EXPECT_EQ(Stat("sync_read_queue_ns").histogram.max, 500u);
  EXPECT_EQ(Stat("sync_read_queue_ns").histogram.sum, 500u);
  EXPECT_EQ(Stat("sync_read_latency_ns").histogram.max, 500u);
  EXPECT_EQ(Stat("sync_read_latency_ns").histogram.sum, 800u);
  EXPECT_EQ(Stat("sync_read_size_ind_bytes").histogram.count, 2u);

  // An aggregated write (the txg sync merged four blocks).
  std::vector<uint8_t> buf(4 * kBlock, 1);
  IoRequest w{.op = IoOp::kWrite, .offset = 64 * kBlock};
  for (int i = 0; i < 4; i++) w.iov.push_back(IoVec{buf.data() + i * kBlock, kBlock});
  w.io_class = IoClass::kAsyncWrite;
  w.parts = 4;
  w.done = [](const Status& s) { EXPECT_TRUE(s.ok()); };
  queue_->Submit(std::move(w));
  Submit(IoClass::kFromOp, 0, 0, IoOp::kFlush);
  EXPECT_EQ(Stat("inflight_depth").histogram.max, 2u);
  clock_.AdvanceNs(1000);
  while (hold_->Release(0)) {
  }
  EXPECT_EQ(Stat("async_write_ops").counter, 1u);
  EXPECT_EQ(Stat("async_write_size_agg_bytes").histogram.count, 1u);
  EXPECT_EQ(Stat("async_write_size_agg_bytes").histogram.sum, 4 * kBlock);
  EXPECT_EQ(Stat("async_write_size_ind_bytes").histogram.count, 0u);
  EXPECT_EQ(Stat("flushes").counter, 1u);
  EXPECT_EQ(Stat("flush_latency_ns").histogram.max, 1000u);
  EXPECT_EQ(Stat("sync_write_ops").counter, 0u);  // flushes count only as flushes
  EXPECT_EQ(Stat("sync_write_queue_ns").histogram.count, 0u);
  EXPECT_EQ(Stat("inflight_depth").histogram.count, 4u);
}

// Execute takes a free slot of its class and runs on the caller's thread;
// with the class full or anyone of it waiting, it waits in line (FIFO).
TEST_F(IoQueueTest, ExecuteTakesAFreeSlotElseWaitsInLine) {
  IoQueueOptions o;
  o.limits[static_cast<int>(IoClass::kLogWrite)] = IoClassLimits{1, 1};
  Open(o);
  std::vector<uint8_t> a(kBlock, 1), b(kBlock, 2);
  auto execute = [this](std::vector<uint8_t>* buf, uint64_t block) {
    IoRequest r{.op = IoOp::kWrite, .offset = block * kBlock, .iov = {{buf->data(), kBlock}}};
    r.io_class = IoClass::kLogWrite;
    return queue_->Execute(std::move(r));
  };
  Status first, third;
  std::thread t1([&] { first = execute(&a, 0); });
  hold_->WaitHeld(1);  // issued at once: the class had a free slot
  EXPECT_EQ(Stat("log_write_active").gauge, 1);
  EXPECT_EQ(Stat("log_write_queue_ns").histogram.count, 1u);
  Submit(IoClass::kLogWrite, 10);  // the class is full: queued
  EXPECT_EQ(Stat("log_write_queued").gauge, 1);
  std::thread t3([&] { third = execute(&b, 20); });
  while (Stat("log_write_queued").gauge < 2) std::this_thread::yield();
  EXPECT_EQ(hold_->held(), 1u);
  clock_.AdvanceNs(700);
  ASSERT_TRUE(hold_->Release(0));  // the first returns; its slot goes to block 10
  t1.join();
  EXPECT_TRUE(first.ok()) << first.ToString();
  EXPECT_EQ(Stat("log_write_latency_ns").histogram.max, 700u);
  hold_->WaitHeld(1);
  ASSERT_TRUE(hold_->Release(0));
  hold_->WaitHeld(1);
  ASSERT_TRUE(hold_->Release(0));
  t3.join();
  EXPECT_TRUE(third.ok()) << third.ToString();
  EXPECT_EQ(Classes(hold_->Log()),
            (std::vector<std::string>{"log_write@0", "log_write@10", "log_write@20"}));
  EXPECT_EQ(Stat("log_write_ops").counter, 3u);
  EXPECT_EQ(Stat("log_write_active").gauge, 0);
  std::vector<uint8_t> back(kBlock);
  ASSERT_TRUE(ReadSync(*mem_, 20 * kBlock, back).ok());
  EXPECT_EQ(back, b);
  // A refused request returns its error without taking a slot.
  IoRequest bad{.op = IoOp::kWrite, .offset = 1, .iov = {{a.data(), kBlock}}};
  EXPECT_EQ(queue_->Execute(std::move(bad)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(Stat("log_write_active").gauge, 0);
}

TEST_F(IoQueueTest, RefusesBadRequestsAndOverfullQueues) {
  IoQueueOptions o = AllClasses(1, 1, 1);
  o.max_queued_per_class = 2;
  Open(o);
  std::vector<uint8_t> buf(100);
  Status got;
  IoRequest bad{.op = IoOp::kWrite, .offset = 4096, .iov = {IoVec{buf.data(), buf.size()}}};
  bad.done = [&](const Status& s) { got = s; };
  queue_->Submit(std::move(bad));
  EXPECT_EQ(got.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(got.message().find("offset 4096"), std::string::npos) << got.ToString();
  Submit(IoClass::kSyncWrite, 0);
  Submit(IoClass::kSyncWrite, 1);
  Submit(IoClass::kSyncWrite, 2);  // queued: 2
  std::vector<uint8_t> b(kBlock);
  IoRequest extra{.op = IoOp::kWrite, .offset = 3 * kBlock, .iov = {IoVec{b.data(), b.size()}}};
  extra.done = [&](const Status& s) { got = s; };
  queue_->Submit(std::move(extra));
  EXPECT_EQ(got.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(got.message().find("sync_write"), std::string::npos) << got.ToString();
  while (hold_->Release(0)) {
  }
  EXPECT_EQ(completed_.load(), 3);
}

TEST(IoQueueOptionsTest, BoundsNameTheOption) {
  EXPECT_TRUE(IoQueueOptions().Validate().ok());
  IoQueueOptions o;
  o.limits[static_cast<int>(IoClass::kLogWrite)] = IoClassLimits{5, 4};
  Status s = o.Validate();
  EXPECT_NE(s.message().find("log_write"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("min_active 5"), std::string::npos) << s.ToString();
  o = IoQueueOptions();
  o.limits[0].max_active = 0;
  EXPECT_NE(o.Validate().message().find("sync_read: max_active 0"), std::string::npos);
  o = IoQueueOptions();
  o.max_active_total = 0;
  EXPECT_FALSE(o.Validate().ok());
  o = IoQueueOptions();
  o.read_gap_limit_bytes = 2 << 20;
  EXPECT_NE(o.Validate().message().find("read_gap_limit_bytes"), std::string::npos);
  o = IoQueueOptions();
  o.read_aggregation_limit_bytes = 1024;
  EXPECT_FALSE(o.Validate().ok());
}

}  // namespace
}  // namespace arcstore::io
