// Signatures (an arcstore label, a filesystem, a partition table) and the
// output-file rule: what may be created, what may be replaced, and what is
// never written.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>

#include "format/label.h"
#include "format/output_file.h"
#include "format/signature.h"
#include "format/test_samples.h"
#include "testing/temp_dir.h"

namespace arcstore::format {
namespace {

class OutputFileTest : public ::testing::Test {
 protected:
  std::string Path(const std::string& name) const { return dir_.File(name); }

  void WriteBytes(const std::string& path, uint64_t offset, const std::vector<uint8_t>& bytes,
                  uint64_t size_bytes) {
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size_bytes)), 0);
    ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
              static_cast<ssize_t>(bytes.size()));
    ::close(fd);
  }

  // A file whose front label header is a pool's (the back one absent).
  std::string PoolImage(const std::string& name) {
    std::string path = Path(name);
    LabelHeader h = samples::Label();
    h.config.Set("pool_name", "tank");
    std::vector<uint8_t> bytes = *EncodeLabelHeader(h);
    WriteBytes(path, 0, bytes, 16 << 20);
    return path;
  }

  Result<std::optional<Signature>> Probe(const std::string& path) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    EXPECT_GE(fd, 0) << path;
    struct stat st;
    ::fstat(fd, &st);
    auto r = FindSignature(fd, static_cast<uint64_t>(st.st_size), path);
    ::close(fd);
    return r;
  }

  static uint64_t SizeOf(const std::string& path) { return std::filesystem::file_size(path); }

  // Resolved (TempDir::path() is canonical): the output-file rule refuses
  // paths through symbolic links.
  arcstore::testing::TempDir dir_{"arcstore_output"};
};

TEST_F(OutputFileTest, FindsAPoolLabelFrontOrBackAndADamagedOne) {
  auto front = Probe(PoolImage("front"));
  ASSERT_TRUE(front.ok()) << front.status().ToString();
  ASSERT_TRUE(front->has_value());
  EXPECT_EQ((*front)->kind, Signature::Kind::kArcstorePool);
  EXPECT_NE((*front)->description.find("arcstore pool 'tank'"), std::string::npos);

  // Only the back copy: still a pool.
  std::vector<uint8_t> bytes = *EncodeLabelHeader(samples::Label());
  const std::string back = Path("back");
  WriteBytes(back, BackHeaderOffset(16 << 20), bytes, 16 << 20);
  auto b = Probe(back);
  ASSERT_TRUE(b.ok() && b->has_value());
  EXPECT_EQ((*b)->kind, Signature::Kind::kArcstorePool);

  // The magic with a damaged header is still a pool's.
  bytes[100] ^= 0xff;
  const std::string damaged = Path("damaged");
  WriteBytes(damaged, 0, bytes, 16 << 20);
  auto d = Probe(damaged);
  ASSERT_TRUE(d.ok() && d->has_value());
  EXPECT_EQ((*d)->description, "a damaged arcstore label");

  // Zeros, and a file too small for a label, hold nothing.
  const std::string zeros = Path("zeros");
  WriteBytes(zeros, 0, {0}, 16 << 20);
  auto z = Probe(zeros);
  ASSERT_TRUE(z.ok());
  EXPECT_FALSE(z->has_value());
  WriteBytes(Path("tiny"), 0, {1, 2, 3}, 3);
  auto t = Probe(Path("tiny"));
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(t->has_value());
}

TEST_F(OutputFileTest, FindsAFilesystemAndAPartitionTable) {
  const std::string ext4 = Path("ext4.img");
  WriteBytes(ext4, 0, {0}, 32 << 20);
  const std::string cmd = "mkfs.ext4 -q -F " + ext4 + " >/dev/null 2>&1";
  if (std::system(cmd.c_str()) != 0) GTEST_SKIP() << "mkfs.ext4 did not run here (e2fsprogs)";
  auto fs = Probe(ext4);
  ASSERT_TRUE(fs.ok()) << fs.status().ToString();
  ASSERT_TRUE(fs->has_value());
  EXPECT_EQ((*fs)->kind, Signature::Kind::kOther);
  EXPECT_EQ((*fs)->description, "ext4 filesystem");

  // A DOS partition table: one Linux partition from sector 2048, and the
  // boot signature.
  std::vector<uint8_t> mbr(512, 0);
  uint8_t* e = &mbr[446];
  e[4] = 0x83;
  e[8] = 0x00, e[9] = 0x08;   // first LBA 2048
  e[12] = 0x00, e[13] = 0x80; // 32768 sectors
  mbr[510] = 0x55, mbr[511] = 0xaa;
  const std::string dos = Path("dos.img");
  WriteBytes(dos, 0, mbr, 32 << 20);
  auto pt = Probe(dos);
  ASSERT_TRUE(pt.ok()) << pt.status().ToString();
  ASSERT_TRUE(pt->has_value());
  EXPECT_EQ((*pt)->description, "dos partition table");
}

