// The NBD server through a byte-level client: the handshake, every command,
// and the negative table of server.cc, each bad case followed by a check
// that the session (when the protocol keeps it) and a second connection
// still work.
#include "nbd/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "nbd/handshake.h"
#include "nbd/payload_cache.h"
#include "nbd/transport.h"
#include "testing/memory_volume.h"
#include "testing/nbd/raw_client.h"
#include "testing/temp_dir.h"
#include "testing/wait_until.h"

namespace arcstore::nbd {
namespace {

using arcstore::testing::WaitUntil;
using testing::OptionReply;
using testing::RawClient;

// Sends `bytes` on `fd` from a new thread, at most 70,000 bytes per send
// (so a receiver sees them arrive in pieces). `bytes` must outlive it.
std::thread SendInPieces(int fd, const std::vector<uint8_t>& bytes) {
  return std::thread([fd, &bytes] {
    size_t at = 0;
    while (at < bytes.size()) {
      ssize_t w = ::send(fd, bytes.data() + at, std::min<size_t>(bytes.size() - at, 70000), 0);
      ASSERT_GT(w, 0);
      at += static_cast<size_t>(w);
    }
  });
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; i++) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 9));
  return v;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.socket_path = dir_.File("s.sock");
    options_.max_payload_bytes = 1 << 20;
    options_.max_connections = 8;
    StartServer();
  }
  // The server goes before the directory its socket is in.
  void TearDown() override { server_.reset(); }
  void StartServer() {
    VolumeInfo rw{"vol", 1, 1 << 20, 4096, "off"};
    VolumeInfo ro{"ro", 2, 64 << 10, 4096, "off"};
    vol_ = std::make_shared<arcstore::testing::MemoryVolume>(rw);
    ro_vol_ = std::make_shared<arcstore::testing::MemoryVolume>(ro);
    std::vector<Export> exports = {{"vol", vol_, false, "the rw volume"}, {"ro", ro_vol_, true, ""}};
    auto s = Server::Start(options_, exports, &registry_);
    ASSERT_TRUE(s.ok()) << s.status().ToString();
    server_ = std::move(*s);
  }
  int64_t Stat(const char* module, const char* name) {
    return registry_.TakeSnapshot().Get(module, name);
  }
  bool StatReaches(const char* name, int64_t value) {
    return WaitUntil([&] { return Stat("nbd", name) >= value; });
  }
  // A fresh connection does a write and reads it back.
  void ExpectHealthy() {
    RawClient c(options_.socket_path);
    ASSERT_NE(c.Connect("vol", /*structured=*/true), 0);
    std::vector<uint8_t> w = Pattern(8192, 3), r;
    ASSERT_EQ(c.Do(kCmdWrite, 4096, 8192, 0, &w), 0u);
    ASSERT_EQ(c.Do(kCmdRead, 4096, 8192, 0, nullptr, &r), 0u);
    EXPECT_EQ(r, w);
  }

  arcstore::testing::TempDir dir_{"nbd_test"};
  ServerOptions options_;
  stats::Registry registry_;
  std::shared_ptr<arcstore::testing::MemoryVolume> vol_, ro_vol_;
  std::unique_ptr<Server> server_;
};

TEST_F(ServerTest, SocketIsCreatedWithMode0600) {
  struct stat st;
  ASSERT_EQ(::stat(options_.socket_path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
}

TEST_F(ServerTest, ListAndInfoDescribeExports) {
  RawClient c(options_.socket_path);
  c.Greet();
  c.SendOption(kOptList, {});
  auto list = c.ReadOptionReplies();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].type, kRepServer);
  EXPECT_EQ(std::string(list[0].data.begin() + 4, list[0].data.begin() + 7), "vol");
  EXPECT_EQ(std::string(list[0].data.begin() + 7, list[0].data.end()), "the rw volume");
  EXPECT_EQ(list[2].type, kRepAck);

  c.SendOption(kOptInfo, RawClient::GoData("vol", {kInfoBlockSize, kInfoName, kInfoDescription}));
  bool saw_export = false, saw_block = false, saw_name = false;
  for (const OptionReply& r : c.ReadOptionReplies()) {
    if (r.type != kRepInfo) {
      EXPECT_EQ(r.type, kRepAck);
      continue;
    }
    uint16_t t = Load16(r.data.data());
    if (t == kInfoExport) {
      saw_export = true;
      EXPECT_EQ(Load64(&r.data[2]), 1u << 20);
      uint16_t f = Load16(&r.data[10]);
      EXPECT_EQ(f, kTxHasFlags | kTxSendFlush | kTxSendFua | kTxSendTrim | kTxSendWriteZeroes |
                       kTxCanMultiConn | kTxSendCache | kTxSendFastZero);
    } else if (t == kInfoBlockSize) {
      saw_block = true;
      EXPECT_EQ(Load32(&r.data[2]), 1u);
      EXPECT_EQ(Load32(&r.data[6]), 4096u);
      EXPECT_EQ(Load32(&r.data[10]), 1u << 20);
    } else if (t == kInfoName) {
      saw_name = true;
      EXPECT_EQ(std::string(r.data.begin() + 2, r.data.end()), "vol");
    }
  }
  EXPECT_TRUE(saw_export && saw_block && saw_name);
  // INFO does not end the handshake: ABORT is still answered.
  c.SendOption(kOptAbort, {});
  auto a = c.ReadOptionReplies();
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].type, kRepAck);
  EXPECT_TRUE(c.Closed());
}

TEST_F(ServerTest, ExportNameHonoursNoZeroes) {
  for (bool no_zeroes : {true, false}) {
    RawClient c(options_.socket_path);
    c.Greet(kClientFlagFixedNewstyle | (no_zeroes ? kClientFlagNoZeroes : 0));
    c.SendOption(kOptExportName, {'r', 'o'});
    uint8_t r[10 + 124];
    ASSERT_TRUE(c.Recv(r, no_zeroes ? 10 : sizeof(r)));
    EXPECT_EQ(Load64(r), 64u << 10);
    EXPECT_EQ(Load16(r + 8) & kTxReadOnly, kTxReadOnly);
    EXPECT_EQ(Load16(r + 8) & kTxSendDf, 0);  // no structured replies
    // Transmission: a simple-reply read works.
    std::vector<uint8_t> data;
    EXPECT_EQ(c.Do(kCmdRead, 0, 512, 0, nullptr, &data), 0u);
    EXPECT_EQ(data, std::vector<uint8_t>(512, 0));
  }
}

