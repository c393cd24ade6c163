// Our reports against real fio 3.33's: the same job through /usr/bin/fio
// (on a plain file in a temporary folder) and through the runner (on a
// MemoryVolume); fio's JSON keys must exist in ours with the same types,
// and the text must have fio's line shapes (numbers and units aside).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <algorithm>
#include <regex>
#include <sstream>

#include "bench/fio_format.h"
#include "bench/job_file.h"
#include "bench/report.h"
#include "bench/runner.h"
#include "bench/test_volumes.h"

namespace arcstore::bench {
namespace {

namespace fs = std::filesystem;

const char* kFio = "/usr/bin/fio";

class FioCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kFio, X_OK) != 0) GTEST_SKIP() << "fio not installed";
    dir_ = fs::temp_directory_path() / ("arcstore-bench-fio-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }

  // Runs real fio with `args` and returns its output file.
  std::string RunFio(const std::vector<std::string>& args, const std::string& format) {
    std::string out = (dir_ / ("fio." + format)).string();
    std::string cmd = std::string(kFio) + " --output-format=" + format + " --output=" + out;
    for (const auto& a : args) cmd += " '" + a + "'";
    cmd += " --filename=" + (dir_ / "file").string() + " >/dev/null 2>&1";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    std::ifstream in(out);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  RunResult RunOurs(const std::vector<std::string>& args) {
    auto set = ParseCommandLineJobs(args, JobEnv::FromSystem());
    EXPECT_TRUE(set.ok()) << set.status().ToString();
    set_ = std::move(*set);
    provider_ = std::make_unique<MemoryVolumeProvider>(4096);
    RunnerOptions o;
    o.provider = provider_.get();
    auto r = RunJobs(set_, o);
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return std::move(*r);
  }

  fs::path dir_;
  JobSet set_;
  std::unique_ptr<MemoryVolumeProvider> provider_;
};

const std::vector<std::string> kJob = {"--name=t", "--size=8m", "--bs=4k", "--rw=randrw",
                                       "--ioengine=psync", "--time_based", "--runtime=1200ms"};

bool SameType(const nlohmann::json& a, const nlohmann::json& b) {
  if (a.is_number_integer() || a.is_number_unsigned()) {
    return b.is_number_integer() || b.is_number_unsigned();
  }
  return a.type() == b.type();
}

void ExpectKeysAndTypes(const nlohmann::json& fio, const nlohmann::json& ours, const std::string& path) {
  for (auto it = fio.begin(); it != fio.end(); ++it) {
    const std::string p = path + "." + it.key();
    if (it.key() == "bins") continue;  // json+ only
    ASSERT_TRUE(ours.contains(it.key())) << "missing " << p;
    const auto& o = ours[it.key()];
    EXPECT_TRUE(SameType(*it, o)) << p << ": fio " << it->type_name() << ", ours " << o.type_name();
    if (it->is_object()) ExpectKeysAndTypes(*it, o, p);
  }
}

TEST_F(FioCompat, JsonKeysAndTypesMatchFio) {
  std::string text = RunFio(kJob, "json");
  size_t brace = text.find('{');
  ASSERT_NE(brace, std::string::npos) << text;
  nlohmann::json fio = nlohmann::json::parse(text.substr(brace));
  nlohmann::json ours = nlohmann::json::parse(FormatJson(RunOurs(kJob), false));
  for (const char* top : {"fio version", "timestamp", "timestamp_ms", "time", "jobs"}) {
    ASSERT_TRUE(ours.contains(top)) << top;
    EXPECT_TRUE(SameType(fio[top], ours[top])) << top;
  }
  const auto& fj = fio["jobs"][0];
  const auto& oj = ours["jobs"][0];
  for (const char* k : {"jobname", "groupid", "error", "job options"}) {
    ASSERT_TRUE(oj.contains(k)) << k;
    EXPECT_TRUE(SameType(fj[k], oj[k])) << k;
  }
  // Every key of fio's read/write/trim objects, recursively (percentiles too).
  for (const char* dir : {"read", "write", "trim"}) {
    ExpectKeysAndTypes(fj[dir], oj[dir], dir);
  }
  // The percentile keys are fio's, in fio's format.
  EXPECT_EQ(fj["write"]["clat_ns"]["percentile"].size(), oj["write"]["clat_ns"]["percentile"].size());
  EXPECT_TRUE(oj["write"]["clat_ns"]["percentile"].contains("99.990000"));
  // Our own view is under a key fio does not use.
  EXPECT_FALSE(fj.contains("arcstore"));
  EXPECT_TRUE(oj.contains("arcstore"));
  EXPECT_EQ(oj["job options"]["rw"], "randrw");
}

// A line's shape: numbers become '#', units become 'U', runs of spaces one.
std::string Shape(std::string line) {
  static const std::regex kTime(R"((Mon|Tue|Wed|Thu|Fri|Sat|Sun) .*$)");
  static const std::regex kUnit(R"(\b(nsec|usec|msec)\b)");
  // Binary prefixes first: "MiB/s" must not match as "M" and leave "iB/s".
  static const std::regex kRate(R"([0-9.]+(Ki|Mi|Gi|Ti|k|M|G|T)?(B/s|B|bit/s)?)");
  static const std::regex kBwUnit(R"(\(\s*[KMGT]i?B/s\))");
  static const std::regex kSpaces(R"( +)");
  static const std::regex kPad(R"(([=\[]) +)");
  line = std::regex_replace(line, kTime, "DATE");
  line = std::regex_replace(line, kBwUnit, "(U/s)");
  line = std::regex_replace(line, kUnit, "U");
  line = std::regex_replace(line, kRate, "#");
  line = std::regex_replace(line, kSpaces, " ");
  line = std::regex_replace(line, kPad, "$1");  // widths follow the numbers
  return line;
}

// The job and group blocks of a normal report: from the first
// "(groupid=" line up to "Disk stats" (fio only, for a real disk).
std::vector<std::string> Shapes(const std::string& text, bool keep_lat_dist) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  bool on = false;
  while (std::getline(in, line)) {
    if (line.find("(groupid=") != std::string::npos) on = true;
    if (line.rfind("Disk stats", 0) == 0) break;
    if (!on) continue;
    // Which latency bands are non-empty depends on the device.
    if (!keep_lat_dist && line.rfind("  lat (", 0) == 0) continue;
    // arcstore's own lines at the end of a job's block: its view of the
    // engine and the machine's stalls. fio prints neither.
    if (line.rfind("  arcstore     : ", 0) == 0 || line.rfind("  machine      : ", 0) == 0) continue;
    out.push_back(Shape(line));
  }
  while (!out.empty() && out.back().empty()) out.pop_back();
  return out;
}

