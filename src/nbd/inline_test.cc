// Which requests the NBD connection runs on its own thread (server.cc,
// "Requests run inline"): a request alone on its connection always (but a
// FLUSH or FUA request whose commit would wait for a txg sync); at any
// queue depth a short data command the volume's hint says will not wait;
// everything else through Submit. And the replies of a long run of inline
// requests leave in bounded batches.
//
// A volume wrapper tells the synchronous calls (the inline path: the
// connection thread waits for them, VolumeRequest::caller_waits) from the
// submitted ones (the engine path), records which threads made the
// synchronous ones, and answers MayWait as the test says.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <set>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include "nbd/server.h"
#include "testing/memory_volume.h"
#include "testing/nbd/raw_client.h"
#include "testing/nbd/threaded_volume.h"
#include "testing/temp_dir.h"
#include "testing/wait_until.h"

namespace arcstore::nbd {
namespace {

using testing::Chunk;
using testing::RawClient;

using MayWaitFn = std::function<bool(VolumeOp op, uint64_t offset, uint64_t length)>;

class CountingVolume final : public Volume {
 public:
  explicit CountingVolume(std::shared_ptr<Volume> inner) : inner_(std::move(inner)) {}
  VolumeInfo info() const override { return inner_->info(); }

  void Submit(VolumeRequest req, Completion done) override {
    if (req.op == VolumeOp::kWrite && req.offset == hold_offset_ && before_wait_hold_.valid()) {
      hold_armed_ = true;
    }
    if (!req.caller_waits) {
      submits_++;
    } else {
      Synchronous();
      if (req.op == VolumeOp::kRead && before_sync_read_) before_sync_read_(req.offset);
      if (req.op == VolumeOp::kFlush) flushes_++;
    }
    if (req.op == VolumeOp::kFlush && hold_.valid()) {
      done = [hold = hold_, done = std::move(done)](Status s) {
        hold.wait();
        done(std::move(s));
      };
    }
    inner_->Submit(std::move(req), std::move(done));
  }
  // Unless the test says otherwise, data commands may wait and a flush's
  // commit writes a log block (it would not wait for a txg sync).
  bool MayWait(VolumeOp op, uint64_t offset, uint64_t length) override {
    (op == VolumeOp::kFlush ? commit_hint_calls_ : hint_calls_)++;
    return may_wait_ ? may_wait_(op, offset, length) : op != VolumeOp::kFlush;
  }

  void SetCallerThread(bool on) override {
    MutexLock l(&mu_);
    caller_thread_calls_.emplace_back(on, std::this_thread::get_id());
  }
  void BeforeCallerWaits() override {
    before_waits_++;
    if (hold_armed_) before_wait_hold_.wait();
    MutexLock l(&mu_);
    before_wait_threads_.insert(std::this_thread::get_id());
  }

  // Set before the server starts.
  void set_may_wait(MayWaitFn fn) { may_wait_ = std::move(fn); }
  // Once a write at `offset` has started, every BeforeCallerWaits returns
  // only when `release` is ready.
  void hold_before_waits_after_write_at(uint64_t offset, std::shared_future<void> release) {
    hold_offset_ = offset;
    before_wait_hold_ = std::move(release);
  }
  // Every FLUSH, inline or submitted, completes only once `release` is
  // ready.
  void hold_flushes(std::shared_future<void> release) { hold_ = std::move(release); }
  void set_before_sync_read(std::function<void(uint64_t)> fn) { before_sync_read_ = std::move(fn); }

  int submits() const { return submits_; }
  int sync_calls() const { return sync_calls_; }
  int hint_calls() const { return hint_calls_; }  // of data commands
  int commit_hint_calls() const { return commit_hint_calls_; }
  int flushes() const { return flushes_; }
  size_t sync_threads() {
    MutexLock l(&mu_);
    return threads_.size();
  }
  int before_waits() const { return before_waits_; }
  std::set<std::thread::id> before_wait_threads() {
    MutexLock l(&mu_);
    return before_wait_threads_;
  }
  std::set<std::thread::id> sync_thread_ids() {
    MutexLock l(&mu_);
    return threads_;
  }
  std::vector<std::pair<bool, std::thread::id>> caller_thread_calls() {
    MutexLock l(&mu_);
    return caller_thread_calls_;
  }

 private:
  void Synchronous() {
    sync_calls_++;
    MutexLock l(&mu_);
    threads_.insert(std::this_thread::get_id());
  }