TEST_F(ServerTest, SimpleRepliesRoundTrip) {
  RawClient c(options_.socket_path);
  uint16_t flags = c.Connect("vol", /*structured=*/false);
  EXPECT_EQ(flags & kTxSendDf, 0);
  std::vector<uint8_t> w = Pattern(10000, 1), r;
  ASSERT_EQ(c.Do(kCmdWrite, 1000, 10000, kCmdFlagFua, &w), 0u);
  EXPECT_EQ(vol_->fua_writes(), 1u);
  ASSERT_EQ(c.Do(kCmdRead, 1000, 10000, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, w);
  ASSERT_EQ(c.Do(kCmdFlush, 0, 0), 0u);
  EXPECT_EQ(vol_->flushes(), 1u);
  ASSERT_EQ(c.Do(kCmdCache, 0, 65536), 0u);
  ASSERT_EQ(c.Do(kCmdWriteZeroes, 1000, 100), 0u);
  ASSERT_EQ(c.Do(kCmdRead, 1000, 200, 0, nullptr, &r), 0u);
  EXPECT_EQ(std::vector<uint8_t>(r.begin(), r.begin() + 100), std::vector<uint8_t>(100, 0));
  EXPECT_EQ(std::vector<uint8_t>(r.begin() + 100, r.end()),
            std::vector<uint8_t>(w.begin() + 100, w.begin() + 200));
  // BLOCK_STATUS needs a meta context, and DF needs structured replies.
  EXPECT_EQ(c.Do(kCmdBlockStatus, 0, 4096), kEInval);
  EXPECT_EQ(c.Do(kCmdRead, 0, 4096, kCmdFlagDf), kEInval);
  EXPECT_EQ(Stat("nbd_export.vol", "write_ops"), 1);
  EXPECT_EQ(Stat("nbd_export.vol", "write_bytes"), 10000);
}

TEST_F(ServerTest, StructuredReadSendsHolesForUnwrittenAndTrimmedRecords) {
  RawClient c(options_.socket_path);
  uint16_t flags = c.Connect("vol", /*structured=*/true, /*meta=*/true);
  EXPECT_NE(flags & kTxSendDf, 0);
  std::vector<uint8_t> w = Pattern(3 * 4096, 9), r;
  ASSERT_EQ(c.Do(kCmdWrite, 4 * 4096, 3 * 4096, 0, &w), 0u);
  ASSERT_EQ(c.Do(kCmdTrim, 5 * 4096, 4096, kCmdFlagFua), 0u);
  uint64_t flushes = vol_->flushes();
  EXPECT_EQ(flushes, 1u);  // FUA on a trim flushes after it
  // A read past kHoleMapMinBytes consults the hole map:
  // hole [2,4) data [4,5) hole [5,6) data [6,7) hole [7,20) (in records).
  c.last_chunks().clear();
  ASSERT_EQ(c.Do(kCmdRead, 2 * 4096, 18 * 4096, 0, nullptr, &r), 0u);
  std::vector<std::pair<uint16_t, uint64_t>> want = {
      {kReplyTypeOffsetHole, 2}, {kReplyTypeOffsetData, 4}, {kReplyTypeOffsetHole, 5},
      {kReplyTypeOffsetData, 6}, {kReplyTypeOffsetHole, 7}};
  ASSERT_EQ(c.last_chunks().size(), want.size());
  for (size_t i = 0; i < want.size(); i++) {
    EXPECT_EQ(c.last_chunks()[i].type, want[i].first) << i;
    EXPECT_EQ(Load64(c.last_chunks()[i].payload.data()), want[i].second * 4096) << i;
    EXPECT_EQ((c.last_chunks()[i].flags & kReplyFlagDone) != 0, i + 1 == want.size());
  }
  EXPECT_EQ(Load32(&c.last_chunks()[4].payload[8]), 13u * 4096);
  std::vector<uint8_t> expect(18 * 4096, 0);
  std::copy(w.begin(), w.begin() + 4096, expect.begin() + 2 * 4096);
  std::copy(w.begin() + 8192, w.end(), expect.begin() + 4 * 4096);
  EXPECT_EQ(r, expect);
  // DF: one content chunk with the zeros in it.
  c.last_chunks().clear();
  ASSERT_EQ(c.Do(kCmdRead, 2 * 4096, 18 * 4096, kCmdFlagDf, nullptr, &r), 0u);
  EXPECT_EQ(r, expect);
  ASSERT_EQ(c.last_chunks().size(), 1u);
  EXPECT_EQ(c.last_chunks()[0].type, kReplyTypeOffsetData);
  // Small reads skip the map: zeros come back as one hole chunk, anything
  // else as one data chunk.
  c.last_chunks().clear();
  ASSERT_EQ(c.Do(kCmdRead, 5 * 4096 + 100, 4096, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, std::vector<uint8_t>(expect.begin() + 3 * 4096 + 100, expect.begin() + 4 * 4096 + 100));
  ASSERT_EQ(c.last_chunks().size(), 1u);
  EXPECT_EQ(c.last_chunks()[0].type, kReplyTypeOffsetData);
  c.last_chunks().clear();
  ASSERT_EQ(c.Do(kCmdRead, 5 * 4096, 4096, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, std::vector<uint8_t>(4096, 0));
  ASSERT_EQ(c.last_chunks().size(), 1u);
  EXPECT_EQ(c.last_chunks()[0].type, kReplyTypeOffsetHole);
}

TEST_F(ServerTest, BlockStatusReportsAllocation) {
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", true, true), 0);
  std::vector<uint8_t> w = Pattern(4096, 2);
  ASSERT_EQ(c.Do(kCmdWrite, 8192, 4096, 0, &w), 0u);
  ASSERT_EQ(c.Do(kCmdWriteZeroes, 16384, 4096, kCmdFlagNoHole), 0u);
  c.last_chunks().clear();
  ASSERT_EQ(c.Do(kCmdBlockStatus, 0, 32768), 0u);
  ASSERT_EQ(c.last_chunks().size(), 1u);
  const auto& p = c.last_chunks()[0].payload;
  EXPECT_EQ(c.last_chunks()[0].type, kReplyTypeBlockStatus);
  EXPECT_EQ(Load32(p.data()), kAllocationContextId);
  // [0,8K) hole, [8K,12K) data, [12K,16K) hole, [16K,20K) data (NO_HOLE), rest hole
  std::vector<std::pair<uint32_t, uint32_t>> want = {{8192, 3}, {4096, 0}, {4096, 3},
                                                     {4096, 0}, {12288, 3}};
  ASSERT_EQ(p.size(), 4 + 8 * want.size());
  for (size_t i = 0; i < want.size(); i++) {
    EXPECT_EQ(Load32(&p[4 + 8 * i]), want[i].first) << i;
    EXPECT_EQ(Load32(&p[8 + 8 * i]), want[i].second) << i;
  }
  c.last_chunks().clear();
  ASSERT_EQ(c.Do(kCmdBlockStatus, 0, 32768, kCmdFlagReqOne), 0u);
  EXPECT_EQ(c.last_chunks()[0].payload.size(), 12u);
}

TEST_F(ServerTest, MetaContextNegotiation) {
  RawClient c(options_.socket_path);
  c.Greet();
  // Out of order: meta contexts before structured replies.
  c.SendOption(kOptSetMetaContext, RawClient::MetaData("vol", {kAllocationContext}));
  auto r = c.ReadOptionReplies();
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].type, kRepErrInvalid);
  c.SendOption(kOptStructuredReply, {});
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepAck);
  c.SendOption(kOptStructuredReply, {});  // twice
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  c.SendOption(kOptListMetaContext, RawClient::MetaData("vol", {}));
  r = c.ReadOptionReplies();
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].type, kRepMetaContext);
  EXPECT_EQ(std::string(r[0].data.begin() + 4, r[0].data.end()), kAllocationContext);
  c.SendOption(kOptListMetaContext, RawClient::MetaData("vol", {"base:"}));
  EXPECT_EQ(c.ReadOptionReplies().size(), 2u);
  c.SendOption(kOptSetMetaContext, RawClient::MetaData("vol", {"qemu:dirty-bitmap:x", "base:"}));
  EXPECT_EQ(c.ReadOptionReplies().size(), 1u);  // nothing selected, just ACK
  c.SendOption(kOptSetMetaContext, RawClient::MetaData("vol", {"nocolon"}));
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  c.SendOption(kOptSetMetaContext, RawClient::MetaData("nope", {kAllocationContext}));
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrUnknown);
  // Truncated query list.
  std::vector<uint8_t> bad = RawClient::MetaData("vol", {kAllocationContext});
  bad.resize(bad.size() - 3);
  c.SendOption(kOptSetMetaContext, bad);
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  // Selected for "ro", then GO "vol": block status is not allowed.
  c.SendOption(kOptSetMetaContext, RawClient::MetaData("ro", {kAllocationContext}));
  EXPECT_EQ(c.ReadOptionReplies().size(), 2u);
  c.SendOption(kOptGo, RawClient::GoData("vol"));
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepAck);
  EXPECT_EQ(c.Do(kCmdBlockStatus, 0, 4096), kEInval);
  EXPECT_GE(Stat("nbd", "err_not_negotiated"), 1);
}

