// The stats source end to end: a control socket and a metrics endpoint
// served by SocketServer, read back through RemoteStatsSource and raw HTTP;
// OpenStatsSource's choice between a live server and the pool in-process.
#include "tools/source/control.h"

#include <unistd.h>

#include <mutex>
#include <vector>

#include <gtest/gtest.h>

#include "base/units.h"
#include "stats/registry.h"
#include "testing/temp_dir.h"
#include "tools/source/pool_access.h"
#include "tools/source/socket_server.h"
#include "tools/source/stats_source.h"

namespace arcstore::tools {
namespace {

class FakeSource final : public StatsSource {
 public:
  FakeSource() {
    hits = registry.AddCounter("arcstats", "hits", stats::Unit::kOps, "hits");
    registry.AddGauge("arcstats", "c", stats::Unit::kBytes, "target")->Set(1 << 20);
    registry.AddHistogram("io", "sync_read_latency_ns", stats::Unit::kNanoseconds, "latency")->Record(3000);
  }
  Result<stats::Snapshot> TakeSnapshot() override { return registry.TakeSnapshot(42); }
  Result<std::vector<TxgRow>> TxgHistory() override { return rows; }
  // Called on the server's thread; read by the test after the reply.
  Status StartTrace(const std::string& path, uint64_t ring_entries,
                    bool replace_existing) override {
    std::lock_guard<std::mutex> l(mu);
    trace_path = path;
    trace_ring = ring_entries;
    trace_replace = replace_existing;
    return Status::Ok();
  }
  Status StopTrace() override { return Status::NotSupported("no trace running"); }
  Result<PoolInfo> Info() override { return info; }
  Status AddCache(const std::string& path) override {
    std::lock_guard<std::mutex> l(mu);
    cache_calls.push_back("add " + path);
    return Status::Ok();
  }
  Status RemoveCache(const std::string& path) override {
    return Status::NotFound("cache device " + path + " is not one of the pool's");
  }
  std::string Describe() const override { return "fake"; }
  std::vector<std::string> cache_calls;

  stats::Registry registry;
  stats::Counter* hits;
  std::vector<TxgRow> rows;
  std::mutex mu;
  std::string trace_path;
  uint64_t trace_ring = 0;
  bool trace_replace = false;
  PoolInfo info;
};

class ControlTest : public ::testing::Test {
 protected:
  std::unique_ptr<SocketServer> StartControl(StatsSource* source, const std::string& path) {
    SocketServerOptions o;
    o.unix_path = path;
    auto s = SocketServer::Start(o, [source](int fd) { ServeControlConnection(*source, fd, 5000); });
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }
  arcstore::testing::TempDir dir_{"control_test"};
};

TEST_F(ControlTest, SnapshotTxgsAndTraceCrossTheSocket) {
  FakeSource fake;
  fake.hits->Add(7);
  TxgRow row;
  row.txg = 9;
  row.state = "C";
  row.reason = "arc_dirty_limit";
  row.stime_ns = 400 * kNsPerMs;
  row.delay_ns = 12345;
  fake.rows.push_back(row);
  fake.info.name = "tank";
  fake.info.size_bytes = 64 * kMiB;
  fake.info.pending_free_bytes = 12345;
  fake.info.volumes.push_back(VolumeInfo{"v0", 7, 8 * kMiB, 65536, "zstd"});
  auto server = StartControl(&fake, dir_.File("p.ctl"));
  ASSERT_NE(server, nullptr);

  RemoteStatsSource remote(dir_.File("p.ctl"));
  Result<stats::Snapshot> s = remote.TakeSnapshot();
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->taken_ns, 42u);
  EXPECT_EQ(s->Get("arcstats", "hits"), 7);
  EXPECT_EQ(s->Find("arcstats", "hits")->info.kind, stats::Kind::kCounter);
  EXPECT_EQ(s->Find("io", "sync_read_latency_ns")->histogram.count, 1u);

  Result<std::vector<TxgRow>> rows = remote.TxgHistory();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_EQ(rows->size(), 1u);
  EXPECT_EQ((*rows)[0].txg, 9u);
  EXPECT_EQ((*rows)[0].reason, "arc_dirty_limit");
  EXPECT_EQ((*rows)[0].stime_ns, 400 * kNsPerMs);
  EXPECT_EQ((*rows)[0].delay_ns, 12345u);

