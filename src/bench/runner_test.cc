// The runner on in-memory volumes: what it issues, how it measures, and
// that verification catches corruption.
#include <gtest/gtest.h>

#include <thread>

#include "bench/job_file.h"
#include "bench/runner.h"
#include "bench/test_volumes.h"
#include "bench/view.h"

namespace arcstore::bench {
namespace {

JobSet Parse(const std::string& text) {
  JobEnv env = JobEnv::FromSystem();
  auto set = ParseJobText(text, "test.fio", ".", env);
  EXPECT_TRUE(set.ok()) << set.status().ToString();
  return set.ok() ? std::move(*set) : JobSet{};
}

Result<RunResult> RunOn(const JobSet& set, MemoryVolumeProvider* p) {
  RunnerOptions o;
  o.provider = p;
  o.sample_window_ns = 5'000'000;
  return RunJobs(set, o);
}

TEST(Runner, SequentialWriteCoversTheVolumeOnce) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[w]\nfilename=v\nsize=1m\nbs=4k\nrw=write\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->jobs.size(), 1u);
  const DirStats& w = r->jobs[0].dirs[kWrite];
  EXPECT_EQ(w.io_bytes, 1u << 20);
  EXPECT_EQ(w.total_ios, 256u);
  EXPECT_EQ(w.clat_ns.n(), 256u);
  EXPECT_EQ(w.lat_ns.n(), 256u);
  EXPECT_EQ(w.slat_ns.n(), 0u);  // inline completions: no submission latency, as fio's psync
  EXPECT_EQ(p.memory("v")->allocated_records(), 256u);
  EXPECT_EQ(r->jobs[0].error, 0);
}

TEST(Runner, RandomWriteWithRandomMapTouchesEveryBlockOnce) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[w]\nfilename=v\nsize=2m\nbs=4k\nrw=randwrite\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs[0].dirs[kWrite].total_ios, 512u);
  EXPECT_EQ(p.memory("v")->allocated_records(), 512u);  // no block twice
}

TEST(Runner, LoopsAndOffset) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[w]\nfilename=v\nfilesize=1m\nsize=256k\noffset=512k\nbs=64k\nrw=write\nloops=3\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->jobs[0].dirs[kWrite].io_bytes, 3u * 256 * 1024);
  // Only [512k, 768k) was written.
  EXPECT_EQ(p.memory("v")->allocated_records(), 64u);
}

TEST(Runner, MixedReadWriteFollowsRwmix) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[m]\nfilename=v\nsize=8m\nbs=4k\nrw=randrw\nrwmixread=75\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  double reads = static_cast<double>(r->jobs[0].dirs[kRead].total_ios);
  double writes = static_cast<double>(r->jobs[0].dirs[kWrite].total_ios);
  EXPECT_EQ(reads + writes, 2048);
  EXPECT_NEAR(reads / (reads + writes), 0.75, 0.05);
}

TEST(Runner, IodepthKeepsThatManyInFlightOnAnAsyncVolume) {
  MemoryVolumeProvider p(4096);
  std::shared_ptr<AsyncVolume> async;
  p.wrap = [&](std::shared_ptr<testing::MemoryVolume> m) {
    async = std::make_shared<AsyncVolume>(m);
    return async;
  };
  JobSet set = Parse("[w]\nfilename=v\nsize=4m\nbs=4k\nrw=randwrite\niodepth=16\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  const JobResult& j = r->jobs[0];
  EXPECT_EQ(j.dirs[kWrite].total_ios, 1024u);
  EXPECT_LE(async->max_pending(), 16u);
  EXPECT_GT(async->max_pending(), 1u);
  // slat only for I/Os still in flight when Submit* returned.
  EXPECT_LE(j.dirs[kWrite].slat_ns.n(), j.dirs[kWrite].clat_ns.n());
  EXPECT_EQ(j.dirs[kWrite].clat_ns.n(), 1024u);
  // No latency beyond the job's own wall time (a completion that beats
  // Submit*'s return once made clat wrap below zero).
  const double wall_ns = static_cast<double>(j.job_runtime_ms + 1) * 1e6;
  EXPECT_LE(j.dirs[kWrite].clat_ns.max(), wall_ns);
  EXPECT_LE(j.dirs[kWrite].slat_ns.max(), wall_ns);
  EXPECT_LE(j.dirs[kWrite].lat_ns.max(), wall_ns);
  uint64_t depth_total = 0;
  for (uint64_t v : j.depths.depth) depth_total += v;
  EXPECT_EQ(depth_total, 1024u);
}

TEST(Runner, FsyncSyncAndEndFsync) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse(
      "[a]\nfilename=a\nsize=64k\nbs=4k\nrw=write\nfsync=4\n"
      "[b]\nfilename=b\nsize=64k\nbs=4k\nrw=write\nsync=1\nend_fsync=1\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(p.memory("a")->flushes(), 4u);
  EXPECT_EQ(r->jobs[0].sync_ios, 4u);
  EXPECT_EQ(p.memory("b")->fua_writes(), 16u);
  EXPECT_EQ(p.memory("b")->flushes(), 1u);
}

TEST(Runner, TrimFreesRecords) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[w]\nfilename=v\nsize=256k\nbs=4k\nrw=write\n[t]\nstonewall\nfilename=v\nsize=128k\nbs=8k\nrw=randtrim\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->jobs[1].dirs[kTrim].total_ios, 16u);
  EXPECT_EQ(p.memory("v")->allocated_records(), 32u);
}

