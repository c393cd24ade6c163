// fio's log files: names, lines, the output-file rule, and the shape of a
// real fio 3.33 run's files against ours for the same job.
#include "bench/log_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "bench/runner.h"
#include "bench/test_volumes.h"
#include "testing/temp_dir.h"

namespace arcstore::bench {
namespace {

namespace fs = std::filesystem;

class LogFilesTest : public ::testing::Test {
 protected:
  // Runs `args` (command-line jobs) on memory volumes and writes the logs.
  std::vector<std::string> RunOurs(const std::vector<std::string>& args) {
    auto set = ParseCommandLineJobs(args, JobEnv::FromSystem());
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    if (!set.ok()) return {};
    set_ = std::move(*set);
    auto writer = LogFileWriter::Create(PlanLogFiles(set_, false), false);
    EXPECT_TRUE(writer.ok()) << writer.status().ToString();
    MemoryVolumeProvider provider(4096);
    RunnerOptions o;
    o.provider = &provider;
    auto run = RunJobs(set_, o);
    EXPECT_TRUE(run.ok()) << run.status().ToString();
    std::vector<std::string> warnings;
    EXPECT_TRUE(writer->Write(*run, &warnings).ok());
    EXPECT_TRUE(warnings.empty());
    return writer->paths();
  }

  arcstore::testing::TempDir dir_{"bench_logs_test"};
  JobSet set_;
};

std::vector<std::string> Lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

TEST_F(LogFilesTest, NamesFollowFio) {
  auto set = ParseCommandLineJobs(
      {"--name=a", "--size=1m", "--numjobs=2", "--write_bw_log=/d/p", "--write_lat_log", "--name=b",
       "--size=1m", "--write_iops_log=/d/q", "--per_job_logs=0"},
      JobEnv());
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  std::vector<std::string> names;
  for (const PlannedLog& p : PlanLogFiles(*set, true)) names.push_back(p.path);
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "/d/p_bw.1.log", "a_lat.1.log", "a_clat.1.log", "a_slat.1.log", "/d/p_txg.1.log",
                "a_txg.1.log", "/d/p_bw.2.log", "a_lat.2.log", "a_clat.2.log", "a_slat.2.log",
                "/d/p_txg.2.log", "a_txg.2.log", "/d/q_iops.log", "/d/q_txg.log"}));
  // With stalls: a stalls file beside each txg file.
  names.clear();
  for (const PlannedLog& p : PlanLogFiles(*set, true, true)) {
    if (p.stalls) names.push_back(p.path);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"/d/p_stalls.1.log", "a_stalls.1.log",
                                             "/d/p_stalls.2.log", "a_stalls.2.log",
                                             "/d/q_stalls.log"}));
}

TEST_F(LogFilesTest, ClonesWithoutPerJobLogsShareOneFileInThreadOrder) {
  auto set = ParseCommandLineJobs(
      {"--name=a", "--size=1m", "--numjobs=3", "--write_bw_log=/d/s", "--per_job_logs=0"},
      JobEnv());
  ASSERT_TRUE(set.ok());
  auto plan = PlanLogFiles(*set, false);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].path, "/d/s_bw.log");
  EXPECT_EQ(plan[0].threads, (std::vector<uint32_t>{1, 2, 3}));
}

TEST(LogFormatTest, LinesAreFios) {
  std::vector<LogEntry> e(2);
  e[0] = {10289750, 0, 505, 0, 1};
  e[1] = {121059, 249856, 0, 4096, 0};
  EXPECT_EQ(FormatLogEntries(e, false), "505, 10289750, 1, 0, 0\n0, 121059, 0, 4096, 0\n");
  EXPECT_EQ(FormatLogEntries(e, true),
            "505, 10289750, 1, 0, 0, 0\n0, 121059, 0, 4096, 249856, 0\n");
}