TEST_F(ServerTest, BadOptionsAreAnsweredAndTheSessionGoesOn) {
  RawClient c(options_.socket_path);
  c.Greet();
  c.SendOption(42, {1, 2, 3});
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrUnsup);
  c.SendOption(kOptStartTls, {});
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrUnsup);
  c.SendOption(kOptList, {1});
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  c.SendOption(kOptGo, RawClient::GoData("nope"));
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrUnknown);
  c.SendOption(kOptGo, RawClient::GoData(std::string(4097, 'x')));
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  std::vector<uint8_t> go = RawClient::GoData("vol", {kInfoName});
  go.pop_back();  // length no longer matches the info count
  c.SendOption(kOptGo, go);
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  c.SendOption(kOptGo, {0, 0});  // shorter than the fixed fields
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepErrInvalid);
  // Still negotiating: a good GO works.
  c.SendOption(kOptGo, RawClient::GoData("vol"));
  EXPECT_EQ(c.ReadOptionReplies().back().type, kRepAck);
  EXPECT_EQ(c.Do(kCmdFlush, 0, 0), 0u);
  EXPECT_EQ(Stat("nbd", "err_unknown_option"), 2);
  EXPECT_EQ(Stat("nbd", "err_invalid_option"), 4);
}

// Cases where the protocol (or the server's limits) ends the session.
TEST_F(ServerTest, HardDisconnectCases) {
  struct Case {
    const char* name;
    std::function<void(RawClient&)> act;
    const char* stat;
  };
  std::vector<Case> cases = {
      {"unknown client flags", [](RawClient& c) { c.Greet(1u << 7); }, "err_bad_client_flags"},
      {"bad option magic",
       [](RawClient& c) {
         c.Greet();
         c.SendOption(kOptList, {}, 0x1122334455667788ULL);
       },
       "err_bad_magic"},
      {"oversized option",
       [](RawClient& c) {
         c.Greet();
         c.SendOption(kOptGo, std::vector<uint8_t>(kMaxOptionDataBytes + 1));
       },
       "err_oversized_option"},
      {"export name over 4096 bytes",
       [](RawClient& c) {
         c.Greet();
         c.SendOption(kOptExportName, std::vector<uint8_t>(4097, 'a'));
       },
       "err_invalid_option"},
      {"unknown export name",
       [](RawClient& c) {
         c.Greet();
         c.SendOption(kOptExportName, {'x'});
       },
       "err_unknown_export"},
      {"bad request magic",
       [](RawClient& c) {
         ASSERT_NE(c.Connect("vol", true), 0);
         c.SendRequest(kCmdRead, 0, 512, 1, 0, nullptr, 0, 0x12560953);
       },
       "err_bad_magic"},
      {"write past the drain limit",
       [](RawClient& c) {
         ASSERT_NE(c.Connect("vol", true), 0);
         c.SendRequest(kCmdWrite, 0, 33 << 20, 1);
       },
       "err_oversized_payload"},
  };
  for (const Case& k : cases) {
    SCOPED_TRACE(k.name);
    int64_t before = Stat("nbd", k.stat);
    RawClient c(options_.socket_path);
    k.act(c);
    EXPECT_TRUE(c.Closed());
    EXPECT_TRUE(StatReaches(k.stat, before + 1));
    ExpectHealthy();
  }
  EXPECT_TRUE(WaitUntil([&] { return server_->active_connections() == 0; }));
}

