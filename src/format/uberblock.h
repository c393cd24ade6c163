// Uberblock: the root of a pool at one txg, written into a ring slot of each
// label after the txg's blocks are durable (docs/format.md, "Commit order").
//
// Holds the txg, a wall-clock timestamp, the pool guid and the sum of its
// device guids (so an uberblock of another pool, or one left by an earlier
// pool on the same device, is rejected), the root block pointer (the volume
// table), the space log head, the intent log head (reserved: a hole until
// the intent log uses it) and the pool's allocated bytes. The ring slot of
// txg T is T mod kUberblockSlots. The newest uberblock whose checksum and
// referenced root verify is the pool's state. The intent log header names
// the log's arena and where replay starts (format/intent_log.h).
//
// Encoded as kUberblockBytes (512) bytes, the last 16 an xxHash3-128 of the
// rest. Decoding treats the input as hostile.
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"
#include "format/block_pointer.h"

namespace arcstore::format {

inline constexpr size_t kUberblockBytes = 512;
inline constexpr uint32_t kUberblockSlots = 128;

// Where the intent log is and where replay of it starts. All zero: the
// pool has no log arena (yet).
struct IntentLogHeader {
  uint64_t arena_offset_bytes = 0;  // on the device
  uint64_t arena_bytes = 0;
  uint64_t log_guid = 0;             // blocks of other guids are not this log's
  uint64_t replay_offset_bytes = 0;  // in the arena: the first block to replay
  uint64_t replay_sequence = 0;      // the sequence number expected there

  bool present() const { return arena_bytes != 0; }
  friend bool operator==(const IntentLogHeader&, const IntentLogHeader&) = default;
};

struct Uberblock {
  uint64_t txg = 0;
  uint64_t timestamp_ns = 0;  // wall clock at commit, informational
  uint64_t pool_guid = 0;
  uint64_t guid_sum = 0;  // sum (mod 2^64) of the pool's device guids
  uint64_t allocated_bytes = 0;
  BlockPointer root;        // volume table (or a hole: no volumes)
  BlockPointer space_log;   // newest space log block (or a hole)
  BlockPointer intent_log;  // reserved for a dedicated log device (a hole)
  IntentLogHeader log;

  uint32_t slot() const { return static_cast<uint32_t>(txg % kUberblockSlots); }
  friend bool operator==(const Uberblock&, const Uberblock&) = default;
};

std::vector<uint8_t> EncodeUberblock(const Uberblock& ub);
// Exactly kUberblockBytes. Checks magic, version, checksum, txg >= 1, guids
// non-zero and the types of the three pointers.
Result<Uberblock> DecodeUberblock(std::span<const uint8_t> in);

}  // namespace arcstore::format
