// The option phase around NBD_OPT_STARTTLS, byte by byte (RawClient over
// loopback TCP and the unix socket): what --tls require refuses before
// STARTTLS, STARTTLS's own errors, the unix socket's exemption, and the
// handshake deadline against a client that trickles bytes.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <fstream>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "nbd/server.h"
#include "testing/memory_volume.h"
#include "testing/nbd/raw_client.h"
#include "testing/temp_dir.h"
#include "testing/wait_until.h"

namespace arcstore::nbd {
namespace {

using testing::OptionReply;
using testing::RawClient;

class TlsOptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("keys.psk")) << "alice:00112233445566778899aabbccddeeff\n";
  }
  // The server goes before the directory its socket is in.
  void TearDown() override { server_.reset(); }

  void Start(TlsMode mode, uint64_t handshake_timeout_ns = 30 * kNsPerSec) {
    ServerOptions o;
    o.on_security_refusal = [this](const std::string& peer, const std::string& why) {
      std::lock_guard<std::mutex> l(refusals_mu_);
      refusals_.push_back(peer + ": " + why);
      refusals_cv_.notify_all();
    };
    o.socket_path = dir_.File("s.sock");
    o.listen_addresses = {"127.0.0.1:0"};
    o.tls.mode = mode;
    if (mode != TlsMode::kOff) o.tls.psk_file = dir_.File("keys.psk");
    o.handshake_timeout_ns = handshake_timeout_ns;
    auto v = std::make_shared<arcstore::testing::MemoryVolume>(
        VolumeInfo{"vol0", 1, 1 << 20, 4096, ""});
    auto s = Server::Start(o, {{"vol0", v, false, ""}});
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }

  std::unique_ptr<RawClient> Tcp() {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(server_->port());
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    return std::make_unique<RawClient>(fd);
  }

  int64_t Stat(const std::string& name) {
    return server_->registry()->TakeSnapshot().Get("nbd", name, -1);
  }

  // One option and its final reply's type.
  static uint32_t Ask(RawClient& c, uint32_t option, const std::vector<uint8_t>& data = {}) {
    c.SendOption(option, data);
    std::vector<OptionReply> r = c.ReadOptionReplies();
    EXPECT_FALSE(r.empty()) << "no reply to option " << option;
    if (r.empty()) return 0;
    EXPECT_EQ(r.back().option, option);
    return r.back().type;
  }

  // Waits (up to 10 s) for the n-th refusal reported; empty if none came.
  std::string Refusal(size_t n) {
    std::unique_lock<std::mutex> l(refusals_mu_);
    refusals_cv_.wait_for(l, std::chrono::seconds(10), [&] { return refusals_.size() > n; });
    return refusals_.size() > n ? refusals_[n] : "";
  }
  size_t Refusals() {
    std::lock_guard<std::mutex> l(refusals_mu_);
    return refusals_.size();
  }

  arcstore::testing::TempDir dir_{"nbd_tls_test"};
  std::mutex refusals_mu_;
  std::condition_variable refusals_cv_;
  std::vector<std::string> refusals_;
  std::unique_ptr<Server> server_;
};

TEST_F(TlsOptionTest, RequireRefusesEveryOptionButAbortBeforeStartTls) {
  Start(TlsMode::kRequire);
  auto c = Tcp();
  c->Greet();
  const uint32_t options[] = {kOptList,           kOptStructuredReply, kOptInfo, kOptGo,
                             kOptListMetaContext, kOptSetMetaContext,  99u};
  for (uint32_t option : options) {
    std::vector<uint8_t> data;
    if (option == kOptInfo || option == kOptGo) data = RawClient::GoData("vol0");
    EXPECT_EQ(Ask(*c, option, data), kRepErrTlsReqd) << "option " << option;
  }
  EXPECT_EQ(Ask(*c, kOptAbort), kRepAck);
  EXPECT_TRUE(c->Closed());
  EXPECT_EQ(Stat("err_tls_required"), 7);
  EXPECT_EQ(Stat("handshakes_completed"), 0);
}

TEST_F(TlsOptionTest, ExportNameBeforeStartTlsDisconnects) {
  Start(TlsMode::kRequire);
  auto c = Tcp();
  c->Greet();
  c->SendOption(kOptExportName, {'v', 'o', 'l', '0'});
  EXPECT_TRUE(c->Closed());
  EXPECT_EQ(Stat("handshakes_completed"), 0);
}

TEST_F(TlsOptionTest, StartTlsWithTlsOffIsUnsupported) {
  Start(TlsMode::kOff);
  auto off = Tcp();
  off->Greet();
  EXPECT_EQ(Ask(*off, kOptStartTls), kRepErrUnsup);
}

