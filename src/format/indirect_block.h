// IndirectBlock: one node of a volume's tree, an array of block pointers.
//
// A volume of N records with fan-out F = 2^indirect_shift has a tree of
// `depth` indirect levels (F^depth >= N). An indirect block at level L
// (1..kMaxLevel) holds up to F pointers to level L-1 (level 0 = data
// records); trailing holes are not stored, so `pointers.size()` <= F. Its
// header ties it to its volume and its place (level, block id), and its
// checksum is the one in the parent's pointer (VerifyBlock), so the block
// itself carries none.
//
// Encoded as a 64-byte header plus 64 bytes per pointer (docs/format.md).
// Decoding treats its input as hostile and requires the exact length.
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "format/block_pointer.h"

namespace arcstore::format {

inline constexpr size_t kIndirectHeaderBytes = 64;
inline constexpr uint32_t kMinIndirectShift = 2;
inline constexpr uint32_t kMaxIndirectShift = 12;  // up to 4096 pointers, 256 KiB + 64

struct IndirectBlock {
  uint8_t level = 1;
  uint8_t indirect_shift = 10;
  uint64_t birth_txg = 0;
  uint64_t volume_guid = 0;
  uint64_t block_id = 0;  // index of this block among its level's blocks
  std::vector<BlockPointer> pointers;

  friend bool operator==(const IndirectBlock&, const IndirectBlock&) = default;
};

// Fails (InvalidArgument) on an impossible block (level, shift, too many
// pointers, a child of the wrong level or born later).
Result<std::vector<uint8_t>> EncodeIndirectBlock(const IndirectBlock& block);
Result<IndirectBlock> DecodeIndirectBlock(std::span<const uint8_t> in);

// The number of indirect levels a tree of `records` needs with fan-out
// 2^shift (0 for at most one record).
uint32_t TreeDepthFor(uint64_t records, uint32_t indirect_shift);

// The path to a record (docs/format.md, "Indirect block"): the block id at
// `level` on the way to `record` (level 0: the record itself), and the index
// of the pointer to follow inside that level's block (level >= 1).
uint64_t BlockIdAt(uint64_t record, uint32_t level, uint32_t indirect_shift);
uint32_t ChildIndex(uint64_t record, uint32_t level, uint32_t indirect_shift);

}  // namespace arcstore::format
