// arcstore iostat's layouts on fixed snapshots built with the I/O engine's
// stat names, values checked against deltas computed by hand.
#include "tools/iostat/iostat.h"

#include <gtest/gtest.h>

#include "base/units.h"

namespace arcstore::tools {
namespace {

struct IoStats {
  stats::Registry r;
  std::map<std::string, stats::Counter*> counters;
  std::map<std::string, stats::Histogram*> hists;
  std::map<std::string, stats::Gauge*> gauges;
  IoStats() {
    for (std::string_view c : kIoClasses) {
      std::string cls(c);
      counters[cls + "_ops"] = r.AddCounter("io", cls + "_ops", stats::Unit::kOps, "");
      counters[cls + "_bytes"] = r.AddCounter("io", cls + "_bytes", stats::Unit::kBytes, "");
      for (const char* h : {"_queue_ns", "_latency_ns", "_size_ind_bytes", "_size_agg_bytes"}) {
        hists[cls + h] = r.AddHistogram("io", cls + h, stats::Unit::kNone, "");
      }
      gauges[cls + "_active"] = r.AddGauge("io", cls + "_active", stats::Unit::kNone, "");
      gauges[cls + "_queued"] = r.AddGauge("io", cls + "_queued", stats::Unit::kNone, "");
    }
    hists["inflight_depth"] = r.AddHistogram("io", "inflight_depth", stats::Unit::kNone, "");
    gauges["alloc"] = r.AddGauge("pool", "allocated_bytes", stats::Unit::kBytes, "");
  }
};

struct IoRun {
  IoStats io;
  stats::Snapshot before, after, delta;
  IoRun() {
    io.counters["sync_read_ops"]->Add(1000);  // before the interval: must not show
    before = io.r.TakeSnapshot(0);
    // 2 s interval: 200 sync reads + 100 async reads of 4 KiB; 400 async
    // writes of 1 MiB (aggregated from 4 KiB pieces), 20 log writes of 4 KiB.
    io.counters["sync_read_ops"]->Add(200);
    io.counters["sync_read_bytes"]->Add(200 * 4096);
    io.counters["async_read_ops"]->Add(100);
    io.counters["async_read_bytes"]->Add(100 * 4096);
    io.counters["async_write_ops"]->Add(400);
    io.counters["async_write_bytes"]->Add(400 * kMiB);
    io.counters["log_write_ops"]->Add(20);
    io.counters["log_write_bytes"]->Add(20 * 4096);
    for (int i = 0; i < 200; i++) {
      io.hists["sync_read_latency_ns"]->Record(100000);  // 100 us
      io.hists["sync_read_queue_ns"]->Record(20000);     // 20 us
      io.hists["sync_read_size_ind_bytes"]->Record(4096);
      io.hists["sync_read_size_agg_bytes"]->Record(4096);
    }
    for (int i = 0; i < 100; i++) io.hists["async_read_latency_ns"]->Record(400000);  // 400 us
    for (int i = 0; i < 400; i++) {
      io.hists["async_write_latency_ns"]->Record(2000000);  // 2 ms
      io.hists["async_write_queue_ns"]->Record(8000000);    // 8 ms
      io.hists["async_write_size_agg_bytes"]->Record(kMiB);
      for (int j = 0; j < 256; j++) io.hists["async_write_size_ind_bytes"]->Record(4096);
    }
    for (int d : {1, 1, 2, 3, 8}) io.hists["inflight_depth"]->Record(static_cast<uint64_t>(d));
    io.gauges["async_write_active"]->Set(10);
    io.gauges["async_write_queued"]->Set(250);
    io.gauges["alloc"]->Set(3 * int64_t{kGiB} / 2);
    after = io.r.TakeSnapshot(2 * kNsPerSec);
    delta = stats::Delta(before, after);
  }
  std::string Render(IostatOptions o) {
    o.pool_name = "p0";
    return RenderIostat({&delta, &after, 2.0}, o);
  }
};

std::vector<std::string> Lines(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at < s.size()) {
    size_t nl = s.find('\n', at);
    out.push_back(s.substr(at, nl - at));
    at = nl + 1;
  }
  return out;
}

TEST(IostatTest, OperationsAndBandwidthPerSecond) {
  IoRun run;
  auto lines = Lines(run.Render({}));
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "              capacity     operations     bandwidth ");
  EXPECT_EQ(lines[1], "pool        alloc   free   read  write   read  write");
  EXPECT_EQ(lines[2], "----------  -----  -----  -----  -----  -----  -----");
  // read ops (200 + 100) / 2 = 150; write ops (400 + 20) / 2 = 210;
  // read bw 300 x 4 KiB / 2 = 600 KiB; write bw (400 MiB + 80 KiB) / 2 = 200 MiB.
  // free_bytes is not a stat of this engine: "-".
  EXPECT_EQ(lines[3], "p0           1.5G      -    150    210   600K   200M");
}

