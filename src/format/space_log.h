// Space log: the allocator's persisted state, as a chain of blocks of
// alloc/free extent records, newest block first.
//
//   uberblock.space_log --> block k --prev--> block k-1 --prev--> ... block 0 (prev: hole)
//
// Each block holds records of txgs in [first_txg, last_txg], in txg order,
// and a pointer to the previous (older) block, whose checksum therefore
// covers the older chain's head; the newest block's checksum is in the
// uberblock. Replaying the chain oldest-first over "everything free" gives
// the allocated extents at the uberblock's txg. The allocator may condense
// the log by writing a new chain of alloc records (sequence restarts at 0).
//
// Encoded as a 128-byte header plus 24 bytes per record (docs/format.md).
// Decoding treats its input as hostile and requires the exact length.
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "format/block_pointer.h"

namespace arcstore::format {

inline constexpr size_t kSpaceLogHeaderBytes = 128;
inline constexpr size_t kSpaceRecordBytes = 24;
inline constexpr uint32_t kMaxSpaceRecords = 43690;  // (1 MiB - 128) / 24
inline constexpr uint64_t kMaxChainSequence = 1ull << 40;

enum class SpaceOp : uint8_t { kAlloc = 1, kFree = 2 };

struct SpaceRecord {
  uint64_t txg = 0;
  uint64_t offset_units = 0;
  uint32_t length_units = 0;
  uint16_t device = 0;
  SpaceOp op = SpaceOp::kAlloc;
  friend bool operator==(const SpaceRecord&, const SpaceRecord&) = default;
};

struct SpaceLogBlock {
  uint64_t birth_txg = 0;
  uint64_t sequence = 0;  // position in the chain, 0 = oldest
  BlockPointer prev;      // older block (space-log type), or a hole for sequence 0
  std::vector<SpaceRecord> records;

  // The txg range of the records (0, 0 when empty).
  uint64_t first_txg() const { return records.empty() ? 0 : records.front().txg; }
  uint64_t last_txg() const { return records.empty() ? 0 : records.back().txg; }
  friend bool operator==(const SpaceLogBlock&, const SpaceLogBlock&) = default;
};

Result<std::vector<uint8_t>> EncodeSpaceLogBlock(const SpaceLogBlock& block);
Result<SpaceLogBlock> DecodeSpaceLogBlock(std::span<const uint8_t> in);

}  // namespace arcstore::format
