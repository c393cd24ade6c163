// The calls over Volume::Submit (volume_calls.cc): each named call submits
// the request it names, the synchronous calls mark it caller_waits and wait
// for a completion from another thread, block status hands its extents on,
// and the default PrepareWrite lends one buffer that a write reads whole.
#include <atomic>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "arcstore/volume.h"

namespace arcstore {
namespace {

// Records every request; completes it on a thread of its own (or inline,
// as the test sets) with `result`, reads filled with `fill`.
class RecordingVolume final : public Volume {
 public:
  VolumeInfo info() const override { return VolumeInfo{}; }
  void Submit(VolumeRequest req, Completion done) override {
    seen.push_back(req);
    Status s = result;
    if (req.op == VolumeOp::kRead) std::fill(req.out.begin(), req.out.end(), fill);
    if (req.op == VolumeOp::kWrite) written.assign(req.bytes().begin(), req.bytes().end());
    if (req.op == VolumeOp::kBlockStatus) {
      *req.extents = {Extent{req.offset, req.length / 2, true, true},
                      Extent{req.offset + req.length / 2, req.length / 2, false, false}};
    }
    if (!complete_elsewhere) {
      done(std::move(s));
      return;
    }
    // The completion comes from another thread, after Submit has returned.
    threads_.emplace_back([s = std::move(s), done = std::move(done), this] {
      while (!returned.load()) std::this_thread::yield();
      done(s);
    });
    returned.store(true);
  }
  ~RecordingVolume() override {
    for (std::thread& t : threads_) t.join();
  }

  Status result = Status::Ok();
  uint8_t fill = 0;
  bool complete_elsewhere = false;
  std::atomic<bool> returned{false};
  std::vector<VolumeRequest> seen;
  std::vector<uint8_t> written;

 private:
  std::vector<std::thread> threads_;
};

TEST(VolumeCallsTest, NamedCallsSubmitTheRequestTheyName) {
  RecordingVolume v;
  std::vector<uint8_t> buf(4096);
  int completions = 0;
  auto count = [&](Status s) {
    EXPECT_TRUE(s.ok());
    completions++;
  };
  v.SubmitRead(8192, buf, count);
  v.SubmitWrite(4096, buf, kFua, count);
  v.SubmitFlush(count);
  v.SubmitTrim(1 << 20, 65536, count);
  v.SubmitWriteZeroes(0, 512, kZeroNoHole | kZeroFastOnly, count);
  v.SubmitCache(100, 200, count);
  EXPECT_EQ(completions, 6);
  ASSERT_EQ(v.seen.size(), 6u);
  const VolumeOp ops[] = {VolumeOp::kRead, VolumeOp::kWrite, VolumeOp::kFlush,
                          VolumeOp::kTrim, VolumeOp::kWriteZeroes, VolumeOp::kCache};
  const uint64_t offsets[] = {8192, 4096, 0, 1 << 20, 0, 100};
  const uint64_t lengths[] = {4096, 4096, 0, 65536, 512, 200};
  const uint32_t flags[] = {0, kFua, 0, 0, kZeroNoHole | kZeroFastOnly, 0};
  for (size_t i = 0; i < 6; i++) {
    SCOPED_TRACE(VolumeOpName(ops[i]));
    EXPECT_EQ(v.seen[i].op, ops[i]);
    EXPECT_EQ(v.seen[i].offset, offsets[i]);
    EXPECT_EQ(v.seen[i].length, lengths[i]);
    EXPECT_EQ(v.seen[i].flags, flags[i]);
    EXPECT_FALSE(v.seen[i].caller_waits) << "submitted, not waited for";
  }
  EXPECT_EQ(v.seen[0].out.data(), buf.data());
  EXPECT_EQ(v.seen[1].data.data(), buf.data());
}

TEST(VolumeCallsTest, SynchronousCallsWaitForACompletionFromAnotherThread) {
  RecordingVolume v;
  v.complete_elsewhere = true;
  v.fill = 0xab;
  std::vector<uint8_t> buf(4096);
  ASSERT_TRUE(v.Read(0, buf).ok());
  EXPECT_EQ(buf[0], 0xab);
  EXPECT_EQ(buf[4095], 0xab);
  ASSERT_EQ(v.seen.size(), 1u);
  EXPECT_TRUE(v.seen[0].caller_waits);

  v.returned = false;
  v.result = Status::IOError("disk on fire");
  Status s = v.Flush();
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_EQ(s.message(), "disk on fire");

  v.returned = false;
  v.result = Status::Ok();
  std::vector<Extent> extents;
  ASSERT_TRUE(v.BlockStatus(0, 8192, &extents).ok());
  ASSERT_EQ(extents.size(), 2u);
  EXPECT_TRUE(extents[0].hole);
  EXPECT_EQ(extents[1].offset, 4096u);
}

TEST(VolumeCallsTest, SubmitBlockStatusHandsTheExtentsOn) {
  RecordingVolume v;
  v.complete_elsewhere = true;
  std::atomic<bool> done{false};
  std::vector<Extent> got;
  v.SubmitBlockStatus(65536, 4096, [&](Status s, std::vector<Extent> e) {
    EXPECT_TRUE(s.ok());
    got = std::move(e);
    done.store(true);
  });
  while (!done.load()) std::this_thread::yield();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].offset, 65536u);
  EXPECT_EQ(got[1].offset, 65536u + 2048);
}

TEST(VolumeCallsTest, DefaultPreparedWriteIsOneBufferWrittenWhole) {
  RecordingVolume v;
  std::unique_ptr<PreparedWrite> p = v.PrepareWrite(12288, 5000);
  ASSERT_EQ(p->pieces().size(), 1u);
  ASSERT_EQ(p->pieces()[0].size(), 5000u);
  for (size_t i = 0; i < 5000; i++) p->pieces()[0][i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(v.WritePrepared(std::move(p), kFua).ok());
  ASSERT_EQ(v.seen.size(), 1u);
  EXPECT_EQ(v.seen[0].op, VolumeOp::kWrite);
  EXPECT_EQ(v.seen[0].offset, 12288u);
  EXPECT_EQ(v.seen[0].length, 5000u);
  EXPECT_EQ(v.seen[0].flags, kFua);
  ASSERT_EQ(v.written.size(), 5000u);
  EXPECT_EQ(v.written[4999], static_cast<uint8_t>(4999 * 7));
}

// A PreparedWrite of several pieces (one a volume lent itself) has no
// single span: bytes() is empty, so a volume that did not lend it can tell.
TEST(VolumeCallsTest, BytesOfAPreparedWriteOfPiecesIsEmpty) {
  class TwoPieces final : public PreparedWrite {
   public:
    TwoPieces() : PreparedWrite(0, 8) {
      pieces_.emplace_back(a_, 4);
      pieces_.emplace_back(b_, 4);
    }

   private:
    uint8_t a_[4] = {}, b_[4] = {};
  };
  VolumeRequest r = VolumeRequest::Prepared(std::make_unique<TwoPieces>());
  EXPECT_EQ(r.length, 8u);
  EXPECT_TRUE(r.bytes().empty());
}

TEST(VolumeCallsTest, OpNames) {
  EXPECT_STREQ(VolumeOpName(VolumeOp::kWriteZeroes), "write zeroes");
  EXPECT_STREQ(VolumeOpName(VolumeOp::kBlockStatus), "block status");
}

}  // namespace
}  // namespace arcstore
