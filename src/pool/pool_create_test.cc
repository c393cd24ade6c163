// Pool::Create never destroys what it does not own: a pool in use, an
// existing file, a device with a pool, a filesystem or a partition table on
// it, and sizes it cannot honour.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "arcstore/pool.h"
#include "base/units.h"
#include "stats/registry.h"
#include "testing/temp_dir.h"

namespace arcstore {
namespace {

class PoolCreateTest : public ::testing::Test {
 protected:
  static PoolCreateOptions Sparse(uint64_t size_bytes) {
    PoolCreateOptions o;
    o.size_bytes = size_bytes;
    o.sparse = true;
    return o;
  }
  // A pool at `path` with one volume "keep", closed.
  static void MakePoolWithVolume(const std::string& path) {
    ASSERT_TRUE(Pool::Create(path, Sparse(64 * kMiB)).ok());
    auto p = Pool::Open(path, PoolOptions());
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    VolumeOptions vo;
    vo.name = "keep";
    vo.size_bytes = 8 * kMiB;
    ASSERT_TRUE((*p)->CreateVolume(vo).ok());
    ASSERT_TRUE((*p)->Close().ok());
  }
  static bool HasVolumeKeep(const std::string& path) {
    PoolOptions o;
    o.read_only = true;
    auto p = Pool::Open(path, o);
    if (!p.ok()) return false;
    for (const VolumeInfo& v : (*p)->Info().volumes) {
      if (v.name == "keep") return true;
    }
    return false;
  }
  arcstore::testing::TempDir dir_{"arcstore_create"};
};

TEST_F(PoolCreateTest, ANewFileNeedsASizeAndAnExistingOneIsRefused) {
  const std::string path = dir_.File("p");
  Status no_size = Pool::Create(path, PoolCreateOptions());
  EXPECT_EQ(no_size.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_size.message().find("--size"), std::string::npos) << no_size.ToString();
  MakePoolWithVolume(path);
  Status again = Pool::Create(path, Sparse(64 * kMiB));
  EXPECT_EQ(again.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(again.message().find("arcstore pool 'arcstore'"), std::string::npos) << again.ToString();
  EXPECT_TRUE(HasVolumeKeep(path));
  // A plain file that is not a pool is refused too, untouched.
  const std::string plain = dir_.File("plain");
  { std::FILE* f = std::fopen(plain.c_str(), "w"); std::fputs("data", f); std::fclose(f); }
  EXPECT_EQ(Pool::Create(plain, Sparse(64 * kMiB)).code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(std::filesystem::file_size(plain), 4u);
}

TEST_F(PoolCreateTest, AnOpenPoolIsNeverFormattedEvenWithForce) {
  const std::string path = dir_.File("p");
  MakePoolWithVolume(path);
  auto open = Pool::Open(path, PoolOptions());
  ASSERT_TRUE(open.ok());
  PoolCreateOptions force;
  force.force = true;
  Status s = Pool::Create(path, force);
  EXPECT_EQ(s.code(), StatusCode::kBusy) << s.ToString();
  ASSERT_TRUE((*open)->Close().ok());
  open->reset();
  EXPECT_TRUE(HasVolumeKeep(path));
  // Closed, force formats it: a new, empty pool.
  ASSERT_TRUE(Pool::Create(path, force).ok());
  EXPECT_FALSE(HasVolumeKeep(path));
  PoolOptions ro;
  ro.read_only = true;
  EXPECT_TRUE(Pool::Open(path, ro).ok());
}

TEST_F(PoolCreateTest, ForceTakesAnExistingFileWholeAndRefusesAnotherSize) {
  const std::string path = dir_.File("p");
  MakePoolWithVolume(path);
  PoolCreateOptions o;
  o.force = true;
  o.size_bytes = 128 * kMiB;
  Status bigger = Pool::Create(path, o);
  EXPECT_EQ(bigger.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bigger.message().find("larger than the existing file"), std::string::npos)
      << bigger.ToString();
  o.size_bytes = 32 * kMiB;
  Status smaller = Pool::Create(path, o);
  EXPECT_NE(smaller.message().find("leave out --size"), std::string::npos) << smaller.ToString();
  EXPECT_TRUE(HasVolumeKeep(path));
  o.size_bytes = 64 * kMiB;
  EXPECT_TRUE(Pool::Create(path, o).ok());
}

TEST_F(PoolCreateTest, AFilesystemImageIsRefusedUnlessForced) {
  const std::string path = dir_.File("ext4.img");
  {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fclose(f);
    std::filesystem::resize_file(path, 64 * kMiB);
  }
  if (std::system(("mkfs.ext4 -q -F " + path + " >/dev/null 2>&1").c_str()) != 0) {
    GTEST_SKIP() << "mkfs.ext4 did not run here (e2fsprogs)";
  }
  PoolCreateOptions o;
  Status s = Pool::Create(path, o);
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("ext4 filesystem"), std::string::npos) << s.ToString();
  o.force = true;
  EXPECT_TRUE(Pool::Create(path, o).ok());
}

TEST_F(PoolCreateTest, AMissingPoolIsNamedAsSuch) {
  auto p = Pool::Open(dir_.File("nothing"), PoolOptions());
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), StatusCode::kNotFound);
  EXPECT_NE(p.status().message().find("no pool at " + dir_.File("nothing")), std::string::npos)
      << p.status().ToString();
  Status dev = Pool::Create("/dev/arcstore-no-such-device", Sparse(64 * kMiB));
  EXPECT_EQ(dev.code(), StatusCode::kNotFound) << dev.ToString();
  EXPECT_FALSE(std::filesystem::exists("/dev/arcstore-no-such-device"));
}

// A loop device over a file in the test's directory, detached at the end.
class LoopDevice {
 public:
  static std::unique_ptr<LoopDevice> Attach(const std::string& file, std::string* why) {
    if (::geteuid() != 0) {
      *why = "needs root for losetup";
      return nullptr;
    }
    std::string cmd = "losetup --find --show " + file + " 2>&1";
    std::FILE* p = ::popen(cmd.c_str(), "r");
    if (p == nullptr) {
      *why = "cannot run losetup";
      return nullptr;
    }
    char buf[256] = {};
    std::string out = std::fgets(buf, sizeof(buf), p) != nullptr ? buf : "";
    const int rc = ::pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    if (rc != 0 || out.rfind("/dev/loop", 0) != 0) {
      *why = "losetup failed (no loop devices here?): " + out;
      return nullptr;
    }
    return std::unique_ptr<LoopDevice>(new LoopDevice(out));
  }
  ~LoopDevice() { (void)std::system(("losetup -d " + path_ + " 2>/dev/null").c_str()); }
  const std::string& path() const { return path_; }

