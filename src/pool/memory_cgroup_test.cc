// Under a cgroup v2 memory limit (label "memory"): a child process runs in
// a new cgroup with memory.max = 384 MiB, opens a pool with no ARC cap
// (c_max = 50% of the limit its memory monitor sees), fills the ARC by
// reading a volume, then grows a balloon of other memory 16 MiB at a time,
// reading on after each step so the ARC keeps allocating. After each step it
// tells the parent (through a pipe) the ARC's c and size. The parent
// requires:
//   - the child's monitor saw the cgroup's limit (384 MiB, source naming the
//     cgroup) and c_max is half of it;
//   - c went down while the balloon grew (the ARC shrank under pressure);
//   - the kernel killed nothing: the child exited by itself with status 0
//     and the cgroup's memory.events counts no oom_kill.
// When this machine does not let the test make such a cgroup (not root, no
// cgroup2 mount, no memory controller in it, or writing the cgroup files
// fails), it prints SKIPPED with the reason (GTEST_SKIP).
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
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

// The cgroup v2 directory this process is in, when it has the memory
// controller available; "" and the reason otherwise.
std::string OwnCgroup2(std::string* reason) {
  if (geteuid() != 0) return *reason = "not root: cannot create a cgroup", "";
  std::string mount;
  std::ifstream mi("/proc/self/mountinfo");
  for (std::string line; std::getline(mi, line);) {
    const size_t dash = line.find(" - ");
    if (dash == std::string::npos || line.compare(dash + 3, 8, "cgroup2 ") != 0) continue;
    std::istringstream f(line);
    std::string id, parent, devno, root;
    f >> id >> parent >> devno >> root >> mount;
    break;
  }
  if (mount.empty()) return *reason = "no cgroup2 file system is mounted", "";
  const std::string controllers = ReadFile(mount + "/cgroup.controllers");
  if (controllers.find("memory") == std::string::npos) {
    *reason = "the cgroup2 hierarchy at " + mount + " has no memory controller (controllers: '" +
              controllers.substr(0, controllers.find('\n')) +
              "'); memory is on cgroup v1 here";
    return "";
  }
  std::ifstream cg("/proc/self/cgroup");
  for (std::string line; std::getline(cg, line);) {
    if (line.rfind("0::", 0) == 0) return mount + line.substr(3);
  }
  return *reason = "this process is in no cgroup2 group", "";
}

struct Report {
  uint64_t limit_bytes, c_max, c, size;
};

// The child: never returns. Step 0 reports the monitor's limit; later steps
// report c and size after each balloon step.
[[noreturn]] void Child(const std::string& procs, const std::string& pool_path, int fd) {
  std::string error;
  if (!WriteFile(procs, "0", &error)) _exit(10);
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
    r = {0, arc.c_max(), arc.target_bytes(), arc.size_bytes()};
    if (write(fd, &r, sizeof(r)) != sizeof(r)) _exit(17);
  }
  v->reset();
  (void)(*p)->Close();
  _exit(0);
}

TEST(MemoryCgroupTest, MonitorSeesTheLimitAndTheArcShrinksBeforeAnyKill) {
  std::string reason;
  const std::string own = OwnCgroup2(&reason);
  if (own.empty()) GTEST_SKIP() << Skipped(reason);
  const std::string group = own + "/arcstore_memcap_" + std::to_string(getpid());
  if (mkdir(group.c_str(), 0755) != 0) {
    GTEST_SKIP() << Skipped("cannot create " + group + ": " + std::strerror(errno));
  }
  struct Rmdir {
    std::string g;
    ~Rmdir() { rmdir(g.c_str()); }
  } rmdir_group{group};
  if (!WriteFile(group + "/memory.max", std::to_string(kLimitBytes), &reason)) {
    GTEST_SKIP() << Skipped(reason + " (is memory enabled in " + own + "/cgroup.subtree_control?)");
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
  const std::string events = ReadFile(group + "/memory.events");
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status)) << "the child was killed by signal " << WTERMSIG(status)
                                 << "; memory.events:\n" << events;
  ASSERT_EQ(WEXITSTATUS(status), 0) << "the child failed at step " << WEXITSTATUS(status);
  EXPECT_NE(events.find("oom_kill 0"), std::string::npos) << events;
  ASSERT_GE(reports.size(), 2u);
  EXPECT_EQ(reports[0].limit_bytes, kLimitBytes) << "the monitor did not see memory.max";
  EXPECT_EQ(reports[0].c_max, kLimitBytes / 2);
  uint64_t peak_c = 0;
  bool shrank = false;
  for (size_t i = 1; i < reports.size(); i++) {
    shrank = shrank || reports[i].c < peak_c;
    peak_c = std::max(peak_c, reports[i].c);
  }
  EXPECT_TRUE(shrank) << "c never went down while the balloon grew";
  std::printf("cgroup test: ran; limit %llu MiB seen, c_max %llu MiB, c from %llu to %llu MiB\n",
              static_cast<unsigned long long>(reports[0].limit_bytes / kMiB),
              static_cast<unsigned long long>(reports[0].c_max / kMiB),
              static_cast<unsigned long long>(peak_c / kMiB),
              static_cast<unsigned long long>(reports.back().c / kMiB));
}

}  // namespace
}  // namespace arcstore::pool