TEST(Runner, VerifyPassesOnAGoodVolume) {
  for (const char* kind : {"crc32c", "md5"}) {
    MemoryVolumeProvider p(4096);
    JobSet set = Parse(std::string("[v]\nfilename=v\nsize=512k\nbs=4k\nrw=randwrite\nverify=") + kind + "\n");
    auto r = RunOn(set, &p);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->jobs[0].error, 0) << r->jobs[0].error_text;
    EXPECT_EQ(r->jobs[0].verified_blocks, 128u);
    EXPECT_EQ(r->jobs[0].verify_errors, 0u);
  }
}

TEST(Runner, VerifyReportsCorruptionWithItsOffset) {
  MemoryVolumeProvider p(4096);
  p.wrap = [](std::shared_ptr<testing::MemoryVolume> m) {
    return std::make_shared<CorruptingVolume>(m, 40960);
  };
  JobSet set = Parse("[v]\nfilename=v\nsize=256k\nbs=4k\nrw=write\nverify=crc32c\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  const JobResult& j = r->jobs[0];
  EXPECT_EQ(j.verify_errors, 1u);
  EXPECT_EQ(j.error, 84);
  EXPECT_NE(j.first_verify_error.find("offset 40960"), std::string::npos) << j.first_verify_error;
}

TEST(Runner, GroupsStonewallNumjobsAndGroupReporting) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse(
      "[global]\nsize=64k\nbs=4k\nrw=write\n"
      "[a]\nnumjobs=3\n"
      "[b]\nstonewall\nnumjobs=2\ngroup_reporting\n"
      "[c]\nnew_group\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  // a: three clones reported apart (group 0); b: two clones folded (group 1);
  // c: runs with b but reports in group 2.
  ASSERT_EQ(r->jobs.size(), 5u);
  EXPECT_EQ(r->jobs[0].groupid, 0);
  EXPECT_EQ(r->jobs[3].name, "b");
  EXPECT_EQ(r->jobs[3].jobs, 2);
  EXPECT_EQ(r->jobs[3].groupid, 1);
  EXPECT_EQ(r->jobs[3].dirs[kWrite].io_bytes, 2u * 64 * 1024);
  EXPECT_EQ(r->jobs[4].groupid, 2);
  ASSERT_EQ(r->groups.size(), 3u);
  EXPECT_EQ(r->groups[0].io_bytes[kWrite], 3u * 64 * 1024);
  // One volume per clone, named as fio names files: jobname.jobnum.filenum.
  EXPECT_NE(p.memory("a.2.0"), nullptr);
  EXPECT_NE(p.memory("b.1.0"), nullptr);
}

TEST(Runner, TimeBasedRunsForItsRuntimeAndSamples) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[t]\nfilename=v\nsize=1m\nbs=4k\nrw=randwrite\ntime_based\nruntime=200ms\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  const DirStats& w = r->jobs[0].dirs[kWrite];
  EXPECT_GE(w.runtime_ms, 190u);
  EXPECT_LE(w.runtime_ms, 5000u);  // it stops (late only on a starved machine)
  EXPECT_GT(w.io_bytes, 1u << 20);  // wrapped around the 1 MiB region
  // 5 ms windows: at least one, at most one per window of the runtime (how
  // many depends on how often the loop ran).
  EXPECT_GE(w.bw_kib_samples.n(), 1u);
  EXPECT_LE(w.bw_kib_samples.n(), w.runtime_ms / 5 + 1);
  EXPECT_EQ(w.bw_kib_samples.n(), w.iops_samples.n());
}