  const std::shared_ptr<Volume> inner_;
  MayWaitFn may_wait_;
  std::function<void(uint64_t)> before_sync_read_;
  std::shared_future<void> hold_;
  std::shared_future<void> before_wait_hold_;
  uint64_t hold_offset_ = UINT64_MAX;
  std::atomic<bool> hold_armed_{false};
  std::atomic<int> submits_{0}, sync_calls_{0}, hint_calls_{0}, commit_hint_calls_{0}, flushes_{0};
  std::atomic<int> before_waits_{0};
  Mutex mu_;
  std::set<std::thread::id> threads_ ARC_GUARDED_BY(mu_);
  std::set<std::thread::id> before_wait_threads_ ARC_GUARDED_BY(mu_);
  std::vector<std::pair<bool, std::thread::id>> caller_thread_calls_ ARC_GUARDED_BY(mu_);
};

// Requests sent in one write, so that the server finds them buffered
// together (each behind the one before).
class Batch {
 public:
  void Add(uint16_t type, uint64_t offset, uint32_t length, uint16_t flags = 0,
           const std::vector<uint8_t>* payload = nullptr) {
    uint8_t h[kRequestHeaderBytes];
    Store32(h, kRequestMagic);
    Store16(h + 4, flags);
    Store16(h + 6, type);
    Store64(h + 8, next_cookie_++);
    Store64(h + 16, offset);
    Store32(h + 24, length);
    bytes_.insert(bytes_.end(), h, h + sizeof(h));
    if (payload != nullptr) bytes_.insert(bytes_.end(), payload->begin(), payload->end());
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }
  uint64_t count() const { return next_cookie_ - 1; }

