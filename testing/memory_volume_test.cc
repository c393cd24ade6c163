#include "testing/memory_volume.h"

#include <gtest/gtest.h>

namespace arcstore::testing {
namespace {

VolumeInfo Info() {
  VolumeInfo i;
  i.name = "v";
  i.size_bytes = 1 << 20;
  i.record_size_bytes = 4096;
  return i;
}

TEST(MemoryVolumeTest, ReadsBackWritesAcrossRecords) {
  MemoryVolume v(Info());
  std::vector<uint8_t> data(10000);
  for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<uint8_t>(i * 7);
  ASSERT_TRUE(v.Write(1000, data).ok());
  std::vector<uint8_t> out(10000);
  ASSERT_TRUE(v.Read(1000, out).ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(v.allocated_records(), 3u);  // bytes 1000..10999 touch records 0..2
}

TEST(MemoryVolumeTest, TrimMakesHolesAndBlockStatusSeesThem) {
  MemoryVolume v(Info());
  std::vector<uint8_t> data(16384, 0xab);
  ASSERT_TRUE(v.Write(0, data).ok());
  ASSERT_TRUE(v.Trim(4096, 8192).ok());
  std::vector<Extent> e;
  ASSERT_TRUE(v.BlockStatus(0, 20480, &e).ok());
  ASSERT_EQ(e.size(), 4u);
  EXPECT_FALSE(e[0].hole);
  EXPECT_TRUE(e[1].hole);
  EXPECT_EQ(e[1].offset, 4096u);
  EXPECT_EQ(e[1].length, 8192u);
  EXPECT_FALSE(e[2].hole);
  EXPECT_TRUE(e[3].hole);  // never written
  std::vector<uint8_t> out(4096, 1);
  ASSERT_TRUE(v.Read(4096, out).ok());
  EXPECT_EQ(out, std::vector<uint8_t>(4096, 0));
}

TEST(MemoryVolumeTest, RejectsRangesPastTheEnd) {
  MemoryVolume v(Info());
  std::vector<uint8_t> buf(10);
  Status s = v.Read((1 << 20) - 5, buf);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("size 1048576"), std::string::npos);
  EXPECT_FALSE(v.Trim(UINT64_MAX - 1, 4).ok());  // overflow is caught
}

}  // namespace
}  // namespace arcstore::testing
