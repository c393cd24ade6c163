// Page mappings: populated mappings are zero-filled, resident, in small
// pages, and can be given back in parts.
#include "base/page_memory.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "base/units.h"

namespace arcstore {
namespace {

struct Range {
  uint64_t mapped_kib = 0;  // of the entries inside the range
  uint64_t rss_kib = 0;
  uint64_t huge_kib = 0;
  bool all_nh = true;  // every entry says MADV_NOHUGEPAGE
};

// The smaps entries that lie inside [start, start + bytes) (the kernel may
// keep a mapping as several entries).
Range ReadSmaps(const uint8_t* start, uint64_t bytes) {
  const uint64_t lo_in = reinterpret_cast<uintptr_t>(start);
  const uint64_t hi_in = lo_in + bytes;
  std::ifstream in("/proc/self/smaps");
  std::string line;
  Range r;
  bool inside = false;
  while (std::getline(in, line)) {
    uint64_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx ", &lo, &hi) == 2) {
      inside = lo >= lo_in && hi <= hi_in;
      if (inside) r.mapped_kib += (hi - lo) / kKiB;
      continue;
    }
    if (!inside) continue;
    std::istringstream fields(line);
    std::string key;
    uint64_t kib = 0;
    fields >> key;
    if (key == "VmFlags:") {
      if (line.find(" nh") == std::string::npos) r.all_nh = false;
    } else if (fields >> kib) {
      if (key == "Rss:") r.rss_kib += kib;
      if (key == "AnonHugePages:") r.huge_kib += kib;
    }
  }
  return r;
}

TEST(PageMemoryTest, APopulatedMappingIsZeroedResidentInSmallPages) {
  constexpr uint64_t kBytes = 6 * kMiB + 8 * kKiB;  // room for three huge pages and a tail
  uint8_t* p = MapPopulatedPages(kBytes);
  for (uint64_t at = 0; at < kBytes; at += 511) ASSERT_EQ(p[at], 0) << "at " << at;
  const Range r = ReadSmaps(p, kBytes);
  ASSERT_EQ(r.mapped_kib * kKiB, kBytes) << "smaps entries inside the mapping";
  EXPECT_EQ(r.rss_kib * kKiB, kBytes) << "populated: every page resident";
  EXPECT_TRUE(r.all_nh) << "MADV_NOHUGEPAGE (khugepaged never refills a range given back)";
  EXPECT_EQ(r.huge_kib, 0u) << "small pages only";
  // A part given back leaves the rest usable.
  UnmapPages(p + kMiB, 128 * kKiB);
  std::memset(p, 0xa5, kMiB);
  std::memset(p + kMiB + 128 * kKiB, 0x5a, kBytes - kMiB - 128 * kKiB);
  EXPECT_EQ(p[kBytes - 1], 0x5a);
  EXPECT_EQ(ReadSmaps(p, kBytes).rss_kib * kKiB, kBytes - 128 * kKiB);
  UnmapPages(p, kMiB);
  UnmapPages(p + kMiB + 128 * kKiB, kBytes - kMiB - 128 * kKiB);
}

TEST(PageMemoryTest, ASmallPopulatedMappingIsResidentToo) {
  uint8_t* p = MapPopulatedPages(100 * kKiB);
  const Range r = ReadSmaps(p, PageRound(100 * kKiB));
  ASSERT_EQ(r.mapped_kib * kKiB, PageRound(100 * kKiB));
  EXPECT_EQ(r.rss_kib * kKiB, PageRound(100 * kKiB));
  EXPECT_EQ(p[100 * kKiB - 1], 0);
  UnmapPages(p, 100 * kKiB);
}

}  // namespace
}  // namespace arcstore
