// The NBD server under concurrency: in-flight limits (backpressure), many
// clients with requests in flight and out-of-order completions, and
// Shutdown() with requests in flight.
#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "base/random.h"
#include "nbd/server.h"
#include "testing/memory_volume.h"
#include "testing/nbd/raw_client.h"
#include "testing/nbd/threaded_volume.h"
#include "testing/temp_dir.h"

namespace arcstore::nbd {
namespace {

using testing::Chunk;
using testing::RawClient;

class ConcurrencyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.socket_path = dir_.File("s.sock");
    // These tests hold requests in a paused volume to fill the in-flight
    // window; a request run inline (the first of a burst) would hold the
    // reader instead. The inline paths are tested in inline_test.cc (the
    // paused volume never says it will not wait).
    options_.inline_idle_requests = false;
    // Connection threads poll before they sleep, two at most at once:
    // polling, its budget and shutdown race with everything below.
    options_.poll_window_ns = 50 * kNsPerUs;
    options_.max_pollers = 2;
  }
  // The server goes before the directory its socket is in.
  void TearDown() override { server_.reset(); }
  void Start(int threads) {
    auto mem = std::make_shared<arcstore::testing::MemoryVolume>(
        VolumeInfo{"slow", 1, 8 << 20, 4096, "off"});
    slow_ = std::make_shared<ThreadedVolume>(mem, threads);
    auto other = std::make_shared<arcstore::testing::MemoryVolume>(
        VolumeInfo{"fast", 2, 1 << 20, 4096, "off"});
    auto s = Server::Start(options_, {{"slow", slow_, false, ""}, {"fast", other, false, ""}},
                           &registry_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }

  arcstore::testing::TempDir dir_{"nbd_ctest"};
  ServerOptions options_;
  stats::Registry registry_;
  std::shared_ptr<ThreadedVolume> slow_;
  std::unique_ptr<Server> server_;
};

TEST_F(ConcurrencyTest, InFlightLimitHoldsBackPipelinedRequests) {
  options_.max_in_flight_per_connection = 4;
  Start(2);
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("slow", true), 0);
  slow_->Pause();
  constexpr int kRequests = 12;
  std::vector<uint8_t> w(4096, 0x5a);
  for (int i = 0; i < kRequests; i++) {
    c.SendRequest(kCmdWrite, static_cast<uint64_t>(i) * 4096, 4096, 100 + i, 0, w.data(), w.size());
  }
  slow_->WaitForInFlight(4);
  // Meanwhile other connections are served.
  {
    RawClient other(options_.socket_path);
    ASSERT_NE(other.Connect("fast", true), 0);
    std::vector<uint8_t> r;
    EXPECT_EQ(other.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
  }
  EXPECT_EQ(slow_->in_flight(), 4u);
  slow_->Resume();
  std::set<uint64_t> cookies;
  for (int i = 0; i < kRequests; i++) {
    Chunk ch;
    ASSERT_TRUE(c.ReadChunk(&ch));
    EXPECT_EQ(ch.error, 0u);
    cookies.insert(ch.cookie);
  }
  EXPECT_EQ(cookies.size(), static_cast<size_t>(kRequests));
  EXPECT_EQ(slow_->max_in_flight(), 4u);
}

TEST_F(ConcurrencyTest, InFlightBytesLimitHoldsBackLargeWrites) {
  options_.max_payload_bytes = 1 << 20;
  options_.max_in_flight_bytes_per_connection = 2 << 20;
  Start(2);
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("slow", false), 0);
  slow_->Pause();
  std::vector<uint8_t> w(1 << 20, 0x11);
  // The server stops reading at the limit, so the sender blocks: send from
  // another thread.
  std::thread sender([&] {
    for (int i = 0; i < 5; i++) {
      c.SendRequest(kCmdWrite, static_cast<uint64_t>(i) << 20, 1 << 20, i, 0, w.data(), w.size());
    }
  });
  slow_->WaitForInFlight(2);
  slow_->Resume();
  sender.join();
  for (int i = 0; i < 5; i++) {
    Chunk ch;
    ASSERT_TRUE(c.ReadChunk(&ch));
    EXPECT_EQ(ch.error, 0u);
  }
  EXPECT_EQ(slow_->max_in_flight(), 2u);
}

