#include "base/units.h"

#include <gtest/gtest.h>

namespace arcstore {
namespace {

TEST(UnitsTest, ParsesSizes) {
  EXPECT_EQ(*ParseSizeBytes("0"), 0u);
  EXPECT_EQ(*ParseSizeBytes("512"), 512u);
  EXPECT_EQ(*ParseSizeBytes("512B"), 512u);
  EXPECT_EQ(*ParseSizeBytes("4K"), 4096u);
  EXPECT_EQ(*ParseSizeBytes("4k"), 4096u);
  EXPECT_EQ(*ParseSizeBytes("4KiB"), 4096u);
  EXPECT_EQ(*ParseSizeBytes("4KB"), 4096u);
  EXPECT_EQ(*ParseSizeBytes("128K"), 128 * kKiB);
  EXPECT_EQ(*ParseSizeBytes("1.5M"), 3 * kMiB / 2);
  EXPECT_EQ(*ParseSizeBytes("8G"), 8 * kGiB);
  EXPECT_EQ(*ParseSizeBytes(" 2 TiB "), 2 * kTiB);
}

TEST(UnitsTest, RejectsBadSizesWithReason) {
  struct Case {
    const char* text;
    const char* reason;
  } cases[] = {
      {"", "empty"},
      {"K", "does not start with a number"},
      {"-4K", "does not start with a number"},
      {"4X", "unknown unit 'x'"},
      {"4KX", "unknown unit 'kx'"},
      {"0.3", "not a whole number"},
      {"1.5.2K", "unknown unit"},
      {"99999999999P", "too large"},
      {"1e3", "unknown unit"},
  };
  for (const auto& c : cases) {
    Result<uint64_t> r = ParseSizeBytes(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.status().message().find(c.reason), std::string::npos)
        << c.text << " -> " << r.status().ToString();
    if (*c.text != '\0') {
      EXPECT_NE(r.status().message().find(c.text), std::string::npos) << "names the input";
    }
  }
}

TEST(UnitsTest, ParsesDurations) {
  EXPECT_EQ(*ParseDurationNs("5s"), 5 * kNsPerSec);
  EXPECT_EQ(*ParseDurationNs("5"), 5 * kNsPerSec);
  EXPECT_EQ(*ParseDurationNs("5", DurationUnit::kMs), 5 * kNsPerMs);
  EXPECT_EQ(*ParseDurationNs("500us"), 500 * kNsPerUs);
  EXPECT_EQ(*ParseDurationNs("100ms"), 100 * kNsPerMs);
  EXPECT_EQ(*ParseDurationNs("2m"), 120 * kNsPerSec);
  EXPECT_EQ(*ParseDurationNs("1.5s"), 1500 * kNsPerMs);
  EXPECT_FALSE(ParseDurationNs("5 parsecs").ok());
  EXPECT_FALSE(ParseDurationNs("").ok());
}

TEST(UnitsTest, Formats) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(4096), "4.0 KiB");
  EXPECT_EQ(FormatBytes(3 * kGiB / 2), "1.5 GiB");
  EXPECT_EQ(FormatBytesShort(512), "512");
  EXPECT_EQ(FormatBytesShort(4096), "4.0K");
  EXPECT_EQ(FormatBytesShort(300 * kMiB), "300M");
  EXPECT_EQ(FormatDurationNs(250), "250ns");
  EXPECT_EQ(FormatDurationNs(12500), "12.5us");
  EXPECT_EQ(FormatDurationNs(3200000), "3.20ms");
  EXPECT_TRUE(IsPowerOfTwo(4096));
  EXPECT_FALSE(IsPowerOfTwo(0));
  EXPECT_FALSE(IsPowerOfTwo(12288));
}

}  // namespace
}  // namespace arcstore
