// The cache device's on-disk format: its layout, the label and the slot
// headers (theory of operation in l2_cache.cc).
//
//   offset 0            label_bytes        label_bytes + stride   ...
//   | label | pad      | slot 0                | slot 1        | ... | slot n-1 |
//                      | header area | data   |
//
// Every structure is encoded field by field, little-endian, at the offsets
// below (format/encoding.h), and carries an xxHash3-64 of its other bytes.
//
//   label (at most kLabelFieldBytes used of its block):
//     0 magic "ARCL2LBL"  8 version u32  12 bound count u32  16 pool guid
//     24 cache guid  32 slot data bytes  40 slot count  48 slot stride bytes
//     56 checksum of [0, 80 + 16 * bound count) with this field 0
//     64 epoch  72 zero u64
//     80 bounds, 16 bytes each: 0 epoch  8 txg bound
//   slot header:
//     0 magic "ARCL2SLT"  8 version u32  12 entry count u32  16 pool guid
//     24 cache guid  32 sequence  40 data bytes used  48 epoch
//     56 checksum of [0, 56) and of the entries, as one run with this field 0
//     64 entries, kEntryBytes each:
//        0 where  8 birth  16 offset in the data area u32  20 bytes u32
//        24 xxHash3-64 of the data
//
// Thread-safety: stateless functions and values.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "arcstore/status.h"
#include "base/result.h"
#include "format/encoding.h"

namespace arcstore::l2arc {

inline constexpr uint64_t kL2LabelMagic = format::Magic("ARCL2LBL");
inline constexpr uint64_t kL2SlotMagic = format::Magic("ARCL2SLT");
inline constexpr uint32_t kL2FormatVersion = 1;

inline constexpr uint64_t kLabelBytes = 4096;  // at least; a whole device block
inline constexpr uint64_t kMaxEpochBounds = 64;
inline constexpr uint64_t kLabelFieldBytes = 80 + 16 * kMaxEpochBounds;
inline constexpr uint64_t kSlotHeaderFixedBytes = 64;
inline constexpr uint64_t kEntryBytes = 32;
// A slot's header has room for one entry per kBytesPerEntrySlot of its data.
inline constexpr uint64_t kBytesPerEntrySlot = 4096;
inline constexpr uint64_t kMinSlots = 4;
// Index node ids are 32-bit: the ring holds at most this many entries.
inline constexpr uint64_t kMaxRingEntries = uint64_t{1} << 31;

// Identity of a stored block's content: (where, birth). `where` packs the
// pool device and the block's offset on it; `birth` is the txg the block was
// written in. A given (where, birth) always names the same bytes for the
// life of a pool (copy-on-write, frees deferred), so a cached copy found
// under it is never stale.
struct L2Key {
  uint64_t where = 0;
  uint64_t birth = 0;
  bool operator==(const L2Key&) const = default;
};

// Where things are on a device of a given size, for a given slot size.
struct L2Layout {
  uint32_t block_bytes = 0;        // the device's logical block
  uint64_t label_bytes = 0;        // kLabelBytes rounded up to the block
  uint64_t slot_data_bytes = 0;    // L2CacheOptions::slot_bytes
  uint32_t entries_per_slot = 0;   // room in a header area
  uint64_t header_area_bytes = 0;  // fixed part + entries, rounded up to the block
  uint64_t slot_stride_bytes = 0;  // header area + data
  uint64_t slot_count = 0;

  uint64_t SlotOffset(uint64_t slot) const { return label_bytes + slot * slot_stride_bytes; }
  uint64_t DataOffset(uint64_t slot) const { return SlotOffset(slot) + header_area_bytes; }
  uint64_t RoundToBlock(uint64_t n) const {
    return (n + block_bytes - 1) / block_bytes * block_bytes;
  }
};

// The layout of `device_bytes` with slots of `slot_data_bytes` (a multiple
// of `block_bytes`); InvalidArgument when fewer than kMinSlots fit.
Result<L2Layout> ComputeLayout(uint64_t slot_data_bytes, uint32_t block_bytes,
                               uint64_t device_bytes);

// Slots written in `epoch` hold only blocks born at or before `txg`: the
// pool's committed txg when the cache was next opened (l2_cache.cc, Epochs).
struct L2EpochBound {
  uint64_t epoch = 0;
  uint64_t txg = 0;
  bool operator==(const L2EpochBound&) const = default;
};

struct L2Label {
  uint64_t pool_guid = 0;
  uint64_t cache_guid = 0;
  uint64_t slot_data_bytes = 0;
  uint64_t slot_count = 0;
  uint64_t slot_stride_bytes = 0;
  uint64_t epoch = 0;                // this life of the cache: one per Open
  std::vector<L2EpochBound> bounds;  // of earlier epochs, oldest first, at most kMaxEpochBounds
};

// Encodes into the first kLabelFieldBytes of `out` (the rest is left as is).
// At most kMaxEpochBounds bounds (checked).
void EncodeLabel(const L2Label& label, std::span<uint8_t> out);
// Corruption for a block that is not a label of this format (blank, foreign,
// damaged, another version).
Result<L2Label> DecodeLabel(std::span<const uint8_t> in);

struct L2SlotEntry {
  L2Key key;
  uint32_t offset = 0;  // in the slot's data area, a multiple of the block
  uint32_t bytes = 0;
  uint64_t checksum = 0;
};

struct L2SlotHeader {
  uint64_t pool_guid = 0;
  uint64_t cache_guid = 0;
  uint64_t sequence = 0;
  uint64_t data_bytes = 0;
  uint64_t epoch = 0;
  std::vector<L2SlotEntry> entries;
};

// Encodes into `out`, which is the slot's header area (layout.header_area_bytes;
// at most layout.entries_per_slot entries).
void EncodeSlotHeader(const L2SlotHeader& header, std::span<uint8_t> out);

// Why a header area did not decode.
enum class HeaderFault : uint8_t {
  kNone,
  kBlank,    // no slot magic: never written, or written by something else
  kDamaged,  // slot magic, but a bad checksum, version or field
};

// Decodes a header area and checks it against `layout` (entry count, entry
// bounds and alignment). On failure `*fault` says why and the result is a
// Corruption error.
Result<L2SlotHeader> DecodeSlotHeader(std::span<const uint8_t> in, const L2Layout& layout,
                                      HeaderFault* fault);

}  // namespace arcstore::l2arc
