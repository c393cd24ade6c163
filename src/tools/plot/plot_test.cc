// arcstore plot: the data handed to gnuplot (a trace with N I/Os and S syncs
// gives N points and S markers; samples give one row each, with the values
// computed by hand) and images that are not blank.
#include "tools/plot/plot.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "base/units.h"
#include "stats/wire.h"
#include "testing/temp_dir.h"
#include "tools/plot/png_probe.h"

namespace arcstore::tools {
namespace {

class PlotTest : public ::testing::Test {
 protected:
  PlotOptions Options(const std::string& name) {
    PlotOptions o;
    o.output_prefix = dir_.File(name);
    o.title = name;
    o.width_px = 640;
    o.height_px = 400;
    return o;
  }
  arcstore::testing::TempDir dir_{"plot_test"};
};

// N I/Os spread over 2 s, sizes 4 KiB .. 1 MiB; S syncs every 250 ms.
std::string MakeTrace(int n, int s) {
  std::string t = std::string(kTraceHeader) + "\n";
  for (int i = 0; i < n; i++) {
    uint64_t submit = static_cast<uint64_t>(i) * 2 * kNsPerSec / static_cast<uint64_t>(n);
    uint64_t bytes = uint64_t{4096} << (i % 9);
    uint64_t latency = 50 * kNsPerUs * static_cast<uint64_t>(1 + (i * 7) % 40);
    t += "I\t" + std::to_string(submit) + "\t" + std::to_string(submit + 1000) + "\t" +
         std::to_string(submit + latency) + "\t" + (i % 3 == 0 ? "sync_read" : "async_write") + "\t" +
         (i % 3 == 0 ? "read" : "write") + "\t" + std::to_string(uint64_t(i) * 131072) + "\t" +
         std::to_string(bytes) + "\t" + std::to_string(1 + i % 4) + "\tok\n";
  }
  for (int k = 0; k < s; k++) {
    uint64_t at = static_cast<uint64_t>(k) * 250 * kNsPerMs + kNsPerMs;
    t += "T\t" + std::to_string(at) + "\tsync_start\t" + std::to_string(100 + k) + "\n";
    t += "T\t" + std::to_string(at + 80 * kNsPerMs) + "\tsync_end\t" + std::to_string(100 + k) + "\n";
  }
  return t;
}

size_t DataLines(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) n += !line.empty() && line[0] != '#';
  return n;
}

void ExpectDrawn(const PlotFiles& f, uint32_t min_colours) {
  Result<PngFacts> png = ProbePng(f.png);
  ASSERT_TRUE(png.ok()) << png.status().ToString();
  EXPECT_EQ(png->width, 640u);
  EXPECT_EQ(png->height, 400u);
  // Axes, labels and data: well over 1% of the pixels, in several colours.
  EXPECT_GT(png->non_background_pixels, uint64_t{640} * 400 / 100);
  EXPECT_GE(png->colours, min_colours);
  std::ifstream svg(f.svg);
  std::stringstream ss;
  ss << svg.rdbuf();
  EXPECT_NE(ss.str().find("<svg"), std::string::npos);
}

TEST_F(PlotTest, LatencyPlotHasOnePointPerIoAndOneMarkerPerSync) {
  const int n = 500, s = 7;
  Result<Trace> trace = ParseTrace(MakeTrace(n, s));
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->ios.size(), size_t{n});
  ASSERT_EQ(trace->syncs.size(), size_t{s});
  Result<PlotFiles> f = PlotLatency(*trace, Options("latency"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(DataLines(f->data), size_t{n});
  EXPECT_EQ(DataLines(f->markers), size_t{s});
  // The first I/O: submit 0, latency 50 us = 0.05 ms, 4 KiB = 2^12.
  std::ifstream in(f->data);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_EQ(first, "0.000000000 0.050000 12 sync_read");
  std::ifstream m(f->markers);
  std::getline(m, header);
  std::getline(m, first);
  EXPECT_EQ(first, "0.001000000 0.081000000 100");
  ExpectDrawn(*f, 6);  // palette colours, red markers, grey spans, axes
}

// Application writes (W lines) are points of their own, classed by the
// place where each waited most.
TEST_F(PlotTest, LatencyPlotDrawsAppWritesByWhereTheyWaited) {
  std::string t = MakeTrace(100, 2);
  // A write that waited 3 ms on the throttle, one that waited nowhere for
  // 10 us, and one that waited 40 us on a read-modify-write read.
  t += "W\t1000000\t4500000\twrite\t0\t4096\t0\t2000\t3000000\t0\t0\tok\n";
  t += "W\t2000000\t2050000\twrite\t4096\t4096\t0\t9999\t0\t0\t0\tok\n";
  t += "W\t3000000\t3100000\tzero\t8192\t65536\t0\t0\t0\t0\t40000\terror\n";
  Result<Trace> trace = ParseTrace(t);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->writes.size(), 3u);
  EXPECT_EQ(trace->writes[2].op, "zero");
  EXPECT_FALSE(trace->writes[2].ok);
  EXPECT_EQ(trace->writes[0].wait_ns[2], 3'000'000u);
  Result<PlotFiles> f = PlotLatency(*trace, Options("latency_writes"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(DataLines(f->data), 103u);
  std::ifstream in(f->data);
  std::vector<std::string> apps;
  for (std::string line; std::getline(in, line);) {
    if (line.find(" app:") != std::string::npos) apps.push_back(line);
  }
  ASSERT_EQ(apps.size(), 3u);
  EXPECT_EQ(apps[0], "0.001000000 3.500000 12 app:throttle");
  EXPECT_EQ(apps[1], "0.002000000 0.050000 12 app:memory");
  EXPECT_EQ(apps[2], "0.003000000 0.100000 16 app:rmw_read");
  ExpectDrawn(*f, 6);

  // A v1 trace has no W lines; a W line there is refused, naming the line.
  std::string v1 = std::string(kTraceHeaderV1) + "\nW\t1\t2\twrite\t0\t1\t0\t0\t0\t0\t0\tok\n";
  Result<Trace> old = ParseTrace(v1);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("line 2"), std::string::npos) << old.status().ToString();
  Result<Trace> bad = ParseTrace(std::string(kTraceHeader) + "\nW\t5\t2\twrite\t0\t1\t0\t0\t0\t0\t0\tok\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("start <= done"), std::string::npos) << bad.status().ToString();
}

// Cache device I/O (C lines, v3) is read back and drawn as a series of its
// own; a v2 trace has none, and a bad C line is refused naming its field.
TEST_F(PlotTest, LatencyPlotDrawsCacheDeviceIo) {
  std::string t = MakeTrace(50, 1);
  t += "C\t1000000\t1080000\t0\tsync_read\tread\t1048576\t4096\tok\n";
  t += "C\t2000000\t5000000\t1\tasync_write\twrite\t2097152\t1048576\terror\n";
  Result<Trace> trace = ParseTrace(t);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->cache_ios.size(), 2u);
  EXPECT_EQ(trace->cache_ios[0].cache, 0u);
  EXPECT_EQ(trace->cache_ios[0].io.op, "read");
  EXPECT_EQ(trace->cache_ios[0].io.bytes, 4096u);
  EXPECT_EQ(trace->cache_ios[1].cache, 1u);
  EXPECT_EQ(trace->cache_ios[1].io.io_class, "async_write");
  EXPECT_FALSE(trace->cache_ios[1].io.ok);
  Result<PlotFiles> f = PlotLatency(*trace, Options("latency_cache"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  std::ifstream in(f->data);
  std::vector<std::string> cache;
  for (std::string line; std::getline(in, line);) {
    if (line.find(" cache:") != std::string::npos) cache.push_back(line);
  }
  ASSERT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache[0], "0.001000000 0.080000 12 cache:read");
  EXPECT_EQ(cache[1], "0.002000000 3.000000 20 cache:write");
  std::ifstream gp(f->script);
  std::stringstream script;
  script << gp.rdbuf();
  EXPECT_NE(script.str().find("title 'cache device I/O'"), std::string::npos);
  ExpectDrawn(*f, 6);

  std::string v2 = std::string(kTraceHeaderV2) + "\nC\t1\t2\t0\tsync_read\tread\t0\t4096\tok\n";
  Result<Trace> old = ParseTrace(v2);
  ASSERT_FALSE(old.ok());
  EXPECT_NE(old.status().message().find("line 2"), std::string::npos) << old.status().ToString();
  Result<Trace> bad =
      ParseTrace(std::string(kTraceHeader) + "\nC\t1\t2\tx\tsync_read\tread\t0\t4096\tok\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("cache is not a device number"), std::string::npos)
      << bad.status().ToString();
}

TEST_F(PlotTest, ArcAndThrottlePlotsFromSamples) {
  std::string lines;
  stats::Registry r;
  stats::Gauge* size = r.AddGauge("arcstats", "size", stats::Unit::kBytes, "");
  stats::Gauge* c = r.AddGauge("arcstats", "c", stats::Unit::kBytes, "");
  r.AddGauge("arcstats", "c_min", stats::Unit::kBytes, "")->Set(64 * int64_t{kMiB});
  r.AddGauge("arcstats", "c_max", stats::Unit::kBytes, "")->Set(int64_t{kGiB});
  stats::Gauge* dirty = r.AddGauge("txg", "dirty_bytes", stats::Unit::kBytes, "");
  r.AddGauge("txg", "dirty_max_bytes", stats::Unit::kBytes, "")->Set(256 * int64_t{kMiB});
  stats::Counter* delay = r.AddCounter("txg", "delay_ns", stats::Unit::kNanoseconds, "");
  // c collapses from 1 GiB towards c_min while size stays: the seed's divergence.
  for (int i = 0; i < 10; i++) {
    size->Set(900 * int64_t{kMiB});
    c->Set(int64_t{kGiB} >> i);
    dirty->Set(int64_t{kMiB} * 10 * i);
    delay->Add(static_cast<uint64_t>(i) * 5 * kNsPerMs);  // 5i ms of delay in second i
    lines += stats::ToWireJson(r.TakeSnapshot(static_cast<uint64_t>(i) * kNsPerSec)) + "\n";
  }
  Result<std::vector<stats::Snapshot>> samples = ReadSamples(lines);
  ASSERT_TRUE(samples.ok()) << samples.status().ToString();
  Result<PlotFiles> arc = PlotArc(*samples, Options("arc"));
  ASSERT_TRUE(arc.ok()) << arc.status().ToString();
  EXPECT_EQ(DataLines(arc->data), 10u);
  ExpectDrawn(*arc, 4);
  Result<PlotFiles> thr = PlotThrottle(*samples, Options("throttle"));
  ASSERT_TRUE(thr.ok()) << thr.status().ToString();
  EXPECT_EQ(DataLines(thr->data), 10u);
  // Sample 3: dirty 30 MiB; limit min(256 MiB, (1 GiB >> 3) / 2 = 64 MiB);
  // delay 15 ms added over 1 s.
  std::ifstream in(thr->data);
  std::string line;
  for (int i = 0; i <= 4; i++) std::getline(in, line);
  EXPECT_EQ(line, "3.000 31457280 67108864 15.000");
  ExpectDrawn(*thr, 4);
  // The outputs exist now: a second plot to the same prefix is refused
  // untouched, and replaces them when asked.
  const auto before = std::filesystem::file_size(thr->png);
  Result<PlotFiles> again = PlotThrottle(*samples, Options("throttle"));
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.status().code(), StatusCode::kAlreadyExists) << again.status().ToString();
  EXPECT_EQ(std::filesystem::file_size(thr->png), before);
  PlotOptions replace = Options("throttle");
  replace.replace_existing = true;
  EXPECT_TRUE(PlotThrottle(*samples, replace).ok());
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// No throttle delay at all: the delay axis starts at 0 (not -1..1) and the
// key says there was none.
TEST_F(PlotTest, AThrottlePlotWithoutDelayKeepsItsAxisAtZero) {
  std::string lines;
  stats::Registry r;
  r.AddGauge("arcstats", "c", stats::Unit::kBytes, "")->Set(int64_t{kGiB});
  r.AddGauge("txg", "dirty_bytes", stats::Unit::kBytes, "")->Set(int64_t{kMiB});
  r.AddGauge("txg", "dirty_max_bytes", stats::Unit::kBytes, "")->Set(256 * int64_t{kMiB});
  r.AddCounter("txg", "delay_ns", stats::Unit::kNanoseconds, "");
  for (int i = 0; i < 3; i++) {
    lines += stats::ToWireJson(r.TakeSnapshot(static_cast<uint64_t>(i) * kNsPerSec)) + "\n";
  }
  Result<PlotFiles> thr = PlotThrottle(*ReadSamples(lines), Options("calm"));
  ASSERT_TRUE(thr.ok()) << thr.status().ToString();
  const std::string script = ReadAll(thr->script);
  EXPECT_NE(script.find("set y2range [0:1]"), std::string::npos) << script;
  EXPECT_NE(script.find("throttle delay (none in these samples)"), std::string::npos) << script;
}

TEST_F(PlotTest, SizeHistogramsOfTwoRunsSideBySide) {
  Result<Trace> a = ParseTrace(MakeTrace(90, 1));
  std::string small = std::string(kTraceHeader) + "\n";
  for (int i = 0; i < 30; i++) small += "I\t1\t2\t3\tasync_write\twrite\t0\t4096\t1\tok\n";
  for (int i = 0; i < 2; i++) small += "I\t1\t2\t3\tsync_write\tflush\t0\t0\t1\tok\n";
  Result<Trace> b = ParseTrace(small);
  ASSERT_TRUE(a.ok() && b.ok());
  PlotOptions o = Options("sizes");
  o.label_a = "healthy";
  o.label_b = "arc-max 256M";
  Result<PlotFiles> f = PlotSizes(*a, *b, o);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  // 4K .. 1M: 9 buckets, 10 I/Os each in run a; run b: 30 at 4K.
  EXPECT_EQ(DataLines(f->data), 9u);
  std::ifstream in(f->data);
  std::string header, first;
  std::getline(in, header);
  std::getline(in, first);
  EXPECT_EQ(first, "4K 10 30");  // the two flushes have no size bar ...
  EXPECT_NE(ReadAll(f->script).find("2 flushes (no size) not shown"), std::string::npos);  // ... but are named
  ExpectDrawn(*f, 3);
}

TEST(TraceFileTest, ErrorsNameTheLineAndField) {
  EXPECT_NE(ParseTrace("hello\n").status().message().find("line 1"), std::string::npos);
  std::string h = std::string(kTraceHeader) + "\n";
  auto bad = ParseTrace(h + "I\t1\t2\t3\tsync_read\tread\t0\tx\t1\tok\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2: bytes"), std::string::npos) << bad.status().ToString();
  bad = ParseTrace(h + "I\t5\t2\t3\tsync_read\tread\t0\t1\t1\tok\n");
  EXPECT_NE(bad.status().message().find("submit <= issue <= done"), std::string::npos);
  bad = ParseTrace(h + "\nT\t5\tsync_middle\t3\n");
  EXPECT_NE(bad.status().message().find("line 3: marker"), std::string::npos) << bad.status().ToString();
  // An end without its start: the sync began before the trace did.
  auto ok = ParseTrace(h + "T\t5\tsync_end\t3\n");
  ASSERT_TRUE(ok.ok());
  ASSERT_EQ(ok->syncs.size(), 1u);
  EXPECT_EQ(ok->syncs[0].start_ns, 0u);
  EXPECT_EQ(ok->syncs[0].end_ns, 5u);
}

TEST(PlotOptionsTest, QuotesInNamesAreRefused) {
  PlotOptions o;
  o.output_prefix = "/tmp/it's";
  EXPECT_NE(o.Validate().message().find("quote"), std::string::npos);
}

}  // namespace
}  // namespace arcstore::tools

namespace arcstore::tools {
namespace {

// A bench run's logs as arcstore bench writes them: windowed bw and lat
// (every 500 ms over 3 s, write direction), a stall at 1.5-2.0 s, and two
// txg syncs.
void WriteRun(const std::string& prefix, uint64_t kib_s) {
  std::ofstream bw(prefix + "_bw.2.log"), lat(prefix + "_lat.2.log"), txg(prefix + "_txg.2.log");
  for (int w = 1; w <= 6; w++) {
    const bool stalled = w == 4;
    bw << 500 * w << ", " << (stalled ? 0 : kib_s) << ", 1, 0, 0\n";
    if (!stalled) lat << 500 * w << ", " << (w == 5 ? 480'000'000 : 20'000) << ", 1, 0, 0\n";
  }
  txg << "# arcstore txg syncs: quiesce_ms, sync_start_ms, sync_end_ms, txg, reason, dirty_bytes, written_bytes\n"
      << "-20, -10, 300, 7, timeout, 1, 2\n"
      << "1400, 1450, 2100, 8, dirty_threshold, 3, 4\n";
}

TEST_F(PlotTest, TimelineOfTwoRunsSideBySideWithTxgSyncs) {
  WriteRun(dir_.File("before"), 2048 * 1024);  // 2048 MiB/s
  WriteRun(dir_.File("after"), 1024);          // 1 MiB/s
  Result<BenchRun> before =
      LoadBenchRun(dir_.File("before"), std::nullopt);  // a prefix, one job: .2
  ASSERT_TRUE(before.ok()) << before.status().ToString();
  Result<BenchRun> after =
      LoadBenchRun(dir_.File("after_bw.2.log"), std::nullopt);  // one of the files
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_EQ(before->bw.size(), 6u);
  EXPECT_EQ(before->lat.size(), 5u);
  ASSERT_EQ(before->txgs.size(), 2u);
  EXPECT_EQ(before->txgs[1].sync_start_ms, 1450);
  PlotOptions o = Options("timeline");
  o.label_a = "before";
  o.label_b = "after";
  Result<PlotFiles> f = PlotTimeline({*before, *after}, o);
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->points, 2u * (6 + 5));
  EXPECT_EQ(f->markers_n, 4u);
  const std::string data = ReadAll(f->data);
  // Block 0: before's write throughput in MiB/s; the stall is a 0.
  EXPECT_EQ(data.rfind("# before: write MiB/s\n0.500 2048.000000\n", 0), 0u) << data.substr(0, 200);
  EXPECT_NE(data.find("2.000 0.000000\n"), std::string::npos);
  EXPECT_NE(data.find("# before: write latency ms\n0.500 0.020000\n"), std::string::npos);
  EXPECT_NE(data.find("2.500 480.000000\n"), std::string::npos);
  const std::string syncs = ReadAll(f->markers);
  EXPECT_NE(syncs.find("1.400 1.450 2.100 8\n"), std::string::npos) << syncs;
  const std::string script = ReadAll(f->script);
  EXPECT_NE(script.find("set multiplot layout 2,2"), std::string::npos);
  EXPECT_NE(script.find("index 1 using 2:(0.5):2:3:(0):(1) axes x1y2 with boxxyerror"), std::string::npos);
  // Both columns share the throughput axis: the larger run's maximum.
  EXPECT_NE(script.find("set yrange [0:2150.4]"), std::string::npos) << script;
  ExpectDrawn(*f, 5);
}

TEST_F(PlotTest, TimelineBinsPerIoLogs) {
  const std::string p = dir_.File("perio");
  std::ofstream bw(p + "_bw.1.log");
  // 100 writes of 1 MiB in the first 500 ms, 50 in the next: 200 and 100 MiB/s.
  for (int i = 0; i < 150; i++) bw << (i < 100 ? i * 4 : 500 + (i - 100) * 8) << ", 1, 1, 1048576, 0\n";
  bw.close();
  Result<BenchRun> run = LoadBenchRun(p, std::nullopt);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  Result<PlotFiles> f = PlotTimeline({*run}, Options("perio"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(ReadAll(f->data), "# a: write MiB/s\n0.500 200.000000\n1.000 100.000000\n");
  ExpectDrawn(*f, 3);
}

TEST(BenchLogTest, ErrorsNameTheFileAndLine) {
  auto bad = ParseFioLog("1, 2, 1, 0, 0\n5, x, 1, 0, 0\n", "r_bw.1.log");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("r_bw.1.log:2: value 'x'"), std::string::npos) << bad.status().ToString();
  bad = ParseFioLog("1, 2, 7, 0, 0\n", "r_bw.1.log");
  EXPECT_NE(bad.status().message().find("direction"), std::string::npos);
  EXPECT_TRUE(ParseFioLog("1, 2, 1, 4096\n1, 2, 1, 4096, 8192, 0\n", "old").ok());  // 4 and 6 fields
  auto txg = ParseTxgLog("# c\n5, 3, 9, 1, timeout, 0, 0\n", "r_txg.1.log");
  ASSERT_FALSE(txg.ok());
  EXPECT_NE(txg.status().message().find("r_txg.1.log:2: want quiesce <= sync start"), std::string::npos);
  auto stalls = ParseStallLog("# c\n12710, 10521\n804735\n", "r_stalls.1.log");
  ASSERT_FALSE(stalls.ok());
  EXPECT_NE(stalls.status().message().find("r_stalls.1.log:3: expected 'start_us, duration_us'"),
            std::string::npos)
      << stalls.status().ToString();
  stalls = ParseStallLog("12710, 10521\n804735, 10480\n", "r_stalls.1.log");
  ASSERT_TRUE(stalls.ok());
  ASSERT_EQ(stalls->size(), 2u);
  EXPECT_EQ((*stalls)[1].start_us, 804735u);
  EXPECT_EQ((*stalls)[1].duration_us, 10480u);
}

// Machine stalls are drawn as spans of their own, in blocks after the txg
// syncs' blocks; a run with no syncs keeps its (empty) block, so that the
// stalls' block numbers hold.
TEST_F(PlotTest, TimelineMarksMachineStalls) {
  const std::string p = dir_.File("st");
  std::ofstream(p + "_bw.1.log") << "500, 1024, 1, 0, 0\n1000, 0, 1, 0, 0\n1500, 1024, 1, 0, 0\n";
  std::ofstream(p + "_stalls.1.log") << "# stalls\n700000, 24400\n";
  Result<BenchRun> run = LoadBenchRun(p, std::nullopt);
  ASSERT_TRUE(run.ok()) << run.status().ToString();
  ASSERT_TRUE(run->has_stalls);
  EXPECT_FALSE(run->has_txg);
  Result<PlotFiles> f = PlotTimeline({*run}, Options("stalls"));
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->markers_n, 0u);
  EXPECT_EQ(f->stalls_n, 1u);
  const std::string marks = ReadAll(f->markers);
  EXPECT_NE(marks.find("# a\nNaN NaN NaN 0\n\n\n# a: machine stalls, start_s end_s\n0.700000 0.724400\n"),
            std::string::npos)
      << marks;
  const std::string script = ReadAll(f->script);
  EXPECT_NE(script.find("index 1 using 1:(0.5):1:2:(0):(1) axes x1y2 with boxxyerror"),
            std::string::npos)
      << script;
  EXPECT_EQ(script.find("txg sync (start"), std::string::npos);
  ExpectDrawn(*f, 3);
}

TEST(BenchLogTest, APrefixWithSeveralJobsNeedsAJobNumber) {
  const arcstore::testing::TempDir d("bench_log_test");
  std::ofstream(d.File("p_bw.1.log")) << "500, 1, 1, 0, 0\n";
  std::ofstream(d.File("p_bw.3.log")) << "500, 3, 1, 0, 0\n";
  auto both = LoadBenchRun(d.File("p"), std::nullopt);
  ASSERT_FALSE(both.ok());
  EXPECT_NE(both.status().message().find("logs of several jobs (1, 3); choose one with --job N"), std::string::npos)
      << both.status().ToString();
  auto three = LoadBenchRun(d.File("p"), 3u);
  ASSERT_TRUE(three.ok()) << three.status().ToString();
  EXPECT_EQ(three->bw[0].value, 3u);
  EXPECT_EQ(LoadBenchRun(d.File("q"), std::nullopt).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace arcstore::tools