TEST(Runner, OverridesShortenJobs) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[t]\nfilename=v\nsize=1g\nbs=4k\nrw=randwrite\ntime_based\nruntime=1h\n");
  RunnerOptions o;
  o.provider = &p;
  o.max_runtime_ns = 50'000'000;
  o.max_size_bytes = 1 << 20;
  auto r = RunJobs(set, o);
  ASSERT_TRUE(r.ok());
  EXPECT_LT(r->jobs[0].dirs[kWrite].runtime_ms, 5000u);  // not the job's hour
  EXPECT_EQ(p.opened[0].size_bytes, 1u << 20);
}

TEST(Runner, MissingVolumeWithoutSizeNamesTheOption) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[t]\nfilename=nope\nbs=4k\nrw=read\n");
  auto r = RunOn(set, &p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'size'"), std::string::npos) << r.status().message();
}

TEST(Runner, OverwriteLaysTheRegionOutFirstUnmeasured) {
  MemoryVolumeProvider p(4096);
  // 256 random writes without the random map leave records untouched;
  // overwrite=1 first writes all 256 of them, outside the job's figures.
  JobSet set = Parse("[w]\nfilename=v\nsize=1m\nbs=4k\nrw=randwrite\nnorandommap\noverwrite=1\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(p.memory("v")->allocated_records(), 256u);
  EXPECT_EQ(p.memory("v")->writes(), 512u);
  EXPECT_EQ(r->jobs[0].dirs[kWrite].total_ios, 256u);
}

TEST(Runner, RegionSmallerThanABlockIsAnError) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[t]\nfilename=v\nfilesize=1m\noffset=1m\nbs=4k\nrw=read\n");
  auto r = RunOn(set, &p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("smaller than the block size"), std::string::npos)
      << r.status().message();
}

TEST(Runner, RateLimitsBandwidth) {
  MemoryVolumeProvider p(4096);
  // 4 MiB/s for 250 ms: about 1 MiB, far below what memory does unpaced.
  JobSet set = Parse("[t]\nfilename=v\nsize=64m\nbs=4k\nrw=write\ntime_based\nruntime=250ms\nrate=4m\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok());
  const DirStats& w = r->jobs[0].dirs[kWrite];
  // Paced against the job's real runtime (longer on a busy machine).
  const double allowed = 4.0 * 1048576 * static_cast<double>(w.runtime_ms + 1) / 1000.0 + 4096;
  EXPECT_LE(static_cast<double>(w.io_bytes), allowed);
  EXPECT_GE(static_cast<double>(w.io_bytes), allowed / 2);
}

TEST(Runner, SkewedDistributionsStayInsideTheRegion) {
  for (const char* d : {"zipf:1.2", "pareto:0.9", "normal:10", "zipf:0.8"}) {
    MemoryVolumeProvider p(4096);
    JobSet set = Parse(std::string("[t]\nfilename=v\nsize=4m\nbs=4k\nrw=randwrite\nrandom_distribution=") + d + "\n");
    auto r = RunOn(set, &p);
    ASSERT_TRUE(r.ok()) << d;
    EXPECT_EQ(r->jobs[0].error, 0) << d;
    EXPECT_EQ(r->jobs[0].dirs[kWrite].total_ios, 1024u) << d;
    // Skewed: repeats, so fewer distinct blocks than I/Os.
    EXPECT_LT(p.memory("v")->allocated_records(), 1024u) << d;
  }
}

TEST(Runner, StatsHookGivesEachBatchADelta) {
  MemoryVolumeProvider p(4096);
  stats::Registry reg;
  stats::Counter* c = reg.AddCounter("test", "calls", stats::Unit::kOps, "hook calls");
  RunnerOptions o;
  o.provider = &p;
  o.stats_hook = [&]() -> Result<stats::Snapshot> {
    c->Add(5);
    return reg.TakeSnapshot();
  };
  JobSet set = Parse("[a]\nfilename=v\nsize=64k\nrw=write\n");
  auto r = RunJobs(set, o);
  ASSERT_TRUE(r.ok());
  ASSERT_NE(r->jobs[0].arcstore_delta, nullptr);
  EXPECT_EQ(r->jobs[0].arcstore_delta->Get("test", "calls"), 5);
}

}  // namespace
}  // namespace arcstore::bench

