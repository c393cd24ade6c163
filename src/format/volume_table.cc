// Volume table encoding (docs/format.md, "Volume table"):
//
//   header: 0 magic | 8 version | 12 count | 16 birth txg | 24..63 reserved
//   entry:  0 name length | 1..63 name | 64 guid | 72 size | 80 record size
//           84 compression | 85 depth | 86 shift | 87 reserved | 88 create txg
//           96..103 reserved | 104 root bp | 168..255 reserved
//
// Invariants: count <= kMaxVolumes; entries sorted by name, names and guids
// unique; every entry valid (ValidateVolumeEntry); nothing born after the
// table; exact length 64 + 256 x count.
#include "format/volume_table.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "base/units.h"
#include "format/encoding.h"
#include "format/indirect_block.h"

namespace arcstore::format {

namespace {
constexpr std::string_view kWhat = "volume table";

bool ValidName(std::string_view name) {
  if (name.empty() || name.size() > kMaxVolumeNameBytes) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == ':' || c == '-';
  });
}
}  // namespace

uint64_t VolumeEntry::records() const {
  if (record_size_bytes == 0) return 0;
  return (size_bytes + record_size_bytes - 1) / record_size_bytes;
}

Status ValidateVolumeEntry(const VolumeEntry& e) {
  std::string who = "volume '" + e.name + "': ";
  if (!ValidName(e.name))
    return Status::InvalidArgument(who + "name must be 1 to 63 of [A-Za-z0-9_.:-]");
  if (e.guid == 0) return Status::InvalidArgument(who + "guid is zero");
  if (!IsPowerOfTwo(e.record_size_bytes) || e.record_size_bytes < kMinRecordSize ||
      e.record_size_bytes > kMaxRecordSize) {
    return Status::InvalidArgument(who + "record size " + std::to_string(e.record_size_bytes) +
                                   " is not a power of two from 4 KiB to 1 MiB");
  }
  if (e.size_bytes == 0 || e.size_bytes > kMaxVolumeSizeBytes) {
    return Status::InvalidArgument(who + "size " + std::to_string(e.size_bytes) + " out of bounds");
  }
  if (static_cast<uint8_t>(e.compression) > kMaxCompressionValue) {
    return Status::InvalidArgument(who + "unknown compression");
  }
  if (e.indirect_shift < kMinIndirectShift || e.indirect_shift > kMaxIndirectShift) {
    return Status::InvalidArgument(who + "indirect shift out of bounds");
  }
  if (e.tree_depth != TreeDepthFor(e.records(), e.indirect_shift)) {
    return Status::InvalidArgument(who + "tree depth " + std::to_string(e.tree_depth) +
                                   " does not fit " + std::to_string(e.records()) + " records");
  }
  if (e.create_txg == 0) return Status::InvalidArgument(who + "create txg is zero");
  if (!e.root.IsHole()) {
    BlockType want = e.tree_depth == 0 ? BlockType::kData : BlockType::kIndirect;
    if (e.root.type != want || e.root.level != e.tree_depth) {
      return Status::InvalidArgument(who + "root " + e.root.ToString() + " does not match depth " +
                                     std::to_string(e.tree_depth));
    }
  }
  return Status::Ok();
}

static Status ValidateTable(const VolumeTable& t) {
  if (t.volumes.size() > kMaxVolumes) {
    return Status::InvalidArgument(std::to_string(t.volumes.size()) + " volumes, at most " +
                                   std::to_string(kMaxVolumes));
  }
  if (t.birth_txg == 0) return Status::InvalidArgument("birth txg is zero");
  std::set<uint64_t> guids;
  for (size_t i = 0; i < t.volumes.size(); ++i) {
    const VolumeEntry& e = t.volumes[i];
    ARC_RETURN_IF_ERROR(ValidateVolumeEntry(e).WithContext("entry " + std::to_string(i)));
    if (i > 0 && !(t.volumes[i - 1].name < e.name)) {
      return Status::InvalidArgument("entry " + std::to_string(i) +
                                     ": names not sorted or repeated");
    }
    if (!guids.insert(e.guid).second) {
      return Status::InvalidArgument("entry " + std::to_string(i) + ": guid repeated");
    }
    if (e.create_txg > t.birth_txg || e.root.birth_txg > t.birth_txg) {
      return Status::InvalidArgument("entry " + std::to_string(i) + ": born after the table");
    }
  }
  return Status::Ok();
}

