// TlsSession's reads over a socket pair with a PSK client written against
// GnuTLS here: a read waits for one record and then takes every record
// already sent, so requests a client pipelines in separate records arrive
// in one read (as over plaintext) instead of one read per record; it stops
// at the bytes asked for and leaves the rest for the next read, and at a
// record that has arrived only in part.
#include <gnutls/gnutls.h>
#include <sys/socket.h>
#include <sys/time.h>
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

  // The ciphertext of one record of `bytes` of `v`, as the client would
  // send it, without sending it.
  std::vector<uint8_t> SealRecord(size_t bytes, uint8_t v) {
    std::vector<uint8_t> sealed;
    gnutls_transport_set_ptr(client_, &sealed);
    gnutls_transport_set_push_function(
        client_, [](gnutls_transport_ptr_t out, const void* data, size_t n) -> ssize_t {
          auto* o = static_cast<std::vector<uint8_t>*>(out);
          o->insert(o->end(), static_cast<const uint8_t*>(data),
                    static_cast<const uint8_t*>(data) + n);
          return static_cast<ssize_t>(n);
        });
    std::vector<uint8_t> data(bytes, v);
    EXPECT_EQ(gnutls_record_send(client_, data.data(), data.size()), static_cast<ssize_t>(bytes));
    return sealed;
  }

  void WriteRaw(const uint8_t* data, size_t n) {
    ASSERT_EQ(::write(client_fd_, data, n), static_cast<ssize_t>(n));
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

TEST_F(TlsSessionTest, AReadStopsAtARecordThatHasArrivedInPart) {
  const std::vector<uint8_t> first = SealRecord(100, 1);
  const std::vector<uint8_t> second = SealRecord(200, 2);
  const size_t part = second.size() / 2;
  WriteRaw(first.data(), first.size());
  WriteRaw(second.data(), part);
  std::vector<uint8_t> buf(4096);
  Result<size_t> n = server_->Recv(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 100u) << "the whole record only";
  EXPECT_EQ(buf[99], 1);
  EXPECT_EQ(server_->ReadAheadBytes(), part) << "the partial record is left, unread";
  WriteRaw(second.data() + part, second.size() - part);
  n = server_->Recv(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  ASSERT_EQ(*n, 200u);
  EXPECT_EQ(buf[0], 2);
  EXPECT_EQ(buf[199], 2);
  EXPECT_EQ(server_->ReadAheadBytes(), 0u);
}

TEST_F(TlsSessionTest, AReadNowIsBusyUntilSomethingArrivesThenTakesEveryRecord) {
  std::vector<uint8_t> buf(4096);
  Result<size_t> n = server_->RecvNow(buf.data(), buf.size());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kBusy);
  SendRecord(100, 1);
  SendRecord(200, 2);
  n = server_->RecvNow(buf.data(), buf.size());
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, 300u);
  EXPECT_EQ(buf[299], 2);
  n = server_->RecvNow(buf.data(), buf.size());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kBusy);
}

TEST_F(TlsSessionTest, AReadWithNothingArrivingEndsAtTheSocketsTimeout) {
  timeval tv{0, 20000};
  ASSERT_EQ(setsockopt(server_fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)), 0);
  std::vector<uint8_t> buf(4096);
  Result<size_t> n = server_->Recv(buf.data(), buf.size());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.status().code(), StatusCode::kAborted) << n.status().ToString();
}

TEST_F(TlsSessionTest, PayloadsLargerThanTheReadAheadArriveWhole) {
  // 1 MiB in full-sized records, more than the socket and the read-ahead
  // buffer hold: the client sends while the server reads.
  constexpr size_t kBytes = 1 << 20;
  std::vector<uint8_t> data(kBytes);
  for (size_t i = 0; i < kBytes; i++) data[i] = static_cast<uint8_t>(i * 7 + i / 4096);
  std::thread client([&] {
    size_t sent = 0;
    while (sent < kBytes) {
      const ssize_t w = gnutls_record_send(client_, data.data() + sent, kBytes - sent);
      if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED) continue;
      ASSERT_GT(w, 0) << gnutls_strerror(static_cast<int>(w));
      sent += static_cast<size_t>(w);
    }
  });
  std::vector<uint8_t> got(kBytes);
  size_t have = 0;
  while (have < kBytes) {
    Result<size_t> n = server_->Recv(got.data() + have, std::min<size_t>(kBytes - have, 64 << 10));
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    ASSERT_GT(*n, 0u);
    have += *n;
  }
  client.join();
  EXPECT_TRUE(got == data) << "every byte in order";
}

}  // namespace
}  // namespace arcstore::nbd
