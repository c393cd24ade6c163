// Uberblock, indirect block, volume table, space log and intent log blocks: round trips,
// damage detection (every single-bit flip), lengths and versions.
#include <gtest/gtest.h>

#include <functional>

#include "format/encoding.h"
#include "format/indirect_block.h"
#include "format/intent_log.h"
#include "format/space_log.h"
#include "format/test_samples.h"
#include "format/uberblock.h"
#include "format/volume_table.h"

namespace arcstore::format {
namespace {

using Decoder = std::function<Status(std::span<const uint8_t>)>;

template <typename T>
Decoder Wrap(Result<T> (*decode)(std::span<const uint8_t>)) {
  return [decode](std::span<const uint8_t> in) { return decode(in).status(); };
}

void ExpectEveryBitFlipDetected(std::vector<uint8_t> bytes, const Decoder& decode) {
  ASSERT_TRUE(decode(bytes).ok());
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    bytes[bit / 8] ^= 1u << (bit % 8);
    Status s = decode(bytes);
    ASSERT_FALSE(s.ok()) << "flip of bit " << bit << " (byte " << bit / 8 << ") undetected";
    ASSERT_EQ(s.code(), StatusCode::kCorruption) << s.ToString();
    bytes[bit / 8] ^= 1u << (bit % 8);
  }
}

void ExpectLengthsChecked(std::vector<uint8_t> bytes, const Decoder& decode) {
  for (size_t cut : {size_t{0}, size_t{8}, bytes.size() / 2, bytes.size() - 1}) {
    Status s = decode(std::span(bytes.data(), cut));
    ASSERT_FALSE(s.ok()) << "truncated to " << cut;
    EXPECT_EQ(s.code(), StatusCode::kCorruption);
  }
  bytes.push_back(0);
  Status s = decode(bytes);
  ASSERT_FALSE(s.ok()) << "oversized";
  EXPECT_NE(s.message().find("bytes, expected"), std::string::npos) << s.message();
}

void ExpectVersionRefused(std::vector<uint8_t> bytes, const Decoder& decode, std::string what) {
  StoreLe32(bytes.data() + 8, kFormatVersion + 1);
  Status s = decode(bytes);
  EXPECT_EQ(s.message(), what + ": format version 3 is not supported (this build reads version 2)");
}

// A block checksummed by its parent: verify with the pointer, then decode.
Decoder ThroughPointer(const std::vector<uint8_t>& bytes, BlockType type, uint8_t level,
                       Decoder decode) {
  BlockPointer bp = PointerTo({.type = type, .level = level, .birth_txg = 50, .fill = 1}, 0, 9,
                              bytes, static_cast<uint32_t>(bytes.size()));
  return [bp, decode](std::span<const uint8_t> in) {
    auto payload = ReadBlockPayload(bp, in);
    return payload.ok() ? decode(*payload) : payload.status();
  };
}

TEST(Uberblock, RoundTripAndSlot) {
  Uberblock ub = samples::UberblockSample();
  std::vector<uint8_t> bytes = EncodeUberblock(ub);
  ASSERT_EQ(bytes.size(), kUberblockBytes);
  auto back = DecodeUberblock(bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, ub);
  EXPECT_EQ(ub.slot(), 42u);
  ub.txg = 300;
  EXPECT_EQ(ub.slot(), 300u % 128);
}

TEST(Uberblock, DamageLengthsAndVersion) {
  std::vector<uint8_t> bytes = EncodeUberblock(samples::UberblockSample());
  ExpectEveryBitFlipDetected(bytes, Wrap(DecodeUberblock));
  ExpectLengthsChecked(bytes, Wrap(DecodeUberblock));
  ExpectVersionRefused(bytes, Wrap(DecodeUberblock), "uberblock");
}

TEST(Uberblock, RefusesPointersOfTheWrongTypeOrFromTheFuture) {
  Uberblock ub = samples::UberblockSample();
  ub.root.type = BlockType::kSpaceLog;
  EXPECT_FALSE(DecodeUberblock(EncodeUberblock(ub)).ok());
  ub = samples::UberblockSample();
  ub.space_log.birth_txg = ub.txg + 1;
  EXPECT_FALSE(DecodeUberblock(EncodeUberblock(ub)).ok());
  ub = samples::UberblockSample();
  ub.txg = 0;
  EXPECT_FALSE(DecodeUberblock(EncodeUberblock(ub)).ok());
}

TEST(IndirectBlock, RoundTripAndDepth) {
  IndirectBlock b = samples::Indirect();
  auto bytes = EncodeIndirectBlock(b);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->size(), kIndirectHeaderBytes + 4 * kBlockPointerBytes);
  auto back = DecodeIndirectBlock(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, b);
  EXPECT_EQ(TreeDepthFor(0, 10), 0u);
  EXPECT_EQ(TreeDepthFor(1, 10), 0u);
  EXPECT_EQ(TreeDepthFor(2, 10), 1u);
  EXPECT_EQ(TreeDepthFor(1024, 10), 1u);
  EXPECT_EQ(TreeDepthFor(1025, 10), 2u);
  EXPECT_EQ(TreeDepthFor(8192, 10), 2u);
  EXPECT_EQ(TreeDepthFor(UINT64_MAX, 12), 6u);
}