TEST_F(ServerTest, BadRequestsGetTheirErrors) {
  for (bool structured : {false, true}) {
    SCOPED_TRACE(structured ? "structured" : "simple");
    RawClient c(options_.socket_path);
    ASSERT_NE(c.Connect("vol", structured), 0);
    const uint64_t size = c.size_bytes();
    std::vector<uint8_t> w = Pattern(4096, 5);
    EXPECT_EQ(c.Do(99, 0, 0), kEInval);                                   // unknown command
    EXPECT_EQ(c.Do(kCmdWrite, 0, 4096, kCmdFlagNoHole, &w), kEInval);     // flag not for WRITE
    EXPECT_EQ(c.Do(kCmdRead, 0, 4096, 1u << 15), kEInval);                // unknown flag
    EXPECT_EQ(c.Do(kCmdWriteZeroes, 0, 4096, kCmdFlagReqOne), kEInval);
    EXPECT_EQ(c.Do(kCmdFlush, 8, 0), kEInval);                            // FLUSH offset must be 0
    EXPECT_EQ(c.Do(kCmdRead, size - 4096, 8192), kEInval);                // past the end
    EXPECT_EQ(c.Do(kCmdRead, UINT64_MAX - 100, 4096), kEInval);           // overflowing
    EXPECT_EQ(c.Do(kCmdTrim, size, 1), kEInval);
    EXPECT_EQ(c.Do(kCmdCache, size + 1, 0), kEInval);
    EXPECT_EQ(c.Do(kCmdWrite, size - 2048, 4096, 0, &w), kENoSpc);        // payload drained
    EXPECT_EQ(c.Do(kCmdWriteZeroes, UINT64_MAX, 2), kENoSpc);
    EXPECT_EQ(c.Do(kCmdRead, 0, (1 << 20) + 1), structured ? kEOverflow : kEInval);
    std::vector<uint8_t> big((1 << 20) + 4096, 7);                        // over max payload
    EXPECT_EQ(c.Do(kCmdWrite, 0, static_cast<uint32_t>(big.size()), 0, &big), kEInval);
    // The session goes on, and nothing of the refused writes landed.
    std::vector<uint8_t> r;
    EXPECT_EQ(c.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
    EXPECT_EQ(r, std::vector<uint8_t>(4096, 0));
    EXPECT_EQ(c.Do(kCmdWrite, 0, 4096, 0, &w), 0u);
    EXPECT_EQ(c.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
    EXPECT_EQ(r, w);
    EXPECT_EQ(c.Do(kCmdWriteZeroes, 0, 4096), 0u);
  }
  EXPECT_EQ(Stat("nbd", "err_unknown_command"), 2);
  EXPECT_EQ(Stat("nbd", "err_bad_flags"), 6);
  EXPECT_EQ(Stat("nbd", "err_oversized_payload"), 4);
  EXPECT_EQ(Stat("nbd_export.vol", "write_errors"), 6);
  ExpectHealthy();
}

TEST_F(ServerTest, ReadOnlyExportRefusesWrites) {
  RawClient c(options_.socket_path);
  uint16_t flags = c.Connect("ro", true);
  EXPECT_EQ(flags & (kTxReadOnly | kTxSendTrim | kTxSendWriteZeroes),
            kTxReadOnly);
  std::vector<uint8_t> w = Pattern(4096, 5), r;
  EXPECT_EQ(c.Do(kCmdWrite, 0, 4096, 0, &w), kEPerm);
  EXPECT_EQ(c.Do(kCmdWrite, 0, 4096, kCmdFlagFua, &w), kEPerm);
  EXPECT_EQ(c.Do(kCmdTrim, 0, 4096), kEPerm);
  EXPECT_EQ(c.Do(kCmdWriteZeroes, 0, 4096), kEPerm);
  EXPECT_EQ(c.Do(kCmdRead, 0, 4096, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, std::vector<uint8_t>(4096, 0));
  EXPECT_EQ(c.Do(kCmdFlush, 0, 0), 0u);
  EXPECT_EQ(ro_vol_->writes(), 0u);
  EXPECT_EQ(Stat("nbd", "err_read_only"), 4);
}

TEST_F(ServerTest, FastZeroIsRefusedByTheMemoryVolumeOnlyIfItSaysSo) {
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", true), 0);
  // MemoryVolume zeroes in memory: fast. The flag must reach the volume and
  // the request succeed.
  std::vector<uint8_t> w = Pattern(8192, 4), r;
  ASSERT_EQ(c.Do(kCmdWrite, 0, 8192, 0, &w), 0u);
  EXPECT_EQ(c.Do(kCmdWriteZeroes, 0, 8192, kCmdFlagFastZero | kCmdFlagFua), 0u);
  EXPECT_EQ(c.Do(kCmdRead, 0, 8192, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, std::vector<uint8_t>(8192, 0));
}

TEST_F(ServerTest, DisconnectsAtAnyPointAreCleanedUp) {
  std::vector<std::function<void(RawClient&)>> acts = {
      [](RawClient& c) {},  // before reading the greeting
      [](RawClient& c) {
        uint8_t g[18];
        c.Recv(g, sizeof(g));
        c.Send("\0\0", 2);  // half the client flags
      },
      [](RawClient& c) {
        c.Greet();
        uint8_t h[10] = {};
        Store64(h, kOptionMagic);
        c.Send(h, sizeof(h));  // half an option header
      },
      [](RawClient& c) {
        c.Greet();
        c.SendOption(kOptGo, {});
        // ...and never read the reply
      },
      [](RawClient& c) {
        c.Greet();
        uint8_t h[16];
        Store64(h, kOptionMagic);
        Store32(h + 8, kOptGo);
        Store32(h + 12, 100);
        c.Send(h, 16);
        c.Send(h, 10);  // 10 of 100 data bytes
      },
      [](RawClient& c) {
        ASSERT_NE(c.Connect("vol", true), 0);
        uint8_t h[12] = {};
        Store32(h, kRequestMagic);
        c.Send(h, sizeof(h));  // half a request header
      },
      [](RawClient& c) {
        ASSERT_NE(c.Connect("vol", false), 0);
        std::vector<uint8_t> half(2048, 1);
        c.SendRequest(kCmdWrite, 0, 4096, 1, 0, half.data(), half.size());  // half a payload
      },
      [](RawClient& c) {
        ASSERT_NE(c.Connect("vol", true), 0);
        for (int i = 0; i < 32; i++) c.SendRequest(kCmdRead, 0, 65536, i);  // replies unread
      },
  };
  for (size_t i = 0; i < acts.size(); i++) {
    SCOPED_TRACE(i);
    {
      RawClient c(options_.socket_path);
      acts[i](c);
    }
    ExpectHealthy();
    EXPECT_TRUE(WaitUntil([&] { return server_->active_connections() == 0; }));
  }
  EXPECT_TRUE(StatReaches("err_request_disconnect", 2));
  EXPECT_TRUE(StatReaches("err_handshake_disconnect", 5)) << Stat("nbd", "err_handshake_disconnect");
  EXPECT_EQ(Stat("nbd", "connections_active"), 0);
}

TEST_F(ServerTest, DiscAnswersOutstandingRequestsThenCloses) {
  RawClient c(options_.socket_path);
  ASSERT_NE(c.Connect("vol", false), 0);
  std::vector<uint8_t> w = Pattern(4096, 8);
  c.SendRequest(kCmdWrite, 0, 4096, 7, 0, w.data(), w.size());
  c.SendRequest(kCmdDisc, 0, 0, 8);
  testing::Chunk reply;
  ASSERT_TRUE(c.ReadChunk(&reply));
  EXPECT_EQ(reply.cookie, 7u);
  EXPECT_EQ(reply.error, 0u);
  EXPECT_TRUE(c.Closed());
}

TEST_F(ServerTest, ConnectionsPastTheLimitAreRefusedWithAReason) {
  server_.reset();
  options_.max_connections = 2;
  StartServer();
  RawClient a(options_.socket_path), b(options_.socket_path);
  ASSERT_NE(a.Connect("vol", true), 0);
  ASSERT_NE(b.Connect("vol", true), 0);
  {
    RawClient c(options_.socket_path);
    c.Greet();
    c.SendOption(kOptGo, RawClient::GoData("vol"));
    auto r = c.ReadOptionReplies();
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].type, kRepErrPolicy);
    EXPECT_NE(std::string(r[0].data.begin(), r[0].data.end()).find("max_connections"),
              std::string::npos);
    c.SendOption(kOptAbort, {});
    EXPECT_EQ(c.ReadOptionReplies().back().type, kRepAck);
  }
  EXPECT_EQ(Stat("nbd", "connections_refused"), 1);
  // The two served clients never noticed.
  EXPECT_EQ(a.Do(kCmdFlush, 0, 0), 0u);
  EXPECT_EQ(b.Do(kCmdFlush, 0, 0), 0u);
  // Once one leaves, a new client is served.
  a.SendRequest(kCmdDisc, 0, 0, 99);
  EXPECT_TRUE(WaitUntil([&] { return server_->active_connections() == 1; }));
  ExpectHealthy();
}

// With polling on, connections at queue depth 1 are served as before;
// every wait for a request is counted (polled and caught, or slept), some
// are caught, and a client beyond the poll budget is served too (it
// sleeps at once when the one poller is busy).
TEST_F(ServerTest, PollingConnectionsServeEveryRequestAndCountTheirWaits) {
  server_.reset();
  options_.poll_window_ns = kNsPerMs;  // generous: a loaded test machine
  options_.max_pollers = 1;
  StartServer();
  RawClient a(options_.socket_path), b(options_.socket_path);
  ASSERT_NE(a.Connect("vol", true), 0);
  ASSERT_NE(b.Connect("vol", true), 0);
  constexpr int kRounds = 50;
  for (int i = 0; i < kRounds; i++) {
    std::vector<uint8_t> w = Pattern(4096, static_cast<uint8_t>(i)), r;
    RawClient& c = i % 3 == 0 ? b : a;
    ASSERT_EQ(c.Do(kCmdWrite, 4096 * (i % 16), 4096, 0, &w), 0u) << i;
    ASSERT_EQ(c.Do(kCmdRead, 4096 * (i % 16), 4096, 0, nullptr, &r), 0u) << i;
    ASSERT_EQ(r, w) << i;
  }
  // Each request but a connection's first was waited for after a reply.
  const int64_t waits = Stat("nbd", "poll_caught") + Stat("nbd", "poll_slept");
  EXPECT_GE(waits, 2 * kRounds - 2);
  EXPECT_GT(Stat("nbd", "poll_caught"), 0);
  EXPECT_GT(Stat("nbd", "poll_ns"), 0);
}

TEST_F(ServerTest, SlowHandshakesTimeOut) {
  server_.reset();
  options_.handshake_timeout_ns = 50 * kNsPerMs;
  StartServer();
  // Transmission has no timeout: this client, idle while the slow one below
  // times out, is still served afterwards.
  RawClient idle(options_.socket_path);
  ASSERT_NE(idle.Connect("vol", true), 0);
  RawClient c(options_.socket_path);
  c.Greet();  // and then nothing
  EXPECT_TRUE(c.Closed());
  EXPECT_TRUE(StatReaches("err_handshake_timeout", 1));
  EXPECT_EQ(idle.Do(kCmdFlush, 0, 0), 0u);
}

TEST(ServerOptionsTest, ValidateNamesTheOption) {
  ServerOptions o;
  EXPECT_NE(o.Validate().message().find("socket_path"), std::string::npos);
  o.socket_path = "/tmp/x.sock";
  EXPECT_TRUE(o.Validate().ok());
  o.listen_addresses = {"127.0.0.1:1"};
  EXPECT_TRUE(o.Validate().ok());  // a unix socket and TCP together
  o.socket_path.clear();
  EXPECT_TRUE(o.Validate().ok());
  o.listen_addresses = {"10.0.0.1:1"};
  EXPECT_NE(o.Validate().message().find("loopback"), std::string::npos);
  EXPECT_NE(o.Validate().message().find("--tls require"), std::string::npos);
  o.allow_insecure_network = true;
  EXPECT_TRUE(o.Validate().ok());
  o.allow_insecure_network = false;
  o.listen_addresses = {"[::1]:0", "127.0.0.1:70000"};
  EXPECT_NE(o.Validate().message().find("bad port"), std::string::npos);
  o.listen_addresses = {"::1:0"};
  EXPECT_NE(o.Validate().message().find("brackets"), std::string::npos);
  o.listen_addresses = {"example.com:0"};
  EXPECT_NE(o.Validate().message().find("numeric"), std::string::npos);
  o.listen_addresses = {"localhost:0", "[::1]:0", "[::ffff:127.0.0.1]:0"};
  EXPECT_TRUE(o.Validate().ok());
  o.tls.mode = TlsMode::kRequire;
  EXPECT_NE(o.Validate().message().find("--tls-certificates"), std::string::npos);
  o.tls.psk_file = "/x.psk";
  o.listen_addresses = {"0.0.0.0:0", "[::]:0"};
  EXPECT_TRUE(o.Validate().ok());
  o.tls = {};
  o.listen_addresses = {"localhost:0"};
  o.max_payload_bytes = 4096;
  EXPECT_NE(o.Validate().message().find("max_payload_bytes"), std::string::npos);
  o.max_payload_bytes = 32 << 20;
  o.max_connections = 0;
  EXPECT_NE(o.Validate().message().find("max_connections"), std::string::npos);
  o.max_connections = 1;
  o.max_in_flight_per_connection = 0;
  EXPECT_NE(o.Validate().message().find("max_in_flight_per_connection"), std::string::npos);
  o.max_in_flight_per_connection = 1;
  o.poll_window_ns = kNsPerMs + 1;
  EXPECT_NE(o.Validate().message().find("poll_window_ns"), std::string::npos);
  o.poll_window_ns = kNsPerMs;
  o.max_pollers = 1025;
  EXPECT_NE(o.Validate().message().find("max_pollers"), std::string::npos);
  o.max_pollers = 0;
  EXPECT_TRUE(o.Validate().ok());
  o.socket_path = std::string(200, 'x');
  o.listen_addresses.clear();
  EXPECT_NE(o.Validate().message().find("socket_path"), std::string::npos);
}

TEST(ServerOptionsTest, ExportsAreChecked) {
  ServerOptions o;
  o.socket_path = "/tmp/x.sock";
  auto v = std::make_shared<arcstore::testing::MemoryVolume>(VolumeInfo{"a", 1, 1 << 20, 4096, ""});
  EXPECT_FALSE(ValidateExports({}, o).ok());
  EXPECT_TRUE(ValidateExports({{"a", v, false, ""}}, o).ok());
  EXPECT_FALSE(ValidateExports({{"a", v, false, ""}, {"a", v, false, ""}}, o).ok());
  EXPECT_FALSE(ValidateExports({{"a", nullptr, false, ""}}, o).ok());
  EXPECT_FALSE(ValidateExports({{std::string(4097, 'a'), v, false, ""}}, o).ok());
  o.default_export = "b";
  EXPECT_FALSE(ValidateExports({{"a", v, false, ""}}, o).ok());
}

TEST(ServerStartTest, ServesOverLoopbackTcp) {
  ServerOptions o;
  o.listen_addresses = {"127.0.0.1:0"};  // a free port
  auto v = std::make_shared<arcstore::testing::MemoryVolume>(VolumeInfo{"a", 1, 1 << 20, 4096, ""});
  auto server = Server::Start(o, {{"a", v, false, ""}});
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  uint16_t port = (*server)->port();
  ASSERT_NE(port, 0);
  EXPECT_EQ((*server)->address(), "127.0.0.1:" + std::to_string(port));
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  RawClient c(fd);
  ASSERT_NE(c.Connect("a", true), 0);
  std::vector<uint8_t> w = Pattern(100000, 6), r;
  ASSERT_EQ(c.Do(kCmdWrite, 12345, 100000, kCmdFlagFua, &w), 0u);
  ASSERT_EQ(c.Do(kCmdRead, 12345, 100000, 0, nullptr, &r), 0u);
  EXPECT_EQ(r, w);
}

TEST(ServerStartTest, RefusesALiveSocketAndReplacesAStaleOne) {
  const arcstore::testing::TempDir dir("nbd_test");
  ServerOptions o;
  o.socket_path = dir.File("s.sock");
  auto v = std::make_shared<arcstore::testing::MemoryVolume>(VolumeInfo{"a", 1, 1 << 20, 4096, ""});
  auto first = Server::Start(o, {{"a", v, false, ""}});
  ASSERT_TRUE(first.ok());
  auto second = Server::Start(o, {{"a", v, false, ""}});
  EXPECT_EQ(second.status().code(), StatusCode::kAlreadyExists);
  // The refused server did not remove the live socket.
  RawClient c(o.socket_path);
  EXPECT_TRUE(c.connected());
  first->reset();
  EXPECT_NE(::access(o.socket_path.c_str(), F_OK), 0);  // removed on shutdown
  // A stale socket file (no server behind it) is replaced.
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, o.socket_path.c_str(), sizeof(a.sun_path) - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
  ::close(fd);
  auto third = Server::Start(o, {{"a", v, false, ""}});
  EXPECT_TRUE(third.ok()) << third.status().ToString();
  third->reset();
}

// The reader hands out a payload that lies whole in its buffer without a
// copy, and only then, leaving what follows it buffered; a short WriteAll
// of many pieces and of few both arrive whole.
TEST(TransportTest, TakeBufferedOnlyWhenAllOfItIsBuffered) {
  std::vector<uint8_t> in(10);
  for (size_t i = 0; i < in.size(); i++) in[i] = static_cast<uint8_t>(i);
  MemoryTransport t(in);
  Reader reader(&t);
  uint8_t head[4];
  ASSERT_EQ(reader.ReadExact(head, 4), Reader::Outcome::kOk);
  EXPECT_EQ(reader.TakeBuffered(7), nullptr);
  EXPECT_EQ(reader.buffered(), 6u) << "a refused take consumes nothing";
  const uint8_t* p = reader.TakeBuffered(2);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(std::vector<uint8_t>(p, p + 2), std::vector<uint8_t>(in.begin() + 4, in.begin() + 6));
  EXPECT_EQ(reader.buffered(), 4u);
  ASSERT_EQ(reader.ReadExact(head, 4), Reader::Outcome::kOk) << "what follows stays buffered";
  EXPECT_EQ(std::vector<uint8_t>(head, head + 4), std::vector<uint8_t>(in.begin() + 6, in.end()));
  EXPECT_EQ(std::vector<uint8_t>(p, p + 2), std::vector<uint8_t>(in.begin() + 4, in.begin() + 6))
      << "a taken payload stays valid until the buffer is refilled";
  EXPECT_EQ(reader.ReadExact(head, 1), Reader::Outcome::kEof);
}

TEST(TransportTest, SocketWriteAllSendsFewAndManyPieces) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketTransport t(fds[0]);
  std::vector<uint8_t> piece(3000);
  for (size_t i = 0; i < piece.size(); i++) piece[i] = static_cast<uint8_t>(i * 7);
  // 20 pieces (past the on-stack copy), then 2.
  std::vector<iovec> iov(20, iovec{piece.data(), piece.size()});
  std::vector<uint8_t> got(22 * piece.size());
  std::thread sender([&] {
    EXPECT_TRUE(t.WriteAll(iov.data(), 20).ok());
    EXPECT_TRUE(t.WriteAll(iov.data(), 2).ok());
  });
  size_t at = 0;
  while (at < got.size()) {
    ssize_t r = ::recv(fds[1], got.data() + at, got.size() - at, 0);
    ASSERT_GT(r, 0);
    at += static_cast<size_t>(r);
  }
  sender.join();
  for (size_t k = 0; k < 22; k++) {
    ASSERT_TRUE(std::equal(piece.begin(), piece.end(), got.begin() + k * piece.size())) << k;
  }
  ::close(fds[1]);
}

// A payload read into pieces (a WRITE into the volume's record buffers)
// takes what the reader has buffered first, then receives the rest straight
// into the pieces, past empty ones and over more pieces than one receive
// takes; what follows the payload is read as usual. A stream that ends
// inside the pieces is a truncation.
TEST(TransportTest, ReadExactVFillsPiecesFromTheBufferThenTheSocket) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketTransport t(fds[0]);
  std::vector<uint8_t> sent(4 + 300000 + 100 * 1000 + 4);
  for (size_t i = 0; i < sent.size(); i++) sent[i] = static_cast<uint8_t>(i * 13 + i / 251);
  std::thread sender = SendInPieces(fds[1], sent);
  Reader reader(&t);
  uint8_t head[4];
  ASSERT_EQ(reader.ReadExact(head, 4), Reader::Outcome::kOk);
  auto read_into = [&](const std::vector<size_t>& sizes) {
    size_t total = 0;
    for (size_t n : sizes) total += n;
    std::vector<uint8_t> got(total);
    std::vector<std::span<uint8_t>> pieces;
    size_t at = 0;
    for (size_t n : sizes) {
      pieces.emplace_back(got.data() + at, n);
      at += n;
    }
    EXPECT_EQ(reader.ReadExactV(pieces), Reader::Outcome::kOk);
    return got;
  };
  std::vector<uint8_t> first = read_into({5000, 0, 65536, 65536, 100000, 63928, 0});
  EXPECT_TRUE(std::equal(first.begin(), first.end(), sent.begin() + 4));
  std::vector<uint8_t> second = read_into(std::vector<size_t>(100, 1000));
  EXPECT_TRUE(std::equal(second.begin(), second.end(), sent.begin() + 300004));
  uint8_t tail[4];
  ASSERT_EQ(reader.ReadExact(tail, 4), Reader::Outcome::kOk);
  EXPECT_TRUE(std::equal(tail, tail + 4, sent.end() - 4));
  sender.join();
  ASSERT_EQ(::send(fds[1], sent.data(), 10, 0), 10);
  ::close(fds[1]);
  std::vector<uint8_t> short_read(20);
  std::vector<std::span<uint8_t>> pieces{std::span<uint8_t>(short_read).first(15),
                                         std::span<uint8_t>(short_read).subspan(15)};
  EXPECT_EQ(reader.ReadExactV(pieces), Reader::Outcome::kTruncated);
}

