// TlsSession's reads over a socket pair with a PSK client written against
// GnuTLS here: a read waits for one record and then takes every record
// already sent, so requests a client pipelines in separate records arrive
// in one read (as over plaintext) instead of one read per record; it stops
// at the bytes asked for and leaves the rest for the next read.
#include <gnutls/gnutls.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "nbd/tls.h"
#include "testing/temp_dir.h"

namespace arcstore::nbd {
namespace {

constexpr char kUser[] = "alice";
constexpr char kKeyHex[] = "00112233445566778899aabbccddeeff";

class TlsSessionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::ofstream(dir_.File("keys.psk")) << kUser << ":" << kKeyHex << "\n";
    TlsOptions o;
    o.mode = TlsMode::kRequire;
    o.psk_file = dir_.File("keys.psk");
    auto creds = TlsCredentials::Load(o);
    ASSERT_TRUE(creds.ok()) << creds.status().ToString();
    creds_ = *creds;
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    server_fd_ = fds[0];
    client_fd_ = fds[1];
    server_ = std::make_unique<TlsSession>(creds_.get(), server_fd_);
    StartClient();
    TlsOutcome out;
    std::thread server([&] { out = server_->Handshake(UINT64_MAX); });
    int rc;
    do {
      rc = gnutls_handshake(client_);
    } while (rc < 0 && gnutls_error_is_fatal(rc) == 0);
    server.join();
    ASSERT_EQ(rc, 0) << gnutls_strerror(rc);
    ASSERT_EQ(out.failure, TlsFailure::kNone) << out.message;
  }
  void TearDown() override {
    if (client_ != nullptr) gnutls_deinit(client_);
    if (psk_ != nullptr) gnutls_psk_free_client_credentials(psk_);
    server_.reset();
    ::close(client_fd_);
    ::close(server_fd_);
  }

  void StartClient() {
    ASSERT_EQ(gnutls_psk_allocate_client_credentials(&psk_), 0);
    gnutls_datum_t key{reinterpret_cast<unsigned char*>(const_cast<char*>(kKeyHex)),
                       sizeof(kKeyHex) - 1};
    ASSERT_EQ(gnutls_psk_set_client_credentials(psk_, kUser, &key, GNUTLS_PSK_KEY_HEX), 0);
    ASSERT_EQ(gnutls_init(&client_, GNUTLS_CLIENT), 0);
    ASSERT_EQ(gnutls_priority_set_direct(client_, "NORMAL:+ECDHE-PSK:+DHE-PSK:+PSK", nullptr), 0);
    ASSERT_EQ(gnutls_credentials_set(client_, GNUTLS_CRD_PSK, psk_), 0);
    gnutls_transport_set_int(client_, client_fd_);
  }

  // Sends `bytes` of `v` as one TLS record.
  void SendRecord(size_t bytes, uint8_t v) {
    std::vector<uint8_t> data(bytes, v);
    ASSERT_EQ(gnutls_record_send(client_, data.data(), data.size()), static_cast<ssize_t>(bytes));
  }

  arcstore::testing::TempDir dir_{"nbd_tls_session"};
  std::shared_ptr<const TlsCredentials> creds_;
  int server_fd_ = -1, client_fd_ = -1;
  std::unique_ptr<TlsSession> server_;
  gnutls_session_t client_ = nullptr;
  gnutls_psk_client_credentials_t psk_ = nullptr;
};

TEST_F(TlsSessionTest, OneReadTakesEveryRecordAlreadySent) {
  // Three requests as a pipelining client sends them: a record each.
  SendRecord(100, 1);
  SendRecord(200, 2);
  SendRecord(300, 3);
  std::vector<uint8_t> buf(4096);
  Result<size_t> n = server_->Recv(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 600u);
  EXPECT_EQ(buf[0], 1);
  EXPECT_EQ(buf[99], 1);
  EXPECT_EQ(buf[100], 2);
  EXPECT_EQ(buf[299], 2);
  EXPECT_EQ(buf[300], 3);
  EXPECT_EQ(buf[599], 3);
}

TEST_F(TlsSessionTest, AReadStopsAtTheBytesAskedForAndTheNextTakesTheRest) {
  SendRecord(100, 1);
  SendRecord(200, 2);
  std::vector<uint8_t> buf(4096);
  Result<size_t> n = server_->Recv(buf.data(), 150);
  ASSERT_TRUE(n.ok());
  ASSERT_EQ(*n, 150u);
  EXPECT_EQ(buf[99], 1);
  EXPECT_EQ(buf[100], 2);
  EXPECT_EQ(server_->Pending(), 150u) << "the rest of the second record, decrypted";
  n = server_->Recv(buf.data(), buf.size());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 150u);
  EXPECT_EQ(buf[149], 2);
}

TEST_F(TlsSessionTest, TheEndOfTheStreamAfterRecordsIsReadNext) {
  SendRecord(64, 7);
  ASSERT_EQ(gnutls_bye(client_, GNUTLS_SHUT_WR), 0);
  std::vector<uint8_t> buf(4096);
  Result<size_t> n = server_->Recv(buf.data(), buf.size());
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 64u);
  n = server_->Recv(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 0u);
}

}  // namespace
}  // namespace arcstore::nbd