TEST(IostatTest, LatencyColumnsAreIntervalMeans) {
  IoRun run;
  IostatOptions o;
  o.latency = true;
  auto lines = Lines(run.Render(o));
  EXPECT_NE(lines[0].find("total_wait     disk_wait    syncq_wait    asyncq_wait"), std::string::npos);
  // Means use the histograms' exact sums. Reads: queue 200 x 20 us / 200 = 20 us
  // (async reads had no queue samples), device (200 x 100 us + 100 x 400 us) / 300
  // = 200 us; total 220 us. Writes: queue 8 ms, device 2 ms, total 10 ms.
  // syncq read 20 us; syncq write none; asyncq read none; asyncq write 8 ms.
  EXPECT_NE(lines[3].find("  220us   10ms  200us    2ms   20us      -      -    8ms"), std::string::npos)
      << lines[3];
}

TEST(IostatTest, QueueViewAndInFlightTable) {
  IoRun run;
  IostatOptions o;
  o.queues = true;
  std::string out = run.Render(o);
  auto lines = Lines(out);
  // async_write: 250 pending, 10 active; the other classes 0.
  EXPECT_NE(lines[3].find("      0      0      0      0      0      0    250     10      0      0"),
            std::string::npos)
      << lines[3];
  // depths 1,1,2,3,8: bucket [1,2) 2 I/Os 40%, [2,4) 2 I/Os 40% (cum 80), [8,16) 1 I/O.
  EXPECT_NE(out.find("        1:         2   40     40\n"), std::string::npos) << out;
  EXPECT_NE(out.find("        2:         2   40     80\n"), std::string::npos);
  EXPECT_NE(out.find("        4:         0    0     80\n"), std::string::npos);
  EXPECT_NE(out.find("        8:         1   20    100\n"), std::string::npos);
}

