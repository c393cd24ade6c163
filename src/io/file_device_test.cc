// Tests of the psync file device on a temporary regular file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "base/units.h"
#include "io/aligned_buffer.h"
#include "io/file_device.h"
#include "testing/temp_dir.h"

namespace arcstore::io {
namespace {

class FileDeviceTest : public ::testing::Test {
 protected:
  arcstore::testing::TempDir dir_{"arcstore_io"};
  const std::string path_ = dir_.File("dev0");
};

TEST_F(FileDeviceTest, CreateWritesEveryByteOnceUnlessSparse) {
  ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 4 << 20}).ok());
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 4 << 20);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, 4u << 20);
  std::string sparse = dir_.File("sparse");
  ASSERT_TRUE(CreateFileForDevice(sparse, {.size_bytes = 4 << 20, .sparse = true}).ok());
  ASSERT_EQ(::stat(sparse.c_str(), &st), 0);
  EXPECT_LT(static_cast<uint64_t>(st.st_blocks) * 512, 4u << 20);
  Status again = CreateFileForDevice(path_, {.size_bytes = 4 << 20});
  EXPECT_FALSE(again.ok());
  EXPECT_NE(again.message().find(path_), std::string::npos);
  EXPECT_FALSE(CreateFileForDevice(dir_.File("odd"), {.size_bytes = 1000}).ok());
}

TEST_F(FileDeviceTest, VectoredRoundTripWithAndWithoutDirectIo) {
  ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 1 << 20}).ok());
  for (DirectIo mode : {DirectIo::kOff, DirectIo::kTry}) {
    auto d = FileDevice::Open(path_, {.direct = mode});
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    FileDevice& dev = **d;
    EXPECT_EQ(dev.size_bytes(), 1u << 20);
    EXPECT_EQ(dev.logical_block_size(), 4096u);
    EXPECT_FALSE(dev.is_block_device());
    if (mode == DirectIo::kOff) EXPECT_FALSE(dev.direct());
    AlignedBuffer a(8192, 4096), b(4096, 4096);
    for (size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<uint8_t>(i * 13 + 1);
    for (size_t i = 0; i < b.size(); ++i) b.data()[i] = static_cast<uint8_t>(i * 3 + 2);
    IoRequest w{
        .op = IoOp::kWrite, .offset = 65536, .iov = {{a.data(), a.size()}, {b.data(), b.size()}}};
    ASSERT_TRUE(SubmitAndWait(dev, std::move(w)).ok());
    ASSERT_TRUE(FlushSync(dev).ok());
    AlignedBuffer out(12288, 4096);
    ASSERT_TRUE(ReadSync(dev, 65536, out.span()).ok());
    EXPECT_EQ(0, std::memcmp(out.data(), a.data(), 8192));
    EXPECT_EQ(0, std::memcmp(out.data() + 8192, b.data(), 4096));
  }
}

TEST_F(FileDeviceTest, RequireDirectFailsOrWorksAndMisalignedBuffersAreRefused) {
  ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 1 << 20}).ok());
  auto d = FileDevice::Open(path_, {.direct = DirectIo::kRequire});
  if (!d.ok()) {
    // tmpfs and some others refuse O_DIRECT: the error says so and names the path.
    EXPECT_NE(d.status().message().find("O_DIRECT"), std::string::npos);
    EXPECT_NE(d.status().message().find(path_), std::string::npos);
    GTEST_SKIP() << "O_DIRECT not supported here: " << d.status().ToString();
  }
  EXPECT_TRUE((*d)->direct());
  EXPECT_EQ((*d)->buffer_alignment(), 4096u);
  AlignedBuffer buf(8192, 4096);
  Status s = ReadSync(**d, 0, std::span<uint8_t>(buf.data() + 1, 4096));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("aligned"), std::string::npos);
}

TEST_F(FileDeviceTest, ErrorsNameThePath) {
  auto missing = FileDevice::Open(dir_.File("nope"), {});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir_.File("nope")), std::string::npos);
  auto dir = FileDevice::Open(dir_.path(), {.direct = DirectIo::kOff});
  EXPECT_FALSE(dir.ok());
  EXPECT_FALSE(FileDevice::Open(path_, {.file_block_size = 3000}).ok());
}

TEST_F(FileDeviceTest, ReadOnlyRefusesWritesAndFilesRefuseDiscard) {
  ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 1 << 20}).ok());
  auto d = FileDevice::Open(path_, {.direct = DirectIo::kOff, .read_only = true});
  ASSERT_TRUE(d.ok());
  std::vector<uint8_t> buf(4096, 1);
  Status s = WriteSync(**d, 0, buf);
  EXPECT_EQ(s.code(), StatusCode::kIOError);
  EXPECT_NE(s.message().find("device " + path_ + ": write offset 0 length 4096"), std::string::npos)
      << s.message();
  EXPECT_FALSE((*d)->supports_discard());
  EXPECT_EQ(DiscardSync(**d, 0, 4096).code(), StatusCode::kNotSupported);
}

// Whether [offset, offset + length) of `path` lies in one hole (SEEK_HOLE
// finds one at offset, and SEEK_DATA nothing before its end).
bool IsHole(const std::string& path, off_t offset, off_t length) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const off_t hole = ::lseek(fd, offset, SEEK_HOLE);
  const off_t data = ::lseek(fd, offset, SEEK_DATA);
  ::close(fd);
  return hole == offset && (data < 0 || data >= offset + length);
}

