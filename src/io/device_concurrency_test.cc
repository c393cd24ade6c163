// Concurrency: many threads submitting to the memory, fault and recording
// devices at once; every completion arrives exactly once and the recording
// stays consistent. Run under TSan with the concurrency label.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "io/memory_device.h"
#include "testing/io/fault_device.h"
#include "testing/io/recording_device.h"

namespace arcstore::io {
namespace {

TEST(DeviceConcurrency, ThreadsWriteTheirOwnBlocksThroughAllWrappers) {
  constexpr uint64_t kBlock = 4096;
  constexpr int kThreads = 4;
  auto mem = std::move(*MemoryDevice::Create({.size_bytes = 64 * kBlock}));
  FaultDevice fault(mem.get(), 7);
  auto rec = RecordingDevice::Create(&fault, {});
  ASSERT_TRUE(rec.ok());
  // A rule that matches no thread's blocks: rule matching runs concurrently.
  ASSERT_TRUE(fault
                  .AddRule({.kind = FaultKind::kIoError,
                            .ops = kFaultOnRead,
                            .range_offset = 63 * kBlock,
                            .range_length = kBlock,
                            .fire_count = kForever})
                  .ok());
  std::atomic<uint64_t> completions{0};
  uint64_t per_thread = ScaledIterations(2000);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::vector<uint8_t> buf(kBlock), back(kBlock);
      for (uint64_t i = 0; i < per_thread; ++i) {
        uint64_t block = t * 8 + i % 8;
        std::fill(buf.begin(), buf.end(), static_cast<uint8_t>(i));
        if (WriteSync(**rec, block * kBlock, buf).ok()) completions.fetch_add(1);
        if (ReadSync(**rec, block * kBlock, back).ok() && back == buf) completions.fetch_add(1);
        if (i % 64 == 0 && FlushSync(**rec).ok()) completions.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  uint64_t flushes = kThreads * ((per_thread + 63) / 64);
  EXPECT_EQ(completions.load(), kThreads * per_thread * 2 + flushes);
  Recording r = (*rec)->TakeRecording();
  EXPECT_EQ(r.writes.size(), kThreads * per_thread);
  EXPECT_EQ(r.flushes.size(), flushes);
  CrashState end = r.StateAt(r.end_seq);
  std::vector<PendingChoice> all;
  for (size_t i : end.pending) all.push_back({.write_index = i});
  auto image = r.BuildImage(end, all);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->Materialize(), mem->Contents());
}

}  // namespace
}  // namespace arcstore::io
