// The monitors on fixture trees (testdata/<layout>/proc, /sys), written by
// hand from the kernel's documented formats.
#include "arc/monitor/system_memory_monitor.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "base/units.h"

namespace arcstore {
namespace {

namespace fs = std::filesystem;

std::string Fixture(const std::string& name) {
  const char* src = std::getenv("ARCSTORE_SOURCE_DIR");
  if (src) return std::string(src) + "/src/arc/monitor/testdata/" + name;
  return std::string(MEMMON_TESTDATA_DIR) + "/" + name;
}

// A writable copy of a fixture tree, for tests that damage one file.
class TempTree {
 public:
  explicit TempTree(const std::string& fixture) {
    path_ = fs::temp_directory_path() /
            ("memmon_" + fixture + "_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::copy(Fixture(fixture), path_, fs::copy_options::recursive);
  }
  ~TempTree() { fs::remove_all(path_); }
  std::string root() const { return path_.string(); }
  void Write(const std::string& rel, const std::string& text) {
    std::ofstream(path_ / rel, std::ios::trunc) << text;
  }
  void Remove(const std::string& rel) { fs::remove(path_ / rel); }

 private:
  fs::path path_;
};

MemoryReading ReadSystem(const std::string& root, uint64_t cap = 0) {
  SystemMemoryMonitorOptions o;
  o.root = root;
  o.cap_bytes = cap;
  auto m = MakeSystemMemoryMonitor(o);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  auto r = (*m)->Read();
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : MemoryReading{};
}

Status ReadSystemStatus(const std::string& root) {
  SystemMemoryMonitorOptions o;
  o.root = root;
  return (*MakeSystemMemoryMonitor(o))->Read().status();
}

constexpr uint64_t kMemTotal = 16384000 * kKiB;

TEST(MeminfoMonitor, LimitIsMemTotal) {
  MeminfoMonitor m(Fixture("v2"));
  auto r = m.Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->limit_bytes, kMemTotal);
  EXPECT_EQ(r->available_bytes, 8192000 * kKiB);
  EXPECT_EQ(r->limit_source, "MemTotal");
}

TEST(MeminfoMonitor, OldKernelEstimatesAvailableAndSaysSo) {
  MeminfoMonitor m(Fixture("old_kernel"));
  auto r = m.Read();
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->available_bytes, (512000 + 1024000) * kKiB);
  ASSERT_EQ(r->notes.size(), 1u);
  EXPECT_NE(r->notes[0].find("no MemAvailable"), std::string::npos);
}

TEST(CgroupLocate, FindsEachLayout) {
  auto v2 = LocateMemoryCgroup(Fixture("v2"));
  ASSERT_TRUE(v2.ok()) << v2.status().ToString();
  EXPECT_EQ(v2->version, CgroupLocation::Version::kV2);
  EXPECT_EQ(v2->dir, "/sys/fs/cgroup/system.slice/arcstore.service");
  auto v1 = LocateMemoryCgroup(Fixture("v1"));
  ASSERT_TRUE(v1.ok()) << v1.status().ToString();
  EXPECT_EQ(v1->version, CgroupLocation::Version::kV1);
  EXPECT_FALSE(v1->hybrid);
  EXPECT_EQ(v1->dir, "/sys/fs/cgroup/memory/docker/abc123");
  auto hybrid = LocateMemoryCgroup(Fixture("hybrid"));
  ASSERT_TRUE(hybrid.ok()) << hybrid.status().ToString();
  EXPECT_EQ(hybrid->version, CgroupLocation::Version::kV1);
  EXPECT_TRUE(hybrid->hybrid);
  EXPECT_EQ(hybrid->dir, "/sys/fs/cgroup/memory/user.slice/user-1000.slice");
  auto container = LocateMemoryCgroup(Fixture("v2_container"));
  ASSERT_TRUE(container.ok()) << container.status().ToString();
  EXPECT_EQ(container->dir, "/sys/fs/cgroup");
  auto none = LocateMemoryCgroup(Fixture("old_kernel"));
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
}

TEST(SystemMonitor, CgroupV2LimitWinsOverMemTotal) {
  MemoryReading r = ReadSystem(Fixture("v2"));
  EXPECT_EQ(r.limit_bytes, 2 * kGiB);
  EXPECT_EQ(r.limit_source, "cgroup v2 /sys/fs/cgroup/system.slice/arcstore.service/memory.max");
  // 2 GiB - 1.5 GiB used + 256 MiB inactive file.
  EXPECT_EQ(r.available_bytes, 768 * kMiB);
  EXPECT_FALSE(r.under_pressure) << r.pressure_reason;
  EXPECT_TRUE(r.pressure_reason.empty());
  EXPECT_DOUBLE_EQ(r.psi_some_avg10, 0.0);
}

TEST(SystemMonitor, CgroupV2AncestorLimitApplies) {
  MemoryReading r = ReadSystem(Fixture("v2_parent"));
  EXPECT_EQ(r.limit_bytes, 1 * kGiB);
  EXPECT_EQ(r.limit_source, "cgroup v2 /sys/fs/cgroup/system.slice/memory.max");
  EXPECT_EQ(r.available_bytes, 768 * kMiB);
}

TEST(SystemMonitor, MaxMeansUnlimitedAndPsiReportsPressure) {
  MemoryReading r = ReadSystem(Fixture("v2_unlimited"));
  EXPECT_EQ(r.limit_bytes, kMemTotal);
  EXPECT_EQ(r.limit_source, "MemTotal");
  EXPECT_TRUE(r.under_pressure);
  EXPECT_DOUBLE_EQ(r.psi_some_avg10, 32.1);
  EXPECT_NE(r.pressure_reason.find("psi some avg10 32.10% > 10.00%"), std::string::npos)
      << r.pressure_reason;
  EXPECT_NE(r.pressure_reason.find("psi full avg10 12.50% > 2.00%"), std::string::npos)
      << r.pressure_reason;
  // Stalls, with half of memory available: not a shortage.
  EXPECT_FALSE(r.short_of_memory);
}

TEST(SystemMonitor, LimitAboveMemTotalFallsToMemTotal) {
  MemoryReading r = ReadSystem(Fixture("v2_over_memtotal"));
  EXPECT_EQ(r.limit_bytes, kMemTotal);
  EXPECT_EQ(r.limit_source, "MemTotal");
  // Available is still bounded by the cgroup's own view (64 GiB - 1.5 GiB + 256 MiB
  // is above MemAvailable, so MemAvailable wins).
  EXPECT_EQ(r.available_bytes, 8192000 * kKiB);
}

TEST(SystemMonitor, ContainerNearItsLimitIsUnderPressure) {
  MemoryReading r = ReadSystem(Fixture("v2_container"));
  EXPECT_EQ(r.limit_bytes, 4 * kGiB);
  EXPECT_EQ(r.available_bytes, 4 * kGiB - 4194304000);
  EXPECT_TRUE(r.under_pressure);
  EXPECT_NE(r.pressure_reason.find("available 96.0 MiB < 5.00% of limit 4.0 GiB"),
            std::string::npos)
      << r.pressure_reason;
  EXPECT_TRUE(r.short_of_memory);
}

TEST(SystemMonitor, CgroupV1) {
  MemoryReading r = ReadSystem(Fixture("v1"));
  EXPECT_EQ(r.limit_bytes, 3 * kGiB);
  EXPECT_EQ(r.limit_source, "cgroup v1 /sys/fs/cgroup/memory/docker/abc123/memory.limit_in_bytes");
  EXPECT_EQ(r.available_bytes, 1536 * kMiB);  // 1 GiB free + 512 MiB total_inactive_file
  EXPECT_FALSE(r.under_pressure);
  bool psi_note = false;
  for (const auto& n : r.notes) psi_note |= n.find("/proc/pressure/memory") != std::string::npos;
  EXPECT_TRUE(psi_note);
}

TEST(SystemMonitor, CgroupV1SentinelIsUnlimited) {
  MemoryReading r = ReadSystem(Fixture("v1_unlimited"));
  EXPECT_EQ(r.limit_bytes, kMemTotal);
  EXPECT_EQ(r.limit_source, "MemTotal");
}

TEST(SystemMonitor, HybridUsesV1MemoryController) {
  MemoryReading r = ReadSystem(Fixture("hybrid"));
  EXPECT_EQ(r.limit_bytes, 1 * kGiB);
  EXPECT_EQ(r.limit_source,
            "cgroup v1 (hybrid) /sys/fs/cgroup/memory/user.slice/user-1000.slice/"
            "memory.limit_in_bytes");
  EXPECT_EQ(r.available_bytes, 24 * kMiB);
  EXPECT_TRUE(r.under_pressure);
}

TEST(SystemMonitor, CapIsTheSmallestLimit) {
  MemoryReading r = ReadSystem(Fixture("v2"), 1 * kGiB);
  EXPECT_EQ(r.limit_bytes, 1 * kGiB);
  EXPECT_EQ(r.limit_source, "cap");
  EXPECT_EQ(r.available_bytes, 768 * kMiB);
  MemoryReading big = ReadSystem(Fixture("v2"), 64 * kGiB);
  EXPECT_EQ(big.limit_source, "cgroup v2 /sys/fs/cgroup/system.slice/arcstore.service/memory.max");
}

TEST(SystemMonitor, BareOldHostWorksAndNotesWhatIsMissing) {
  MemoryReading r = ReadSystem(Fixture("old_kernel"));
  EXPECT_EQ(r.limit_bytes, 4096000 * kKiB);
  EXPECT_EQ(r.notes.size(), 3u);  // no MemAvailable, no cgroup, no PSI
}

TEST(SystemMonitor, MalformedFilesAreErrorsNamingFileAndLine) {
  struct Case {
    const char* fixture;
    const char* file;
    const char* text;
    const char* want;  // suffix of the message after the root
  } cases[] = {
      {"v2", "proc/meminfo", "MemTotal: 1 kB\nMemAvailable: x kB\n",
       "/proc/meminfo:2: bad number 'x'"},
      {"v2", "sys/fs/cgroup/system.slice/arcstore.service/memory.max", "lots\n",
       "/sys/fs/cgroup/system.slice/arcstore.service/memory.max:1: expected 'max' or a byte "
       "count, got 'lots'"},
      {"v2", "sys/fs/cgroup/system.slice/arcstore.service/memory.stat", "anon 1\nanon 2\n",
       "/sys/fs/cgroup/system.slice/arcstore.service/memory.stat:2: duplicate key 'anon'"},
      {"v2", "proc/pressure/memory", "some avg10=0.00 avg60=0 avg300=0 total=0\nfull avg10\n",
       "/proc/pressure/memory:2: expected key=value"},
      {"v2", "proc/self/mountinfo", "22 1 8:1 / / rw\n", "/proc/self/mountinfo:1: expected"},
      {"v1", "sys/fs/cgroup/memory/docker/abc123/memory.usage_in_bytes", "",
       "/sys/fs/cgroup/memory/docker/abc123/memory.usage_in_bytes:1: expected a number, got ''"},
  };
  for (const auto& c : cases) {
    TempTree t(c.fixture);
    t.Write(c.file, c.text);
    Status s = ReadSystemStatus(t.root());
    ASSERT_FALSE(s.ok()) << c.file;
    EXPECT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    std::string want = t.root() + c.want;
    EXPECT_EQ(s.message().substr(0, want.size()), want) << s.message();
  }
}

TEST(SystemMonitor, MissingRequiredFileWithALimitIsAnError) {
  TempTree t("v2");
  t.Remove("sys/fs/cgroup/system.slice/arcstore.service/memory.current");
  Status s = ReadSystemStatus(t.root());
  EXPECT_EQ(s.code(), StatusCode::kCorruption);
  EXPECT_NE(s.message().find("memory.current: missing, but cgroup v2"), std::string::npos)
      << s.message();
}

TEST(SystemMonitor, NothingReadableIsNotFound) {
  TempTree t("old_kernel");
  t.Remove("proc/meminfo");
  EXPECT_EQ(ReadSystemStatus(t.root()).code(), StatusCode::kNotFound);
}

TEST(SystemMonitorOptions, ValidateNamesTheOption) {
  SystemMemoryMonitorOptions o;
  o.thresholds.psi_some_avg10_pct = 150;
  Status s = o.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("psi_some_avg10_pct"), std::string::npos);
  o = {};
  o.root = "relative";
  EXPECT_NE(o.Validate().message().find("root"), std::string::npos);
}

TEST(SystemMonitor, LiveSystemReadsOrSaysWhy) {
  // The build machine's own /proc: whatever it is, a reading or a clear status.
  auto m = MakeSystemMemoryMonitor({});
  ASSERT_TRUE(m.ok());
  auto r = (*m)->Read();
  if (r.ok()) {
    EXPECT_GT(r->limit_bytes, 0u);
    EXPECT_LE(r->available_bytes, r->limit_bytes);
    EXPECT_EQ(r->under_pressure, !r->pressure_reason.empty());
  } else {
    EXPECT_FALSE(r.status().message().empty());
  }
}

}  // namespace
}  // namespace arcstore