namespace arcstore::bench {
namespace {

TEST(Runner, PrintsFiosStatusLineWhileRunning) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[t]\nfilename=v\nsize=1m\nbs=4k\nrw=randwrite\ntime_based\nruntime=200ms\n");
  char* buf = nullptr;
  size_t len = 0;
  FILE* out = open_memstream(&buf, &len);
  ASSERT_NE(out, nullptr);
  RunnerOptions o;
  o.provider = &p;
  o.status_out = out;
  o.status_interval_ns = 20'000'000;
  auto r = RunJobs(set, o);
  std::fclose(out);
  std::string text(buf, len);
  std::free(buf);
  ASSERT_TRUE(r.ok());
  EXPECT_NE(text.find("Jobs: 1 (f=1): [w(1)]["), std::string::npos) << text;
  EXPECT_NE(text.find(" IOPS][eta "), std::string::npos) << text;
}

}  // namespace
}  // namespace arcstore::bench

namespace arcstore::bench {
namespace {

TEST(Runner, SamplesEngineGaugesDuringABatch) {
  MemoryVolumeProvider p(4096);
  stats::Registry reg;
  stats::Gauge* size = reg.AddGauge("arcstats", "size", stats::Unit::kBytes, "");
  stats::Gauge* c = reg.AddGauge("arcstats", "c", stats::Unit::kBytes, "");
  stats::Gauge* dirty = reg.AddGauge("txg", "dirty_bytes", stats::Unit::kBytes, "");
  stats::Gauge* dirty_max = reg.AddGauge("txg", "dirty_max_bytes", stats::Unit::kBytes, "");
  c->Set(1000);
  dirty_max->Set(200);
  std::atomic<int> calls{0};
  RunnerOptions o;
  o.provider = &p;
  o.stats_sample_ns = 10'000'000;
  // Each snapshot moves the gauges: size grows, dirty peaks at 150 of 200.
  o.stats_hook = [&]() -> Result<stats::Snapshot> {
    int n = calls.fetch_add(1);
    size->Set(100 + n);
    dirty->Set(n == 2 ? 150 : 10);
    return reg.TakeSnapshot();
  };
  JobSet set = Parse("[t]\nfilename=v\nsize=1m\nrw=randwrite\ntime_based\nruntime=150ms\n");
  auto r = RunJobs(set, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_NE(r->jobs[0].arcstore_series, nullptr);
  const StatsSeries& s = *r->jobs[0].arcstore_series;
  ASSERT_GE(s.t_ms.size(), 3u);
  EXPECT_EQ(s.arc_c[0], 1000);
  EXPECT_TRUE(std::is_sorted(s.t_ms.begin(), s.t_ms.end()));
  ArcstoreView v = BuildView(r->jobs[0], 1 << 20);
  ASSERT_TRUE(v.peak_dirty_pct.has_value());
  EXPECT_DOUBLE_EQ(*v.peak_dirty_pct, 75.0);
  EXPECT_EQ(*v.arc_c_min, 1000);
  EXPECT_LT(*v.arc_size_min, *v.arc_size_max);
}

}  // namespace
}  // namespace arcstore::bench

namespace arcstore::bench {
namespace {

TEST(Runner, StopEndsRunningJobsAndSkipsLaterBatches) {
  MemoryVolumeProvider p(4096);
  std::atomic<bool> stop{false};
  RunnerOptions o;
  o.provider = &p;
  o.stop = &stop;
  // The stats hook runs before each batch: the second call (after the
  // first batch) raises the flag, as Ctrl-C would during the run.
  int calls = 0;
  stats::Registry reg;
  o.stats_hook = [&]() -> Result<stats::Snapshot> {
    if (++calls == 2) stop.store(true);
    return reg.TakeSnapshot();
  };
  JobSet set = Parse("[a]\nfilename=v\nsize=1m\nrw=write\n[b]\nstonewall\nfilename=v\nsize=1m\nrw=read\n");
  auto r = RunJobs(set, o);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->jobs.size(), 1u);  // b never started
  EXPECT_EQ(r->jobs[0].dirs[kWrite].io_bytes, 1u << 20);
  // A flag already raised stops a time-based job at once.
  JobSet forever = Parse("[t]\nfilename=w\nsize=1m\nrw=randwrite\ntime_based\nruntime=1h\n");
  RunnerOptions o2;
  o2.provider = &p;
  std::atomic<bool> raised{false};
  o2.stop = &raised;
  std::thread stopper([&] { raised.store(true); });
  auto r2 = RunJobs(forever, o2);
  stopper.join();
  ASSERT_TRUE(r2.ok());
  EXPECT_LE(r2->jobs.size(), 1u);
}

}  // namespace
}  // namespace arcstore::bench