// With a poll set, the reader's waits for a request header and for a
// payload's pieces poll first: the bytes are the same, and every wait is
// counted (caught by polling, or slept).
TEST(TransportTest, AReaderWithAPollPollsForHeadersAndPayloads) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketTransport t(fds[0]);
  stats::Registry registry;
  PollCounters counters{registry.AddCounter("t", "caught", stats::Unit::kOps, ""),
                        registry.AddCounter("t", "slept", stats::Unit::kOps, ""),
                        registry.AddCounter("t", "no_budget", stats::Unit::kOps, ""),
                        registry.AddCounter("t", "poll_ns", stats::Unit::kNanoseconds, ""),
                        registry.AddCounter("t", "rests", stats::Unit::kOps, "")};
  PollBudget budget(1);
  AdaptivePoll poll(kNsPerMs, &budget, DefaultClock(), counters);
  Reader reader(&t);
  reader.set_poll(&poll);
  std::vector<uint8_t> sent(4 + 300000);
  for (size_t i = 0; i < sent.size(); i++) sent[i] = static_cast<uint8_t>(i * 31 + i / 977);
  std::thread sender = SendInPieces(fds[1], sent);
  uint8_t head[4];
  ASSERT_EQ(reader.ReadExact(head, 4), Reader::Outcome::kOk);
  std::vector<uint8_t> got(300000);
  std::vector<std::span<uint8_t>> pieces;
  for (size_t at = 0; at < got.size(); at += 60000) pieces.emplace_back(got.data() + at, 60000);
  ASSERT_EQ(reader.ReadExactV(pieces), Reader::Outcome::kOk);
  sender.join();
  EXPECT_TRUE(std::equal(head, head + 4, sent.begin()));
  EXPECT_TRUE(std::equal(got.begin(), got.end(), sent.begin() + 4));
  EXPECT_GE(counters.caught->Value() + counters.slept->Value(), 2u);
  ::close(fds[1]);
  EXPECT_EQ(reader.ReadExact(head, 1), Reader::Outcome::kEof);
}

