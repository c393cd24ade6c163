#include "io/buffer_cache.h"

#include <gtest/gtest.h>

namespace arcstore::io {
namespace {

TEST(BufferCache, TakeReusesTheSmallestKeptBufferThatHoldsTheBytes) {
  BufferCache cache(4096, 4, 1 << 20);
  AlignedBuffer small = cache.Take(8 << 10), mid = cache.Take(64 << 10),
                big = cache.Take(128 << 10);
  EXPECT_EQ(cache.made(), 3u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(mid.data()) % 4096, 0u);
  const uint8_t* mid_at = mid.data();
  const uint8_t* big_at = big.data();
  cache.Give(std::move(small));
  cache.Give(std::move(big));
  cache.Give(std::move(mid));
  EXPECT_EQ(cache.kept(), 3u);
  bool made = true;
  AlignedBuffer got = cache.Take(60 << 10, &made);
  EXPECT_EQ(got.data(), mid_at) << "the 64 KiB buffer, not the 128 KiB one";
  EXPECT_FALSE(made);
  AlignedBuffer next = cache.Take(100 << 10);
  EXPECT_EQ(next.data(), big_at);
  EXPECT_EQ(cache.made(), 3u) << "nothing new made";
  AlignedBuffer fresh = cache.Take(100 << 10, &made);  // only the 8 KiB one is left
  EXPECT_TRUE(made);
  EXPECT_EQ(cache.made(), 4u);
  EXPECT_EQ(fresh.size(), 100u << 10);
  EXPECT_EQ(cache.kept(), 1u);
}

TEST(BufferCache, PrefilledBuffersServeTakesWithinTheBounds) {
  BufferCache cache(4096, 4, 1 << 20, 3 << 20);
  EXPECT_EQ(cache.Prefill(5, 1 << 20), size_t{3} << 20) << "the byte bound keeps three";
  EXPECT_EQ(cache.kept(), 3u);
  bool made = true;
  for (int i = 0; i < 3; i++) {
    AlignedBuffer b = cache.Take(256 << 10, &made);
    EXPECT_FALSE(made) << i;
    ASSERT_EQ(b.size(), size_t{1} << 20) << "a prefilled buffer, larger than asked";
    EXPECT_EQ(b.data()[0] | b.data()[b.size() - 1], 0) << "written once with zeros";
  }
  EXPECT_EQ(cache.made(), 0u);
  AlignedBuffer fourth = cache.Take(256 << 10, &made);
  EXPECT_TRUE(made);
}

TEST(BufferCache, KeepsTheLargestBuffersUpToItsBounds) {
  BufferCache cache(64, 2, 256 << 10);
  AlignedBuffer a = cache.Take(8 << 10), b = cache.Take(64 << 10), c = cache.Take(128 << 10),
                huge = cache.Take(512 << 10);
  const uint8_t* b_at = b.data();
  const uint8_t* c_at = c.data();
  cache.Give(std::move(a));
  cache.Give(std::move(b));
  cache.Give(std::move(c));             // full: replaces the 8 KiB one
  cache.Give(std::move(huge));          // over max_buffer_bytes: freed
  cache.Give(AlignedBuffer(4096, 16));  // less aligned than the cache's buffers: freed
  EXPECT_EQ(cache.kept(), 2u);
  AlignedBuffer x = cache.Take(1);
  AlignedBuffer y = cache.Take(1);
  EXPECT_EQ(x.data(), b_at);
  EXPECT_EQ(y.data(), c_at);
  EXPECT_EQ(cache.kept(), 0u);
}

TEST(BufferCache, KeepsNoMoreThanItsByteBound) {
  BufferCache cache(64, 8, 256 << 10, 192 << 10);
  AlignedBuffer a = cache.Take(64 << 10), b = cache.Take(64 << 10), c = cache.Take(64 << 10);
  cache.Give(std::move(a));
  cache.Give(std::move(b));
  cache.Give(std::move(c));
  EXPECT_EQ(cache.kept(), 3u);  // 192 KiB: at the bound
  AlignedBuffer big(128 << 10, 64);
  const uint8_t* big_at = big.data();
  cache.Give(std::move(big));  // two 64 KiB buffers make room
  EXPECT_EQ(cache.kept(), 2u);
  cache.Give(AlignedBuffer(32 << 10, 64));  // nothing smaller to drop: freed
  EXPECT_EQ(cache.kept(), 2u);
  cache.Give(AlignedBuffer(256 << 10, 64));  // over the byte bound by itself: freed
  EXPECT_EQ(cache.kept(), 2u);
  AlignedBuffer got = cache.Take(100 << 10);
  EXPECT_EQ(got.data(), big_at);
  AlignedBuffer small = cache.Take(1);
  EXPECT_EQ(small.size(), 64u << 10);
  EXPECT_EQ(cache.kept(), 0u);
}

}  // namespace
}  // namespace arcstore::io
