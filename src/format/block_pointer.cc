// Block pointer encoding (docs/format.md, "Block pointer"):
//
//   0 type | 1 level | 2 compression | 3 reserved | 4..7 device
//   8..15 offset (units) | 16..19 physical | 20..23 logical | 24..31 birth txg
//   32..47 checksum (lo, hi) | 48..55 fill | 56..63 xxh3-64 of bytes 0..55
//
// Invariants checked on decode: known type and compression; holes own no
// space (no device, offset, sizes beyond logical, checksum or fill);
// allocated blocks have sizes in (0, kMaxBlockBytes], physical == logical
// when uncompressed and physical < logical when compressed, a birth txg,
// level 0 except indirect blocks (1..kMaxLevel), data fill 1, bounded
// offsets and device index.
#include "format/block_pointer.h"

#include <cstring>

#include "format/encoding.h"

namespace arcstore::format {

std::string_view BlockTypeName(BlockType t) {
  switch (t) {
    case BlockType::kHole:
      return "hole";
    case BlockType::kZero:
      return "zero";
    case BlockType::kData:
      return "data";
    case BlockType::kIndirect:
      return "indirect";
    case BlockType::kVolumeTable:
      return "volume-table";
    case BlockType::kSpaceLog:
      return "space-log";
    case BlockType::kIntentLog:
      return "intent-log";
  }
  return "unknown";
}

uint64_t BlockPointer::AllocatedBytes(uint32_t allocation_unit) const {
  if (!OwnsSpace()) return 0;
  return (uint64_t{physical_bytes} + allocation_unit - 1) / allocation_unit * allocation_unit;
}

std::string BlockPointer::ToString() const {
  std::string s = std::string(BlockTypeName(type)) + " L" + std::to_string(level);
  if (IsHole()) return s + " birth=" + std::to_string(birth_txg);
  s += " dev" + std::to_string(device) + ":" + std::to_string(offset_units) +
       "u p=" + std::to_string(physical_bytes) + " l=" + std::to_string(logical_bytes) + " " +
       std::string(CompressionName(compression)) + " birth=" + std::to_string(birth_txg) +
       " cksum=" + checksum.ToHex();
  return s;
}

void EncodeBlockPointer(const BlockPointer& bp, uint8_t* out) {
  std::memset(out, 0, kBlockPointerBytes);
  out[0] = static_cast<uint8_t>(bp.type);
  out[1] = bp.level;
  out[2] = static_cast<uint8_t>(bp.compression);
  StoreLe32(out + 4, bp.device);
  StoreLe64(out + 8, bp.offset_units);
  StoreLe32(out + 16, bp.physical_bytes);
  StoreLe32(out + 20, bp.logical_bytes);
  StoreLe64(out + 24, bp.birth_txg);
  StoreChecksum(out + 32, bp.checksum);
  StoreLe64(out + 48, bp.fill);
  StoreLe64(out + 56, Xxh3_64(out, 56));
}

static Status CheckHole(const BlockPointer& bp) {
  if (bp.device != 0 || bp.offset_units != 0 || bp.physical_bytes != 0 ||
      bp.checksum != Checksum128{} || bp.fill != 0 || bp.compression != Compression::kOff) {
    return CorruptionAt("block pointer", "a hole with a location, size, checksum or fill");
  }
  if (bp.level > kMaxLevel || bp.logical_bytes > kMaxBlockBytes) {
    return CorruptionAt("block pointer", "a hole with level or logical size out of bounds");
  }
  return Status::Ok();
}

static Status CheckAllocated(const BlockPointer& bp) {
  auto bad = [&](const std::string& why) {
    return CorruptionAt("block pointer", why + " (" + bp.ToString() + ")");
  };
  if (bp.physical_bytes == 0 || bp.physical_bytes > kMaxBlockBytes || bp.logical_bytes == 0 ||
      bp.logical_bytes > kMaxBlockBytes) {
    return bad("size out of bounds");
  }
  if (bp.compression == Compression::kOff ? bp.physical_bytes != bp.logical_bytes
                                          : bp.physical_bytes >= bp.logical_bytes) {
    return bad("physical and logical sizes disagree with the compression");
  }
  if (bp.birth_txg == 0) return bad("no birth txg");
  if (bp.device >= kMaxDevices) return bad("device index out of bounds");
  if (bp.offset_units >= kMaxOffsetUnits) return bad("offset out of bounds");
  bool indirect = bp.type == BlockType::kIndirect;
  if (indirect ? (bp.level < 1 || bp.level > kMaxLevel) : bp.level != 0) {
    return bad("level " + std::to_string(bp.level) + " impossible for the type");
  }
  if (bp.type == BlockType::kData ? bp.fill != 1 : bp.fill > kMaxFill) {
    return bad("fill " + std::to_string(bp.fill) + " out of bounds");
  }
  return Status::Ok();
}

Result<BlockPointer> DecodeBlockPointer(std::span<const uint8_t> in) {
  if (in.size() != kBlockPointerBytes) {
    return BadLength("block pointer", in.size(), "", kBlockPointerBytes);
  }
  const uint8_t* p = in.data();
  if (AllZero(p, kBlockPointerBytes)) return BlockPointer{};  // hole born at txg 0
  uint64_t stored = LoadLe64(p + 56), computed = Xxh3_64(p, 56);
  if (stored != computed) {
    return CorruptionAt("block pointer", "self-check mismatch at byte 56: stored " + Hex64(stored) +
                                             ", computed " + Hex64(computed));
  }
  if (p[0] > kMaxBlockTypeValue) {
    return CorruptionAt("block pointer", "unknown type " + std::to_string(p[0]) + " at byte 0");
  }
  if (p[2] > kMaxCompressionValue) {
    return CorruptionAt("block pointer",
                        "unknown compression " + std::to_string(p[2]) + " at byte 2");
  }
  if (p[3] != 0) return CorruptionAt("block pointer", "reserved byte 3 is not zero");
  BlockPointer bp{.type = static_cast<BlockType>(p[0]),
                  .level = p[1],
                  .compression = static_cast<Compression>(p[2]),
                  .device = LoadLe32(p + 4),
                  .offset_units = LoadLe64(p + 8),
                  .physical_bytes = LoadLe32(p + 16),
                  .logical_bytes = LoadLe32(p + 20),
                  .birth_txg = LoadLe64(p + 24),
                  .checksum = LoadChecksum(p + 32),
                  .fill = LoadLe64(p + 48)};
  ARC_RETURN_IF_ERROR(bp.IsHole() ? CheckHole(bp) : CheckAllocated(bp));
  return bp;
}

BlockPointer PointerTo(BlockPointer base, uint32_t device, uint64_t offset_units,
                       std::span<const uint8_t> physical, uint32_t logical_bytes) {
  base.device = device;
  base.offset_units = offset_units;
  base.physical_bytes = static_cast<uint32_t>(physical.size());
  base.logical_bytes = logical_bytes;
  base.checksum = Xxh3_128(physical.data(), physical.size());
  return base;
}

Status VerifyBlock(const BlockPointer& bp, std::span<const uint8_t> physical) {
  if (bp.IsHole()) return Status::InvalidArgument("verify: " + bp.ToString() + " has no data");
  if (physical.size() != bp.physical_bytes) {
    return CorruptionAt("block " + bp.ToString(),
                        std::to_string(physical.size()) + " physical bytes given");
  }
  Checksum128 got = Xxh3_128(physical.data(), physical.size());
  if (got != bp.checksum) {
    return CorruptionAt("block " + bp.ToString(), "checksum mismatch: computed " + got.ToHex());
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> ReadBlockPayload(const BlockPointer& bp,
                                              std::span<const uint8_t> physical) {
  ARC_RETURN_IF_ERROR(VerifyBlock(bp, physical));
  std::vector<uint8_t> logical(bp.logical_bytes);
  Status s = DecompressBlock(bp.compression, physical, logical);
  if (!s.ok()) return s.WithContext("block " + bp.ToString());
  return logical;
}

}  // namespace arcstore::format