TEST(LogFormatTest, TxgLinesAreRelativeToTheJobAndClipped) {
  constexpr uint64_t kMs = 1'000'000;
  std::vector<TxgSpan> spans = {
      {7, 100 * kMs, 150 * kMs, 180 * kMs, "timeout", 1, 2},                 // ends before the job
      {8, 900 * kMs, 950 * kMs, 1300 * kMs, "dirty_threshold", 4096, 8192},  // began before it
      {9, 2000 * kMs, 2001 * kMs, 2600 * kMs, "explicit_wait", 0, 512},
      {10, 5000 * kMs, 5001 * kMs, 5100 * kMs, "timeout", 0, 0},  // after it
  };
  const std::string text = FormatTxgLog(spans, 1000 * kMs, 3000 * kMs, 2);
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  ASSERT_EQ(lines.size(), 4u) << text;
  EXPECT_EQ(lines[0].rfind("# arcstore txg syncs: quiesce_ms, sync_start_ms, sync_end_ms", 0), 0u);
  EXPECT_EQ(lines[1], "# 2 syncs left the pool's txg history before they were read");
  EXPECT_EQ(lines[2], "-100, -50, 300, 8, dirty_threshold, 4096, 8192");
  EXPECT_EQ(lines[3], "1000, 1001, 1600, 9, explicit_wait, 0, 512");
}

TEST(LogFormatTest, StallLinesAreRelativeToTheJobAndClipped) {
  constexpr uint64_t kMs = 1'000'000;
  MachineStalls s;
  s.start_ns = 500 * kMs;  // the watch began 500 ms before the job
  s.stalls = 5;            // one more than kept
  s.events = {{100 * kMs, 12 * kMs},     // at 600 ms: before the job
              {700 * kMs, 24'400'000},   // at 1200 ms
              {2400 * kMs, 10'001'000},  // at 2900 ms
              {3000 * kMs, 30 * kMs}};   // at 3500 ms: after it
  const std::string text = FormatStallLog(s, 1000 * kMs, 3000 * kMs);
  EXPECT_EQ(text,
            "# arcstore machine stalls: start_us, duration_us (us since the job's start; no CPU "
            "ran the bench for duration_us)\n"
            "200000, 24400\n1900000, 10001\n"
            "# 1 later stalls of the batch not kept (the watch's limit)\n");
  EXPECT_EQ(FormatStallLog(s, 1000 * kMs, 3000 * kMs, /*header=*/false).rfind("200000, 24400\n", 0),
            0u);
}

TEST_F(LogFilesTest, FilesAreCreatedNewAndRefusalsNameTheOption) {
  const std::string prefix = dir_.File("p");
  std::ofstream(prefix + "_bw.1.log") << "someone's\n";
  auto set = ParseCommandLineJobs({"--name=a", "--size=1m", "--write_bw_log=" + prefix}, JobEnv());
  ASSERT_TRUE(set.ok());
  auto refused = LogFileWriter::Create(PlanLogFiles(*set, false), false);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(refused.status().message().find("option 'write_bw_log' of job 'a'"), std::string::npos)
      << refused.status().ToString();
  EXPECT_EQ(Lines(prefix + "_bw.1.log"), std::vector<std::string>{"someone's"});
  EXPECT_TRUE(LogFileWriter::Create(PlanLogFiles(*set, false), true).ok());
  auto missing = ParseCommandLineJobs(
      {"--name=a", "--size=1m", "--write_lat_log=" + dir_.File("no/such/p")}, JobEnv());
  ASSERT_TRUE(missing.ok());
  auto bad = LogFileWriter::Create(PlanLogFiles(*missing, false), false);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("option 'write_lat_log'"), std::string::npos)
      << bad.status().ToString();
}