 private:
  std::vector<uint8_t> bytes_;
  uint64_t next_cookie_ = 1;
};

class InlineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.socket_path = dir_.File("s.sock");
    auto mem = std::make_shared<arcstore::testing::MemoryVolume>(
        VolumeInfo{"vol", 1, 8 << 20, 4096, "off"});
    // Completions of Submit* come back on 2 engine threads.
    volume_ = std::make_shared<CountingVolume>(std::make_shared<ThreadedVolume>(mem, 2));
  }
  // The server goes before the directory its socket is in.
  void TearDown() override { server_.reset(); }
  void Start() {
    auto s = Server::Start(options_, {{"vol", volume_, false, ""}}, &registry_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  int64_t Stat(const char* name) { return registry_.TakeSnapshot().Get("nbd", name); }
  // A reply that never comes fails the test after 10 s instead of hanging it.
  static bool GiveUpReceivingAfter10s(RawClient& c) {
    const timeval limit{10, 0};
    return setsockopt(c.fd(), SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof(limit)) == 0;
  }
  // Reads `n` replies of a batch (simple replies; reads of `read_length`)
  // and checks each is OK; returns the cookies in arrival order.
  std::vector<uint64_t> Replies(RawClient& c, uint64_t n, size_t read_length) {
    std::vector<uint64_t> cookies;
    for (uint64_t i = 0; i < n; i++) {
      Chunk ch;
      if (!c.ReadChunk(&ch, read_length)) {
        ADD_FAILURE() << "reply " << i << " of " << n << " did not come";
        break;
      }
      EXPECT_EQ(ch.error, 0u) << "cookie " << ch.cookie;
      cookies.push_back(ch.cookie);
    }
    return cookies;
  }

  // Sends `n` 4 KiB reads of consecutive blocks in one write (the server
  // reads all of them at once) and takes their simple replies.
  void ReadsInOneSend(RawClient& c, int n) {
    Batch b;
    for (int i = 0; i < n; i++) b.Add(kCmdRead, uint64_t(i) * 4096, 4096);
    c.Send(b.bytes());
    Replies(c, n, 4096);
  }

  arcstore::testing::TempDir dir_{"nbd_itest"};
  ServerOptions options_;
  stats::Registry registry_;
  std::shared_ptr<CountingVolume> volume_;
  std::unique_ptr<Server> server_;
};

// One request at a time: every short data command, a FUA write and a flush
// run on the connection's thread without asking the hint; a long write is
// not short enough for that rule and asks the hint, which says it may wait
// here, so it goes to the engine.
TEST_F(InlineTest, ARequestAloneRunsOnTheConnectionThread) {
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", true), 0);
  constexpr int kPairs = 40;
  for (int i = 0; i < kPairs; i++) {
    std::vector<uint8_t> w(4096, static_cast<uint8_t>(i)), r;
    ASSERT_EQ(c.Do(kCmdWrite, uint64_t(i) * 8192, 4096, 0, &w), 0u);
    ASSERT_EQ(c.Do(kCmdRead, uint64_t(i) * 8192, 4096, 0, nullptr, &r), 0u);
    ASSERT_EQ(r, w) << "pair " << i;
  }
  EXPECT_EQ(c.Do(kCmdTrim, 0, 4096), 0u);
  EXPECT_EQ(c.Do(kCmdWriteZeroes, 8192, 4096), 0u);
  std::vector<uint8_t> w(4096, 0x42), big(128 << 10, 0x43);
  EXPECT_EQ(c.Do(kCmdWrite, 0, 4096, kCmdFlagFua, &w), 0u);
  EXPECT_EQ(c.Do(kCmdFlush, 0, 0), 0u);
  EXPECT_EQ(volume_->sync_calls(), 2 * kPairs + 4);
  EXPECT_EQ(volume_->submits(), 0);
  EXPECT_EQ(volume_->sync_threads(), 1u) << "every inline request ran on the connection thread";
  EXPECT_EQ(Stat("requests_inline"), 2 * kPairs + 4);
  EXPECT_EQ(volume_->hint_calls(), 0) << "a request alone does not need the hint";
  EXPECT_EQ(volume_->commit_hint_calls(), 2) << "but the FUA write's and the FLUSH's commits";

  EXPECT_EQ(c.Do(kCmdWrite, 0, static_cast<uint32_t>(big.size()), 0, &big), 0u);
  EXPECT_EQ(volume_->submits(), 1) << "a 128 KiB write the hint says may wait goes to the engine";
  EXPECT_EQ(Stat("requests_inline"), 2 * kPairs + 4);
  EXPECT_EQ(volume_->hint_calls(), 1);
  EXPECT_EQ(Stat("requests_may_wait"), 1);
}

// The connection's reader registers its thread with the volume for the
// work left to it (Volume::SetCallerThread) and does that work whenever it
// is about to wait for the client (BeforeCallerWaits), once its replies
// are sent: a client gets its reply while that work is held. The reader
// unregisters, on the same thread, when the client goes.
TEST_F(InlineTest, TheReaderDoesTheWorkLeftToItBeforeItWaits) {
  constexpr uint64_t kHeldAt = 1 << 20;
  std::promise<void> release;
  volume_->hold_before_waits_after_write_at(kHeldAt, release.get_future().share());
  Start();
  {
    RawClient c(options_.socket_path);
    ASSERT_NE(c.Connect("vol", true), 0);
    ASSERT_TRUE(GiveUpReceivingAfter10s(c));  // were the reply held behind the work
    std::vector<uint8_t> w(4096, 0x51);
    constexpr int kWrites = 10;
    for (int i = 0; i < kWrites; i++) ASSERT_EQ(c.Do(kCmdWrite, i * 4096ull, 4096, 0, &w), 0u);
    // The client sends each write only after the last reply: the reader
    // waited for every one.
    EXPECT_GE(volume_->before_waits(), kWrites);
    c.SendRequest(kCmdWrite, kHeldAt, 4096, /*cookie=*/100, 0, w.data(), w.size());
    Chunk reply;
    const bool got = c.ReadChunk(&reply, 0);
    release.set_value();
    ASSERT_TRUE(got) << "the reply waited for the work left to the reader";
    EXPECT_EQ(reply.error, 0u);
    EXPECT_EQ(reply.cookie, 100u);
  }
  ASSERT_TRUE(
      arcstore::testing::WaitUntil([&] { return volume_->caller_thread_calls().size() == 2; }));
  const auto calls = volume_->caller_thread_calls();
  EXPECT_TRUE(calls[0].first);
  EXPECT_FALSE(calls[1].first);
  EXPECT_EQ(calls[0].second, calls[1].second) << "unregistered on another thread";
  EXPECT_EQ(volume_->before_wait_threads(), std::set<std::thread::id>{calls[0].second});
  EXPECT_EQ(volume_->sync_thread_ids(), std::set<std::thread::id>{calls[0].second})
      << "the writes ran on another thread than the one registered";
}

// A FLUSH or FUA write alone whose commit the volume says would wait for a
// txg sync is submitted, so the reader goes on: a request sent behind the
// FLUSH while it waits is answered first. (A client such as the kernel or
// nbdfuse sends independent requests on one connection.)
TEST_F(InlineTest, ACommitThatWouldSyncATxgLeavesTheReaderFree) {
  volume_->set_may_wait([](VolumeOp op, uint64_t, uint64_t) { return op == VolumeOp::kFlush; });
  std::promise<void> release;
  volume_->hold_flushes(release.get_future().share());
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  // Were the FLUSH to hold the reader, the READ's reply would never come.
  ASSERT_TRUE(GiveUpReceivingAfter10s(c));
  std::vector<uint8_t> w(4096, 0x61);
  ASSERT_EQ(c.Do(kCmdWrite, 0, 4096, 0, &w), 0u);
  c.SendRequest(kCmdFlush, 0, 0, /*cookie=*/100);
  c.SendRequest(kCmdRead, 0, 4096, /*cookie=*/101);
  Chunk read;
  const bool got = c.ReadChunk(&read, 4096);
  release.set_value();
  ASSERT_TRUE(got) << "the READ behind the waiting FLUSH was not answered";
  EXPECT_EQ(read.cookie, 101u);
  EXPECT_EQ(read.payload, w);
  Chunk flush;
  ASSERT_TRUE(c.ReadChunk(&flush));
  EXPECT_EQ(flush.cookie, 100u);
  EXPECT_EQ(flush.error, 0u);
  // A FUA write alone goes to the engine too. On a connection of its own:
  // on this one the FLUSH's slot may still be held (the engine thread
  // sends its reply before it lets the slot go), and a FUA write that is
  // not alone is submitted without asking.
  RawClient c2(options_.socket_path);
  ASSERT_NE(c2.Connect("vol", false), 0);
  std::vector<uint8_t> w2(4096, 0x62), r;
  ASSERT_EQ(c2.Do(kCmdWrite, 4096, 4096, kCmdFlagFua, &w2), 0u);
  ASSERT_EQ(c2.Do(kCmdRead, 4096, 4096, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, w2);
  EXPECT_EQ(volume_->submits(), 2) << "the FLUSH and the FUA write";
  EXPECT_EQ(volume_->commit_hint_calls(), 2);
  EXPECT_EQ(Stat("requests_may_wait"), 2);
}

// A client that flushes after each write (fio's fsync=1, a database's
// commits): every request runs on the connection thread, and the volume
// sees one flush per FLUSH, none of the connection's own (the log's early
// writes make the write durable meanwhile).
TEST_F(InlineTest, AClientThatFlushesAfterEachWriteGetsOneVolumeFlushPerFlush) {
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", true), 0);
  std::vector<uint8_t> w(4096, 0x5a);
  constexpr int kPairs = 10;
  for (int i = 0; i < kPairs; i++) {
    ASSERT_EQ(c.Do(kCmdWrite, uint64_t(i) * 4096, 4096, 0, &w), 0u);
    ASSERT_EQ(c.Do(kCmdFlush, 0, 0), 0u);
  }
  EXPECT_EQ(volume_->flushes(), kPairs);
  EXPECT_EQ(volume_->submits(), 0) << "everything ran on the connection thread";
  std::vector<uint8_t> r;
  ASSERT_EQ(c.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, w);
}

// A client that flushes after each write, while the volume says a commit
// would sync a txg: no flush runs on the reader; each FLUSH goes to the
// engine.
TEST_F(InlineTest, FlushesThatWouldSyncATxgGoToTheEngine) {
  volume_->set_may_wait([](VolumeOp op, uint64_t, uint64_t) { return op == VolumeOp::kFlush; });
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", true), 0);
  std::vector<uint8_t> w(4096, 0x5c);
  constexpr int kPairs = 10;
  for (int i = 0; i < kPairs; i++) {
    ASSERT_EQ(c.Do(kCmdWrite, uint64_t(i) * 4096, 4096, 0, &w), 0u);
    ASSERT_EQ(c.Do(kCmdFlush, 0, 0), 0u);
  }
  EXPECT_EQ(volume_->flushes(), 0) << "no flush ran on the connection thread";
  EXPECT_EQ(volume_->submits(), kPairs) << "every FLUSH went to the engine";
}

// Requests that arrive together, all of which the volume says may wait:
// submitted (at most the last of the batch finds nothing behind it).
TEST_F(InlineTest, PipelinedRequestsThatMayWaitAreSubmitted) {
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  constexpr int kRequests = 8;
  ReadsInOneSend(c, kRequests);
  EXPECT_GE(volume_->submits(), kRequests - 1);
  EXPECT_LE(Stat("requests_inline"), 1);
  EXPECT_EQ(volume_->submits() + volume_->sync_calls(), kRequests);
  EXPECT_EQ(Stat("requests_may_wait"), volume_->submits());
  EXPECT_EQ(volume_->hint_calls(), volume_->submits());
}

// Requests that arrive together and that the volume says will not wait
// run on the connection thread, in the order they came; the data is right.
TEST_F(InlineTest, PipelinedRequestsThatWillNotWaitRunInline) {
  volume_->set_may_wait([](VolumeOp, uint64_t, uint64_t) { return false; });
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  constexpr int kRequests = 32;
  Batch writes;
  std::vector<std::vector<uint8_t>> data;
  for (int i = 0; i < kRequests; i++) {
    data.emplace_back(4096, static_cast<uint8_t>(i + 1));
    writes.Add(kCmdWrite, uint64_t(i) * 4096, 4096, 0, &data.back());
  }
  writes.Add(kCmdTrim, 64 * 4096, 4096);
  writes.Add(kCmdWriteZeroes, 65 * 4096, 4096);
  c.Send(writes.bytes());
  std::vector<uint64_t> order = Replies(c, writes.count(), 0);
  for (size_t i = 0; i < order.size(); i++) EXPECT_EQ(order[i], i + 1) << "inline runs in order";
  Batch reads;
  for (int i = 0; i < kRequests; i++) reads.Add(kCmdRead, uint64_t(i) * 4096, 4096);
  c.Send(reads.bytes());
  for (int i = 0; i < kRequests; i++) {
    Chunk ch;
    ASSERT_TRUE(c.ReadChunk(&ch, 4096));
    ASSERT_EQ(ch.cookie, uint64_t(i) + 1);
    EXPECT_EQ(ch.payload, data[i]) << "read " << i;
  }
  const int total = 2 * kRequests + 2;
  EXPECT_EQ(volume_->submits(), 0);
  EXPECT_EQ(volume_->sync_calls(), total);
  EXPECT_EQ(volume_->sync_threads(), 1u);
  EXPECT_EQ(Stat("requests_inline"), total);
  EXPECT_EQ(Stat("requests_may_wait"), 0);
}

// Long WRITEs behind other requests: up to RequestPolicy's
// kInlineMaxHintedBytes one the volume says will not wait runs inline (its
// payload received into the volume's own buffers all the same); a longer
// one, and a FUA one, go to the engine. The data is right either way.
TEST_F(InlineTest, PipelinedLongWritesThatWillNotWaitRunInlineUpTo1MiB) {
  volume_->set_may_wait([](VolumeOp, uint64_t, uint64_t) { return false; });
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  constexpr uint32_t k1M = 1 << 20;
  const std::vector<uint8_t> a(k1M, 0xa1), b(k1M, 0xb2), longer(k1M + 4096, 0xc3), fua(k1M, 0xd4);
  Batch writes;
  writes.Add(kCmdWrite, 0, k1M, 0, &a);
  writes.Add(kCmdWrite, k1M, k1M, 0, &b);
  writes.Add(kCmdWrite, 2 * k1M, k1M + 4096, 0, &longer);
  writes.Add(kCmdWrite, 4 * k1M, k1M, kCmdFlagFua, &fua);
  c.Send(writes.bytes());
  std::vector<uint64_t> cookies = Replies(c, writes.count(), 0);
  std::sort(cookies.begin(), cookies.end());
  EXPECT_EQ(cookies, (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(volume_->submits(), 2) << "the write longer than 1 MiB and the FUA write";
  EXPECT_EQ(Stat("requests_inline"), 2);
  EXPECT_EQ(volume_->sync_threads(), 1u);
  const std::pair<uint64_t, const std::vector<uint8_t>*> expected[] = {
      {0, &a}, {k1M, &b}, {2 * k1M, &longer}, {4 * k1M, &fua}};
  for (const auto& [offset, data] : expected) {
    for (uint64_t done = 0; done < data->size(); done += k1M) {
      const uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(k1M, data->size() - done));
      std::vector<uint8_t> got;
      ASSERT_EQ(c.Do(kCmdRead, offset + done, n, 0, nullptr, &got), 0u);
      EXPECT_EQ(got, std::vector<uint8_t>(data->begin() + done, data->begin() + done + n))
          << "at " << offset + done;
    }
  }
}

// The hint decides request by request: the ones it says may wait go to
// the engine, the rest run inline. FLUSH and FUA behind other requests
// are never asked about: they go to the engine.
TEST_F(InlineTest, TheHintDecidesRequestByRequest) {
  // Odd 4 KiB blocks "miss".
  volume_->set_may_wait([](VolumeOp, uint64_t offset, uint64_t) { return (offset / 4096) % 2; });
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  constexpr int kRequests = 20;
  ReadsInOneSend(c, kRequests);
  // The last request may find nothing behind it: then it runs inline
  // without asking.
  const int asked = volume_->hint_calls();
  EXPECT_GE(asked, kRequests - 1);
  EXPECT_EQ(Stat("requests_may_wait"), kRequests / 2 - (asked < kRequests ? 1 : 0));
  EXPECT_EQ(volume_->submits(), Stat("requests_may_wait"));
  EXPECT_EQ(Stat("requests_inline"), kRequests - volume_->submits());

  Batch durable;
  std::vector<uint8_t> w(4096, 9);
  durable.Add(kCmdWrite, 0, 4096, kCmdFlagFua, &w);
  durable.Add(kCmdFlush, 0, 0);
  durable.Add(kCmdRead, 0, 4096);
  const int submits = volume_->submits(), hints = volume_->hint_calls();
  c.Send(durable.bytes());
  for (int i = 0; i < 3; i++) {
    Chunk ch;
    ASSERT_TRUE(c.ReadChunk(&ch, 0));
    EXPECT_EQ(ch.error, 0u);
    if (ch.cookie == 3) {  // the read: its data follows the reply
      std::vector<uint8_t> data(4096);
      ASSERT_TRUE(c.Recv(data.data(), data.size()));
    }
  }
  EXPECT_EQ(volume_->submits(), submits + 2) << "the FUA write and the flush";
  EXPECT_LE(volume_->hint_calls(), hints + 1) << "only the read may be asked about";
}

// A client that keeps its queue full of requests that run inline still
// gets replies while the reader is busy: after
// RequestPolicy::kMaxInlineBurst (16) inline requests the held replies go
// out. The 17th request's read waits until
// the client has its 16 replies; without the bound they would be held
// until the reader next waits for input, after the 17th.
TEST_F(InlineTest, RepliesOfALongInlineRunLeaveInBoundedBatches) {
  volume_->set_may_wait([](VolumeOp, uint64_t, uint64_t) { return false; });
  Mutex mu;
  CondVar cv;
  bool released = false;
  std::atomic<bool> waited_out{false};
  constexpr uint64_t kGate = 16 * 4096;  // the 17th request's offset
  volume_->set_before_sync_read([&](uint64_t offset) {
    if (offset != kGate) return;
    MutexLock l(&mu);
    // A bound that only detects the failure (the client's reads time out
    // after 10 s first); the release itself is signalled.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!released) {
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= std::chrono::steady_clock::duration::zero()) {
        waited_out = true;
        return;
      }
      cv.WaitFor(&mu, left);
    }
  });
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  Batch b;
  for (int i = 0; i < 24; i++) b.Add(kCmdRead, uint64_t(i) * 4096, 4096);
  c.Send(b.bytes());
  std::vector<uint64_t> first = Replies(c, 16, 4096);
  {
    MutexLock l(&mu);
    released = true;
    cv.SignalAll();
  }
  ASSERT_EQ(first.size(), 16u);
  EXPECT_EQ(first.back(), 16u);
  Replies(c, 8, 4096);
  EXPECT_FALSE(waited_out) << "the first 16 replies were held behind the 17th request";
  EXPECT_EQ(Stat("requests_inline"), 24);
}

TEST_F(InlineTest, TurnedOffEveryRequestIsSubmitted) {
  options_.inline_idle_requests = false;
  options_.inline_requests_that_do_not_wait = false;
  volume_->set_may_wait([](VolumeOp, uint64_t, uint64_t) { return false; });
  Start();
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  std::vector<uint8_t> w(4096, 7), r;
  for (int i = 0; i < 10; i++) {
    ASSERT_EQ(c.Do(kCmdWrite, 0, 4096, 0, &w), 0u);
    ASSERT_EQ(c.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
  }
  ReadsInOneSend(c, 8);
  EXPECT_EQ(volume_->submits(), 28);
  EXPECT_EQ(volume_->sync_calls(), 0);
  EXPECT_EQ(volume_->hint_calls(), 0);
  EXPECT_EQ(Stat("requests_inline"), 0);
}

}  // namespace
}  // namespace arcstore::nbd