 private:
  explicit LoopDevice(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

TEST_F(PoolCreateTest, ABlockDeviceInUseOrHoldingAPoolIsNotFormatted) {
  const std::string backing = dir_.File("backing");
  {
    std::FILE* f = std::fopen(backing.c_str(), "w");
    std::fclose(f);
    std::filesystem::resize_file(backing, 64 * kMiB);
  }
  std::string why;
  std::unique_ptr<LoopDevice> loop = LoopDevice::Attach(backing, &why);
  if (!loop) GTEST_SKIP() << "no loop device: " << why;
  const std::string dev = loop->path();

  PoolCreateOptions too_big;
  too_big.size_bytes = 1 * kGiB;
  Status s = Pool::Create(dev, too_big);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("larger than the device"), std::string::npos) << s.ToString();

  ASSERT_TRUE(Pool::Create(dev, PoolCreateOptions()).ok());
  auto open = Pool::Open(dev, PoolOptions());
  ASSERT_TRUE(open.ok()) << open.status().ToString();
  VolumeOptions vo;
  vo.name = "keep";
  vo.size_bytes = 8 * kMiB;
  ASSERT_TRUE((*open)->CreateVolume(vo).ok());
  // Served (open): refused, force or not.
  PoolCreateOptions force;
  force.force = true;
  EXPECT_EQ(Pool::Create(dev, force).code(), StatusCode::kBusy);
  ASSERT_TRUE((*open)->Close().ok());
  open->reset();
  // At rest: its label refuses an unforced create.
  s = Pool::Create(dev, PoolCreateOptions());
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_NE(s.message().find("arcstore pool"), std::string::npos) << s.ToString();
  EXPECT_TRUE(HasVolumeKeep(dev));

  // Mounted: the kernel holds it; refused even with force.
  const std::string mnt = dir_.File("mnt");
  std::filesystem::create_directory(mnt);
  if (std::system(("mkfs.ext4 -q -F " + dev + " >/dev/null 2>&1").c_str()) != 0 ||
      std::system(("mount " + dev + " " + mnt + " 2>/dev/null").c_str()) != 0) {
    std::printf("note: the mounted-device case did not run (mkfs.ext4 or mount failed here)\n");
    return;
  }
  s = Pool::Create(dev, force);
  (void)std::system(("umount " + mnt).c_str());
  EXPECT_EQ(s.code(), StatusCode::kBusy) << s.ToString();
  EXPECT_NE(s.message().find("in use"), std::string::npos) << s.ToString();
}

// Bytes of `path` the file system holds storage for.
uint64_t AllocatedBytes(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
}

// A sparse pool stays sparse, except for the intent log's arena: its first
// open writes zeros into the arena's holes (so that no log commit makes
// the host file system allocate), and later opens find nothing to fill.
TEST_F(PoolCreateTest, ASparsePoolsLogArenaIsWrittenOnceAtItsFirstOpen) {
  const std::string path = dir_.File("p");
  ASSERT_TRUE(Pool::Create(path, Sparse(256 * kMiB)).ok());
  const uint64_t created = AllocatedBytes(path);
  if (created >= 64 * kMiB) {
    GTEST_SKIP() << "the file system under " << path << " does not keep files sparse";
  }
  const auto filled = [](Pool& p) {
    return p.stats().TakeSnapshot().Get("io", "holes_filled_bytes", -1);
  };
  {
    auto p = Pool::Open(path, PoolOptions());
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    // The arena: 1/16 of the data space, whole allocation units.
    const int64_t arena = filled(**p);
    EXPECT_GT(arena, 8 * static_cast<int64_t>(kMiB));
    EXPECT_LE(arena, 16 * static_cast<int64_t>(kMiB));
    EXPECT_GE(AllocatedBytes(path), created + static_cast<uint64_t>(arena));
    EXPECT_LT(AllocatedBytes(path), 64 * kMiB) << "only the arena is filled";
    ASSERT_TRUE((*p)->Close().ok());
  }
  auto again = Pool::Open(path, PoolOptions());
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(filled(**again), 0);
  ASSERT_TRUE((*again)->Close().ok());
}

}  // namespace
}  // namespace arcstore
