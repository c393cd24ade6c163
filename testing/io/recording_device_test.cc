// Tests of the recording device and of crash-image building.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <optional>

#include "base/random.h"
#include "io/memory_device.h"
#include "testing/io/recording_device.h"

namespace arcstore::io {
namespace {

constexpr uint64_t kBlock = 4096;

std::unique_ptr<MemoryDevice> NewMemory(uint64_t size = 256 * kBlock) {
  return std::move(*MemoryDevice::Create({.name = "mem0", .size_bytes = size}));
}

std::vector<uint8_t> Fill(size_t n, uint8_t v) { return std::vector<uint8_t>(n, v); }

uint8_t ByteAt(const std::vector<uint8_t>& image, uint64_t block) { return image[block * kBlock]; }
uint8_t ByteAt(const CowImage& image, uint64_t block) {
  uint8_t b = 0;
  image.Read(block * kBlock, &b, 1);
  return b;
}

// Two devices on one clock: a crash time cuts both at the same moment, so
// B's write issued after A's flush completed is not there at A's flush
// point, and A's flush does not make B's earlier write durable.
TEST(RecordingDevice, DevicesSharingAClockAreCutAtTheSameMoment) {
  auto mem_a = NewMemory();
  auto mem_b = NewMemory();
  RecordingOptions o;
  o.shared_seq = std::make_shared<std::atomic<uint64_t>>(0);
  auto a = RecordingDevice::Create(mem_a.get(), o);
  auto b = RecordingDevice::Create(mem_b.get(), o);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE(WriteSync(**b, 0, Fill(kBlock, 1)).ok());      // B0
  ASSERT_TRUE(WriteSync(**a, 0, Fill(kBlock, 2)).ok());      // A0
  ASSERT_TRUE(FlushSync(**a).ok());                          // A's flush
  ASSERT_TRUE(WriteSync(**b, kBlock, Fill(kBlock, 3)).ok());  // B1, after it
  Recording ra = (*a)->TakeRecording();
  Recording rb = (*b)->TakeRecording();
  EXPECT_EQ(ra.end_seq, rb.end_seq);
  const std::vector<uint64_t> points = ra.FlushCrashPoints();
  ASSERT_EQ(points.size(), 2u);
  EXPECT_LT(rb.writes[0].complete_seq, points[0]);
  EXPECT_GT(rb.writes[1].submit_seq, points[0]);
  CrashState at_flush = rb.StateAt(points[0]);
  EXPECT_TRUE(at_flush.durable.empty());
  EXPECT_EQ(at_flush.pending, std::vector<size_t>({0}));
  CrashState at_end = rb.StateAt(points[1]);
  EXPECT_EQ(at_end.pending, std::vector<size_t>({0, 1}));
}

TEST(RecordingDevice, DurableAndPendingAroundAFlush) {
  auto mem = NewMemory();
  ASSERT_TRUE(WriteSync(*mem, 0, Fill(kBlock, 9)).ok());  // part of the base image
  auto rec = RecordingDevice::Create(mem.get(), {});
  ASSERT_TRUE(rec.ok());
  RecordingDevice& d = **rec;
  ASSERT_TRUE(WriteSync(d, kBlock, Fill(kBlock, 1)).ok());          // W0
  ASSERT_TRUE(FlushSync(d).ok());                                   // F0
  ASSERT_TRUE(WriteSync(d, 2 * kBlock, Fill(2 * kBlock, 2)).ok());  // W1
  ASSERT_TRUE(WriteSync(d, kBlock, Fill(kBlock, 3)).ok());          // W2 over W0
  ASSERT_TRUE(DiscardSync(d, 0, kBlock).ok());                      // W3: discard
  Recording r = d.TakeRecording();
  ASSERT_EQ(r.writes.size(), 4u);
  ASSERT_EQ(r.flushes.size(), 1u);
  EXPECT_EQ(ByteAt(*r.base_image, 0), 9);

  std::vector<uint64_t> points = r.FlushCrashPoints();
  ASSERT_EQ(points.size(), 2u);
  CrashState before = r.StateAt(points[0]);  // F0 not yet complete
  EXPECT_TRUE(before.durable.empty());
  EXPECT_EQ(before.pending, std::vector<size_t>({0}));
  CrashState end = r.StateAt(points[1]);
  EXPECT_EQ(end.durable, std::vector<size_t>({0}));
  EXPECT_EQ(end.pending, std::vector<size_t>({1, 2, 3}));

  auto none = r.BuildImage(end, {});
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(ByteAt(*none, 0), 9);
  EXPECT_EQ(ByteAt(*none, 1), 1);
  EXPECT_EQ(ByteAt(*none, 2), 0);
  auto all = r.BuildImage(end, {{.write_index = 1}, {.write_index = 2}, {.write_index = 3}});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->Materialize(), mem->Contents());
  auto torn = r.BuildImage(end, {{.write_index = 1, .sectors = {false, true}}});
  ASSERT_TRUE(torn.ok());
  EXPECT_EQ(ByteAt(*torn, 2), 0);
  EXPECT_EQ(ByteAt(*torn, 3), 2);
  EXPECT_EQ(ByteAt(*torn, 1), 1);
}

// A FUA write is durable once it completes, on its own: it is a crash
// point, and it makes no earlier write durable.
TEST(RecordingDevice, AFuaWriteIsDurableAtItsCompletionAlone) {
  auto mem = NewMemory();
  auto rec = RecordingDevice::Create(mem.get(), {});
  ASSERT_TRUE(rec.ok());
  RecordingDevice& d = **rec;
  std::vector<uint8_t> a = Fill(kBlock, 1), b = Fill(kBlock, 2);
  ASSERT_TRUE(WriteSync(d, 0, a).ok());  // W0: plain
  IoRequest fua{.op = IoOp::kWrite, .offset = kBlock, .iov = {{b.data(), kBlock}}};
  fua.fua = true;
  ASSERT_TRUE(SubmitAndWait(d, std::move(fua)).ok());  // W1: FUA
  ASSERT_TRUE(WriteSync(d, 2 * kBlock, a).ok());        // W2: plain
  Recording r = d.TakeRecording();
  ASSERT_EQ(r.writes.size(), 3u);
  EXPECT_TRUE(r.writes[1].fua);
  std::vector<uint64_t> points = r.FlushCrashPoints();
  ASSERT_EQ(points.size(), 2u);  // W1's completion and the end
  CrashState before = r.StateAt(points[0]);
  EXPECT_TRUE(before.durable.empty());
  EXPECT_EQ(before.pending, std::vector<size_t>({0, 1}));
  CrashState end = r.StateAt(points[1]);
  EXPECT_EQ(end.durable, std::vector<size_t>({1}));
  EXPECT_EQ(end.pending, std::vector<size_t>({0, 2}));
  auto image = r.BuildImage(end, {});
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(ByteAt(*image, 0), 0);
  EXPECT_EQ(ByteAt(*image, 1), 2);
}

TEST(RecordingDevice, BuildImageRefusesChoicesThatCannotHappen) {
  auto mem = NewMemory();
  auto rec = RecordingDevice::Create(mem.get(), {});
  ASSERT_TRUE(rec.ok());
  ASSERT_TRUE(WriteSync(**rec, 0, Fill(2 * kBlock, 1)).ok());
  ASSERT_TRUE(FlushSync(**rec).ok());
  ASSERT_TRUE(WriteSync(**rec, 0, Fill(kBlock, 2)).ok());
  Recording r = (*rec)->TakeRecording();
  CrashState end = r.StateAt(r.end_seq);
  EXPECT_FALSE(r.BuildImage(end, {{.write_index = 0}}).ok());  // durable, not pending
  EXPECT_FALSE(r.BuildImage(end, {{.write_index = 7}}).ok());
  EXPECT_FALSE(r.BuildImage(end, {{.write_index = 1, .sectors = {true, true}}}).ok());
}

// An inner device whose completions the test releases by hand, to make
// completion order differ from submission order.
class DeferredDevice final : public ForwardingDevice {
 public:
  explicit DeferredDevice(Device* inner) : ForwardingDevice(inner) {}
  bool supports_discard() const override { return true; }
  void Submit(IoRequest r) override {
    if (r.op == IoOp::kRead) return inner()->Submit(std::move(r));  // reads pass at once
    queue_.push_back(std::move(r));
  }
  void Complete(size_t i) {
    IoRequest r = std::move(queue_[i]);
    queue_.erase(queue_.begin() + static_cast<long>(i));
    inner()->Submit(std::move(r));
  }
  size_t queued() const { return queue_.size(); }

