#include "l2arc/l2_format.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/checksum.h"

namespace arcstore::l2arc {

using format::LoadLe32;
using format::LoadLe64;
using format::StoreLe32;
using format::StoreLe64;

namespace {

constexpr size_t kChecksumAt = 56;

uint64_t RoundUp(uint64_t n, uint64_t unit) { return (n + unit - 1) / unit * unit; }

// xxHash3-64 of [0, end) of `p` with the checksum field read as zero.
uint64_t ChecksumWithFieldZero(const uint8_t* p, size_t end) {
  std::vector<uint8_t> copy(p, p + end);
  std::memset(copy.data() + kChecksumAt, 0, 8);
  return Xxh3_64(copy.data(), copy.size());
}

}  // namespace

Result<L2Layout> ComputeLayout(uint64_t slot_data_bytes, uint32_t block_bytes,
                               uint64_t device_bytes) {
  if (block_bytes == 0 || slot_data_bytes == 0 || slot_data_bytes % block_bytes != 0) {
    return Status::InvalidArgument("l2arc: slot_bytes " + std::to_string(slot_data_bytes) +
                                   " is not a multiple of the device block " +
                                   std::to_string(block_bytes));
  }
  L2Layout l;
  l.block_bytes = block_bytes;
  l.label_bytes = RoundUp(kLabelBytes, block_bytes);
  l.slot_data_bytes = slot_data_bytes;
  l.entries_per_slot =
      static_cast<uint32_t>(std::max<uint64_t>(1, slot_data_bytes / kBytesPerEntrySlot));
  l.header_area_bytes =
      RoundUp(kSlotHeaderFixedBytes + kEntryBytes * l.entries_per_slot, block_bytes);
  l.slot_stride_bytes = l.header_area_bytes + slot_data_bytes;
  const uint64_t room = device_bytes > l.label_bytes ? device_bytes - l.label_bytes : 0;
  l.slot_count = std::min(room / l.slot_stride_bytes, kMaxRingEntries / l.entries_per_slot);
  if (l.slot_count < kMinSlots) {
    return Status::InvalidArgument("l2arc: device of " + std::to_string(device_bytes) +
                                   " bytes holds " + std::to_string(l.slot_count) + " slots of " +
                                   std::to_string(l.slot_stride_bytes) + " bytes, fewer than " +
                                   std::to_string(kMinSlots));
  }
  return l;
}

void EncodeLabel(const L2Label& label, std::span<uint8_t> out) {
  ARC_CHECK_GE(out.size(), kLabelFieldBytes);
  ARC_CHECK_LE(label.bounds.size(), kMaxEpochBounds);
  uint8_t* p = out.data();
  std::memset(p, 0, kLabelFieldBytes);
  StoreLe64(p, kL2LabelMagic);
  StoreLe32(p + 8, kL2FormatVersion);
  StoreLe32(p + 12, static_cast<uint32_t>(label.bounds.size()));
  StoreLe64(p + 16, label.pool_guid);
  StoreLe64(p + 24, label.cache_guid);
  StoreLe64(p + 32, label.slot_data_bytes);
  StoreLe64(p + 40, label.slot_count);
  StoreLe64(p + 48, label.slot_stride_bytes);
  StoreLe64(p + 64, label.epoch);
  uint8_t* b = p + 80;
  for (const L2EpochBound& bound : label.bounds) {
    StoreLe64(b, bound.epoch);
    StoreLe64(b + 8, bound.txg);
    b += 16;
  }
  StoreLe64(p + kChecksumAt, Xxh3_64(p, static_cast<size_t>(b - p)));
}

Result<L2Label> DecodeLabel(std::span<const uint8_t> in) {
  if (in.size() < kLabelFieldBytes) {
    return format::BadLength("l2arc label", in.size(), "at least", kLabelFieldBytes);
  }
  const uint8_t* p = in.data();
  if (LoadLe64(p) != kL2LabelMagic) return format::CorruptionAt("l2arc label", "no label magic");
  const uint32_t bounds = LoadLe32(p + 12);
  if (bounds > kMaxEpochBounds) {
    return format::CorruptionAt("l2arc label", std::to_string(bounds) + " epoch bounds");
  }
  if (LoadLe64(p + kChecksumAt) != ChecksumWithFieldZero(p, 80 + 16 * size_t{bounds})) {
    return format::CorruptionAt("l2arc label", "checksum mismatch");
  }
  if (LoadLe32(p + 8) != kL2FormatVersion)
    return format::VersionMismatch("l2arc label", LoadLe32(p + 8));
  L2Label l;
  l.pool_guid = LoadLe64(p + 16);
  l.cache_guid = LoadLe64(p + 24);
  l.slot_data_bytes = LoadLe64(p + 32);
  l.slot_count = LoadLe64(p + 40);
  l.slot_stride_bytes = LoadLe64(p + 48);
  l.epoch = LoadLe64(p + 64);
  l.bounds.resize(bounds);
  const uint8_t* b = p + 80;
  for (L2EpochBound& bound : l.bounds) {
    bound.epoch = LoadLe64(b);
    bound.txg = LoadLe64(b + 8);
    b += 16;
  }
  return l;
}

void EncodeSlotHeader(const L2SlotHeader& h, std::span<uint8_t> out) {
  const size_t end = kSlotHeaderFixedBytes + kEntryBytes * h.entries.size();
  ARC_CHECK_GE(out.size(), end);
  uint8_t* p = out.data();
  std::memset(p, 0, out.size());
  StoreLe64(p, kL2SlotMagic);
  StoreLe32(p + 8, kL2FormatVersion);
  StoreLe32(p + 12, static_cast<uint32_t>(h.entries.size()));
  StoreLe64(p + 16, h.pool_guid);
  StoreLe64(p + 24, h.cache_guid);
  StoreLe64(p + 32, h.sequence);
  StoreLe64(p + 40, h.data_bytes);
  StoreLe64(p + 48, h.epoch);
  uint8_t* e = p + kSlotHeaderFixedBytes;
  for (const L2SlotEntry& entry : h.entries) {
    StoreLe64(e, entry.key.where);
    StoreLe64(e + 8, entry.key.birth);
    StoreLe32(e + 16, entry.offset);
    StoreLe32(e + 20, entry.bytes);
    StoreLe64(e + 24, entry.checksum);
    e += kEntryBytes;
  }
  // The field is zero here, so the checksum covers the run as it stands.
  StoreLe64(p + kChecksumAt, Xxh3_64(p, end));
}

Result<L2SlotHeader> DecodeSlotHeader(std::span<const uint8_t> in, const L2Layout& layout,
                                      HeaderFault* fault) {
  *fault = HeaderFault::kBlank;
  if (in.size() < layout.header_area_bytes) {
    return format::BadLength("l2arc slot header", in.size(), "at least", layout.header_area_bytes);
  }
  const uint8_t* p = in.data();
  if (LoadLe64(p) != kL2SlotMagic)
    return format::CorruptionAt("l2arc slot header", "no slot magic");
  *fault = HeaderFault::kDamaged;
  const uint32_t count = LoadLe32(p + 12);
  if (count > layout.entries_per_slot) {
    return format::CorruptionAt("l2arc slot header", std::to_string(count) + " entries, room for " +
                                                         std::to_string(layout.entries_per_slot));
  }
  const size_t end = kSlotHeaderFixedBytes + kEntryBytes * count;
  if (LoadLe64(p + kChecksumAt) != ChecksumWithFieldZero(p, end)) {
    return format::CorruptionAt("l2arc slot header", "checksum mismatch");
  }
  if (LoadLe32(p + 8) != kL2FormatVersion) {
    return format::VersionMismatch("l2arc slot header", LoadLe32(p + 8));
  }
  L2SlotHeader h;
  h.pool_guid = LoadLe64(p + 16);
  h.cache_guid = LoadLe64(p + 24);
  h.sequence = LoadLe64(p + 32);
  h.data_bytes = LoadLe64(p + 40);
  h.epoch = LoadLe64(p + 48);
  if (h.data_bytes > layout.slot_data_bytes) {
    return format::CorruptionAt("l2arc slot header",
                                "data bytes " + std::to_string(h.data_bytes) + " past the slot");
  }
  h.entries.resize(count);
  const uint8_t* e = p + kSlotHeaderFixedBytes;
  for (L2SlotEntry& entry : h.entries) {
    entry.key.where = LoadLe64(e);
    entry.key.birth = LoadLe64(e + 8);
    entry.offset = LoadLe32(e + 16);
    entry.bytes = LoadLe32(e + 20);
    entry.checksum = LoadLe64(e + 24);
    e += kEntryBytes;
    if (entry.bytes == 0 || entry.offset % layout.block_bytes != 0 ||
        uint64_t{entry.offset} + entry.bytes > h.data_bytes) {
      return format::CorruptionAt("l2arc slot header",
                                  "entry at data offset " + std::to_string(entry.offset) + " of " +
                                      std::to_string(entry.bytes) + " bytes out of bounds");
    }
  }
  *fault = HeaderFault::kNone;
  return h;
}

}  // namespace arcstore::l2arc