  ASSERT_TRUE(remote.StartTrace("/tmp/a trace file", 4096, true).ok());
  {
    std::lock_guard<std::mutex> l(fake.mu);
    EXPECT_EQ(fake.trace_path, "/tmp/a trace file");
    EXPECT_EQ(fake.trace_ring, 4096u);
    EXPECT_TRUE(fake.trace_replace);
  }
  Result<PoolInfo> info = remote.Info();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_EQ(info->name, "tank");
  EXPECT_EQ(info->size_bytes, 64 * kMiB);
  EXPECT_EQ(info->pending_free_bytes, 12345u);
  ASSERT_EQ(info->volumes.size(), 1u);
  EXPECT_EQ(info->volumes[0].name, "v0");
  EXPECT_EQ(info->volumes[0].record_size_bytes, 65536u);
  EXPECT_EQ(info->volumes[0].compression, "zstd");
  Status stop = remote.StopTrace();
  EXPECT_FALSE(stop.ok());
  EXPECT_NE(stop.message().find("no trace running"), std::string::npos) << stop.ToString();
}

TEST_F(ControlTest, CacheDevicesAreAddedAndRemovedThroughTheSocketByTheServersUserOnly) {
  FakeSource fake;
  fake.info.name = "tank";
  PoolInfo::CacheDevice d;
  d.path = "/dev/fast0";
  d.state = "online";
  d.size_bytes = 1 << 30;
  d.used_bytes = 5 << 20;
  d.cached_bytes = 4 << 20;
  d.blocks = 32;
  d.header_bytes = 1536;
  d.stats_module = "l2arc.3";
  fake.info.cache_devices.push_back(d);
  auto server = StartControl(&fake, dir_.File("p.ctl"));
  ASSERT_NE(server, nullptr);
  RemoteStatsSource remote(dir_.File("p.ctl"));
  ASSERT_TRUE(remote.AddCache("/dev/fast1").ok());
  Status removed = remote.RemoveCache("/dev/none");
  EXPECT_FALSE(removed.ok());
  EXPECT_NE(removed.message().find("/dev/none"), std::string::npos) << removed.ToString();
  Result<PoolInfo> info = remote.Info();
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_EQ(info->cache_devices.size(), 1u);
  EXPECT_EQ(info->cache_devices[0].path, "/dev/fast0");
  EXPECT_EQ(info->cache_devices[0].state, "online");
  EXPECT_EQ(info->cache_devices[0].used_bytes, uint64_t{5} << 20);
  EXPECT_EQ(info->cache_devices[0].header_bytes, 1536u);
  EXPECT_EQ(info->cache_devices[0].stats_module, "l2arc.3");
  const ControlPeer me{static_cast<uint32_t>(::geteuid()), 1};
  EXPECT_NE(HandleControlRequest(fake, "cache add relative/path", me).find("absolute"),
            std::string::npos);
  EXPECT_NE(HandleControlRequest(fake, "cache swap /x", me).find("cache add PATH"),
            std::string::npos);
  const ControlPeer other{::geteuid() == 0 ? 4242u : 0u, 1};
  if (!PeerMayWriteFiles(other)) {
    EXPECT_NE(HandleControlRequest(fake, "cache add /dev/fast2", other).find("refused for uid"),
              std::string::npos);
  }
  std::lock_guard<std::mutex> l(fake.mu);
  EXPECT_EQ(fake.cache_calls, std::vector<std::string>{"add /dev/fast1"});
}

TEST_F(ControlTest, BadRequestsGetErrorsThatNameThem) {
  FakeSource fake;
  const ControlPeer me{static_cast<uint32_t>(::geteuid()), 1};
  EXPECT_EQ(HandleControlRequest(fake, "bogus", me).rfind("error ", 0), 0u);
  EXPECT_NE(HandleControlRequest(fake, "bogus", me).find("'bogus'"), std::string::npos);
  EXPECT_NE(HandleControlRequest(fake, "trace start 0 new /x", me).find("ring entries '0'"),
            std::string::npos);
  EXPECT_NE(HandleControlRequest(fake, "trace start 12", me).find("RING_ENTRIES new|replace PATH"),
            std::string::npos);
  auto server = StartControl(&fake, dir_.File("p.ctl"));
  ASSERT_NE(server, nullptr);
  Result<std::string> r = ControlCall(dir_.File("p.ctl"), "nonesuch", 5000);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nonesuch"), std::string::npos);
  // A second server on the same live socket is refused; the first keeps it.
  SocketServerOptions o;
  o.unix_path = dir_.File("p.ctl");
  EXPECT_EQ(SocketServer::Start(o, [](int) {}).status().code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(ControlCall(dir_.File("p.ctl"), "stats", 5000).ok());
}

TEST_F(ControlTest, MetricsEndpointServesPrometheusText) {
  FakeSource fake;
  fake.hits->Add(3);
  SocketServerOptions o;
  o.listen_address = "127.0.0.1:0";
  auto server = SocketServer::Start(o, [&fake](int fd) { ServeMetricsConnection(fake, fd, 5000); });
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  auto get = [&](const std::string& target) {
    Result<int> fd = ConnectTcp((*server)->address());
    EXPECT_TRUE(fd.ok()) << fd.status().ToString();
    EXPECT_TRUE(WriteAll(*fd, "GET " + target + " HTTP/1.1\r\nHost: x\r\n\r\n", 5000).ok());
    Result<std::string> reply = ReadToEnd(*fd, 1 << 20, 5000);
    ::close(*fd);
    return reply.ok() ? *reply : reply.status().ToString();
  };
  std::string ok = get("/metrics");
  EXPECT_EQ(ok.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << ok;
  EXPECT_NE(ok.find("text/plain; version=0.0.4"), std::string::npos);
  EXPECT_NE(ok.find("\r\n\r\n# HELP arcstore_arcstats_hits_total hits\n"), std::string::npos) << ok;
  EXPECT_NE(ok.find("arcstore_arcstats_hits_total 3\n"), std::string::npos);
  EXPECT_NE(ok.find("arcstore_io_sync_read_latency_seconds_count 1\n"), std::string::npos);
  EXPECT_EQ(get("/nope").rfind("HTTP/1.1 404", 0), 0u);
}

TEST_F(ControlTest, OpenStatsSourcePrefersALiveServerElseOpensThePool) {
  std::string pool_path = dir_.File("pool");
  PoolCreateOptions co;
  co.size_bytes = 64 * kMiB;
  co.sparse = true;
  ASSERT_TRUE(Pool::Create(pool_path, co).ok());

  SourceOptions so;
  so.pool_path = pool_path;
  so.read_only = false;
  Result<OpenedSource> local = OpenStatsSource(so);
  ASSERT_TRUE(local.ok()) << local.status().ToString();
  EXPECT_FALSE(local->live);
  ASSERT_NE(local->pool, nullptr);
  VolumeOptions vo;
  vo.name = "v";
  vo.size_bytes = 8 * kMiB;
  ASSERT_TRUE(local->pool->CreateVolume(vo).ok());
  Result<stats::Snapshot> snap = local->source->TakeSnapshot();
  ASSERT_TRUE(snap.ok());
  EXPECT_GT(snap->Get("arcstats", "c_max"), 0);
  Result<std::vector<TxgRow>> rows = local->source->TxgHistory();
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  ASSERT_FALSE(rows->empty());

  // Serve that pool's source on the default control path: now a second
  // OpenStatsSource reads it live, without opening the pool.
  auto server = StartControl(local->source.get(), DefaultControlPath(pool_path));
  ASSERT_NE(server, nullptr);
  Result<OpenedSource> live = OpenStatsSource(so);
  ASSERT_TRUE(live.ok()) << live.status().ToString();
  EXPECT_TRUE(live->live);
  EXPECT_EQ(live->pool, nullptr);
  Result<stats::Snapshot> remote = live->source->TakeSnapshot();
  ASSERT_TRUE(remote.ok()) << remote.status().ToString();
  EXPECT_EQ(remote->Get("arcstats", "c_max"), snap->Get("arcstats", "c_max"));
  Result<std::vector<TxgRow>> remote_rows = live->source->TxgHistory();
  ASSERT_TRUE(remote_rows.ok());
  EXPECT_GE(remote_rows->size(), rows->size());
  server.reset();

  so.require_live = true;
  Result<OpenedSource> none = OpenStatsSource(so);
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("no arcstore serve answers on " + pool_path + ".ctl"),
            std::string::npos)
      << none.status().ToString();
  ASSERT_TRUE(local->pool->Close().ok());
}

}  // namespace
}  // namespace arcstore::tools