 private:
  std::deque<IoRequest> queue_;
};

TEST(RecordingDevice, AWriteCompletingAfterTheFlushWasSubmittedIsNotDurable) {
  auto mem = NewMemory();
  DeferredDevice deferred(mem.get());
  auto rec = RecordingDevice::Create(&deferred, {});
  ASSERT_TRUE(rec.ok());
  std::vector<uint8_t> a = Fill(kBlock, 1), b = Fill(kBlock, 2);
  int done = 0;
  auto count = [&](const Status& s) {
    ASSERT_TRUE(s.ok());
    ++done;
  };
  RecordingDevice& d = **rec;
  d.Submit({.op = IoOp::kWrite, .offset = 0, .iov = {{a.data(), kBlock}}, .done = count});
  d.Submit({.op = IoOp::kWrite, .offset = kBlock, .iov = {{b.data(), kBlock}}, .done = count});
  deferred.Complete(0);                           // W0 completes
  d.Submit({.op = IoOp::kFlush, .done = count});  // F0 submitted
  deferred.Complete(0);                           // W1 completes after F0's submission
  deferred.Complete(0);                           // F0 completes
  ASSERT_EQ(done, 3);
  Recording r = d.TakeRecording();
  CrashState s = r.StateAt(r.end_seq);
  EXPECT_EQ(s.durable, std::vector<size_t>({0}));
  EXPECT_EQ(s.pending, std::vector<size_t>({1}));
}

TEST(RecordingDevice, FlushPointImagesEqualTheDeviceAtEachFlush) {
  SeededRandom random = SeededRandom::FromEnvironment("RecordingDevice.FlushPointImages");
  auto mem = NewMemory(64 * kBlock);
  auto rec = RecordingDevice::Create(mem.get(), {});
  ASSERT_TRUE(rec.ok());
  std::vector<std::vector<uint8_t>> at_flush;
  uint64_t ops = ScaledIterations(400);
  for (uint64_t i = 0; i < ops; ++i) {
    if (random.OneIn(8)) {
      ASSERT_TRUE(FlushSync(**rec).ok());
      at_flush.push_back(mem->Contents());
      continue;
    }
    uint64_t blocks = random.Range(1, 4);
    uint64_t first = random.Uniform(64 - blocks + 1);
    std::vector<uint8_t> data(blocks * kBlock);
    random.Fill(data.data(), data.size());
    ASSERT_TRUE(WriteSync(**rec, first * kBlock, data).ok());
  }
  Recording r = (*rec)->TakeRecording();
  ASSERT_EQ(r.flushes.size(), at_flush.size());
  for (size_t i = 0; i < r.flushes.size(); ++i) {
    // Just after flush i completed, with nothing pending landing.
    CrashState s = r.StateAt(r.flushes[i].complete_seq + 1);
    auto image = r.BuildImage(s, {});
    ASSERT_TRUE(image.ok());
    ASSERT_EQ(image->Materialize(), at_flush[i]) << "flush " << i;
  }
  // At the end with every pending write landing whole: the device itself.
  CrashState end = r.StateAt(r.end_seq);
  std::vector<PendingChoice> all;
  for (size_t i : end.pending) all.push_back({.write_index = i});
  auto image = r.BuildImage(end, all);
  ASSERT_TRUE(image.ok());
  EXPECT_EQ(image->Materialize(), mem->Contents());
}

TEST(RecordingDevice, RandomCrashImagesHoldOnlyPossibleSectors) {
  SeededRandom random = SeededRandom::FromEnvironment("RecordingDevice.RandomCrashImages");
  auto mem = NewMemory(16 * kBlock);
  auto rec = RecordingDevice::Create(mem.get(), {});
  ASSERT_TRUE(rec.ok());
  // Every write fills its blocks with a distinct tag byte.
  uint8_t tag = 1;
  for (int i = 0; i < 60; ++i, ++tag) {
    if (i % 10 == 9) ASSERT_TRUE(FlushSync(**rec).ok());
    uint64_t blocks = random.Range(1, 3), first = random.Uniform(16 - blocks + 1);
    ASSERT_TRUE(WriteSync(**rec, first * kBlock, Fill(blocks * kBlock, tag)).ok());
  }
  Recording r = (*rec)->TakeRecording();
  for (uint64_t iter = 0; iter < ScaledIterations(300); ++iter) {
    uint64_t t = random.Range(1, r.end_seq);
    CrashState s = r.StateAt(t);
    auto built = r.BuildImage(s, r.RandomChoices(s, random, 3));
    ASSERT_TRUE(built.ok());
    const std::vector<uint8_t> flat = built->Materialize();
    const std::vector<uint8_t>* image = &flat;
    for (uint64_t b = 0; b < 16; ++b) {
      // The block holds the newest durable writer's tag or some later pending one.
      uint8_t got = ByteAt(*image, b);
      ASSERT_TRUE(std::all_of(image->begin() + b * kBlock, image->begin() + (b + 1) * kBlock,
                              [&](uint8_t x) { return x == got; }));
      int newest_durable = -1;
      for (size_t i : s.durable) {
        const RecordedWrite& w = r.writes[i];
        if (w.offset <= b * kBlock && b * kBlock < w.offset + w.length) newest_durable = int(i);
      }
      uint8_t durable_tag = newest_durable < 0 ? 0 : (*r.writes[newest_durable].data)[0];
      bool ok = got == durable_tag;
      for (size_t i : s.pending) {
        const RecordedWrite& w = r.writes[i];
        bool covers = w.offset <= b * kBlock && b * kBlock < w.offset + w.length;
        if (covers && int(i) > newest_durable && (*w.data)[0] == got) ok = true;
      }
      ASSERT_TRUE(ok) << "block " << b << " holds " << int(got) << " at seq " << t;
    }
  }
}

TEST(RecordingDevice, LimitOnRecordedBytes) {
  auto mem = NewMemory(4 * kBlock);
  EXPECT_FALSE(RecordingDevice::Create(mem.get(), {.max_recorded_bytes = kBlock}).ok());
  auto rec = RecordingDevice::Create(mem.get(), {.max_recorded_bytes = 6 * kBlock});
  ASSERT_TRUE(rec.ok());
  EXPECT_TRUE(WriteSync(**rec, 0, Fill(2 * kBlock, 1)).ok());
  Status s = WriteSync(**rec, 0, Fill(kBlock, 1));
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace arcstore::io

namespace arcstore::io {
namespace {

TEST(CrashImageBuilder, AgreesWithBuildImageEverywhere) {
  SeededRandom random = SeededRandom::FromEnvironment("CrashImageBuilder.Agrees");
  auto mem = NewMemory(32 * kBlock);
  DeferredDevice deferred(mem.get());
  auto rec = RecordingDevice::Create(&deferred, {});
  ASSERT_TRUE(rec.ok());
  // Writes and flushes kept in flight and completed in random order, so
  // completion order differs from submission order now and then.
  std::vector<std::vector<uint8_t>> buffers;
  // Every fifth operation is a flush (plus random ones), so the flush count
  // does not depend on the seed or the test scale.
  for (uint64_t i = 0; i < ScaledIterations(300); ++i) {
    if (i % 5 == 4 || random.OneIn(12)) {
      (*rec)->Submit({.op = IoOp::kFlush, .done = [](const Status&) {}});
    } else {
      uint64_t blocks = random.Range(1, 3), first = random.Uniform(32 - blocks + 1);
      buffers.emplace_back(blocks * kBlock);
      random.Fill(buffers.back().data(), buffers.back().size());
      (*rec)->Submit({.op = IoOp::kWrite,
                      .offset = first * kBlock,
                      .iov = {{buffers.back().data(), buffers.back().size()}},
                      .done = [](const Status& s) { ASSERT_TRUE(s.ok()); }});
    }
    while (deferred.queued() > 0 && random.OneIn(2)) {
      deferred.Complete(random.Uniform(deferred.queued()));
    }
  }
  while (deferred.queued() > 0) deferred.Complete(0);
  Recording r = (*rec)->TakeRecording();
  ASSERT_GT(r.flushes.size(), 5u);
  CrashImageBuilder builder(r);
  std::vector<uint64_t> points = r.FlushCrashPoints();
  // The image built at the previous point, and its bytes then: it shares
  // blocks with the builder's image, which must not change it as it advances.
  std::optional<CowImage> previous;
  std::vector<uint8_t> previous_bytes;
  for (uint64_t i = 0; i < ScaledIterations(200); ++i) {
    // Mostly forward, sometimes back, sometimes between flush points.
    uint64_t t = random.OneIn(4) ? random.Range(0, r.end_seq) : points[i % points.size()];
    const CrashState& s = builder.AdvanceTo(t);
    if (previous) ASSERT_EQ(previous->Materialize(), previous_bytes) << "seq " << t;
    CrashState want = r.StateAt(t);
    ASSERT_EQ(s.durable, want.durable);
    ASSERT_EQ(s.pending, want.pending);
    std::vector<PendingChoice> choices = r.RandomChoices(s, random, 3);
    auto fast = builder.Build(choices);
    auto slow = r.BuildImage(s, choices);
    ASSERT_TRUE(fast.ok() && slow.ok());
    ASSERT_EQ(fast->Materialize(), slow->Materialize()) << "seq " << t;
    previous_bytes = fast->Materialize();
    previous = std::move(*fast);
  }
  // Invalid choices are refused the same way.
  const CrashState& s = builder.AdvanceTo(r.end_seq);
  if (!s.durable.empty()) {
    EXPECT_FALSE(builder.Build({{.write_index = s.durable.back()}}).ok());
  }
  EXPECT_FALSE(builder.Build({{.write_index = r.writes.size() + 5}}).ok());
}

}  // namespace
}  // namespace arcstore::io
