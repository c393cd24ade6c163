// Hostile control-socket requests against a real pool: a table of paths and
// arguments that must be refused with an error naming what was wrong, and a
// seeded run of random requests. After every request the pool's own file is
// intact, nothing appeared outside the test's directory, and the server
// still answers.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "arcstore/pool.h"
#include "base/random.h"
#include "base/units.h"
#include "testing/temp_dir.h"
#include "tools/source/control.h"
#include "tools/source/socket_server.h"
#include "tools/source/stats_source.h"

namespace arcstore::tools {
namespace {

class ControlHostileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    pool_path_ = dir_.File("pool");
    PoolCreateOptions co;
    co.size_bytes = 64 * kMiB;
    co.sparse = true;
    ASSERT_TRUE(Pool::Create(pool_path_, co).ok());
    auto p = Pool::Open(pool_path_, PoolOptions());
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    pool_ = std::move(*p);
    source_ = std::make_unique<PoolStatsSource>(pool_.get(), "pool");
    pool_bytes_ = std::filesystem::file_size(pool_path_);
  }
  void TearDown() override {
    source_.reset();
    if (pool_) EXPECT_TRUE(pool_->Close().ok());
    pool_.reset();
  }
  std::string Call(const std::string& request, uint32_t uid = 0) {
    return HandleControlRequest(*source_, request, ControlPeer{uid, 1});
  }
  // The pool file is as created and the pool still answers.
  void ExpectPoolIntact(const std::string& after) {
    EXPECT_EQ(std::filesystem::file_size(pool_path_), pool_bytes_) << after;
    EXPECT_EQ(Call("stats").rfind("ok\n", 0), 0u) << after;
  }

  // Resolved (TempDir::path() is canonical), as the trace rule wants; declared
  // first, so removed after the pool in it is closed.
  arcstore::testing::TempDir dir_{"arcstore_hostile"};
  std::string pool_path_;
  uint64_t pool_bytes_ = 0;
  std::unique_ptr<Pool> pool_;
  std::unique_ptr<PoolStatsSource> source_;
};

TEST_F(ControlHostileTest, HostileTraceRequestsAreRefusedByName) {
  std::filesystem::create_directory(dir_.File("d"));
  std::filesystem::create_directory_symlink(dir_.File("d"), dir_.File("dlink"));
  std::filesystem::create_symlink(pool_path_, dir_.File("to_pool"));
  { std::ofstream(dir_.File("existing")) << "keep me"; }
  ASSERT_EQ(::mkfifo(dir_.File("fifo").c_str(), 0600), 0);
  struct Row {
    std::string request;
    std::string error_names;  // a piece of the error the request must get
  };
  const std::vector<Row> rows = {
      {"trace start 64 new " + pool_path_, "exists"},
      {"trace start 64 replace " + pool_path_, "locked by an open pool"},
      {"trace start 64 replace " + dir_.File("to_pool"), "symbolic link"},
      {"trace start 64 new " + dir_.File("to_pool"), "exists"},
      {"trace start 64 new " + dir_.File("existing"), "exists"},
      {"trace start 64 replace " + dir_.File("fifo"), "FIFO"},
      {"trace start 64 replace /dev/null", "character device"},
      {"trace start 64 new " + dir_.path(), "exists"},
      {"trace start 64 new " + dir_.File("missing/t"), "does not exist"},
      {"trace start 64 new " + dir_.File("dlink/t"),
       "not an absolute path with its directory resolved"},
      {"trace start 64 new " + dir_.File("d/../t"),
       "not an absolute path with its directory resolved"},
      {"trace start 64 new relative.trace", "not an absolute path"},
      {"trace start 64 new ", "want RING_ENTRIES"},
      {"trace start 64 " + dir_.File("t"), "want RING_ENTRIES"},
      {"trace start 64 append " + dir_.File("t"), "mode 'append'"},
      {"trace start -1 new " + dir_.File("t"), "ring entries '-1'"},
      {"trace start 0x40 new " + dir_.File("t"), "ring entries '0x40'"},
      {"trace start 99999999999999999999999 new " + dir_.File("t"), "ring entries"},
      {"trace start 64 new " + dir_.path() + std::string("/t\0x", 4), "NUL"},
      {"trace begin", "want 'trace start"},
      {"trace", "unknown control request"},
      {std::string("st\x01\x7f" "ats"), "unknown control request 'st??ats'"},
  };
  for (const Row& row : rows) {
    const std::string reply = Call(row.request);
    EXPECT_EQ(reply.rfind("error ", 0), 0u) << row.request << " -> " << reply;
    EXPECT_NE(reply.find(row.error_names), std::string::npos) << row.request << " -> " << reply;
    EXPECT_EQ(reply.find('\n'), reply.size() - 1) << "one status line: " << reply;
    ExpectPoolIntact(row.request);
  }
  EXPECT_FALSE(std::filesystem::exists(dir_.File("t")));
  EXPECT_FALSE(std::filesystem::exists(dir_.File("d/t")));
  EXPECT_EQ(std::filesystem::file_size(dir_.File("existing")), 7u);

  // Someone else than root or the server's user may read, never write.
  const uint32_t stranger = static_cast<uint32_t>(::geteuid()) + 4242;
  EXPECT_EQ(Call("stats", stranger).rfind("ok\n", 0), 0u);
  const std::string refused = Call("trace start 64 new " + dir_.File("t"), stranger);
  EXPECT_NE(refused.find("refused for uid " + std::to_string(stranger)), std::string::npos)
      << refused;
  EXPECT_FALSE(std::filesystem::exists(dir_.File("t")));

  // A good request still works after all that, and replaces only with replace.
  EXPECT_EQ(Call("trace start 64 new " + dir_.File("t")), "ok\n");
  EXPECT_EQ(Call("trace stop"), "ok\n");
  EXPECT_NE(Call("trace start 64 new " + dir_.File("t")).find("exists"), std::string::npos);
  EXPECT_EQ(Call("trace start 64 replace " + dir_.File("t")), "ok\n");
  EXPECT_EQ(Call("trace stop"), "ok\n");
  ExpectPoolIntact("after the good traces");
}

