// VolumeTable: the pool's directory of volumes, the block the uberblock's
// root pointer names.
//
// One entry per volume: name, guid, size, record size, compression, the
// shape of its tree (depth and fan-out shift), the txg that created it and
// the root block pointer of its tree (level = depth; a hole when nothing
// was written). Entries are kept sorted by name; names and guids are unique.
// The checksum is the one in the uberblock's root pointer (VerifyBlock).
//
// Encoded as a 64-byte header plus 256 bytes per entry (docs/format.md).
// Decoding treats its input as hostile and requires the exact length.
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/result.h"
#include "format/block_pointer.h"
#include "format/compression.h"

namespace arcstore::format {

inline constexpr size_t kVolumeTableHeaderBytes = 64;
inline constexpr size_t kVolumeEntryBytes = 256;
inline constexpr size_t kMaxVolumes = 1024;
inline constexpr size_t kMaxVolumeNameBytes = 63;
inline constexpr uint32_t kMinRecordSize = 4096;
inline constexpr uint32_t kMaxRecordSize = 1u << 20;
inline constexpr uint64_t kMaxVolumeSizeBytes = 1ull << 60;

struct VolumeEntry {
  std::string name;  // 1..63 bytes of [A-Za-z0-9_.:-]
  uint64_t guid = 0;
  uint64_t size_bytes = 0;
  uint32_t record_size_bytes = 128 * 1024;
  Compression compression = Compression::kLz4;
  uint8_t tree_depth = 0;       // indirect levels; TreeDepthFor(records, shift)
  uint8_t indirect_shift = 10;  // fan-out 2^shift
  uint64_t create_txg = 0;
  BlockPointer root;  // level tree_depth, or a hole

  uint64_t records() const;
  friend bool operator==(const VolumeEntry&, const VolumeEntry&) = default;
};

// Checks one entry on its own (name, sizes, shape, root); InvalidArgument
// naming the volume and the field.
Status ValidateVolumeEntry(const VolumeEntry& entry);

struct VolumeTable {
  uint64_t birth_txg = 0;
  std::vector<VolumeEntry> volumes;  // sorted by name

  friend bool operator==(const VolumeTable&, const VolumeTable&) = default;
};

Result<std::vector<uint8_t>> EncodeVolumeTable(const VolumeTable& table);
Result<VolumeTable> DecodeVolumeTable(std::span<const uint8_t> in);

}  // namespace arcstore::format