static void EncodeEntry(const VolumeEntry& e, uint8_t* p) {
  p[0] = static_cast<uint8_t>(e.name.size());
  std::memcpy(p + 1, e.name.data(), e.name.size());
  StoreLe64(p + 64, e.guid);
  StoreLe64(p + 72, e.size_bytes);
  StoreLe32(p + 80, e.record_size_bytes);
  p[84] = static_cast<uint8_t>(e.compression);
  p[85] = e.tree_depth;
  p[86] = e.indirect_shift;
  StoreLe64(p + 88, e.create_txg);
  EncodeBlockPointer(e.root, p + 104);
}

Result<std::vector<uint8_t>> EncodeVolumeTable(const VolumeTable& t) {
  ARC_RETURN_IF_ERROR(ValidateTable(t).WithContext(kWhat));
  std::vector<uint8_t> out(kVolumeTableHeaderBytes + t.volumes.size() * kVolumeEntryBytes, 0);
  StoreLe64(out.data(), kVolumeTableMagic);
  StoreLe32(out.data() + 8, kFormatVersion);
  StoreLe32(out.data() + 12, static_cast<uint32_t>(t.volumes.size()));
  StoreLe64(out.data() + 16, t.birth_txg);
  for (size_t i = 0; i < t.volumes.size(); ++i) {
    EncodeEntry(t.volumes[i], out.data() + kVolumeTableHeaderBytes + i * kVolumeEntryBytes);
  }
  return out;
}

static Result<VolumeEntry> DecodeEntry(const uint8_t* p, size_t index) {
  std::string where = "entry " + std::to_string(index) + " at byte " +
                      std::to_string(kVolumeTableHeaderBytes + index * kVolumeEntryBytes);
  size_t name_len = p[0];
  if (name_len == 0 || name_len > kMaxVolumeNameBytes ||
      !AllZero(p + 1 + name_len, 63 - name_len) || p[87] != 0 || !AllZero(p + 96, 8) ||
      !AllZero(p + 168, kVolumeEntryBytes - 168)) {
    return CorruptionAt(kWhat, where + ": bad name length or reserved bytes not zero");
  }
  if (p[84] > kMaxCompressionValue) return CorruptionAt(kWhat, where + ": unknown compression");
  VolumeEntry e{.name = std::string(reinterpret_cast<const char*>(p + 1), name_len),
                .guid = LoadLe64(p + 64),
                .size_bytes = LoadLe64(p + 72),
                .record_size_bytes = LoadLe32(p + 80),
                .compression = static_cast<Compression>(p[84]),
                .tree_depth = p[85],
                .indirect_shift = p[86],
                .create_txg = LoadLe64(p + 88)};
  auto root = DecodeBlockPointer(std::span(p + 104, kBlockPointerBytes));
  if (!root.ok()) return root.status().WithContext(std::string(kWhat) + " " + where + " root");
  e.root = *root;
  return e;
}

Result<VolumeTable> DecodeVolumeTable(std::span<const uint8_t> in) {
  if (in.size() < kVolumeTableHeaderBytes) {
    return BadLength(kWhat, in.size(), "at least ", kVolumeTableHeaderBytes);
  }
  const uint8_t* p = in.data();
  ARC_RETURN_IF_ERROR(CheckMagicAndVersion(kWhat, p, kVolumeTableMagic));
  uint32_t count = LoadLe32(p + 12);
  if (count > kMaxVolumes) {
    return CorruptionAt(kWhat, "count " + std::to_string(count) + " at byte 12 out of bounds");
  }
  size_t want = kVolumeTableHeaderBytes + size_t{count} * kVolumeEntryBytes;
  if (in.size() != want) return BadLength(kWhat, in.size(), "", want);
  if (!AllZero(p + 24, kVolumeTableHeaderBytes - 24)) {
    return CorruptionAt(kWhat, "reserved bytes are not zero");
  }
  VolumeTable t{.birth_txg = LoadLe64(p + 16)};
  for (uint32_t i = 0; i < count; ++i) {
    ARC_ASSIGN_OR_RETURN(
        VolumeEntry e, DecodeEntry(p + kVolumeTableHeaderBytes + size_t{i} * kVolumeEntryBytes, i));
    t.volumes.push_back(std::move(e));
  }
  Status s = ValidateTable(t);
  if (!s.ok()) return CorruptionAt(kWhat, s.message());
  return t;
}

}  // namespace arcstore::format
