// Tests of the copy-on-write image and its device.
#include "testing/io/cow_image.h"

#include <gtest/gtest.h>

#include "base/random.h"

namespace arcstore::io {
namespace {

constexpr uint32_t kBlock = 4096;

std::shared_ptr<const std::vector<uint8_t>> Base(size_t blocks, SeededRandom& random) {
  auto base = std::make_shared<std::vector<uint8_t>>(blocks * kBlock);
  random.Fill(base->data(), base->size());
  return base;
}

// Random writes and zeroings at any alignment, across blocks, read back
// against a flat copy kept beside; the base never changes.
TEST(CowImage, ReadsWhatAFlatImageWouldHold) {
  SeededRandom random = SeededRandom::FromEnvironment("CowImage.Flat");
  auto base = Base(16, random);
  const std::vector<uint8_t> base_before = *base;
  CowImage image(base, kBlock);
  std::vector<uint8_t> flat = *base;
  for (uint64_t i = 0; i < ScaledIterations(400); i++) {
    const uint64_t offset = random.Uniform(flat.size());
    const uint64_t bytes = random.Range(1, std::min<uint64_t>(3 * kBlock, flat.size() - offset));
    std::vector<uint8_t> data(bytes);
    random.Fill(data.data(), bytes);
    const bool zeros = random.OneIn(5);
    image.Write(offset, zeros ? nullptr : data.data(), bytes);
    std::copy(data.begin(), data.end(), flat.begin() + offset);
    if (zeros) std::fill(flat.begin() + offset, flat.begin() + offset + bytes, 0);
    const uint64_t at = random.Uniform(flat.size());
    const uint64_t n = random.Range(1, flat.size() - at);
    std::vector<uint8_t> got(n);
    image.Read(at, got.data(), n);
    ASSERT_TRUE(std::equal(got.begin(), got.end(), flat.begin() + at)) << "read at " << at;
  }
  EXPECT_EQ(image.Materialize(), flat);
  EXPECT_EQ(*base, base_before);
  EXPECT_LE(image.blocks_written(), 16u);
}

// A copy shares the blocks: writes to either afterwards are its own.
TEST(CowImage, ACopyAndItsOriginalDoNotSeeEachOthersWrites) {
  SeededRandom random(3);
  CowImage a(Base(4, random), kBlock);
  std::vector<uint8_t> ones(kBlock, 1), twos(kBlock, 2), threes(kBlock, 3);
  a.Write(kBlock, ones.data(), kBlock);  // block 1 written before the copy
  CowImage b = a;
  const std::vector<uint8_t> at_copy = a.Materialize();
  ASSERT_EQ(b.Materialize(), at_copy);
  b.Write(kBlock + 100, twos.data(), 50);    // the shared block
  b.Write(2 * kBlock, twos.data(), kBlock);  // a base block
  EXPECT_EQ(a.Materialize(), at_copy) << "a write to the copy reached the original";
  a.Write(kBlock, threes.data(), kBlock);
  std::vector<uint8_t> got(kBlock);
  b.Read(kBlock, got.data(), kBlock);
  EXPECT_EQ(got[0], 1) << "a write to the original reached the copy";
  EXPECT_EQ(got[100], 2);
  EXPECT_EQ(got[150], 1);
  a.Read(kBlock, got.data(), kBlock);
  EXPECT_EQ(got, threes);
}

TEST(CowImageDevice, ServesReadsWritesAndDiscardsOverItsImage) {
  SeededRandom random(5);
  auto base = Base(8, random);
  auto dev = CowImageDevice::Create("img", CowImage(base, kBlock));
  ASSERT_TRUE(dev.ok());
  EXPECT_EQ((*dev)->size_bytes(), 8u * kBlock);
  EXPECT_EQ((*dev)->logical_block_size(), kBlock);
  std::vector<uint8_t> data(3 * kBlock);
  random.Fill(data.data(), data.size());
  // A write in two pieces of memory, across three blocks.
  IoRequest w{.op = IoOp::kWrite,
              .offset = 2 * kBlock,
              .iov = {{data.data(), kBlock + 512}, {data.data() + kBlock + 512, 2 * kBlock - 512}}};
  ASSERT_TRUE(SubmitAndWait(**dev, std::move(w)).ok());
  ASSERT_TRUE(DiscardSync(**dev, 6 * kBlock, kBlock).ok());
  std::vector<uint8_t> want = *base;
  std::copy(data.begin(), data.end(), want.begin() + 2 * kBlock);
  std::fill(want.begin() + 6 * kBlock, want.begin() + 7 * kBlock, 0);
  std::vector<uint8_t> got(8 * kBlock);
  ASSERT_TRUE(ReadSync(**dev, 0, got).ok());
  EXPECT_EQ(got, want);
  EXPECT_EQ((*dev)->Image().Materialize(), want);
  // Requests outside the device or misaligned are refused, as on any device.
  std::vector<uint8_t> one(kBlock);
  EXPECT_FALSE(ReadSync(**dev, 8 * kBlock, one).ok());
  EXPECT_FALSE(ReadSync(**dev, 100, one).ok());
  EXPECT_FALSE(CowImageDevice::Create("empty", CowImage()).ok());
}

}  // namespace
}  // namespace arcstore::io
