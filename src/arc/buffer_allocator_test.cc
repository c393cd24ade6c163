// The ARC's buffer allocator: small buffers from the heap, large ones
// mapped, freed ones cached up to the bound and given back beyond it,
// options checked.
#include "arc/buffer_allocator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "base/units.h"

namespace arcstore::arc {
namespace {

TEST(BufferAllocatorTest, SmallBuffersComeFromTheHeap) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = kMiB});
  ArcBuffer b = a.Allocate(4 * kKiB);
  ASSERT_TRUE(b);
  std::memset(b.get(), 0x5a, b.bytes());
  EXPECT_EQ(b.bytes(), 4 * kKiB);
  EXPECT_EQ(a.Stats().maps, 0u);
  EXPECT_EQ(a.Stats().mapped_bytes, 0u);
}

// A txg sync frees a txg's 4 KiB records at once: they are kept for the
// next txg's copies (up to the bound) instead of going back to the heap.
TEST(BufferAllocatorTest, FreedSmallBuffersAreReusedUpToTheCacheBound) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 8 * kKiB});
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 3; i++) bufs.push_back(a.Allocate(4 * kKiB));
  std::vector<uint8_t*> kept = {bufs[0].get(), bufs[1].get(), bufs[2].get()};
  bufs.clear();  // two fit the 8 KiB bound, one goes back to the heap
  EXPECT_EQ(a.Stats().cached_bytes, 8 * kKiB);
  for (int i = 0; i < 3; i++) bufs.push_back(a.Allocate(4 * kKiB));
  EXPECT_EQ(a.Stats().cache_hits, 2u);
  EXPECT_EQ(a.Stats().cached_bytes, 0u);
  EXPECT_TRUE(std::find(kept.begin(), kept.end(), bufs[0].get()) != kept.end());
  EXPECT_TRUE(std::find(kept.begin(), kept.end(), bufs[1].get()) != kept.end());
  // Another class does not take them; none of it is mapped.
  bufs.clear();
  ArcBuffer other = a.Allocate(8 * kKiB);
  EXPECT_EQ(a.Stats().cache_hits, 2u);
  EXPECT_EQ(a.Stats().maps, 0u);
  EXPECT_EQ(a.Stats().mapped_bytes, 0u);
}

TEST(BufferAllocatorTest, LargeBuffersAreMappedAndFreedOnesReusedUpToTheCacheBound) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 256 * kKiB});
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 4; i++) {
    bufs.push_back(a.Allocate(128 * kKiB));
    std::memset(bufs.back().get(), i, bufs.back().bytes());  // every byte writable
  }
  EXPECT_EQ(a.Stats().maps, 4u);
  EXPECT_EQ(a.Stats().mapped_bytes, 512 * kKiB);
  bufs.clear();  // two fit in the 256 KiB cache, two are unmapped
  EXPECT_EQ(a.Stats().unmaps, 2u);
  EXPECT_EQ(a.Stats().cached_bytes, 256 * kKiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 256 * kKiB);
  ArcBuffer again = a.Allocate(128 * kKiB);
  EXPECT_EQ(a.Stats().cache_hits, 1u);
  EXPECT_EQ(a.Stats().maps, 4u);
  EXPECT_EQ(a.Stats().cached_bytes, 128 * kKiB);
  // Another size class does not take the cached 128 KiB buffer.
  ArcBuffer big = a.Allocate(256 * kKiB);
  EXPECT_EQ(a.Stats().maps, 5u);
  // Sizes that are not a power of two are mapped (page-rounded) and never cached.
  { ArcBuffer odd = a.Allocate(100 * kKiB + 1); }
  EXPECT_EQ(a.Stats().maps, 6u);
  EXPECT_EQ(a.Stats().unmaps, 3u);
}

TEST(BufferAllocatorTest, TheOwnersRoomWidensTheCacheAndTrimFollowsItDown) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 64 * kKiB, .cache_bytes = 128 * kKiB});
  uint64_t room = kMiB;
  a.AttachRoom([&room] { return room; });
  std::vector<ArcBuffer> bufs;
  for (int i = 0; i < 10; i++) bufs.push_back(a.Allocate(128 * kKiB));
  bufs.clear();  // eight fit the 1 MiB room, two are unmapped
  EXPECT_EQ(a.Stats().cached_bytes, kMiB);
  EXPECT_EQ(a.Stats().unmaps, 2u);
  // A txg's worth of allocations comes back without a system call.
  for (int i = 0; i < 8; i++) bufs.push_back(a.Allocate(128 * kKiB));
  EXPECT_EQ(a.Stats().cache_hits, 8u);
  EXPECT_EQ(a.Stats().maps, 10u);
  bufs.clear();
  room = 256 * kKiB;  // the owner grew, or its target fell
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 256 * kKiB);
  EXPECT_EQ(a.Stats().mapped_bytes, 256 * kKiB);
  room = 0;  // never below cache_bytes
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 128 * kKiB);
  a.AttachRoom({});
  a.Trim();
  EXPECT_EQ(a.Stats().cached_bytes, 128 * kKiB);
}

TEST(BufferAllocatorTest, NoMappingMeansTheHeapForEverySize) {
  BufferAllocator a(BufferAllocatorOptions{.map_min_bytes = 0, .cache_bytes = 0});
  ArcBuffer b = a.Allocate(kMiB);
  std::memset(b.get(), 1, b.bytes());
  EXPECT_EQ(a.Stats().maps, 0u);
}

TEST(BufferAllocatorTest, OptionsNameTheBadField) {
  Status s = BufferAllocatorOptions{.map_min_bytes = 2 * kGiB}.Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("buffers.map_min_bytes"), std::string::npos) << s.ToString();
  s = BufferAllocatorOptions{.cache_bytes = 2 * kGiB}.Validate();
  EXPECT_NE(s.message().find("buffers.cache_bytes"), std::string::npos) << s.ToString();
  EXPECT_TRUE(BufferAllocatorOptions{}.Validate().ok());
}

}  // namespace
}  // namespace arcstore::arc