TEST(IostatTest, SizeHistogramsShowIndividualAndAggregated) {
  IoRun run;
  IostatOptions o;
  o.sizes = true;
  std::string out = run.Render(o);
  // 4 KiB row: 200 sync reads (ind and agg), 102400 individual async writes.
  EXPECT_NE(out.find("  sr_ind  sr_agg  sw_ind  sw_agg  ar_ind  ar_agg  aw_ind  aw_agg  lw_ind  lw_agg"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("      4K     200     200       0       0       0       0    102K       0       0       0\n"),
            std::string::npos)
      << out;
  // 1 MiB row: 400 aggregated async writes.
  EXPECT_NE(out.find("      1M       0       0       0       0       0       0       0     400       0       0\n"),
            std::string::npos)
      << out;
}

TEST(IostatTest, LatencyHistogramRowsAreBucketBounds) {
  IoRun run;
  IostatOptions o;
  o.histograms = true;
  std::string out = run.Render(o);
  // 100 us is in [65536, 131072): labelled by its lower bound, 66us; 200
  // sync reads there.
  EXPECT_NE(out.find("    66us     200       0       0       0       0       0\n"), std::string::npos) << out;
  // 8 ms async-write queue wait in [4194304, 8388608): labelled 4.2ms.
  EXPECT_NE(out.find("   4.2ms       0       0       0       0       0     400\n"), std::string::npos) << out;
  // The brw_stats-style table puts the same I/Os on the same bound, and both
  // say which bound they show.
  EXPECT_NE(out.find("     66us:       200"), std::string::npos) << out;
  EXPECT_NE(out.find("rows: from the bound shown up to the next row's"), std::string::npos) << out;
  EXPECT_NE(out.find("I/O time (device latency, all classes)"), std::string::npos);
}

// A cache device's row, from its module's device stats over the same
// interval; a device whose module is gone prints dashes.
TEST(IostatTest, CacheDevicesHaveRowsUnderTheCacheLine) {
  stats::Registry r;
  const std::string m = "l2arc.4";
  stats::Counter* reads = r.AddCounter(m, "device_reads", stats::Unit::kOps, "");
  stats::Counter* read_bytes = r.AddCounter(m, "device_read_bytes", stats::Unit::kBytes, "");
  stats::Histogram* read_ns = r.AddHistogram(m, "device_read_latency_ns", stats::Unit::kNanoseconds, "");
  stats::Counter* writes = r.AddCounter(m, "device_writes", stats::Unit::kOps, "");
  stats::Counter* write_bytes = r.AddCounter(m, "device_write_bytes", stats::Unit::kBytes, "");
  stats::Histogram* write_ns = r.AddHistogram(m, "device_write_latency_ns", stats::Unit::kNanoseconds, "");
  stats::Gauge* asize = r.AddGauge(m, "asize", stats::Unit::kBytes, "");
  reads->Add(50);  // before the interval
  stats::Snapshot before = r.TakeSnapshot(0);
  // 2 s: 8,000 reads of 4 KiB at 80 us, 6 slot writes of 1 MiB at 3 ms.
  reads->Add(8000);
  read_bytes->Add(8000 * 4096);
  for (int k = 0; k < 8000; k++) read_ns->Record(80000);
  writes->Add(6);
  write_bytes->Add(6 * kMiB);
  for (int k = 0; k < 6; k++) write_ns->Record(3000000);
  asize->Set(int64_t{kGiB} / 2);
  stats::Snapshot after = r.TakeSnapshot(2 * kNsPerSec);
  stats::Snapshot delta = stats::Delta(before, after);
  IostatOptions o;
  o.pool_name = "p0";
  o.latency = true;
  o.cache_devices = {{"nvme0n1", m, kGiB}, {"gone", "l2arc.9", kGiB}};
  auto lines = Lines(RenderIostat({&delta, &after, 2.0}, o));
  ASSERT_GE(lines.size(), 7u);
  EXPECT_EQ(lines[4].substr(0, 31), "cache           -      -      -") << lines[4];
  // The rates are the interval's counts over its 2 s; the waits are device
  // time (the histograms' means); no queue waits.
  EXPECT_EQ(lines[5], "  nvme0n1    512M   512M   4.0K      3    15M   3.0M   80us    3ms   80us    3ms      -      -      -      -")
      << lines[5];
  EXPECT_EQ(lines[6].substr(0, 52), "  gone          -      -      -      -      -      -") << lines[6];
}

TEST(IostatTest, MissingIoStatsPrintDashes) {
  stats::Snapshot empty;
  std::string out = RenderIostat({&empty, &empty, 1.0}, {});
  EXPECT_NE(out.find("pool            -      -      -      -      -      -"), std::string::npos) << out;
}

TEST(IostatTest, NiceTime) {
  EXPECT_EQ(NiceTimeNs(0), "0");
  EXPECT_EQ(NiceTimeNs(850), "850ns");
  EXPECT_EQ(NiceTimeNs(1500000), "1.5ms");
  EXPECT_EQ(NiceTimeNs(2000000), "2ms");
  EXPECT_EQ(NiceTimeNs(45000), "45us");
}

}  // namespace
}  // namespace arcstore::tools
