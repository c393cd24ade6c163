#include "base/checksum.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace arcstore
