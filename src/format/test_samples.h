// Sample structures for the format's tests, fuzz targets and seed corpus:
// one valid instance of each, with every field set to something non-trivial.
// Header-only; not part of the library. Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "format/block_pointer.h"
#include "format/indirect_block.h"
#include "format/intent_log.h"
#include "format/label.h"
#include "format/space_log.h"
#include "format/uberblock.h"
#include "format/volume_table.h"

namespace arcstore::format::samples {

inline BlockPointer DataPointer(uint64_t birth = 7, uint64_t offset = 1234) {
  return {.type = BlockType::kData,
          .level = 0,
          .compression = Compression::kLz4,
          .device = 0,
          .offset_units = offset,
          .physical_bytes = 5000,
          .logical_bytes = 131072,
          .birth_txg = birth,
          .checksum = {0x1122334455667788ull, 0x99aabbccddeeff00ull},
          .fill = 1};
}

inline BlockPointer IndirectPointer(uint8_t level, uint64_t birth, uint32_t physical) {
  return {.type = BlockType::kIndirect,
          .level = level,
          .compression = Compression::kOff,
          .device = 0,
          .offset_units = 99,
          .physical_bytes = physical,
          .logical_bytes = physical,
          .birth_txg = birth,
          .checksum = {1, 2},
          .fill = 3};
}

inline LabelHeader Label() {
  LabelHeader h{.position = LabelPosition::kBack,
                .pool_guid = 0xfeedface12345678ull,
                .device_guid = 0x0123456789abcdefull,
                .device_size_bytes = 64ull << 20,
                .allocation_unit = 4096,
                .create_txg = 3};
  h.config.Set("pool_name", "tank");
  h.config.Set("compression", "lz4");
  return h;
}

inline Uberblock UberblockSample() {
  Uberblock ub{.txg = 42,
               .timestamp_ns = 1700000000123456789ull,
               .pool_guid = 0xfeedface12345678ull,
               .guid_sum = 0x0123456789abcdefull,
               .allocated_bytes = 7 << 20};
  ub.root = {.type = BlockType::kVolumeTable,
             .compression = Compression::kOff,
             .offset_units = 300,
             .physical_bytes = 576,
             .logical_bytes = 576,
             .birth_txg = 41,
             .checksum = {5, 6}};
  ub.space_log = {.type = BlockType::kSpaceLog,
                  .compression = Compression::kOff,
                  .offset_units = 301,
                  .physical_bytes = 200,
                  .logical_bytes = 200,
                  .birth_txg = 42,
                  .checksum = {7, 8}};
  ub.intent_log = {.type = BlockType::kHole};
  ub.log = {.arena_offset_bytes = 1 << 20,
            .arena_bytes = 4 << 20,
            .log_guid = 0xabcdef0011223344ull,
            .replay_offset_bytes = 8192,
            .replay_sequence = 17};
  return ub;
}

// An intent log block with one record of each type.
inline std::vector<LogRecord> LogRecords() {
  std::vector<LogRecord> r;
  LogRecord w{.type = LogRecordType::kWrite, .volume_guid = 77, .txg = 43, .seq = 5,
              .offset = 4096, .length = 13};
  w.data.assign(13, 0x5a);
  r.push_back(w);
  r.push_back({.type = LogRecordType::kTrim, .volume_guid = 77, .txg = 43, .seq = 6,
               .offset = 0, .length = 8192});
  r.push_back({.type = LogRecordType::kZero, .volume_guid = 78, .txg = 44, .seq = 9,
               .offset = 65536, .length = 512});
  r.push_back({.type = LogRecordType::kZeroNoHole, .volume_guid = 78, .txg = 44, .seq = 10,
               .offset = 1, .length = 2});
  return r;
}
inline constexpr uint64_t kLogGuidSample = 0xabcdef0011223344ull;

inline IndirectBlock Indirect() {
  IndirectBlock b{
      .level = 1, .indirect_shift = 4, .birth_txg = 9, .volume_guid = 77, .block_id = 5};
  b.pointers.push_back(DataPointer(8, 10));
  b.pointers.push_back(BlockPointer{});  // hole born at 0
  b.pointers.push_back({.type = BlockType::kZero, .logical_bytes = 131072, .birth_txg = 9});
  b.pointers.push_back(DataPointer(9, 11));
  return b;
}

inline VolumeTable Volumes() {
  VolumeTable t{.birth_txg = 12};
  t.volumes.push_back({.name = "db-0",
                       .guid = 101,
                       .size_bytes = 1ull << 30,
                       .record_size_bytes = 131072,
                       .compression = Compression::kLz4,
                       .tree_depth = 2,
                       .indirect_shift = 10,
                       .create_txg = 2,
                       .root = IndirectPointer(2, 11, 1024)});
  t.volumes.push_back({.name = "logs",
                       .guid = 102,
                       .size_bytes = 65536,
                       .record_size_bytes = 65536,
                       .compression = Compression::kZstd,
                       .tree_depth = 0,
                       .indirect_shift = 10,
                       .create_txg = 12,
                       .root = {.type = BlockType::kHole}});
  return t;
}

inline SpaceLogBlock SpaceLog() {
  SpaceLogBlock b{.birth_txg = 20,
                  .sequence = 3,
                  .prev = {.type = BlockType::kSpaceLog,
                           .offset_units = 55,
                           .physical_bytes = 152,
                           .logical_bytes = 152,
                           .birth_txg = 19,
                           .checksum = {3, 4}}};
  b.records.push_back({.txg = 18, .offset_units = 1000, .length_units = 32, .op = SpaceOp::kAlloc});
  b.records.push_back({.txg = 19, .offset_units = 500, .length_units = 8, .op = SpaceOp::kFree});
  b.records.push_back(
      {.txg = 20, .offset_units = 2000, .length_units = 1, .device = 1, .op = SpaceOp::kAlloc});
  return b;
}

}  // namespace arcstore::format::samples
