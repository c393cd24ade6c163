// Tests of the io_uring device: asynchronous completion, overflow past the
// queue depth, chaining from completions, errors, and equality with psync.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "base/random.h"
#include "base/thread_annotations.h"
#include "io/aligned_buffer.h"
#include "io/uring_device.h"
#include "testing/temp_dir.h"

namespace arcstore::io {
namespace {

class UringDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 4 << 20}).ok()); }

  std::unique_ptr<UringDevice> OpenOrSkip(UringDeviceOptions o = {}) {
    auto d = UringDevice::Open(path_, o);
    if (!d.ok() && d.status().code() == StatusCode::kNotSupported) return nullptr;
    EXPECT_TRUE(d.ok()) << d.status().ToString();
    return d.ok() ? std::move(*d) : nullptr;
  }
  arcstore::testing::TempDir dir_{"arcstore_uring"};
  const std::string path_ = dir_.File("dev0");
};

// Counts completions and remembers the first error; waits for a number.
struct Tracker {
  Mutex mu;
  CondVar cv;
  int done ARC_GUARDED_BY(mu) = 0;
  Status first_error ARC_GUARDED_BY(mu);
  std::thread::id thread ARC_GUARDED_BY(mu);
  IoCallback Callback() {
    return [this](const Status& s) {
      MutexLock lock(&mu);
      if (!s.ok() && first_error.ok()) first_error = s;
      thread = std::this_thread::get_id();
      ++done;
      cv.SignalAll();
    };
  }
  void WaitFor(int n) {
    MutexLock lock(&mu);
    while (done < n) cv.Wait(&mu);
  }
};

TEST_F(UringDeviceTest, ManyRequestsBeyondTheQueueDepthCompleteOnTheDeviceThread) {
  auto d = OpenOrSkip({.queue_depth = 4});
  if (!d) GTEST_SKIP() << "io_uring unavailable";
  constexpr int kWrites = 64;
  std::vector<AlignedBuffer> bufs;
  for (int i = 0; i < kWrites; ++i) {
    bufs.emplace_back(4096, 4096);
    std::memset(bufs.back().data(), i + 1, 4096);
  }
  Tracker t;
  for (int i = 0; i < kWrites; ++i) {
    d->Submit({.op = IoOp::kWrite,
               .offset = uint64_t(i) * 4096,
               .iov = {{bufs[i].data(), 4096}},
               .done = t.Callback()});
  }
  t.WaitFor(kWrites);
  {
    MutexLock lock(&t.mu);
    EXPECT_TRUE(t.first_error.ok()) << t.first_error.ToString();
    EXPECT_NE(t.thread, std::this_thread::get_id());
  }
  ASSERT_TRUE(FlushSync(*d).ok());
  AlignedBuffer back(kWrites * 4096, 4096);
  ASSERT_TRUE(ReadSync(*d, 0, back.span()).ok());
  for (int i = 0; i < kWrites; ++i) ASSERT_EQ(back.data()[i * 4096 + 17], i + 1) << i;
}

TEST_F(UringDeviceTest, SubmittingFromACompletionDoesNotDeadlock) {
  auto d = OpenOrSkip({.queue_depth = 1});
  if (!d) GTEST_SKIP() << "io_uring unavailable";
  AlignedBuffer buf(4096, 4096);
  Tracker t;
  int chained = 0;
  std::function<void(const Status&)> next = [&](const Status& s) {
    if (++chained < 20) {
      d->Submit({.op = IoOp::kWrite,
                 .offset = uint64_t(chained) * 4096,
                 .iov = {{buf.data(), 4096}},
                 .done = next});
    } else {
      t.Callback()(s);
    }
  };
  d->Submit({.op = IoOp::kWrite, .offset = 0, .iov = {{buf.data(), 4096}}, .done = next});
  t.WaitFor(1);
  EXPECT_EQ(chained, 20);
}

TEST_F(UringDeviceTest, SameBytesAsPsyncAndErrorsNameTheRequest) {
  auto d = OpenOrSkip();
  if (!d) GTEST_SKIP() << "io_uring unavailable";
  SeededRandom random = SeededRandom::FromEnvironment("UringDevice.SameBytesAsPsync");
  AlignedBuffer a(3 * 4096, 4096), b(4096, 4096);
  random.Fill(a.data(), a.size());
  random.Fill(b.data(), b.size());
  IoRequest w{
      .op = IoOp::kWrite, .offset = 1 << 20, .iov = {{a.data(), a.size()}, {b.data(), b.size()}}};
  ASSERT_TRUE(SubmitThenWait(*d, std::move(w)).ok());
  ASSERT_TRUE(FlushSync(*d).ok());
  auto psync = FileDevice::Open(path_, {.direct = DirectIo::kOff});
  ASSERT_TRUE(psync.ok());
  std::vector<uint8_t> back(4 * 4096);
  ASSERT_TRUE(ReadSync(**psync, 1 << 20, back).ok());
  EXPECT_EQ(0, std::memcmp(back.data(), a.data(), a.size()));
  EXPECT_EQ(0, std::memcmp(back.data() + a.size(), b.data(), b.size()));
  Status out = ReadSync(*d, 4 << 20, std::span(a.data(), 4096));
  EXPECT_EQ(out.code(), StatusCode::kOutOfRange);
  IoRequest past{.op = IoOp::kRead, .offset = 4 << 20, .iov = {{a.data(), 4096}}};
  EXPECT_EQ(SubmitThenWait(*d, std::move(past)).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(DiscardSync(*d, 0, 4096).code(), StatusCode::kNotSupported);

  auto ro = UringDevice::Open(path_, {.file = {.direct = DirectIo::kOff, .read_only = true}});
  ASSERT_TRUE(ro.ok());
  Status s = WriteSync(**ro, 0, std::span<const uint8_t>(b.data(), 4096));
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("device " + path_ + ": write offset 0 length 4096"), std::string::npos)
      << s.message();
  // The same refusal through the ring.
  IoRequest ring_write{.op = IoOp::kWrite, .offset = 0, .iov = {{b.data(), 4096}}};
  s = SubmitThenWait(**ro, std::move(ring_write));
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("device " + path_ + ": write offset 0 length 4096"), std::string::npos)
      << s.message();
}