TEST(IndirectBlock, PathToARecord) {
  // Fan-out 16, depth 3: record 0x2a5 = 2 * 256 + 10 * 16 + 5.
  EXPECT_EQ(ChildIndex(0x2a5, 1, 4), 5u);
  EXPECT_EQ(ChildIndex(0x2a5, 2, 4), 10u);
  EXPECT_EQ(ChildIndex(0x2a5, 3, 4), 2u);
  EXPECT_EQ(BlockIdAt(0x2a5, 0, 4), 0x2a5u);
  EXPECT_EQ(BlockIdAt(0x2a5, 1, 4), 0x2au);
  EXPECT_EQ(BlockIdAt(0x2a5, 2, 4), 2u);
  EXPECT_EQ(BlockIdAt(0x2a5, 3, 4), 0u);
  EXPECT_EQ(BlockIdAt(UINT64_MAX, 6, 12), 0u);
  // Walking down from the root reaches every record exactly once.
  for (uint64_t r = 0; r < 4096; ++r) {
    uint64_t rebuilt = 0;
    for (uint32_t level = 3; level >= 1; --level)
      rebuilt = (rebuilt << 4) | ChildIndex(r, level, 4);
    ASSERT_EQ(rebuilt, r);
  }
}

TEST(IndirectBlock, DamageLengthsAndVersion) {
  std::vector<uint8_t> bytes = *EncodeIndirectBlock(samples::Indirect());
  ExpectEveryBitFlipDetected(
      bytes, ThroughPointer(bytes, BlockType::kIndirect, 1, Wrap(DecodeIndirectBlock)));
  ExpectLengthsChecked(bytes, Wrap(DecodeIndirectBlock));
  ExpectVersionRefused(bytes, Wrap(DecodeIndirectBlock), "indirect block");
}

TEST(IndirectBlock, RefusesImpossibleTrees) {
  IndirectBlock b = samples::Indirect();
  b.pointers[0] = samples::IndirectPointer(1, 5, 128);  // an L1 under an L1
  EXPECT_FALSE(EncodeIndirectBlock(b).ok());
  b = samples::Indirect();
  b.pointers[0].birth_txg = 100;  // child born after its parent
  EXPECT_FALSE(EncodeIndirectBlock(b).ok());
  b = samples::Indirect();
  b.pointers.resize(17);  // fan-out 16
  EXPECT_FALSE(EncodeIndirectBlock(b).ok());
  b = samples::Indirect();
  b.level = 0;
  EXPECT_FALSE(EncodeIndirectBlock(b).ok());
  // A count that disagrees with the length.
  std::vector<uint8_t> bytes = *EncodeIndirectBlock(samples::Indirect());
  StoreLe32(bytes.data() + 16, 3);
  EXPECT_FALSE(DecodeIndirectBlock(bytes).ok());
  StoreLe32(bytes.data() + 16, 1u << 20);
  EXPECT_FALSE(DecodeIndirectBlock(bytes).ok());
}

