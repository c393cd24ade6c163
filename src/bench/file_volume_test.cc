// The raw-file target: reads back what it wrote, creates and lays out new
// files, flushes, punches holes, rejects out-of-range I/O.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "base/random.h"
#include "bench/file_volume.h"

namespace arcstore::bench {
namespace {

namespace fs = std::filesystem;

class FileVolumeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("arcstore-fv-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

TEST_F(FileVolumeTest, WriteReadFlushTrim) {
  FileVolumeProvider p(dir_.string());
  auto v = p.OpenVolume({"vol", "", 1 << 20, false});
  ASSERT_TRUE(v.ok()) << v.status().ToString();
  EXPECT_EQ((*v)->info().size_bytes, 1u << 20);
  struct stat st;
  ASSERT_EQ(stat((dir_ / "vol").c_str(), &st), 0);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, 1u << 20);  // laid out, no holes
  SeededRandom rng = SeededRandom::FromEnvironment("FileVolumeTest");
  std::vector<uint8_t> data(8192), back(8192);
  rng.Fill(data.data(), data.size());
  ASSERT_TRUE((*v)->Write(4096, data, kFua).ok());
  ASSERT_TRUE((*v)->Read(4096, back).ok());
  EXPECT_EQ(data, back);
  EXPECT_TRUE((*v)->Flush().ok());
  ASSERT_TRUE((*v)->Trim(4096, 4096).ok());
  ASSERT_TRUE((*v)->Read(4096, back).ok());
  EXPECT_EQ(std::vector<uint8_t>(4096, 0), std::vector<uint8_t>(back.begin(), back.begin() + 4096));
  EXPECT_FALSE((*v)->Write((1 << 20) - 10, data).ok());
  EXPECT_FALSE((*v)->Read(1 << 20, back).ok());
}

TEST_F(FileVolumeTest, DirectIoAndMissingFiles) {
  FileVolumeProvider p(dir_.string());
  EXPECT_EQ(p.OpenVolume({"missing", "", 0, false}).status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(p.OpenVolume({"../escape", "", 4096, false}).ok());
  auto v = p.OpenVolume({"direct", "", 1 << 20, true});
  if (!v.ok()) GTEST_SKIP() << "O_DIRECT not available here: " << v.status().ToString();
  void* mem = nullptr;
  ASSERT_EQ(posix_memalign(&mem, 4096, 4096), 0);
  std::span<uint8_t> buf(static_cast<uint8_t*>(mem), 4096);
  std::fill(buf.begin(), buf.end(), 0xab);
  EXPECT_TRUE((*v)->Write(8192, buf).ok());
  std::fill(buf.begin(), buf.end(), 0);
  EXPECT_TRUE((*v)->Read(8192, buf).ok());
  EXPECT_EQ(buf[100], 0xab);
  std::free(mem);
  // Reopening an existing file keeps its size.
  auto again = p.OpenVolume({"direct", "", 0, false});
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->info().size_bytes, 1u << 20);
}

}  // namespace
}  // namespace arcstore::bench
