// Under a cgroup memory limit (label "memory"): a child process runs in a
// new cgroup, made under the test's own memory cgroup, whose limit is 384
// MiB (memory.max in the v2 layout, memory.limit_in_bytes in v1 and hybrid
// layouts). It opens a pool with no ARC cap (c_max = 50% of the limit its
// memory monitor sees), fills the ARC by reading a volume, then grows a
// balloon of other memory 16 MiB at a time, reading on after each step so
// the ARC keeps allocating. After each step it tells the parent (through a
// pipe) the ARC's c and size. The parent requires:
//   - the child's monitor saw the cgroup's limit (384 MiB) and c_max is
//     half of it;
//   - c went down while the balloon grew (the ARC shrank under pressure);
//   - the kernel killed nothing: the child exited by itself with status 0
//     and the cgroup counts no oom_kill (memory.events in v2,
//     memory.oom_control in v1).
// When this machine does not let the test make such a cgroup (not root, no
// memory controller in either layout, or writing the cgroup files fails),
// it prints SKIPPED with the reason (GTEST_SKIP).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>

#include "arc/monitor/system_memory_monitor.h"
#include "arcstore/pool.h"
#include "base/units.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {
namespace {

constexpr uint64_t kLimitBytes = 384 * kMiB;
constexpr uint64_t kBalloonStepBytes = 16 * kMiB;
constexpr uint64_t kBalloonMaxBytes = 224 * kMiB;

// Prints "SKIPPED: <reason>" (the line issue 11 asks for) and returns it.
std::string Skipped(const std::string& reason) {
  std::printf("SKIPPED: %s\n", reason.c_str());
  return reason;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool WriteFile(const std::string& path, const std::string& text, std::string* error) {
  int fd = open(path.c_str(), O_WRONLY);
  if (fd < 0 || write(fd, text.data(), text.size()) != static_cast<ssize_t>(text.size())) {
    *error = "writing '" + text + "' to " + path + ": " + std::strerror(errno);
    if (fd >= 0) close(fd);
    return false;
  }
  close(fd);
  return true;
}

// Where the test makes its cgroup: a new group under the process's own
// memory cgroup (found as the monitor finds it, LocateMemoryCgroup), in the
// v2 or v1 layout, with the file that sets its limit and the file that
// counts its OOM kills.
struct Cgroup {
  std::string parent;      // the process's own memory cgroup directory
  std::string limit_file;  // memory.max (v2) or memory.limit_in_bytes (v1)
  std::string oom_file;    // memory.events (v2) or memory.oom_control (v1): "oom_kill N"
  std::string version;     // "v2", "v1", "v1 (hybrid)"
};

// The process's memory cgroup, when a group can be made under it; nullopt
// and the reason otherwise.
std::optional<Cgroup> OwnMemoryCgroup(std::string* reason) {
  if (geteuid() != 0) return *reason = "not root: cannot create a cgroup", std::nullopt;
  Result<CgroupLocation> loc = LocateMemoryCgroup("/");
  if (!loc.ok()) {
    *reason = "no memory cgroup to create a group in: " + loc.status().ToString();
    return std::nullopt;
  }
  Cgroup g;
  g.parent = loc->dir;
  if (loc->version == CgroupLocation::Version::kV2) {
    const std::string controllers = ReadFile(loc->mount_point + "/cgroup.controllers");
    if (controllers.find("memory") == std::string::npos) {
      *reason = "the cgroup2 hierarchy at " + loc->mount_point +
                " has no memory controller (controllers: '" +
                controllers.substr(0, controllers.find('\n')) +
                "') and no cgroup v1 memory hierarchy is mounted";
      return std::nullopt;
    }
    g.limit_file = "memory.max";
    g.oom_file = "memory.events";
    g.version = "v2";
  } else {
    g.limit_file = "memory.limit_in_bytes";
    g.oom_file = "memory.oom_control";
    g.version = loc->hybrid ? "v1 (hybrid)" : "v1";
  }
  return g;
}

struct Report {
  uint64_t limit_bytes, c_max, c, size;
};

// The child: never returns. Step 0 reports the monitor's limit; later steps
// report c and size after each balloon step.
[[noreturn]] void Child(const std::string& procs, const std::string& pool_path, int fd) {
  std::string error;
  if (!WriteFile(procs, std::to_string(getpid()), &error)) _exit(10);
  auto monitor = MakeSystemMemoryMonitor({});
  if (!monitor.ok()) _exit(11);
  auto reading = (*monitor)->Read();
  if (!reading.ok()) _exit(12);
  auto p = Pool::Open(pool_path, PoolOptions());
  if (!p.ok()) _exit(13);
  arc::Arc& arc = static_cast<PoolImpl&>(**p).arc();
  Report r{reading->limit_bytes, arc.c_max(), arc.target_bytes(), arc.size_bytes()};
  if (write(fd, &r, sizeof(r)) != sizeof(r)) _exit(14);
  auto v = (*p)->OpenVolume("v");
  if (!v.ok()) _exit(15);
  const uint64_t volume_bytes = (*v)->info().size_bytes;
  std::vector<uint8_t> buf(kMiB);
  uint64_t at = 0;
  auto read_some = [&](uint64_t bytes) {
    for (uint64_t done = 0; done < bytes; done += buf.size(), at = (at + buf.size()) % volume_bytes) {
      if (!(*v)->Read(at, buf).ok()) _exit(16);
    }
  };
  read_some(volume_bytes);  // the ARC fills to c
  std::vector<std::unique_ptr<uint8_t[]>> balloon;
  for (uint64_t held = 0; held < kBalloonMaxBytes; held += kBalloonStepBytes) {
    balloon.emplace_back(new uint8_t[kBalloonStepBytes]);
    std::memset(balloon.back().get(), 0xa5, kBalloonStepBytes);  // resident
    read_some(64 * kMiB);
    // The monitor is read once a second by the ARC's thread; the balloon
    // grows faster than that, so the child reads it after every step, as
    // that thread would (Tick: one shrink step under pressure).
    for (int i = 0; i < 4; i++) arc.Tick();
    r = {0, arc.c_max(), arc.target_bytes(), arc.size_bytes()};
    if (write(fd, &r, sizeof(r)) != sizeof(r)) _exit(17);
  }
  v->reset();
  (void)(*p)->Close();
  _exit(0);
}

TEST(MemoryCgroupTest, MonitorSeesTheLimitAndTheArcShrinksBeforeAnyKill) {
  std::string reason;
  const std::optional<Cgroup> own = OwnMemoryCgroup(&reason);
  if (!own) GTEST_SKIP() << Skipped(reason);
  const std::string group = own->parent + "/arcstore_memcap_" + std::to_string(getpid());
  if (mkdir(group.c_str(), 0755) != 0) {
    GTEST_SKIP() << Skipped("cannot create " + group + ": " + std::strerror(errno));
  }
  struct Rmdir {
    std::string g;
    ~Rmdir() { rmdir(g.c_str()); }
  } rmdir_group{group};
  if (!WriteFile(group + "/" + own->limit_file, std::to_string(kLimitBytes), &reason)) {
    GTEST_SKIP() << Skipped(reason + (own->version == "v2" ? " (is memory enabled in " +
                                                                 own->parent + "/cgroup.subtree_control?)"
                                                           : ""));
  }
  const std::string dir = ::testing::TempDir() + "/arcstore_cgroup_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/pool";
  {
    PoolCreateOptions co;
    co.size_bytes = 1 * kGiB;
    co.sparse = true;
    ASSERT_TRUE(Pool::Create(path, co).ok());
    auto p = *Pool::Open(path, PoolOptions());
    VolumeOptions vo;
    vo.name = "v";
    vo.size_bytes = 512 * kMiB;
    vo.compression = "off";
    ASSERT_TRUE(p->CreateVolume(vo).ok());
    auto v = *p->OpenVolume("v");
    std::vector<uint8_t> buf(kMiB, 0x3c);
    for (uint64_t at = 0; at < vo.size_bytes; at += buf.size()) ASSERT_TRUE(v->Write(at, buf).ok());
    v.reset();
    ASSERT_TRUE(p->Close().ok());
  }
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    Child(group + "/cgroup.procs", path, fds[1]);
  }
  close(fds[1]);
  std::vector<Report> reports;
  Report r;
  while (read(fds[0], &r, sizeof(r)) == sizeof(r)) reports.push_back(r);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  const std::string events = ReadFile(group + "/" + own->oom_file);
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status)
                                 << "; " << own->oom_file << ":\n" << events;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child failed at step " << WEXITSTATUS(status);
  EXPECT_NE(events.find("oom_kill 0"), std::string::npos) << events;
  ASSERT_GE(reports.size(), 2u);
  EXPECT_EQ(reports[0].limit_bytes, kLimitBytes) << "the monitor did not see " << own->limit_file;
  EXPECT_EQ(reports[0].c_max, kLimitBytes / 2);
  uint64_t peak_c = 0;
  bool shrank = false;
  for (size_t i = 1; i < reports.size(); i++) {
    shrank = shrank || reports[i].c < peak_c;
    peak_c = std::max(peak_c, reports[i].c);
  }
  EXPECT_TRUE(shrank) << "c never went down while the balloon grew";
  std::printf("cgroup test: ran (cgroup %s); limit %llu MiB seen, c_max %llu MiB, c from %llu to "
              "%llu MiB\n",
              own->version.c_str(),
              static_cast<unsigned long long>(reports[0].limit_bytes / kMiB),
              static_cast<unsigned long long>(reports[0].c_max / kMiB),
              static_cast<unsigned long long>(peak_c / kMiB),
              static_cast<unsigned long long>(reports.back().c / kMiB));
}

}  // namespace
}  // namespace arcstore::pool
