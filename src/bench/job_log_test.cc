// JobLog's windows and per-I/O entries from fed completions (no clock, no
// threads), and the log options' parsing and errors.
#include "bench/job_log.h"

#include <gtest/gtest.h>

#include "bench/job_file.h"

namespace arcstore::bench {
namespace {

constexpr uint64_t kMs = 1'000'000;
constexpr uint64_t kStart = 1'000 * kMs;  // an arbitrary clock origin

JobLogOptions AllKinds(uint64_t avg_ms) {
  JobLogOptions o;
  o.kinds.fill(true);
  o.active_dirs = {false, true, false};
  o.avg_ms = avg_ms;
  return o;
}

std::vector<std::pair<uint64_t, uint64_t>> TimesAndValues(const JobLog& log, LogKind k) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (const LogEntry& e : log.entries(k)) out.emplace_back(e.time_ms, e.value);
  return out;
}

using Pairs = std::vector<std::pair<uint64_t, uint64_t>>;

TEST(JobLogTest, WindowsAverageTheirIosAndCloseAtTheirEnd) {
  JobLog log(AllKinds(500), kStart);
  // Window 0: two 4 KiB writes, lat 100 and 300 us; window 1: one, 200 us.
  log.OnIo(kStart + 10 * kMs, kWrite, 4096, 0, 100'000, 90'000, std::nullopt);
  log.OnIo(kStart + 400 * kMs, kWrite, 4096, 8192, 300'000, 250'000, 40'000);
  log.OnIo(kStart + 600 * kMs, kWrite, 4096, 4096, 200'000, 200'000, std::nullopt);
  log.Finish(kStart + 1000 * kMs);
  // bw = bytes * 1000 / (500 * 1024) KiB/s; iops = ios * 1000 / 500.
  EXPECT_EQ(TimesAndValues(log, LogKind::kBw), (Pairs{{500, 16}, {1000, 8}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kIops), (Pairs{{500, 4}, {1000, 2}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kLat), (Pairs{{500, 200'000}, {1000, 200'000}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kClat), (Pairs{{500, 170'000}, {1000, 200'000}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kSlat), (Pairs{{500, 40'000}}));  // only the one with slat
  for (const LogEntry& e : log.entries(LogKind::kBw)) {
    EXPECT_EQ(e.dir, 1);
    EXPECT_EQ(e.block_bytes, 0u);  // windows carry no block size or offset
    EXPECT_EQ(e.offset_bytes, 0u);
  }
}

TEST(JobLogTest, AStallGivesZeroRatesAndNoLatencyEntries) {
  JobLog log(AllKinds(100), kStart);
  log.OnIo(kStart + 50 * kMs, kWrite, 1024 * 100, 0, 1'000, 1'000, std::nullopt);
  // Nothing completes until 420 ms: windows 1, 2 and 3 are empty.
  log.OnIo(kStart + 420 * kMs, kWrite, 1024 * 100, 0, 370'000'000, 370'000'000, std::nullopt);
  log.Finish(kStart + 500 * kMs);
  EXPECT_EQ(TimesAndValues(log, LogKind::kBw),
            (Pairs{{100, 1000}, {200, 0}, {300, 0}, {400, 0}, {500, 1000}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kLat), (Pairs{{100, 1'000}, {500, 370'000'000}}));
}

TEST(JobLogTest, TheLastPartialWindowGivesLatencyButNoRates) {
  JobLog log(AllKinds(500), kStart);
  log.OnIo(kStart + 100 * kMs, kWrite, 4096, 0, 7'000, 7'000, std::nullopt);
  log.OnIo(kStart + 700 * kMs, kWrite, 4096, 0, 9'000, 9'000, std::nullopt);
  log.Finish(kStart + 812 * kMs);
  EXPECT_EQ(TimesAndValues(log, LogKind::kBw), (Pairs{{500, 8}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kLat), (Pairs{{500, 7'000}, {812, 9'000}}));
}

TEST(JobLogTest, MaxValueLogsTheWindowsLargestLatency) {
  JobLogOptions o = AllKinds(1000);
  o.max_value = true;
  JobLog log(o, kStart);
  for (uint64_t lat : {5'000, 90'000, 20'000})
    log.OnIo(kStart + kMs, kWrite, 512, 0, lat, lat, std::nullopt);
  log.Finish(kStart + 1000 * kMs);
  EXPECT_EQ(TimesAndValues(log, LogKind::kLat), (Pairs{{1000, 90'000}}));
}

TEST(JobLogTest, DirectionsGetTheirOwnRowsInFiosOrder) {
  JobLogOptions o = AllKinds(500);
  o.active_dirs = {true, true, false};
  JobLog log(o, kStart);
  log.OnIo(kStart + kMs, kWrite, 4096, 0, 10, 10, std::nullopt);
  log.OnIo(kStart + 2 * kMs, kRead, 8192, 0, 20, 20, std::nullopt);
  log.Finish(kStart + 500 * kMs);
  ASSERT_EQ(log.entries(LogKind::kBw).size(), 2u);
  EXPECT_EQ(log.entries(LogKind::kBw)[0].dir, 0);
  EXPECT_EQ(log.entries(LogKind::kBw)[0].value, 16u);
  EXPECT_EQ(log.entries(LogKind::kBw)[1].dir, 1);
  EXPECT_EQ(log.entries(LogKind::kBw)[1].value, 8u);
}

TEST(JobLogTest, PerIoEntriesCarryBlockOffsetAndFiosPerIoBandwidth) {
  JobLog log(AllKinds(0), kStart);
  log.OnIo(kStart + 1'500'000, kWrite, 4096, 65536, 138'572, 137'721, 851);
  log.OnIo(kStart + 2 * kMs, kWrite, 4096, 0, 6'211, 6'131, std::nullopt);
  log.Finish(kStart + 3 * kMs);
  ASSERT_EQ(log.entries(LogKind::kBw).size(), 2u);
  const LogEntry& bw = log.entries(LogKind::kBw)[0];
  EXPECT_EQ(bw.time_ms, 1u);
  EXPECT_EQ(bw.value, 29741u);  // 4096 * 10^6 / 137721, as fio logs it
  EXPECT_EQ(bw.block_bytes, 4096u);
  EXPECT_EQ(bw.offset_bytes, 65536u);
  EXPECT_EQ(log.entries(LogKind::kBw)[1].value, 668080u);
  EXPECT_EQ(TimesAndValues(log, LogKind::kIops), (Pairs{{1, 1}, {2, 1}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kLat), (Pairs{{1, 138'572}, {2, 6'211}}));
  EXPECT_EQ(TimesAndValues(log, LogKind::kSlat), (Pairs{{1, 851}}));
}

TEST(JobLogTest, EntriesPastTheLimitAreDroppedAndCounted) {
  JobLogOptions o = AllKinds(0);
  o.max_entries = 3;
  JobLog log(o, kStart);
  for (int i = 0; i < 10; i++) log.OnIo(kStart + kMs, kWrite, 512, 0, 1, 1, std::nullopt);
  EXPECT_EQ(log.entries(LogKind::kLat).size(), 3u);
  EXPECT_EQ(log.dropped(LogKind::kLat), 7u);
  EXPECT_EQ(log.dropped(LogKind::kSlat), 0u);
}

TEST(JobLogTest, KindsNotAskedForStayEmpty) {
  JobLogOptions o;
  o.kinds[static_cast<int>(LogKind::kBw)] = true;
  o.active_dirs = {true, false, false};
  o.avg_ms = 100;
  JobLog log(o, kStart);
  log.OnIo(kStart + kMs, kRead, 4096, 0, 1, 1, std::nullopt);
  log.Finish(kStart + 100 * kMs);
  EXPECT_EQ(log.entries(LogKind::kBw).size(), 1u);
  EXPECT_TRUE(log.entries(LogKind::kLat).empty());
  EXPECT_TRUE(log.entries(LogKind::kIops).empty());
}

Result<JobSet> Parse(const std::string& text) {
  JobEnv env;
  return ParseJobText(text, "jobs.fio", ".", env);
}

TEST(JobLogOptionsTest, FioLogOptionsParse) {
  auto set = Parse(
      "[global]\nlog_avg_msec=250\nlog_offset=1\nlog_max_value=1\n"
      "[a]\nrw=randwrite\nsize=1m\nwrite_bw_log=/tmp/"
      "x\nwrite_iops_log\nwrite_lat_log=lat\nper_job_logs=0\n");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  const Job& j = set->jobs[0];
  EXPECT_EQ(j.bw_log_prefix, "/tmp/x");
  EXPECT_EQ(j.iops_log_prefix, "");  // no value: the job's name
  EXPECT_EQ(j.lat_log_prefix, "lat");
  EXPECT_EQ(j.log_avg_ms, 250u);
  EXPECT_TRUE(j.log_offset);
  EXPECT_TRUE(j.log_max_value);
  EXPECT_FALSE(j.per_job_logs);
  auto cmd = ParseCommandLineJobs(
      {"--name=c", "--size=1m", "--write_bw_log=p", "--log_avg_msec=1000"}, JobEnv());
  ASSERT_TRUE(cmd.ok()) << cmd.status().ToString();
  EXPECT_EQ(cmd->jobs[0].bw_log_prefix, "p");
  EXPECT_EQ(cmd->jobs[0].log_avg_ms, 1000u);
}

TEST(JobLogOptionsTest, BadValuesAndUnsupportedLogOptionsAreNamed) {
  auto bad = Parse("[a]\nsize=1m\nlog_avg_msec=-5\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("jobs.fio:3: option 'log_avg_msec'"), std::string::npos)
      << bad.status().ToString();
  bad = Parse("[a]\nsize=1m\nlog_avg_msec=3600001\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("outside 0..3600000"), std::string::npos)
      << bad.status().ToString();
  bad = Parse("[a]\nsize=1m\nwrite_bw_log=/tmp/\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("option 'write_bw_log'"), std::string::npos)
      << bad.status().ToString();
  for (const char* opt : {"write_hist_log=h", "log_hist_msec=100", "log_prio=1", "log_unix_epoch=1",
                          "log_compression=1m", "log_store_compressed=1"}) {
    bad = Parse(std::string("[a]\nsize=1m\n") + opt + "\n");
    ASSERT_FALSE(bad.ok()) << opt;
    EXPECT_EQ(bad.status().code(), StatusCode::kNotSupported) << opt;
    const std::string name = std::string(opt).substr(0, std::string(opt).find('='));
    EXPECT_NE(bad.status().message().find("option '" + name + "' is not supported"),
              std::string::npos)
        << bad.status().ToString();
  }
}

}  // namespace
}  // namespace arcstore::bench
