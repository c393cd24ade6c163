// Block pointer encoding, hole encoding, damage detection, block reads.
#include <gtest/gtest.h>

#include "format/block_pointer.h"
#include "format/encoding.h"
#include "format/test_samples.h"

namespace arcstore::format {
namespace {

std::vector<uint8_t> Encode(const BlockPointer& bp) {
  std::vector<uint8_t> out(kBlockPointerBytes);
  EncodeBlockPointer(bp, out.data());
  return out;
}

TEST(Encoding, LittleEndianAndMagicsSpellText) {
  uint8_t b[8];
  StoreLe64(b, 0x0102030405060708ull);
  EXPECT_EQ(b[0], 0x08);
  EXPECT_EQ(b[7], 0x01);
  EXPECT_EQ(LoadLe64(b), 0x0102030405060708ull);
  StoreLe64(b, kUberblockMagic);
  EXPECT_EQ(std::string(reinterpret_cast<char*>(b), 8), "ARCUBERB");
  StoreLe32(b, 0xdeadbeef);
  EXPECT_EQ(b[0], 0xef);
  EXPECT_EQ(LoadLe32(b), 0xdeadbeefu);
  StoreLe16(b, 0xbeef);
  EXPECT_EQ(LoadLe16(b), 0xbeef);
}

TEST(BlockPointer, RoundTripsEveryType) {
  std::vector<BlockPointer> all = {
      samples::DataPointer(),
      samples::IndirectPointer(3, 5, 4096),
      BlockPointer{},
      {.type = BlockType::kHole, .logical_bytes = 4096, .birth_txg = 12},
      {.type = BlockType::kZero, .logical_bytes = 131072, .birth_txg = 13},
      samples::UberblockSample().root,
      samples::UberblockSample().space_log,
      {.type = BlockType::kIntentLog,
       .physical_bytes = 4096,
       .logical_bytes = 4096,
       .birth_txg = 1,
       .checksum = {9, 9}}};
  for (const BlockPointer& bp : all) {
    auto got = DecodeBlockPointer(Encode(bp));
    ASSERT_TRUE(got.ok()) << bp.ToString() << ": " << got.status().ToString();
    EXPECT_EQ(*got, bp);
  }
}

TEST(BlockPointer, AllZeroBytesAreTheHoleBornAtTxgZero) {
  std::vector<uint8_t> zeros(kBlockPointerBytes, 0);
  auto bp = DecodeBlockPointer(zeros);
  ASSERT_TRUE(bp.ok());
  EXPECT_EQ(bp->type, BlockType::kHole);
  EXPECT_EQ(bp->birth_txg, 0u);
  EXPECT_TRUE(bp->IsHole());
  EXPECT_EQ(bp->AllocatedBytes(4096), 0u);
}

TEST(BlockPointer, EverySingleBitFlipIsDetected) {
  for (const BlockPointer& bp : {samples::DataPointer(), BlockPointer{},
                                 BlockPointer{.type = BlockType::kZero, .birth_txg = 4}}) {
    std::vector<uint8_t> bytes = Encode(bp);
    for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
      bytes[bit / 8] ^= 1u << (bit % 8);
      auto got = DecodeBlockPointer(bytes);
      ASSERT_FALSE(got.ok()) << "flip of bit " << bit << " of " << bp.ToString() << " undetected";
      EXPECT_EQ(got.status().code(), StatusCode::kCorruption);
      bytes[bit / 8] ^= 1u << (bit % 8);
    }
  }
}

TEST(BlockPointer, TruncatedOrOversizedInputIsRejected) {
  std::vector<uint8_t> bytes = Encode(samples::DataPointer());
  auto short_in = DecodeBlockPointer(std::span(bytes.data(), 63));
  ASSERT_FALSE(short_in.ok());
  EXPECT_NE(short_in.status().message().find("63 bytes, expected 64"), std::string::npos);
  bytes.push_back(0);
  EXPECT_FALSE(DecodeBlockPointer(bytes).ok());
}

// Re-seals the self-check so that field checks (not the checksum) are tested.
Result<BlockPointer> DecodeResealed(std::vector<uint8_t> bytes) {
  StoreLe64(bytes.data() + 56, Xxh3_64(bytes.data(), 56));
  return DecodeBlockPointer(bytes);
}

TEST(BlockPointer, ImpossibleFieldsAreRefusedEvenWithAValidSelfCheck) {
  auto with = [](auto change) {
    std::vector<uint8_t> b = Encode(samples::DataPointer());
    change(b.data());
    return DecodeResealed(b);
  };
  EXPECT_FALSE(with([](uint8_t* p) { p[0] = 9; }).ok());                   // type
  EXPECT_FALSE(with([](uint8_t* p) { p[2] = 7; }).ok());                   // compression
  EXPECT_FALSE(with([](uint8_t* p) { p[1] = 1; }).ok());                   // data at level 1
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe32(p + 16, 0); }).ok());       // physical 0
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe32(p + 16, 200000); }).ok());  // physical >= logical
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe32(p + 20, 1u << 30); }).ok());
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe64(p + 24, 0); }).ok());  // no birth
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe64(p + 8, 1ull << 50); }).ok());
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe32(p + 4, 1000); }).ok());  // device
  EXPECT_FALSE(with([](uint8_t* p) { StoreLe64(p + 48, 2); }).ok());    // data fill
  EXPECT_FALSE(with([](uint8_t* p) { p[3] = 1; }).ok());                // reserved
  EXPECT_FALSE(with([](uint8_t* p) { p[0] = 0; }).ok());                // hole with location
  auto off = with([](uint8_t* p) { p[2] = 0; });                        // off but p != l
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.status().message().find("dev0:1234u"), std::string::npos) << off.status().message();
}

TEST(BlockPointer, VerifyAndReadPayload) {
  std::vector<uint8_t> logical(65536);
  for (size_t i = 0; i < logical.size(); ++i) logical[i] = static_cast<uint8_t>(i % 13);
  std::vector<uint8_t> physical(logical.size());
  auto c = CompressBlock(Compression::kZstd, logical, physical);
  ASSERT_TRUE(c.ok());
  ASSERT_EQ(c->used, Compression::kZstd);
  physical.resize(c->physical_bytes);
  BlockPointer bp =
      PointerTo({.type = BlockType::kData, .compression = c->used, .birth_txg = 3, .fill = 1}, 0,
                77, physical, static_cast<uint32_t>(logical.size()));
  ASSERT_TRUE(DecodeBlockPointer(Encode(bp)).ok());
  auto read = ReadBlockPayload(bp, physical);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, logical);
  physical[physical.size() / 2] ^= 0x10;
  auto bad = ReadBlockPayload(bp, physical);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kCorruption);
  EXPECT_NE(bad.status().message().find("checksum mismatch"), std::string::npos);
  EXPECT_NE(bad.status().message().find("dev0:77u"), std::string::npos);
  EXPECT_FALSE(VerifyBlock(bp, std::span(physical.data(), physical.size() - 1)).ok());
  EXPECT_EQ(VerifyBlock(BlockPointer{}, physical).code(), StatusCode::kInvalidArgument);
}

TEST(BlockPointer, AllocatedBytesRoundUpToTheUnit) {
  BlockPointer bp = samples::DataPointer();
  EXPECT_EQ(bp.AllocatedBytes(4096), 8192u);
  EXPECT_EQ(bp.AllocatedBytes(65536), 65536u);
}

}  // namespace
}  // namespace arcstore::format