TEST_F(LogFilesTest, AWindowedRunWritesOneRowPerWindowAndDirection) {
  auto paths = RunOurs({"--name=t", "--size=8m", "--bs=4k", "--rw=randrw", "--time_based",
                        "--runtime=1s", "--write_bw_log=" + dir_.File("w"),
                        "--write_lat_log=" + dir_.File("w"), "--log_avg_msec=250"});
  ASSERT_EQ(paths.size(), 4u);
  const auto bw = Lines(dir_.File("w_bw.1.log"));
  ASSERT_EQ(bw.size(), 8u);  // 4 windows x read, write
  for (size_t i = 0; i < bw.size(); i++) {
    const std::string t = std::to_string(250 * (i / 2 + 1));
    EXPECT_EQ(bw[i].rfind(t + ", ", 0), 0u) << bw[i];
    EXPECT_NE(bw[i].find(", " + std::to_string(i % 2) + ", 0, 0"), std::string::npos) << bw[i];
  }
  EXPECT_TRUE(Lines(dir_.File("w_slat.1.log")).empty());  // psync: no submission latency
  EXPECT_GE(Lines(dir_.File("w_lat.1.log")).size(), 8u);
}

// The same job through real fio and through the bench: the same files, and
// every line of the same shape (numbers aside).
class FioLogCompat : public LogFilesTest {
 protected:
  void SetUp() override {
    if (access("/usr/bin/fio", X_OK) != 0) GTEST_SKIP() << "fio not installed";
  }

  // Runs fio with `args` and its logs under PREFIX = dir_/fio.
  void RunFio(const std::vector<std::string>& args) {
    std::string cmd = "cd '" + dir_.path() +
                      "' && /usr/bin/fio --output=/dev/null --filename=" + dir_.File("file");
    for (const auto& a : args) cmd += " '" + a + "'";
    for (const char* log : {"bw", "iops", "lat"})
      cmd += std::string(" --write_") + log + "_log=fio";
    cmd += " >/dev/null 2>&1";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  void ExpectSameShape(const std::vector<std::string>& args, const std::string& line_re) {
    RunFio(args);
    std::vector<std::string> ours = args;
    for (const char* log : {"bw", "iops", "lat"}) {
      ours.push_back(std::string("--write_") + log + "_log=" + dir_.File("ours"));
    }
    RunOurs(ours);
    const std::regex shape(line_re);
    for (const char* kind : {"bw", "iops", "lat", "clat", "slat"}) {
      const std::string fio_path = dir_.File(std::string("fio_") + kind + ".1.log");
      const std::string our_path = dir_.File(std::string("ours_") + kind + ".1.log");
      ASSERT_TRUE(fs::exists(fio_path)) << fio_path;
      ASSERT_TRUE(fs::exists(our_path)) << our_path;
      const auto fio = Lines(fio_path), mine = Lines(our_path);
      EXPECT_EQ(fio.empty(), mine.empty()) << kind;
      std::set<std::string> fio_dirs, our_dirs;
      for (const auto& l : fio) {
        EXPECT_TRUE(std::regex_match(l, shape)) << "fio's " << kind << ": " << l;
        fio_dirs.insert(l.substr(l.find(", ", l.find(", ") + 2) + 2, 1));
      }
      for (const auto& l : mine) {
        EXPECT_TRUE(std::regex_match(l, shape)) << "our " << kind << ": " << l;
        our_dirs.insert(l.substr(l.find(", ", l.find(", ") + 2) + 2, 1));
      }
      EXPECT_EQ(fio_dirs, our_dirs) << kind;
    }
  }
};

TEST_F(FioLogCompat, WindowedLogsHaveFiosShape) {
  ExpectSameShape({"--name=t", "--size=8m", "--bs=4k", "--rw=randrw", "--ioengine=psync",
                   "--time_based", "--runtime=1200ms", "--log_avg_msec=200"},
                  R"(^\d+, \d+, [01], 0, 0$)");
}

TEST_F(FioLogCompat, PerIoLogsWithOffsetsHaveFiosShape) {
  ExpectSameShape({"--name=t", "--size=256k", "--bs=4k", "--rw=randwrite", "--ioengine=psync",
                   "--log_offset=1"},
                  R"(^\d+, \d+, 1, 4096, \d+, 0$)");
}

}  // namespace
}  // namespace arcstore::bench
