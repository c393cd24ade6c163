#include "base/checksum.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

namespace arcstore {
namespace {

TEST(ChecksumTest, DetectsEveryBitFlip) {
  std::string data(4096, 'a');
  for (size_t i = 0; i < data.size(); i++) data[i] = static_cast<char>(i * 31);
  const Checksum128 base = Xxh3_128(data.data(), data.size());
  for (size_t bit = 0; bit < data.size() * 8; bit += 97) {
    std::string flipped = data;
    flipped[bit / 8] = static_cast<char>(flipped[bit / 8] ^ (1 << (bit % 8)));
    EXPECT_NE(Xxh3_128(flipped.data(), flipped.size()), base) << "bit " << bit;
  }
}

TEST(ChecksumTest, StreamEqualsOneShot) {
  std::string data = "the quick brown fox jumps over the lazy dog, many times over";
  Xxh3_128Stream s;
  s.Update(data.data(), 10);
  s.Update(data.data() + 10, data.size() - 10);
  EXPECT_EQ(s.Digest(), Xxh3_128(data.data(), data.size()));
  EXPECT_EQ(s.Digest().ToHex().size(), 32u);
}

TEST(ChecksumTest, KnownValueIsStable) {
  // The format depends on these never changing: pin the empty input.
  EXPECT_EQ(Xxh3_64("", 0), 0x2d06800538d394c2ULL);
}

TEST(ChecksumTest, LongInputsHashTheSameOnEveryVectorUnit) {
  // Inputs over 240 bytes take the vector loop, which runs on whatever the
  // CPU has (SSE2, AVX2, AVX-512: see checksum.cc); every one of them must
  // give these values, computed with the baseline build.
  auto pattern = [](size_t n) {
    std::string d(n, '\0');
    for (size_t i = 0; i < n; i++) d[i] = static_cast<char>(i * 31 + 7);
    return d;
  };
  const std::string d1000 = pattern(1000), d64k = pattern(65536);
  EXPECT_EQ(Xxh3_128(d1000.data(), d1000.size()),
            (Checksum128{0x989765d0ea7a5ecdULL, 0xf534f51e82a81d29ULL}));
  EXPECT_EQ(Xxh3_128(d64k.data(), d64k.size()),
            (Checksum128{0xcf188822048798b0ULL, 0x2c7dfeea59d29a74ULL}));
  EXPECT_EQ(Xxh3_64(d64k.data(), d64k.size()), 0xcf188822048798b0ULL);
  // Streamed in uneven pieces (the update path is dispatched too).
  Xxh3_128Stream s;
  for (size_t at = 0, step = 1; at < d64k.size(); at += step, step = step * 3 % 4093 + 1) {
    s.Update(d64k.data() + at, std::min(step, d64k.size() - at));
  }
  EXPECT_EQ(s.Digest(), Xxh3_128(d64k.data(), d64k.size()));
}

}  // namespace
}  // namespace arcstore