// The same refusals cross the socket, where the peer is the kernel's word
// (SO_PEERCRED), and the client's resolution is what the server checks.
TEST_F(ControlHostileTest, TheSocketPathRefusesAPoolAndAcceptsAResolvedNewFile) {
  SocketServerOptions o;
  o.unix_path = dir_.File("pool.ctl");
  auto server = SocketServer::Start(
      o, [this](int fd) { ServeControlConnection(*source_, fd, 5000); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  RemoteStatsSource remote(o.unix_path);
  Status s = remote.StartTrace(pool_path_, 64, true);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("locked by an open pool"), std::string::npos) << s.ToString();
  ExpectPoolIntact("over the socket");
  EXPECT_TRUE(remote.StartTrace(dir_.File("sock.trace"), 64, false).ok());
  EXPECT_TRUE(remote.StopTrace().ok());
  EXPECT_TRUE(std::filesystem::exists(dir_.File("sock.trace")));
}

// Random requests, some shaped like trace requests with paths from a small
// hostile alphabet (every absolute piece lies in the test's directory, so
// whatever is accepted is written there): every reply is one status line,
// and the pool stays as it was.
TEST_F(ControlHostileTest, RandomRequestsNeverHurtThePool) {
  SeededRandom r = SeededRandom::FromEnvironment("RandomRequestsNeverHurtThePool");
  SCOPED_TRACE("ARCSTORE_SEED=" + std::to_string(r.seed()));
  const std::vector<std::string> pieces = {
      "trace start ", "trace stop", "stats", "txgs", "new ", "replace ", "64 ", "4 ",
      pool_path_,     dir_.path() + "/",   "../",   "./",   "null",  "\x01",    " ",
      "\n",           "x",          "-",     "0",    "99999999999999999999 "};
  for (int i = 0; i < 400; i++) {
    std::string req;
    const int n = 1 + static_cast<int>(r.Uniform(6));
    for (int k = 0; k < n; k++) req += pieces[r.Uniform(pieces.size())];
    const std::string reply = Call(req);
    const bool ok = reply.rfind("ok\n", 0) == 0;
    EXPECT_TRUE(ok || reply.rfind("error ", 0) == 0) << req << " -> " << reply;
    if (reply.rfind("error ", 0) == 0) EXPECT_EQ(reply.find('\n'), reply.size() - 1) << reply;
    (void)Call("trace stop");
    ASSERT_EQ(std::filesystem::file_size(pool_path_), pool_bytes_) << req;
  }
  // Whatever the seed drew (some draw no well-formed request), the pool
  // still answers one.
  ExpectPoolIntact("after the random requests");
}

}  // namespace
}  // namespace arcstore::tools
