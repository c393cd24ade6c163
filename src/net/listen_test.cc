#include "net/listen.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace arcstore::net {
namespace {

TEST(ParseTcpAddress, AcceptsNumericAddressesAndSaysWhichAreLoopback) {
  struct Case {
    const char* text;
    int family;
    bool loopback;
  };
  const Case cases[] = {
      {"127.0.0.1:10809", AF_INET, true},  {"127.3.2.1:0", AF_INET, true},
      {"localhost:80", AF_INET, true},     {"0.0.0.0:10809", AF_INET, false},
      {"10.1.2.3:65535", AF_INET, false},  {"[::1]:10809", AF_INET6, true},
      {"[::]:10809", AF_INET6, false},     {"[::ffff:127.0.0.1]:1", AF_INET6, true},
      {"[fd00::5]:1", AF_INET6, false},
  };
  for (const Case& c : cases) {
    Result<TcpAddress> a = ParseTcpAddress(c.text);
    ASSERT_TRUE(a.ok()) << c.text << ": " << a.status().ToString();
    EXPECT_EQ(a->address.ss_family, c.family) << c.text;
    EXPECT_EQ(a->loopback, c.loopback) << c.text;
  }
  EXPECT_EQ(ParseTcpAddress("[::1]:7")->host, "::1");
}

TEST(ParseTcpAddress, RefusesWhatIsNotANumericHostAndPort) {
  const char* bad[] = {"",           "127.0.0.1",      "127.0.0.1:",     "127.0.0.1:65536",
                       "1.2.3.4:-1", "1.2.3.4:12x",    "::1:80",         "[::1]",
                       "host.example:80", "1.2.3.4.5:1", "[::1]:123456"};
  for (const char* text : bad) {
    Result<TcpAddress> a = ParseTcpAddress(text);
    EXPECT_FALSE(a.ok()) << "'" << text << "' was accepted";
    if (!a.ok()) EXPECT_NE(a.status().message().find(text), std::string::npos) << text;
  }
  EXPECT_NE(ParseTcpAddress("::1:80").status().message().find("brackets"), std::string::npos);
}

TEST(ParseListenAddress, TakesOnlyLoopbackIpv4) {
  Result<ListenAddress> a = ParseListenAddress("127.0.0.2:9100");
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->ipv4_host_order, 0x7f000002u);
  EXPECT_EQ(a->port, 9100);
  EXPECT_EQ(ParseListenAddress("localhost:1")->ipv4_host_order, 0x7f000001u);
  EXPECT_NE(ParseListenAddress("10.0.0.1:9100").status().message().find("not a loopback"),
            std::string::npos);
  EXPECT_NE(ParseListenAddress("127.0.0.1:x").status().message().find("bad port"),
            std::string::npos);
  EXPECT_FALSE(ParseListenAddress("127.0.0.1").ok());
  EXPECT_FALSE(ParseListenAddress("127.0.0.256:1").ok());
}

class ListenUnixTest : public ::testing::Test {
 protected:
  arcstore::testing::TempDir dir_{"arcstore-listen"};
};

TEST_F(ListenUnixTest, MakesTheSocketWithItsModeAndRefusesALiveOne) {
  const std::string path = dir_.File("s.sock");
  Result<int> fd = ListenUnix(path, 0600, 4);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  struct stat st;
  ASSERT_EQ(::lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISSOCK(st.st_mode));
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  Result<int> again = ListenUnix(path, 0600, 4);
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.status().message().find("in use"), std::string::npos);
  ASSERT_EQ(::lstat(path.c_str(), &st), 0) << "a live server's socket was removed";
  ::close(*fd);
}

TEST_F(ListenUnixTest, ReplacesAStaleSocketButNeverAFile) {
  const std::string path = dir_.File("s.sock");
  Result<int> dead = ListenUnix(path, 0600, 4);
  ASSERT_TRUE(dead.ok());
  ::close(*dead);  // the socket file stays, nobody accepts on it
  Result<int> fd = ListenUnix(path, 0660, 4);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ::close(*fd);

  const std::string file = dir_.File("plain");
  std::ofstream(file) << "keep me";
  Result<int> refused = ListenUnix(file, 0600, 4);
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  std::ifstream in(file);
  std::string text;
  std::getline(in, text);
  EXPECT_EQ(text, "keep me");
}

TEST_F(ListenUnixTest, RefusesAPathThatCannotBeASocketAddress) {
  EXPECT_EQ(UnixSocketAddress("").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(UnixSocketAddress(std::string(200, 'a')).status().code(),
            StatusCode::kInvalidArgument);
  // A failed bind leaves nothing behind.
  Result<int> fd = ListenUnix(dir_.File("no/such/dir/s.sock"), 0600, 4);
  EXPECT_FALSE(fd.ok());
}

TEST(ListenTcp, BindsAnyFreePortAndAccepts) {
  Result<TcpAddress> a = ParseTcpAddress("127.0.0.1:0");
  ASSERT_TRUE(a.ok());
  uint16_t port = 0;
  Result<int> fd = ListenTcp(*a, 4, &port);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_NE(port, 0);
  EXPECT_NE(::fcntl(*fd, F_GETFD) & FD_CLOEXEC, 0);

  int client = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_port = htons(port);
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof(to)), 0);
  ::close(client);

  // The same port again is refused while the first socket listens.
  Result<TcpAddress> same = ParseTcpAddress("127.0.0.1:" + std::to_string(port));
  EXPECT_FALSE(ListenTcp(*same, 4, nullptr).ok());
  ::close(*fd);
}

TEST(ListenLoopbackTcp, RefusesOtherAddressesAndReportsThePort) {
  uint16_t port = 0;
  Result<int> fd = ListenLoopbackTcp("127.0.0.1:0", 4, &port);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_NE(port, 0);
  ::close(*fd);
  EXPECT_FALSE(ListenLoopbackTcp("0.0.0.0:0", 4, &port).ok());
}

TEST(FormatPeerAddress, WritesIpv4Ipv6AndUnixPeers) {
  sockaddr_storage a{};
  auto* in = reinterpret_cast<sockaddr_in*>(&a);
  in->sin_family = AF_INET;
  in->sin_port = htons(40312);
  in->sin_addr.s_addr = htonl(0x7f000001);
  EXPECT_EQ(FormatPeerAddress(a, sizeof(sockaddr_in)), "127.0.0.1:40312");

  sockaddr_storage b{};
  auto* in6 = reinterpret_cast<sockaddr_in6*>(&b);
  in6->sin6_family = AF_INET6;
  in6->sin6_port = htons(10809);
  in6->sin6_addr = in6addr_loopback;
  EXPECT_EQ(FormatPeerAddress(b, sizeof(sockaddr_in6)), "[::1]:10809");

  sockaddr_storage u{};
  u.ss_family = AF_UNIX;
  EXPECT_EQ(FormatPeerAddress(u, sizeof(sa_family_t)), "unix socket");
  // A length too short for its family is not read past.
  EXPECT_EQ(FormatPeerAddress(a, 2), "unknown address");
}

}  // namespace
}  // namespace arcstore::net