// A read that does not wait (AdaptivePoll's) says "nothing yet" with kBusy
// on an empty socket, takes what has arrived, and sees the end of stream.
TEST(TransportTest, ReadSomeNowNeverWaits) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  SocketTransport t(fds[0]);
  uint8_t buf[16];
  Result<size_t> r = t.ReadSomeNow(buf, sizeof(buf));
  EXPECT_EQ(r.status().code(), StatusCode::kBusy);
  ASSERT_EQ(::send(fds[1], "abc", 3, 0), 3);
  r = t.ReadSomeNow(buf, sizeof(buf));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(*r, 3u);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(buf), 3), "abc");
  ::close(fds[1]);
  r = t.ReadSomeNow(buf, sizeof(buf));
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 0u);
}

// Request buffers come back for reuse by size class, up to the byte cap;
// large ones are never kept.
TEST(PayloadCacheTest, ReusesBuffersBySizeUpToItsCap) {
  PayloadCache cache(16 * 1024, 0);
  std::unique_ptr<uint8_t[]> a = cache.Take(4096);
  uint8_t* const a_ptr = a.get();
  cache.Give(std::move(a), 4096);
  EXPECT_EQ(cache.cached_bytes(), 4096u);
  std::unique_ptr<uint8_t[]> b = cache.Take(100);  // rounds up to 4 KiB: the same buffer
  EXPECT_EQ(b.get(), a_ptr);
  EXPECT_EQ(cache.cached_bytes(), 0u);
  std::unique_ptr<uint8_t[]> c = cache.Take(5000);  // 8 KiB class
  uint8_t* const c_ptr = c.get();
  c[8191] = 1;  // the whole class size is there
  cache.Give(std::move(c), 5000);
  EXPECT_NE(cache.Take(4096).get(), c_ptr) << "a 4 KiB take never gets an 8 KiB buffer";
  std::unique_ptr<uint8_t[]> d = cache.Take(8192), e = cache.Take(8192);
  EXPECT_EQ(d.get(), c_ptr);
  cache.Give(std::move(d), 8192);
  cache.Give(std::move(e), 8192);  // 16 KiB cached: the cap
  EXPECT_EQ(cache.cached_bytes(), 16384u);
  cache.Give(std::move(b), 4096);  // past the cap: freed
  EXPECT_EQ(cache.cached_bytes(), 16384u);
  cache.Give(cache.Take(1 << 20), 1 << 20);  // large, and no room for large ones: freed
  EXPECT_EQ(cache.cached_bytes(), 16384u);
  EXPECT_EQ(cache.cached_large_bytes(), 0u);
}

