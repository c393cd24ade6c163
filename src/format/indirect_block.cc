// Indirect block encoding (docs/format.md, "Indirect block"):
//
//   0 magic | 8 version | 12 level | 13 indirect shift | 14 reserved
//   16 count | 20 reserved | 24 birth txg | 32 volume guid | 40 block id
//   48..63 reserved | 64 + 64 i: pointer i
//
// Invariants: 1 <= level <= kMaxLevel; count <= 2^shift; each pointer is a
// hole/zero or a pointer of level-1 (data at level 1, indirect above) born
// no later than the block; the block's length is exactly 64 + 64 x count.
#include "format/indirect_block.h"

#include "base/check.h"
#include "format/encoding.h"

namespace arcstore::format {

namespace {
constexpr std::string_view kWhat = "indirect block";

Status CheckShape(const IndirectBlock& b) {
  if (b.level < 1 || b.level > kMaxLevel) {
    return Status::InvalidArgument("level " + std::to_string(b.level) +
                                   " at byte 12 out of bounds");
  }
  if (b.indirect_shift < kMinIndirectShift || b.indirect_shift > kMaxIndirectShift) {
    return Status::InvalidArgument("indirect shift " + std::to_string(b.indirect_shift) +
                                   " at byte 13 out of bounds");
  }
  if (b.pointers.size() > (size_t{1} << b.indirect_shift)) {
    return Status::InvalidArgument(std::to_string(b.pointers.size()) + " pointers, fan-out " +
                                   std::to_string(1u << b.indirect_shift));
  }
  if (b.birth_txg == 0 || b.volume_guid == 0) {
    return Status::InvalidArgument("birth txg or volume guid is zero");
  }
  return Status::Ok();
}

Status CheckChild(const IndirectBlock& b, size_t i, const BlockPointer& bp) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("pointer " + std::to_string(i) + " at byte " +
                                   std::to_string(kIndirectHeaderBytes + i * 64) + ": " + why);
  };
  if (bp.birth_txg > b.birth_txg) return bad("born after its parent");
  if (bp.IsHole()) return Status::Ok();
  BlockType want = b.level == 1 ? BlockType::kData : BlockType::kIndirect;
  if (bp.type != want || bp.level != b.level - 1) {
    return bad("a " + std::string(BlockTypeName(bp.type)) + " L" + std::to_string(bp.level) +
               " pointer under an L" + std::to_string(b.level) + " block");
  }
  return Status::Ok();
}
}  // namespace

Result<std::vector<uint8_t>> EncodeIndirectBlock(const IndirectBlock& b) {
  ARC_RETURN_IF_ERROR(CheckShape(b).WithContext(kWhat));
  for (size_t i = 0; i < b.pointers.size(); ++i) {
    ARC_RETURN_IF_ERROR(CheckChild(b, i, b.pointers[i]).WithContext(kWhat));
  }
  std::vector<uint8_t> out(kIndirectHeaderBytes + b.pointers.size() * kBlockPointerBytes, 0);
  uint8_t* p = out.data();
  StoreLe64(p, kIndirectMagic);
  StoreLe32(p + 8, kFormatVersion);
  p[12] = b.level;
  p[13] = b.indirect_shift;
  StoreLe32(p + 16, static_cast<uint32_t>(b.pointers.size()));
  StoreLe64(p + 24, b.birth_txg);
  StoreLe64(p + 32, b.volume_guid);
  StoreLe64(p + 40, b.block_id);
  for (size_t i = 0; i < b.pointers.size(); ++i) {
    EncodeBlockPointer(b.pointers[i], p + kIndirectHeaderBytes + i * kBlockPointerBytes);
  }
  return out;
}

Result<IndirectBlock> DecodeIndirectBlock(std::span<const uint8_t> in) {
  if (in.size() < kIndirectHeaderBytes) {
    return BadLength(kWhat, in.size(), "at least ", kIndirectHeaderBytes);
  }
  const uint8_t* p = in.data();
  ARC_RETURN_IF_ERROR(CheckMagicAndVersion(kWhat, p, kIndirectMagic));
  if (LoadLe16(p + 14) != 0 || LoadLe32(p + 20) != 0 || !AllZero(p + 48, 16)) {
    return CorruptionAt(kWhat, "reserved bytes are not zero");
  }
  uint32_t count = LoadLe32(p + 16);
  if (count > (1u << kMaxIndirectShift)) {
    return CorruptionAt(kWhat, "count " + std::to_string(count) + " at byte 16 out of bounds");
  }
  size_t want = kIndirectHeaderBytes + size_t{count} * kBlockPointerBytes;
  if (in.size() != want) return BadLength(kWhat, in.size(), "", want);
  IndirectBlock b{.level = p[12],
                  .indirect_shift = p[13],
                  .birth_txg = LoadLe64(p + 24),
                  .volume_guid = LoadLe64(p + 32),
                  .block_id = LoadLe64(p + 40)};
  Status shape = CheckShape(IndirectBlock{b.level, b.indirect_shift, b.birth_txg, b.volume_guid,
                                          b.block_id, std::vector<BlockPointer>()});
  if (!shape.ok()) return CorruptionAt(kWhat, shape.message());
  if (count > (1u << b.indirect_shift)) {
    return CorruptionAt(kWhat, "count " + std::to_string(count) + " exceeds the fan-out");
  }
  b.pointers.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* at = p + kIndirectHeaderBytes + size_t{i} * kBlockPointerBytes;
    auto bp = DecodeBlockPointer(std::span(at, kBlockPointerBytes));
    if (!bp.ok()) {
      return bp.status().WithContext(std::string(kWhat) + " pointer " + std::to_string(i));
    }
    Status child = CheckChild(b, i, *bp);
    if (!child.ok()) return CorruptionAt(kWhat, child.message());
    b.pointers.push_back(*bp);
  }
  return b;
}

uint32_t TreeDepthFor(uint64_t records, uint32_t indirect_shift) {
  uint32_t depth = 0;
  uint64_t reach = 1;
  while (reach < records) {
    reach = reach > (UINT64_MAX >> indirect_shift) ? UINT64_MAX : reach << indirect_shift;
    ++depth;
  }
  return depth;
}

uint64_t BlockIdAt(uint64_t record, uint32_t level, uint32_t indirect_shift) {
  uint64_t bits = uint64_t{level} * indirect_shift;
  return bits >= 64 ? 0 : record >> bits;
}

uint32_t ChildIndex(uint64_t record, uint32_t level, uint32_t indirect_shift) {
  ARC_CHECK_GE(level, 1u);
  return static_cast<uint32_t>(BlockIdAt(record, level - 1, indirect_shift) &
                               ((uint64_t{1} << indirect_shift) - 1));
}

}  // namespace arcstore::format
