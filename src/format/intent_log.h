// Intent log blocks (docs/format.md, "Intent log").
//
// The intent log lives in an arena: one contiguous extent of the pool's
// data space, named by the uberblock's intent log header together with
// where replay starts (offset in the arena and the sequence number
// expected there) and the log's guid. Blocks are written one after another
// from there; a block that does not fit before the arena's end goes to
// offset 0 instead. Each block carries the log guid and its sequence number
// and a checksum of the whole block, so replay reads block s at its
// expected place (or at 0), accepts it only if guid, sequence and checksum
// match, and stops at the first block that does not: a torn or stale block
// ends the log exactly where the committed part ends.
//
//   block:  | header 64 | record | record | ... | zero padding to the unit |
//   record: | type | volume guid | txg | seq | offset | length | data (writes) |
//
// Records are the changes made since the last committed txg, each within
// one record of one volume: a write with its data, a trim, a zeroing
// (hole-free or not). `seq` numbers them in the order they were applied;
// `txg` is the txg that holds the change, so replay skips what the
// uberblock's txg already contains.
//
// Decoding treats the input as hostile. Thread-safety: values and stateless
// functions.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/result.h"

namespace arcstore::format {

inline constexpr size_t kLogBlockHeaderBytes = 64;
inline constexpr size_t kLogRecordHeaderBytes = 48;
// Limits: a block is at most 8 MiB; a record's data at most 1 MiB (the
// largest record size).
inline constexpr uint32_t kMaxLogBlockBytes = 8u << 20;
inline constexpr uint64_t kMaxLogRecordDataBytes = 1u << 20;

enum class LogRecordType : uint8_t {
  kWrite = 1,       // data follows
  kTrim = 2,        // the range reads as zeros; whole records become holes
  kZero = 3,        // zeroes; whole records become zero markers
  kZeroNoHole = 4,  // zeroes written as data
};

struct LogRecord {
  LogRecordType type = LogRecordType::kWrite;
  uint64_t volume_guid = 0;
  uint64_t txg = 0;
  uint64_t seq = 0;
  uint64_t offset = 0;  // bytes in the volume
  uint64_t length = 0;  // bytes; for kWrite, data.size()
  std::vector<uint8_t> data;

  // Encoded size: header plus `length` bytes of data (writes) padded to 8.
  uint64_t EncodedBytes() const;
  friend bool operator==(const LogRecord&, const LogRecord&) = default;
};

// A record to encode whose bytes may lie outside it: `fields` gives every
// field (its own `data` is not read) and `data` a write's bytes, kept alive
// by the caller (a buffer the record shares with its volume, say).
struct LogRecordRef {
  const LogRecord* fields = nullptr;
  std::span<const uint8_t> data;  // writes: exactly fields->length bytes
};

struct LogBlockHeader {
  uint64_t log_guid = 0;
  uint64_t sequence = 0;
  uint32_t block_bytes = 0;  // whole block, a multiple of the allocation unit
  uint32_t records = 0;
};

// Encodes `records` as one block of `block_bytes` (which must hold them).
Result<std::vector<uint8_t>> EncodeLogBlock(uint64_t log_guid, uint64_t sequence,
                                            std::span<const LogRecord> records,
                                            uint32_t block_bytes);
// The same, written into `out` (the whole block: its size is the block's
// bytes), each record's data copied once from where it lies.
Status EncodeLogBlockInto(uint64_t log_guid, uint64_t sequence,
                          std::span<const LogRecordRef> records, std::span<uint8_t> out);
// Bytes a block holding `records` needs, before rounding to the unit.
uint64_t LogBlockPayloadBytes(std::span<const LogRecord> records);

// The header alone (the first kLogBlockHeaderBytes of a block): magic,
// version, sizes in bounds. Says nothing about the checksum.
Result<LogBlockHeader> DecodeLogBlockHeader(std::span<const uint8_t> in);
// A whole block (exactly header.block_bytes): header, checksum, records.
Result<std::vector<LogRecord>> DecodeLogBlock(std::span<const uint8_t> in, LogBlockHeader* header);

}  // namespace arcstore::format