// Execute runs beside the ring on the same file: what one path writes the
// other reads, and a flush by either covers writes completed by both.
TEST_F(UringDeviceTest, ExecuteAndTheRingSeeTheSameFile) {
  auto d = OpenOrSkip();
  if (!d) GTEST_SKIP() << "io_uring unavailable";
  SeededRandom random = SeededRandom::FromEnvironment("UringDevice.ExecuteAndTheRing");
  AlignedBuffer a(8192, 4096), b(8192, 4096), back(8192, 4096);
  random.Fill(a.data(), a.size());
  random.Fill(b.data(), b.size());
  ASSERT_TRUE(d->Execute({.op = IoOp::kWrite, .offset = 0, .iov = {{a.data(), a.size()}}}).ok());
  ASSERT_TRUE(SubmitThenWait(*d, {.op = IoOp::kWrite, .offset = 8192, .iov = {{b.data(), 8192}}})
                  .ok());
  ASSERT_TRUE(d->Execute({.op = IoOp::kFlush}).ok());
  ASSERT_TRUE(SubmitThenWait(*d, {.op = IoOp::kRead, .offset = 0, .iov = {{back.data(), 8192}}})
                  .ok());
  EXPECT_EQ(0, std::memcmp(back.data(), a.data(), 8192));
  ASSERT_TRUE(d->Execute({.op = IoOp::kRead, .offset = 8192, .iov = {{back.data(), 8192}}}).ok());
  EXPECT_EQ(0, std::memcmp(back.data(), b.data(), 8192));
  // Execute checks like Submit does.
  Status s = d->Execute({.op = IoOp::kRead, .offset = 100, .iov = {{back.data(), 4096}}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
}

TEST_F(UringDeviceTest, RandomVectoredWorkloadLeavesTheSameFileAsPsync) {
  std::string other = dir_.File("dev1");
  ASSERT_TRUE(CreateFileForDevice(other, {.size_bytes = 4 << 20}).ok());
  auto uring = OpenOrSkip({.queue_depth = 8});
  if (!uring) GTEST_SKIP() << "io_uring unavailable";
  auto psync = FileDevice::Open(other, {});
  ASSERT_TRUE(psync.ok());
  SeededRandom random = SeededRandom::FromEnvironment("UringDevice.SameFileAsPsync");
  for (uint64_t i = 0; i < ScaledIterations(300); ++i) {
    // One to four pieces of whole blocks, at a random block offset.
    std::vector<AlignedBuffer> pieces;
    IoRequest a{.op = IoOp::kWrite}, b{.op = IoOp::kWrite};
    uint64_t blocks = 0;
    for (uint64_t p = random.Range(1, 4); p > 0; --p) {
      uint64_t n = random.Range(1, 8);
      pieces.emplace_back(n * 4096, 4096);
      random.Fill(pieces.back().data(), pieces.back().size());
      a.iov.push_back({pieces.back().data(), pieces.back().size()});
      blocks += n;
    }
    a.offset = random.Uniform((4 << 20) / 4096 - blocks + 1) * 4096;
    b.offset = a.offset;
    b.iov = a.iov;
    ASSERT_TRUE(SubmitThenWait(*uring, std::move(a)).ok());
    ASSERT_TRUE(SubmitAndWait(**psync, std::move(b)).ok());
  }
  ASSERT_TRUE(FlushSync(*uring).ok());
  ASSERT_TRUE(FlushSync(**psync).ok());
  std::vector<uint8_t> x(4 << 20), y(4 << 20);
  auto reader = FileDevice::Open(path_, {.direct = DirectIo::kOff});
  ASSERT_TRUE(ReadSync(**reader, 0, x).ok());
  reader = FileDevice::Open(other, {.direct = DirectIo::kOff});
  ASSERT_TRUE(ReadSync(**reader, 0, y).ok());
  EXPECT_TRUE(x == y);
}

TEST_F(UringDeviceTest, OpenBestDeviceChoosesABackend) {
  Backend backend;
  auto d = OpenBestDevice(path_, {}, &backend);
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  EXPECT_EQ((*d)->size_bytes(), 4u << 20);
  EXPECT_TRUE(backend == Backend::kIoUring || backend == Backend::kPsync);
  EXPECT_FALSE(OpenBestDevice(dir_.File("missing"), {}).ok());
  EXPECT_FALSE(UringDevice::Open(path_, {.queue_depth = 0}).ok());
}

TEST_F(UringDeviceTest, DestroyingWaitsForRequestsInFlight) {
  Tracker t;
  AlignedBuffer buf(64 * 4096, 4096);
  {
    auto d = OpenOrSkip({.queue_depth = 2});
    if (!d) GTEST_SKIP() << "io_uring unavailable";
    for (int i = 0; i < 16; ++i) {
      d->Submit({.op = IoOp::kRead,
                 .offset = uint64_t(i) * 4 * 4096,
                 .iov = {{buf.data() + i * 4 * 4096, 4 * 4096}},
                 .done = t.Callback()});
    }
  }
  MutexLock lock(&t.mu);
  EXPECT_EQ(t.done, 16);
}

}  // namespace
}  // namespace arcstore::io