TEST(VolumeTable, RoundTrip) {
  VolumeTable t = samples::Volumes();
  auto bytes = EncodeVolumeTable(t);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto back = DecodeVolumeTable(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, t);
  VolumeTable empty{.birth_txg = 1};
  auto e = EncodeVolumeTable(empty);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ(e->size(), kVolumeTableHeaderBytes);
  EXPECT_TRUE(DecodeVolumeTable(*e).ok());
}

TEST(VolumeTable, DamageLengthsAndVersion) {
  std::vector<uint8_t> bytes = *EncodeVolumeTable(samples::Volumes());
  ExpectEveryBitFlipDetected(
      bytes, ThroughPointer(bytes, BlockType::kVolumeTable, 0, Wrap(DecodeVolumeTable)));
  ExpectLengthsChecked(bytes, Wrap(DecodeVolumeTable));
  ExpectVersionRefused(bytes, Wrap(DecodeVolumeTable), "volume table");
}

TEST(VolumeTable, EntriesAreValidated) {
  auto refuse = [](auto change, std::string_view words) {
    VolumeTable t = samples::Volumes();
    change(t);
    auto r = EncodeVolumeTable(t);
    ASSERT_FALSE(r.ok()) << words;
    EXPECT_NE(r.status().message().find(words), std::string::npos) << r.status().message();
  };
  refuse([](VolumeTable& t) { t.volumes[0].name = "has space"; }, "name");
  refuse([](VolumeTable& t) { t.volumes[0].name = std::string(64, 'a'); }, "name");
  refuse([](VolumeTable& t) { t.volumes[0].record_size_bytes = 3 << 12; }, "record size");
  refuse([](VolumeTable& t) { t.volumes[0].record_size_bytes = 2 << 20; }, "record size");
  refuse([](VolumeTable& t) { t.volumes[0].tree_depth = 1; }, "tree depth");
  refuse([](VolumeTable& t) { t.volumes[0].size_bytes = 0; }, "size");
  refuse([](VolumeTable& t) { t.volumes[1].guid = t.volumes[0].guid; }, "guid repeated");
  refuse([](VolumeTable& t) { std::swap(t.volumes[0], t.volumes[1]); }, "sorted");
  refuse([](VolumeTable& t) { t.volumes[0].root = samples::IndirectPointer(1, 3, 64); }, "depth");
  refuse([](VolumeTable& t) { t.volumes[1].create_txg = 99; }, "born after");
}

TEST(SpaceLog, RoundTrip) {
  SpaceLogBlock b = samples::SpaceLog();
  auto bytes = EncodeSpaceLogBlock(b);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  EXPECT_EQ(bytes->size(), kSpaceLogHeaderBytes + 3 * kSpaceRecordBytes);
  auto back = DecodeSpaceLogBlock(*bytes);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, b);
  EXPECT_EQ(back->first_txg(), 18u);
  EXPECT_EQ(back->last_txg(), 20u);
  SpaceLogBlock first{.birth_txg = 1};
  ASSERT_TRUE(EncodeSpaceLogBlock(first).ok());
}

TEST(SpaceLog, DamageLengthsAndVersion) {
  std::vector<uint8_t> bytes = *EncodeSpaceLogBlock(samples::SpaceLog());
  ExpectEveryBitFlipDetected(
      bytes, ThroughPointer(bytes, BlockType::kSpaceLog, 0, Wrap(DecodeSpaceLogBlock)));
  ExpectLengthsChecked(bytes, Wrap(DecodeSpaceLogBlock));
  ExpectVersionRefused(bytes, Wrap(DecodeSpaceLogBlock), "space log block");
}