// Several clients, each with many requests in flight on its own region;
// completions on 4 threads come back out of order; every read must see
// that client's last acknowledged write.
TEST_F(ConcurrencyTest, ManyClientsManyRequestsInFlight) {
  options_.max_in_flight_per_connection = 16;
  // Nothing is paused here: requests run inline whenever a connection is
  // idle, mixed with completions on the engine threads.
  options_.inline_idle_requests = true;
  Start(4);
  SeededRandom seed_rng = SeededRandom::FromEnvironment("ManyClientsManyRequestsInFlight");
  constexpr int kClients = 4;
  const uint64_t region = (8 << 20) / kClients;
  const int iterations = static_cast<int>(ScaledIterations(300));
  std::atomic<int> out_of_order{0};
  std::vector<std::thread> threads;
  std::vector<SeededRandom> rngs;
  for (int t = 0; t < kClients; t++) rngs.push_back(seed_rng.Fork());
  for (int t = 0; t < kClients; t++) {
    threads.emplace_back([&, t] {
      SeededRandom& rng = rngs[t];
      RawClient c(options_.socket_path);
      ASSERT_NE(c.Connect("slow", t % 2 == 0), 0);
      std::vector<uint8_t> model(region, 0);
      const uint64_t base = region * t;
      for (int it = 0; it < iterations; it++) {
        // A batch of writes to distinct records, pipelined, then reads.
        std::map<uint64_t, std::vector<uint8_t>> batch;
        int n = static_cast<int>(rng.Range(1, 12));
        for (int i = 0; i < n; i++) {
          uint64_t rec = rng.Uniform(region / 4096);
          std::vector<uint8_t> d(4096);
          rng.Fill(d.data(), d.size());
          batch[rec] = d;
        }
        uint64_t cookie = 1;
        std::vector<uint64_t> order;
        for (auto& [rec, d] : batch) {
          c.SendRequest(kCmdWrite, base + rec * 4096, 4096, cookie, 0, d.data(), d.size());
          order.push_back(cookie++);
        }
        std::vector<uint64_t> got;
        for (size_t i = 0; i < batch.size(); i++) {
          Chunk ch;
          ASSERT_TRUE(c.ReadChunk(&ch));
          ASSERT_EQ(ch.error, 0u);
          got.push_back(ch.cookie);
        }
        if (got != order) out_of_order++;
        std::sort(got.begin(), got.end());
        ASSERT_EQ(got, order);
        for (auto& [rec, d] : batch) std::copy(d.begin(), d.end(), model.begin() + rec * 4096);
        uint64_t off = rng.Uniform(region - 65536);
        std::vector<uint8_t> r;
        ASSERT_EQ(c.Do(kCmdRead, base + off, 65536, 0, nullptr, &r), 0u);
        ASSERT_TRUE(std::equal(r.begin(), r.end(), model.begin() + off)) << "client " << t;
      }
    });
  }
  for (auto& t : threads) t.join();
  // With 4 completion threads some batch must have come back reordered.
  EXPECT_GT(out_of_order.load(), 0);
  EXPECT_GT(registry_.TakeSnapshot().Get("nbd", "requests_inline"), 0);
}

TEST_F(ConcurrencyTest, ShutdownFinishesInFlightRequests) {
  Start(2);
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("slow", true), 0);
  slow_->Pause();
  std::vector<uint8_t> w(4096, 0x77);
  for (int i = 0; i < 3; i++) {
    c.SendRequest(kCmdWrite, static_cast<uint64_t>(i) * 4096, 4096, i, kCmdFlagFua, w.data(),
                  w.size());
  }
  slow_->WaitForInFlight(3);
  std::thread stopper([&] { server_->Shutdown(); });
  // New connections are no longer accepted once the listener is closed;
  // the held requests are answered when the volume completes them.
  slow_->Resume();
  for (int i = 0; i < 3; i++) {
    Chunk ch;
    ASSERT_TRUE(c.ReadChunk(&ch));
    EXPECT_EQ(ch.error, 0u);
  }
  stopper.join();
  EXPECT_TRUE(c.Closed());
  EXPECT_EQ(slow_->in_flight(), 0u);
  RawClient late(options_.socket_path, /*expect_connect=*/false);
  EXPECT_FALSE(late.connected());
}

TEST_F(ConcurrencyTest, ShutdownClosesClientsThatDoNotTakeTheirReplies) {
  options_.shutdown_grace_ns = 200 * kNsPerMs;
  Start(1);
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("slow", true), 0);
  std::vector<uint8_t> w(1 << 20, 0x33);
  ASSERT_EQ(c.Do(kCmdWrite, 0, 1 << 20, 0, &w), 0u);
  // Reads whose replies fill the socket buffers: the server blocks sending.
  for (int i = 0; i < 16; i++) c.SendRequest(kCmdRead, 0, 1 << 20, i);
  slow_->WaitForInFlight(0);
  auto start = std::chrono::steady_clock::now();
  server_->Shutdown();  // returns after the grace period
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(150));
  EXPECT_EQ(server_->active_connections(), 0u);
  EXPECT_GE(registry_.TakeSnapshot().Get("nbd", "err_send_failed"), 1);
}

}  // namespace
}  // namespace arcstore::nbd
