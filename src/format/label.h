// Labels: the fixed places of a device that say what it is and where the
// pool's roots are. Each device has two, one at each end:
//
//   offset 0                                                   device end E
//   | header 64K | ring 128 x A | ...... data ...... | ring 128 x A | header 64K |
//   '------ front label -------'                     '------- back label -------'
//
// E is the device size rounded down to 64 KiB, so the back label is found
// without reading the front one. A is the allocation unit, the device's
// logical block size but at least 4 KiB (a power of two up to 64 KiB). The
// header holds magic, format version, pool and device guids, E, A, the
// ring's geometry and the pool config (key/value pairs: pool name and
// options). The ring holds uberblocks (uberblock.h), one per slot of A bytes
// (so writing one slot never tears another).
//
// Decoding treats the input as hostile: bounds, version (a mismatch names
// both versions), checksum, counts and sizes limited.
// Thread-safety: values and stateless functions.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"

namespace arcstore::format {

inline constexpr uint64_t kLabelHeaderRegionBytes = 64 * 1024;
inline constexpr size_t kLabelHeaderFixedBytes = 128;
inline constexpr uint32_t kMinAllocationUnit = 4096;
inline constexpr uint32_t kMaxAllocationUnit = 64 * 1024;
// Config limits.
inline constexpr size_t kMaxConfigBytes = 16 * 1024;
inline constexpr size_t kMaxConfigEntries = 64;
inline constexpr size_t kMaxConfigKeyBytes = 64;
inline constexpr size_t kMaxConfigValueBytes = 1024;

// The pool config: unique keys (1..64 bytes of [a-z0-9_.]), values of up to
// 1 KiB of any bytes. "pool_name" is always present in a pool's labels.
struct PoolConfig {
  std::vector<std::pair<std::string, std::string>> entries;

  std::optional<std::string> Get(std::string_view key) const;
  void Set(std::string key, std::string value);
  Status Validate() const;
  friend bool operator==(const PoolConfig&, const PoolConfig&) = default;
};

enum class LabelPosition : uint32_t { kFront = 0, kBack = 1 };

struct LabelHeader {
  LabelPosition position = LabelPosition::kFront;
  uint64_t pool_guid = 0;
  uint64_t device_guid = 0;
  uint64_t device_size_bytes = 0;  // E: the formatted size, a multiple of 64 KiB
  uint32_t allocation_unit = kMinAllocationUnit;
  uint32_t uberblock_slots = 128;
  uint32_t device_index = 0;  // this device's place in the pool
  uint32_t device_count = 1;
  uint64_t create_txg = 1;
  PoolConfig config;

  friend bool operator==(const LabelHeader&, const LabelHeader&) = default;
};

// Encodes into exactly kLabelHeaderRegionBytes (the rest zero). Fails when
// the config is invalid or too large.
Result<std::vector<uint8_t>> EncodeLabelHeader(const LabelHeader& header);
// `in` is the header region: at least the fixed part and the config; bytes
// past the config must be zero (up to the region's size).
Result<LabelHeader> DecodeLabelHeader(std::span<const uint8_t> in);

// Where everything is on a device of `raw_size_bytes` with unit `A`.
struct DeviceLayout {
  uint64_t end_bytes = 0;        // E
  uint32_t allocation_unit = 0;  // A
  uint64_t ring_bytes = 0;       // 128 x A
  uint64_t front_header = 0;     // 0
  uint64_t front_ring = 0;       // 64 KiB
  uint64_t back_ring = 0;        // E - 64 KiB - ring
  uint64_t back_header = 0;      // E - 64 KiB
  uint64_t data_begin = 0;       // front_ring + ring
  uint64_t data_end = 0;         // back_ring

  uint64_t SlotOffset(LabelPosition pos, uint32_t slot) const;
  uint64_t data_units() const { return (data_end - data_begin) / allocation_unit; }
};

// The allocation unit for a device block size: max(4 KiB, block size).
Result<uint32_t> AllocationUnitFor(uint32_t logical_block_size);
// InvalidArgument when A is not a power of two in [4 KiB, 64 KiB] or the
// device leaves less than 1 MiB of data space.
Result<DeviceLayout> ComputeLayout(uint64_t raw_size_bytes, uint32_t allocation_unit);
// The back header's offset, from the raw device size alone.
uint64_t BackHeaderOffset(uint64_t raw_size_bytes);

}  // namespace arcstore::format