namespace arcstore::bench {
namespace {

// Per-I/O logs of a group_reporting job: every clone keeps its own entries
// under fio's thread number, one per I/O, though the report folds them.
TEST(RunnerLogs, ClonesKeepTheirLogsByThreadNumber) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse(
      "[fill]\nfilename=f\nsize=64k\nbs=4k\nrw=write\n"
      "[w]\nsize=256k\nbs=4k\nrw=write\nnumjobs=2\ngroup_reporting\nwrite_lat_log=x\nwrite_bw_log=x\n");
  auto r = RunOn(set, &p);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->jobs.size(), 2u);  // fill, then w's clones folded
  ASSERT_EQ(r->logs.size(), 2u);
  for (size_t i = 0; i < 2; i++) {
    EXPECT_EQ(r->logs[i].thread_number, i + 2);  // the fill is thread 1
    ASSERT_NE(r->logs[i].log, nullptr);
    EXPECT_EQ(r->logs[i].log->entries(LogKind::kLat).size(), 64u);
    EXPECT_EQ(r->logs[i].log->entries(LogKind::kBw).size(), 64u);
    EXPECT_TRUE(r->logs[i].log->entries(LogKind::kIops).empty());
  }
}

TEST(RunnerLogs, TxgSyncsAreCollectedOnceEachAndGapsCounted) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[w]\nfilename=v\nsize=1m\nbs=4k\nrw=write\n[w2]\nstonewall\nfilename=v\nsize=1m\nbs=4k\nrw=write\n");
  // The "pool" shows txgs 3 and 4 at first, then 4, 5 and 9 (6..8 left
  // its history unseen).
  int calls = 0;
  RunnerOptions o;
  o.provider = &p;
  o.txg_poll_ns = 10'000'000;
  o.txg_hook = [&calls]() -> Result<std::vector<TxgSpan>> {
    auto span = [](uint64_t txg) { return TxgSpan{txg, txg * 10, txg * 10 + 1, txg * 10 + 5, "timeout", 0, 0}; };
    if (calls++ == 0) return std::vector<TxgSpan>{span(3), span(4)};
    return std::vector<TxgSpan>{span(4), span(5), span(9)};
  };
  auto r = RunJobs(set, o);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_GE(calls, 2);
  std::vector<uint64_t> txgs;
  for (const TxgSpan& s : r->txg_spans) txgs.push_back(s.txg);
  EXPECT_EQ(txgs, (std::vector<uint64_t>{3, 4, 5, 9}));
  EXPECT_EQ(r->txg_missed, 3u);
  EXPECT_TRUE(r->logs.empty());  // no job asked for logs
}

TEST(RunnerLogs, PerIoLogsBeyondTheMemoryLimitAreRefusedNamingTheOption) {
  MemoryVolumeProvider p(4096);
  JobSet set = Parse("[w]\nsize=1m\nrw=write\nnumjobs=64\nwrite_lat_log=x\n");
  RunnerOptions o;
  o.provider = &p;
  o.max_log_entries = uint64_t{1} << 24;  // 64 clones x 3 logs x 16M x 32 bytes
  auto r = RunJobs(set, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("option 'log_avg_msec'"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace arcstore::bench