TEST_F(FioCompat, TextFollowsFioLayoutLineByLine) {
  std::string fio = RunFio(kJob, "normal");
  std::string ours = FormatText(RunOurs(kJob));
  // The header fio prints before running has the same lines, word for word,
  // except where it names what ran: ioengine=arcstore and arcstore's version.
  std::string header = FormatRunHeader(set_);
  EXPECT_NE(header.find("ioengine=arcstore,"), std::string::npos) << header;
  EXPECT_NE(header.find("\n" + BenchVersionString() + "\n"), std::string::npos) << header;
  auto what_ran = [](const std::string& text) {
    std::string s = std::regex_replace(text, std::regex("ioengine=[a-z_]+"), "ioengine=E");
    return std::regex_replace(s, std::regex("(^|\n)(fio|arcstore)-[^\n]*"), "$1VERSION");
  };
  const size_t header_lines = static_cast<size_t>(std::count(header.begin(), header.end(), '\n'));
  size_t fio_header_bytes = 0;  // fio's first header_lines lines
  for (size_t n = 0; n < header_lines; n++) {
    const size_t nl = fio.find('\n', fio_header_bytes);
    ASSERT_NE(nl, std::string::npos) << fio;
    fio_header_bytes = nl + 1;
  }
  EXPECT_EQ(what_ran(fio.substr(0, fio_header_bytes)), what_ran(header));
  EXPECT_NE(ours.find("\n  machine      : "), std::string::npos) << ours;
  std::vector<std::string> a = Shapes(fio, false), b = Shapes(ours, false);
  ASSERT_FALSE(a.empty()) << fio;
  ASSERT_EQ(a.size(), b.size()) << "fio:\n" << fio << "\nours:\n" << ours;
  for (size_t i = 0; i < a.size(); i++) {
    EXPECT_EQ(a[i], b[i]) << "line " << i << "\nfio:\n" << fio << "\nours:\n" << ours;
  }
  // The latency distribution lines have fio's shape too.
  static const std::regex kLat(R"(^  lat \((nsec|usec|msec)\)   : (>=)?[0-9]+=[0-9.]+%(, (>=)?[0-9]+=[0-9.]+%)*$)");
  int lat_lines = 0;
  std::istringstream in(ours);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("  lat (", 0) != 0) continue;
    lat_lines++;
    EXPECT_TRUE(std::regex_match(line, kLat)) << line;
  }
  EXPECT_GT(lat_lines, 0);
}

TEST(FioFormat, Num2StrLikeFio) {
  EXPECT_EQ(Num2Str(11033, 4, false, N2SUnit::kNone), "11.0k");
  EXPECT_EQ(Num2Str(45197999, 4, true, N2SUnit::kBytesPerSec), "43.1MiB/s");
  EXPECT_EQ(Num2Str(45197999, 4, false, N2SUnit::kBytesPerSec), "45.2MB/s");
  EXPECT_EQ(Num2Str(17240123, 6, false, N2SUnit::kNone), "17240k");
  EXPECT_EQ(Num2Str(4096, 4, true, N2SUnit::kBytes), "4096B");
  EXPECT_EQ(Num2Str(131072, 4, true, N2SUnit::kBytes), "128KiB");
  EXPECT_EQ(Num2Str(999, 4, false, N2SUnit::kNone), "999");
}

TEST(FioFormat, JsonPlusAddsBins) {
  MemoryVolumeProvider p(4096);
  auto set = ParseCommandLineJobs({"--name=t", "--size=1m", "--rw=write"}, JobEnv::FromSystem());
  ASSERT_TRUE(set.ok());
  RunnerOptions o;
  o.provider = &p;
  auto r = RunJobs(*set, o);
  ASSERT_TRUE(r.ok());
  auto plain = nlohmann::json::parse(FormatJson(*r, false));
  auto plus = nlohmann::json::parse(FormatJson(*r, true));
  EXPECT_FALSE(plain["jobs"][0]["write"]["clat_ns"].contains("bins"));
  ASSERT_TRUE(plus["jobs"][0]["write"]["clat_ns"].contains("bins"));
  uint64_t total = 0;
  for (auto& [k, v] : plus["jobs"][0]["write"]["clat_ns"]["bins"].items()) total += v.get<uint64_t>();
  EXPECT_EQ(total, 256u);
}

}  // namespace
}  // namespace arcstore::bench