// Large buffers (a 1 MiB READ's) are kept under their own cap, so that a
// connection's queue of them stays warm; past the largest payload nothing
// is kept.
TEST(PayloadCacheTest, KeepsLargeBuffersUpToTheirOwnCap) {
  PayloadCache cache(4096, 2 << 20);
  std::unique_ptr<uint8_t[]> a = cache.Take(1 << 20), b = cache.Take(600 * 1024);
  uint8_t* const a_ptr = a.get();
  uint8_t* const b_ptr = b.get();
  b[(1 << 20) - 1] = 1;  // 600 KiB rounds up to the 1 MiB class
  std::unique_ptr<uint8_t[]> c = cache.Take(1 << 20);
  cache.Give(std::move(a), 1 << 20);
  cache.Give(std::move(b), 600 * 1024);
  EXPECT_EQ(cache.cached_large_bytes(), 2u << 20);
  cache.Give(std::move(c), 1 << 20);  // past the large cap: freed
  EXPECT_EQ(cache.cached_large_bytes(), 2u << 20);
  EXPECT_EQ(cache.cached_bytes(), 0u) << "large buffers do not count against the small cap";
  std::unique_ptr<uint8_t[]> d = cache.Take(700 * 1024), e = cache.Take(1 << 20);
  EXPECT_TRUE((d.get() == a_ptr && e.get() == b_ptr) || (d.get() == b_ptr && e.get() == a_ptr));
  EXPECT_EQ(cache.cached_large_bytes(), 0u);
  cache.Give(cache.Take(PayloadCache::kMaxBytes + 1), PayloadCache::kMaxBytes + 1);
  EXPECT_EQ(cache.cached_large_bytes(), 0u) << "above the largest payload: never kept";
}

}  // namespace
}  // namespace arcstore::nbd
