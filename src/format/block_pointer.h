// BlockPointer: where a block lives on disk and how to verify and read it.
//
// A block pointer names a block by device and offset (in allocation units),
// carries its physical size (bytes on disk, before rounding up to the
// allocation unit) and logical size (after decompression), its compression,
// the xxHash3-128 checksum of its physical bytes, the txg that wrote it
// (birth), its type and its level in a volume's tree. Two kinds of pointer
// own no space: a HOLE (never written, or trimmed; an all-zero pointer is the
// hole born at txg 0) and a ZERO (written as zeros). Both read as zeros.
//
// Encoded as 64 bytes (kBlockPointerBytes) ending in an xxHash3-64 of the
// first 56, so a damaged pointer is detected even where no parent checksum
// covers it. DecodeBlockPointer treats its input as hostile.
//
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/checksum.h"
#include "base/result.h"
#include "format/compression.h"

namespace arcstore::format {

enum class BlockType : uint8_t {
  kHole = 0,         // unwritten or trimmed: no space, reads as zeros
  kZero = 1,         // written as zeros: no space, reads as zeros
  kData = 2,         // a volume record (level 0)
  kIndirect = 3,     // an indirect block of block pointers (level >= 1)
  kVolumeTable = 4,  // the pool's volume table (the uberblock's root)
  kSpaceLog = 5,     // a block of the space log chain
  kIntentLog = 6,    // an intent log block (reserved for the intent log)
};
inline constexpr uint8_t kMaxBlockTypeValue = 6;
std::string_view BlockTypeName(BlockType t);

inline constexpr size_t kBlockPointerBytes = 64;
inline constexpr uint32_t kMaxLevel = 8;      // indirect levels of a tree
inline constexpr uint32_t kMaxDevices = 256;  // device index bound
inline constexpr uint64_t kMaxOffsetUnits = 1ull << 48;
inline constexpr uint64_t kMaxFill = 1ull << 48;

struct BlockPointer {
  BlockType type = BlockType::kHole;
  uint8_t level = 0;
  Compression compression = Compression::kOff;
  uint32_t device = 0;
  uint64_t offset_units = 0;    // in allocation units from the device start
  uint32_t physical_bytes = 0;  // on disk, before rounding to the unit
  uint32_t logical_bytes = 0;   // after decompression (holes: the record size or 0)
  uint64_t birth_txg = 0;
  Checksum128 checksum;  // xxHash3-128 of the physical bytes
  uint64_t fill = 0;     // data records at or below (data: 1)

  bool IsHole() const { return type == BlockType::kHole || type == BlockType::kZero; }
  bool OwnsSpace() const { return !IsHole(); }
  // Bytes allocated for it: physical size rounded up to the allocation unit.
  uint64_t AllocatedBytes(uint32_t allocation_unit) const;
  // Its place (device, offset) as one word. With birth_txg it names the
  // block's bytes for the pool's life: space is never overwritten in place
  // and a freed place is reused only by a later txg. (The second cache
  // level keys its copies so.)
  uint64_t Place() const { return (uint64_t{device} << 48) | offset_units; }
  // "data L0 dev0:12345+131072 p=4096 l=131072 lz4 birth=17 cksum=..."
  std::string ToString() const;
  friend bool operator==(const BlockPointer&, const BlockPointer&) = default;
};

void EncodeBlockPointer(const BlockPointer& bp, uint8_t* out);  // 64 bytes
Result<BlockPointer> DecodeBlockPointer(std::span<const uint8_t> in);

// A pointer to `physical` written at (device, offset_units): fills sizes
// and checksum; type, level, compression, birth and fill come from `base`.
BlockPointer PointerTo(BlockPointer base, uint32_t device, uint64_t offset_units,
                       std::span<const uint8_t> physical, uint32_t logical_bytes);

// Verifies the checksum of a block's physical bytes (exactly
// bp.physical_bytes of them) against its pointer. Corruption names the
// block and both checksums.
Status VerifyBlock(const BlockPointer& bp, std::span<const uint8_t> physical);
// VerifyBlock, then decompress: the block's logical bytes.
Result<std::vector<uint8_t>> ReadBlockPayload(const BlockPointer& bp,
                                              std::span<const uint8_t> physical);

}  // namespace arcstore::format