TEST(SpaceLog, RecordsAndChainAreValidated) {
  auto refused = [](auto change) {
    SpaceLogBlock b = samples::SpaceLog();
    change(b);
    return !EncodeSpaceLogBlock(b).ok();
  };
  EXPECT_TRUE(refused([](SpaceLogBlock& b) { b.records[1].txg = 10; }));  // backwards
  EXPECT_TRUE(refused([](SpaceLogBlock& b) { b.records[2].txg = 21; }));  // after birth
  EXPECT_TRUE(refused([](SpaceLogBlock& b) { b.records[0].length_units = 0; }));
  EXPECT_TRUE(refused([](SpaceLogBlock& b) { b.records[0].offset_units = kMaxOffsetUnits; }));
  EXPECT_TRUE(refused([](SpaceLogBlock& b) { b.prev = BlockPointer{}; }));  // sequence 3, no prev
  EXPECT_TRUE(refused([](SpaceLogBlock& b) { b.sequence = 0; }));           // prev on the first
  EXPECT_TRUE(refused([](SpaceLogBlock& b) {
    b.prev.type = BlockType::kIndirect;
    b.prev.level = 1;
  }));
  // Header first/last txg must agree with the records.
  std::vector<uint8_t> bytes = *EncodeSpaceLogBlock(samples::SpaceLog());
  StoreLe64(bytes.data() + 24, 17);
  EXPECT_FALSE(DecodeSpaceLogBlock(bytes).ok());
}

}  // namespace
}  // namespace arcstore::format

namespace arcstore::format {
namespace {

Status DecodeLog(std::span<const uint8_t> in) { return DecodeLogBlock(in, nullptr).status(); }

TEST(IntentLogBlock, RoundTrip) {
  const std::vector<LogRecord> records = samples::LogRecords();
  ASSERT_EQ(LogBlockPayloadBytes(records), 64u + 48 + 16 + 48 * 3);
  auto bytes = EncodeLogBlock(samples::kLogGuidSample, 12, records, 4096);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  ASSERT_EQ(bytes->size(), 4096u);
  LogBlockHeader h;
  auto back = DecodeLogBlock(*bytes, &h);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(*back, records);
  EXPECT_EQ(h.log_guid, samples::kLogGuidSample);
  EXPECT_EQ(h.sequence, 12u);
  EXPECT_EQ(h.block_bytes, 4096u);
  EXPECT_EQ(h.records, 4u);
  auto header = DecodeLogBlockHeader(std::span(bytes->data(), kLogBlockHeaderBytes));
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->sequence, 12u);
}

TEST(IntentLogBlock, DamageAndLengths) {
  auto bytes = EncodeLogBlock(samples::kLogGuidSample, 3, samples::LogRecords(), 512);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  ExpectEveryBitFlipDetected(*bytes, DecodeLog);
  ExpectLengthsChecked(*bytes, DecodeLog);
  ExpectVersionRefused(*bytes, DecodeLog, "intent log block");
}

TEST(IntentLogBlock, EncoderRefusesWhatCannotBeRead) {
  std::vector<LogRecord> r = samples::LogRecords();
  EXPECT_FALSE(EncodeLogBlock(1, 1, r, 256).ok());  // does not fit
  r[0].data.pop_back();                               // length disagrees with data
  EXPECT_FALSE(EncodeLogBlock(1, 1, r, 4096).ok());
  r = samples::LogRecords();
  r[1].length = 0;
  EXPECT_FALSE(EncodeLogBlock(1, 1, r, 4096).ok());
}

TEST(Uberblock, IntentLogHeaderChecked) {
  Uberblock ub = samples::UberblockSample();
  ub.log.replay_offset_bytes = ub.log.arena_bytes;  // past the arena
  auto back = DecodeUberblock(EncodeUberblock(ub));
  ASSERT_FALSE(back.ok());
  EXPECT_NE(back.status().message().find("intent log header"), std::string::npos);
  ub.log = IntentLogHeader{};
  ub.log.log_guid = 5;  // a guid without an arena
  EXPECT_FALSE(DecodeUberblock(EncodeUberblock(ub)).ok());
}

}  // namespace
}  // namespace arcstore::format
