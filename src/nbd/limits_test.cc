// NBD limits all at once (labels "unit", "concurrency"), the case the
// server tests do not cover one by one: with every connection slot taken
// and two clients flooding pipelined 1 MiB writes at a paused volume, the
// server holds at most max_in_flight_bytes_per_connection of payload per
// connection (it stops reading), the process's resident set grows by no
// more than those bytes plus slack, one more connection is refused with a
// reason, a served client's oversized request is refused and its session
// goes on, and once the volume resumes every flooded write completes.
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "base/units.h"
#include "nbd/server.h"
#include "testing/memory_volume.h"
#include "testing/nbd/raw_client.h"
#include "testing/nbd/threaded_volume.h"
#include "testing/process_memory.h"
#include "testing/temp_dir.h"

namespace arcstore::nbd {
namespace {

using testing::Chunk;
using testing::RawClient;

// The sanitizers' shadow memory and quarantine are not the server's: the
// RSS bound is checked only in plain builds.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

using arcstore::testing::ResidentBytes;

TEST(NbdLimitsTest, FloodedConnectionsStayBoundedAndOthersAreServed) {
  const arcstore::testing::TempDir dir("nbd_limits");
  ServerOptions o;
  o.socket_path = dir.File("s.sock");
  o.max_connections = 3;
  o.max_payload_bytes = 1 << 20;
  o.max_in_flight_per_connection = 8;
  o.max_in_flight_bytes_per_connection = 2 << 20;
  auto mem = std::make_shared<arcstore::testing::MemoryVolume>(
      VolumeInfo{"slow", 1, 64 << 20, 4096, "off"});
  auto slow = std::make_shared<ThreadedVolume>(mem, 2);
  auto fast = std::make_shared<arcstore::testing::MemoryVolume>(
      VolumeInfo{"fast", 2, 1 << 20, 4096, "off"});
  stats::Registry registry;
  auto server = Server::Start(o, {{"slow", slow, false, ""}, {"fast", fast, false, ""}}, &registry);
  ASSERT_TRUE(server.ok()) << server.status().ToString();

  RawClient served(o.socket_path);
  ASSERT_NE(served.Connect("fast", true), 0);
  RawClient f1(o.socket_path), f2(o.socket_path);
  ASSERT_NE(f1.Connect("slow", false), 0);
  ASSERT_NE(f2.Connect("slow", false), 0);
  const uint64_t rss_before = ResidentBytes();
  slow->Pause();
  constexpr int kWrites = 32;  // 32 MiB per flooding client, 16x its byte limit
  auto flood = [](RawClient* c) {
    std::vector<uint8_t> w(1 << 20, 0x6e);
    for (int i = 0; i < kWrites; i++) {
      c->SendRequest(kCmdWrite, static_cast<uint64_t>(i) << 20, 1 << 20, i, 0, w.data(), w.size());
    }
  };
  std::thread s1(flood, &f1), s2(flood, &f2);
  slow->WaitForInFlight(4);  // 2 MiB of 1 MiB writes on each connection
  const uint64_t rss_during = ResidentBytes();

  // A fourth connection is refused with the reason.
  {
    RawClient extra(o.socket_path);
    extra.Greet();
    extra.SendOption(kOptGo, RawClient::GoData("fast"));
    auto r = extra.ReadOptionReplies();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].type, kRepErrPolicy);
    EXPECT_NE(std::string(r[0].data.begin(), r[0].data.end()).find("max_connections"),
              std::string::npos);
  }
  // The served client: an oversized write is refused, the session goes on.
  std::vector<uint8_t> big((1 << 20) + 4096, 1), w(4096, 2), r;
  EXPECT_EQ(served.Do(kCmdWrite, 0, static_cast<uint32_t>(big.size()), 0, &big), kEInval);
  EXPECT_EQ(served.Do(kCmdRead, 0, (1 << 20) + 1), kEOverflow);
  EXPECT_EQ(served.Do(kCmdWrite, 0, 4096, 0, &w), 0u);
  EXPECT_EQ(served.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, w);
  EXPECT_EQ(slow->in_flight(), 4u) << "the flooded connections stay at their byte limit";

  slow->Resume();
  s1.join();
  s2.join();
  for (RawClient* c : {&f1, &f2}) {
    for (int i = 0; i < kWrites; i++) {
      Chunk ch;
      ASSERT_TRUE(c->ReadChunk(&ch));
      EXPECT_EQ(ch.error, 0u);
    }
  }
  EXPECT_EQ(slow->max_in_flight(), 4u);
  // Payload held: at most 2 connections x 2 MiB; 16 MiB of slack for
  // buffers and threads. Without the limit it would be 64 MiB.
  const uint64_t bound = rss_before + 2 * o.max_in_flight_bytes_per_connection + 16 * kMiB;
  if (!kSanitized) EXPECT_LE(rss_during, bound) << "RSS " << rss_during << " before " << rss_before;
  std::printf("nbd limits: RSS %.1f MiB before the flood, %.1f MiB during (bound %.1f)\n",
              static_cast<double>(rss_before) / kMiB, static_cast<double>(rss_during) / kMiB,
              static_cast<double>(bound) / kMiB);
  server->reset();
}

}  // namespace
}  // namespace arcstore::nbd