TEST_F(OutputFileTest, ResolvesTheDirectoryAndRefusesWhatIsNotAFileName) {
  std::filesystem::create_directory(Path("d"));
  std::filesystem::create_directory_symlink(Path("d"), Path("link"));
  EXPECT_EQ(*ResolveOutputPath(Path("link/../d/./out")), Path("d/out"));
  EXPECT_EQ(*ResolveOutputPath(Path("link/out")), Path("d/out"));
  auto missing = ResolveOutputPath(Path("nope/out"));
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("does not exist"), std::string::npos);
  EXPECT_FALSE(ResolveOutputPath("").ok());
  EXPECT_FALSE(ResolveOutputPath(Path("d/")).ok());
  EXPECT_FALSE(ResolveOutputPath(Path("d/..")).ok());
  EXPECT_FALSE(ResolveOutputPath(std::string("/tmp/a\0b", 8)).ok());
  WriteBytes(Path("file"), 0, {1}, 1);
  auto under_file = ResolveOutputPath(Path("file/out"));
  ASSERT_FALSE(under_file.ok());
}

TEST_F(OutputFileTest, CreatesNewFilesAndRefusesUnresolvedPaths) {
  Result<int> fd = CreateOutputFile(Path("new"), {});
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  ASSERT_EQ(::write(*fd, "abc", 3), 3);
  ::close(*fd);
  EXPECT_EQ(SizeOf(Path("new")), 3u);
  // The writer resolves nothing itself: a relative path or one through a
  // symlinked directory is refused, and nothing is created.
  std::filesystem::create_directory(Path("d"));
  std::filesystem::create_directory_symlink(Path("d"), Path("link"));
  EXPECT_EQ(CreateOutputFile("relative", {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateOutputFile(Path("link/x"), {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(CreateOutputFile(Path("d/../x"), {}).status().code(), StatusCode::kInvalidArgument);
  EXPECT_FALSE(std::filesystem::exists(Path("d/x")));
  EXPECT_FALSE(std::filesystem::exists(Path("x")));
}

TEST_F(OutputFileTest, AnExistingFileIsReplacedOnlyWhenAskedAndOnlyWhenItIsPlain) {
  // Large enough that the signature probes read it (both label headers
  // and libblkid's superblocks).
  WriteBytes(Path("old"), 0, {1, 2, 3, 4}, 1 << 20);
  Result<int> refused = CreateOutputFile(Path("old"), {});
  EXPECT_EQ(refused.status().code(), StatusCode::kAlreadyExists);
  EXPECT_NE(refused.status().message().find("--force"), std::string::npos);
  EXPECT_EQ(SizeOf(Path("old")), 1u << 20);

  OutputFileOptions replace;
  replace.replace_existing = true;
  Result<int> fd = CreateOutputFile(Path("old"), replace);
  ASSERT_TRUE(fd.ok()) << fd.status().ToString();
  EXPECT_EQ(SizeOf(Path("old")), 0u);
  // Its descriptor keeps the lock: a second writer is refused meanwhile.
  EXPECT_EQ(CreateOutputFile(Path("old"), replace).status().code(), StatusCode::kBusy);
  // What is written starts at byte 0, whatever the checks read before.
  ASSERT_EQ(::write(*fd, "abc", 3), 3);
  ::close(*fd);
  EXPECT_EQ(SizeOf(Path("old")), 3u);
}

TEST_F(OutputFileTest, PoolsDevicesLinksAndLockedFilesAreNeverReplaced) {
  OutputFileOptions replace;
  replace.replace_existing = true;
  const std::string pool = PoolImage("pool");
  const uint64_t pool_bytes = SizeOf(pool);
  Result<int> r = CreateOutputFile(pool, replace);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("arcstore pool 'tank'"), std::string::npos)
      << r.status().ToString();
  EXPECT_EQ(SizeOf(pool), pool_bytes);

  // A symbolic link to the pool, whatever it points at.
  std::filesystem::create_symlink(pool, Path("to_pool"));
  r = CreateOutputFile(Path("to_pool"), replace);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("symbolic link"), std::string::npos) << r.status().ToString();
  EXPECT_EQ(SizeOf(pool), pool_bytes);

  // A file an open pool (or anyone) holds locked.
  WriteBytes(Path("locked"), 0, {9, 9}, 2);
  int holder = ::open(Path("locked").c_str(), O_RDONLY);
  ASSERT_EQ(::flock(holder, LOCK_SH | LOCK_NB), 0);
  EXPECT_EQ(CreateOutputFile(Path("locked"), replace).status().code(), StatusCode::kBusy);
  EXPECT_EQ(SizeOf(Path("locked")), 2u);
  ::close(holder);

  // A FIFO, a directory and a character device.
  ASSERT_EQ(::mkfifo(Path("fifo").c_str(), 0644), 0);
  r = CreateOutputFile(Path("fifo"), replace);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("FIFO"), std::string::npos) << r.status().ToString();
  std::filesystem::create_directory(Path("dir"));
  EXPECT_FALSE(CreateOutputFile(Path("dir"), replace).ok());
  r = CreateOutputFile("/dev/null", replace);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("character device"), std::string::npos)
      << r.status().ToString();
}

}  // namespace
}  // namespace arcstore::format
