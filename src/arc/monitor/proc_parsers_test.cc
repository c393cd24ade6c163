#include "arc/monitor/proc_parsers.h"

#include <gtest/gtest.h>

#include <string>

#include "base/random.h"

namespace arcstore::memmon {
namespace {

TEST(ParseMeminfo, ReadsKilobytesAsBytes) {
  auto r = ParseMeminfo("MemTotal: 100 kB\nMemFree: 10 kB\nMemAvailable: 50 kB\nCached: 7 kB\n"
                        "HugePages_Total: 0\n",
                        "/proc/meminfo");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->total_bytes, 102400u);
  EXPECT_EQ(*r->available_bytes, 51200u);
  EXPECT_EQ(*r->free_bytes, 10240u);
  EXPECT_EQ(*r->cached_bytes, 7168u);
}

TEST(ParseMeminfo, ErrorsNameFileAndLine) {
  auto r = ParseMeminfo("MemTotal: 100 kB\nMemAvailable: lots kB\n", "/x/proc/meminfo");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(r.status().message(), "/x/proc/meminfo:2: bad number 'lots'");
  auto missing = ParseMeminfo("MemFree: 1 kB\n", "/m");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(), "/m: no MemTotal line");
  EXPECT_FALSE(ParseMeminfo("MemTotal: 1 MB\n", "/m").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal 1 kB\n", "/m").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 99999999999999999999 kB\n", "/m").ok());
  EXPECT_FALSE(ParseMeminfo("MemTotal: 18014398509481984 kB\n", "/m").ok());  // 2^54 KiB overflows
}

TEST(ParsePsi, ReadsSomeAndFull) {
  auto r = ParsePsi("some avg10=1.50 avg60=2.00 avg300=3.25 total=42\n"
                    "full avg10=0.50 avg60=0.00 avg300=0.00 total=7\n",
                    "/proc/pressure/memory");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_DOUBLE_EQ(r->some.avg10_pct, 1.5);
  EXPECT_DOUBLE_EQ(r->some.avg300_pct, 3.25);
  EXPECT_EQ(r->some.total_us, 42u);
  ASSERT_TRUE(r->full.has_value());
  EXPECT_DOUBLE_EQ(r->full->avg10_pct, 0.5);
}

TEST(ParsePsi, RejectsMalformedLines) {
  auto r = ParsePsi("some avg10=1.0 avg60=0 avg300=0 total=1\nfull avg10=abc\n", "/p");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "/p:2: bad percentage 'abc'");
  EXPECT_FALSE(ParsePsi("", "/p").ok());
  EXPECT_FALSE(ParsePsi("some avg60=1.0\n", "/p").ok());
  EXPECT_FALSE(ParsePsi("most avg10=1.0\n", "/p").ok());
  EXPECT_FALSE(ParsePsi("some avg10=101.0\n", "/p").ok());
  EXPECT_FALSE(ParsePsi("some avg10=-1\n", "/p").ok());
}

TEST(ParseLimit, MaxMeansUnlimited) {
  auto max = ParseLimit("max\n", "/m");
  ASSERT_TRUE(max.ok());
  EXPECT_FALSE(max->has_value());
  auto n = ParseLimit("4096\n", "/m");
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(**n, 4096u);
  auto bad = ParseLimit("unlimited\n", "/sys/fs/cgroup/memory.max");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "/sys/fs/cgroup/memory.max:1: expected 'max' or a byte count, got 'unlimited'");
  EXPECT_FALSE(ParseLimit("", "/m").ok());
  EXPECT_FALSE(ParseLimit("-1", "/m").ok());
}

TEST(ParseKeyValues, RejectsDuplicatesAndBadNumbers) {
  auto ok = ParseKeyValues("anon 1\ninactive_file 2\n", "/s");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->at("inactive_file"), 2u);
  auto dup = ParseKeyValues("anon 1\nanon 2\n", "/s");
  ASSERT_FALSE(dup.ok());
  EXPECT_EQ(dup.status().message(), "/s:2: duplicate key 'anon'");
  EXPECT_FALSE(ParseKeyValues("anon x\n", "/s").ok());
  EXPECT_FALSE(ParseKeyValues("anon 1 2\n", "/s").ok());
}

TEST(ParseProcCgroup, SplitsControllers) {
  auto r = ParseProcCgroup("10:memory:/docker/x\n11:cpu,cpuacct:/\n0::/a/b\n", "/c");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 3u);
  EXPECT_EQ((*r)[0].controllers, std::vector<std::string>{"memory"});
  EXPECT_EQ((*r)[1].controllers.size(), 2u);
  EXPECT_TRUE((*r)[2].controllers.empty());
  EXPECT_EQ((*r)[2].path, "/a/b");
  auto bad = ParseProcCgroup("10:memory\n", "/c");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "/c:1: expected 'id:controllers:path'");
}

TEST(ParseMountinfo, DecodesEscapesAndOptionalFields) {
  auto r = ParseMountinfo(
      "35 30 0:31 / /sys/fs/cgroup/my\\040mem rw,relatime shared:16 master:2 - cgroup cgroup "
      "rw,memory\n",
      "/mi");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].mount_point, "/sys/fs/cgroup/my mem");
  EXPECT_EQ((*r)[0].fs_type, "cgroup");
  EXPECT_EQ((*r)[0].super_options, (std::vector<std::string>{"rw", "memory"}));
  auto bad = ParseMountinfo("35 30 0:31 / /x rw - cgroup\n", "/mi");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("/mi:1:"), std::string::npos);
}

// Random bytes, random line noise built from the formats' own tokens: every
// parser returns a value or an error, never crashes (run under ASan too).
TEST(ProcParsers, NeverCrashOnRandomInput) {
  auto rng = SeededRandom::FromEnvironment("ProcParsers.NeverCrashOnRandomInput");
  const char* tokens[] = {"MemTotal:", "kB", "some", "full", "avg10=", "1.5", "=", "total=",
                          "max", "-", "cgroup", "cgroup2", "0::", ":", "/", "\\040", "\n",
                          " ", "99999999999999999999", "memory", ",", "\\"};
  for (uint64_t i = 0; i < ScaledIterations(3000); i++) {
    std::string text;
    size_t n = rng.Uniform(40);
    for (size_t k = 0; k < n; k++) {
      if (rng.OneIn(4)) text.push_back(static_cast<char>(rng.Uniform(256)));
      else text += tokens[rng.Uniform(sizeof(tokens) / sizeof(tokens[0]))];
    }
    ParseMeminfo(text, "/f").status().IgnoreError();
    ParsePsi(text, "/f").status().IgnoreError();
    ParseLimit(text, "/f").status().IgnoreError();
    ParseCounter(text, "/f").status().IgnoreError();
    ParseKeyValues(text, "/f").status().IgnoreError();
    ParseProcCgroup(text, "/f").status().IgnoreError();
    ParseMountinfo(text, "/f").status().IgnoreError();
  }
}

}  // namespace
}  // namespace arcstore::memmon