// FillHoles writes zeros into the holes of the range only: the data there
// and the holes around it stay as they are, and a second call has nothing
// to do.
TEST_F(FileDeviceTest, FillHolesWritesZerosIntoTheRangesHolesOnly) {
  ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 8 * kMiB, .sparse = true}).ok());
  if (!IsHole(path_, 0, 8 * kMiB)) {
    GTEST_SKIP() << "the file system under " << path_ << " reports no holes (SEEK_HOLE)";
  }
  for (DirectIo mode : {DirectIo::kOff, DirectIo::kTry}) {
    SCOPED_TRACE(mode == DirectIo::kOff ? "buffered" : "direct");
    ::unlink(path_.c_str());
    ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 8 * kMiB, .sparse = true}).ok());
    auto d = FileDevice::Open(path_, {.direct = mode});
    ASSERT_TRUE(d.ok()) << d.status().ToString();
    AlignedBuffer data(kMiB, 4096);
    std::memset(data.data(), 0x5a, kMiB);
    ASSERT_TRUE(WriteSync(**d, 2 * kMiB, {data.data(), kMiB}).ok());
    ASSERT_TRUE(FlushSync(**d).ok());

    Result<uint64_t> filled = (*d)->FillHoles(1 * kMiB, 4 * kMiB);
    ASSERT_TRUE(filled.ok()) << filled.status().ToString();
    EXPECT_EQ(*filled, 3 * kMiB);  // [1, 2) and [3, 5) MiB
    EXPECT_FALSE(IsHole(path_, 1 * kMiB, 4096));
    EXPECT_FALSE(IsHole(path_, 5 * kMiB - 4096, 4096));
    EXPECT_TRUE(IsHole(path_, 0, kMiB)) << "before the range";
    EXPECT_TRUE(IsHole(path_, 5 * kMiB, 3 * kMiB)) << "after the range";
    AlignedBuffer back(4 * kMiB, 4096);
    ASSERT_TRUE(ReadSync(**d, 1 * kMiB, {back.data(), 4 * kMiB}).ok());
    for (uint64_t i = 0; i < 4 * kMiB; i++) {
      const uint8_t want = i >= kMiB && i < 2 * kMiB ? 0x5a : 0;
      ASSERT_EQ(back.data()[i], want) << "at " << kMiB + i;
    }
    filled = (*d)->FillHoles(1 * kMiB, 4 * kMiB);
    ASSERT_TRUE(filled.ok());
    EXPECT_EQ(*filled, 0u);
  }
}

TEST_F(FileDeviceTest, SizeRoundsDownToWholeBlocks) {
  ASSERT_TRUE(CreateFileForDevice(path_, {.size_bytes = 1 << 20}).ok());
  ASSERT_EQ(::truncate(path_.c_str(), (1 << 20) + 100), 0);
  auto d = FileDevice::Open(path_, {.direct = DirectIo::kOff});
  ASSERT_TRUE(d.ok());
  EXPECT_EQ((*d)->size_bytes(), 1u << 20);
  ASSERT_EQ(::truncate(path_.c_str(), 100), 0);
  EXPECT_FALSE(FileDevice::Open(path_, {.direct = DirectIo::kOff}).ok());
}

}  // namespace
}  // namespace arcstore::io

namespace arcstore::io {
namespace {

// Block devices: only with ARCSTORE_SCRATCH_BLOCK_DEVICE=/dev/... set (its
// first MiB is overwritten), e.g. a loop device:
//   truncate -s 64M /tmp/img && losetup -f --show /tmp/img
TEST(BlockDevice, GeometryReadWriteDiscardOnAScratchDevice) {
  const char* path = std::getenv("ARCSTORE_SCRATCH_BLOCK_DEVICE");
  if (path == nullptr) GTEST_SKIP() << "set ARCSTORE_SCRATCH_BLOCK_DEVICE to run";
  auto d = FileDevice::Open(path, {});
  ASSERT_TRUE(d.ok()) << d.status().ToString();
  FileDevice& dev = **d;
  EXPECT_TRUE(dev.is_block_device());
  EXPECT_TRUE(dev.supports_discard());
  EXPECT_GE(dev.logical_block_size(), 512u);
  EXPECT_EQ(dev.logical_block_size() & (dev.logical_block_size() - 1), 0u);
  EXPECT_GE(dev.size_bytes(), 1u << 20);
  AlignedBuffer data(1 << 20, 4096), back(1 << 20, 4096);
  for (size_t i = 0; i < data.size(); ++i) data.data()[i] = static_cast<uint8_t>(i * 7 + 3);
  ASSERT_TRUE(WriteSync(dev, 0, data.span()).ok());
  ASSERT_TRUE(FlushSync(dev).ok());
  ASSERT_TRUE(ReadSync(dev, 0, back.span()).ok());
  EXPECT_EQ(0, std::memcmp(data.data(), back.data(), data.size()));
  Status discard = DiscardSync(dev, 0, 1 << 20);
  EXPECT_TRUE(discard.ok() || discard.code() == StatusCode::kIOError) << discard.ToString();
  Status past = ReadSync(dev, dev.size_bytes(), std::span(back.data(), 4096));
  EXPECT_EQ(past.code(), StatusCode::kOutOfRange);
}

}  // namespace
}  // namespace arcstore::io