TEST_F(TlsOptionTest, StartTlsWithDataIsInvalid) {
  Start(TlsMode::kOn);
  auto on = Tcp();
  on->Greet();
  EXPECT_EQ(Ask(*on, kOptStartTls, {1}), kRepErrInvalid);  // STARTTLS carries no data
  // Under "on", plaintext may go on.
  EXPECT_EQ(Ask(*on, kOptGo, RawClient::GoData("vol0")), kRepAck);
  EXPECT_EQ(on->Do(kCmdFlush, 0, 0), 0u);
}

TEST_F(TlsOptionTest, UnixSocketIsExemptFromRequire) {
  Start(TlsMode::kRequire);
  RawClient u(dir_.File("s.sock"));
  EXPECT_NE(u.Connect("vol0", true), 0);
  EXPECT_EQ(u.Do(kCmdFlush, 0, 0), 0u);
}

TEST_F(TlsOptionTest, HandshakeDeadlineIsTotalNotPerRead) {
  Start(TlsMode::kRequire, 300 * kNsPerMs);
  auto c = Tcp();
  c->Greet();
  // A byte every 50 ms: no single read waits long, the whole handshake does.
  const auto start = std::chrono::steady_clock::now();
  uint8_t header[16];
  Store64(header, kOptionMagic);
  Store32(header + 8, kOptList);
  Store32(header + 12, 0);
  bool closed = false;
  for (int i = 0; i < 16 && !closed; i++) {
    c->Send(&header[i], 1);
    pollfd p{c->fd(), POLLIN, 0};
    if (::poll(&p, 1, 50) > 0) closed = c->Closed();
  }
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_TRUE(closed || c->Closed()) << "a trickling client outlived its handshake deadline";
  EXPECT_LT(took, std::chrono::seconds(2));
  // The connection's thread counts the timeout as it sees the stream end.
  EXPECT_TRUE(arcstore::testing::WaitUntil([&] { return Stat("err_handshake_timeout") == 1; }));
  EXPECT_EQ(Stat("err_handshake_disconnect"), 0);
}

// A client that stops inside its TLS handshake is closed at the deadline and
// counted once as a timeout, both as a handshake error and as a TLS failure,
// whether the TLS read timed out first or the server's close reached it.
TEST_F(TlsOptionTest, AStalledTlsHandshakeCountsOneTimeout) {
  Start(TlsMode::kRequire, 200 * kNsPerMs);
  auto c = Tcp();
  c->Greet();
  EXPECT_EQ(Ask(*c, kOptStartTls), kRepAck);
  const uint8_t half_a_record_header[] = {0x16, 0x03};  // a handshake record begins
  c->Send(half_a_record_header, sizeof(half_a_record_header));
  const std::string r = Refusal(0);  // reported after the counts
  EXPECT_NE(r.find("TLS handshake failed (timeout)"), std::string::npos) << r;
  EXPECT_EQ(Stat("err_handshake_timeout"), 1);
  EXPECT_EQ(Stat("tls_fail_timeout"), 1);
  EXPECT_EQ(Stat("tls_fail_other"), 0);
  EXPECT_EQ(Stat("err_handshake_disconnect"), 0);
  uint8_t alert[64];  // an alert may come before the end of the stream
  ssize_t n;
  while ((n = ::recv(c->fd(), alert, sizeof(alert), 0)) > 0) {
  }
  EXPECT_TRUE(n == 0 || errno == ECONNRESET) << "the stalled client's connection is still open";
}

// A client that fails its TLS handshake is reported, with its address and
// why; the unix socket's plaintext client, which is allowed, is not.
TEST_F(TlsOptionTest, AFailedTlsHandshakeIsReportedWithThePeer) {
  Start(TlsMode::kRequire);
  RawClient u(dir_.File("s.sock"));
  EXPECT_NE(u.Connect("vol0", true), 0);
  EXPECT_EQ(u.Do(kCmdFlush, 0, 0), 0u);

  auto c = Tcp();
  c->Greet();
  EXPECT_EQ(Ask(*c, kOptStartTls), kRepAck);
  const std::string garbage = "this is not a TLS ClientHello, it is plain text\r\n";
  c->Send(reinterpret_cast<const uint8_t*>(garbage.data()), garbage.size());
  const std::string r = Refusal(0);
  EXPECT_NE(r.find("127.0.0.1:"), std::string::npos) << r;
  EXPECT_NE(r.find("TLS handshake failed"), std::string::npos) << r;
  EXPECT_EQ(Refusals(), 1u);
  EXPECT_GE(Stat("tls_fail_other"), 1);
}

}  // namespace
}  // namespace arcstore::nbd
