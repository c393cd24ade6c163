// Space log block encoding (docs/format.md, "Space log block"):
//
//   header: 0 magic | 8 version | 12 count | 16 birth txg | 24 first txg
//           32 last txg | 40 sequence | 48..63 reserved | 64 prev bp
//   record: 0 txg | 8 offset (units) | 16 length (units) | 20 device
//           22 op (1 alloc, 2 free) | 23 reserved
//
// Invariants: count <= kMaxSpaceRecords; records in non-decreasing txg
// order within [first, last] and no later than the block's birth; lengths
// non-zero, extents inside kMaxOffsetUnits; prev is a space-log pointer
// exactly when sequence > 0, born no later than the block.
#include "format/space_log.h"

#include "format/encoding.h"

namespace arcstore::format {

namespace {
constexpr std::string_view kWhat = "space log block";

Status CheckRecord(const SpaceLogBlock& b, size_t i) {
  const SpaceRecord& r = b.records[i];
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("record " + std::to_string(i) + " at byte " +
                                   std::to_string(kSpaceLogHeaderBytes + i * kSpaceRecordBytes) +
                                   ": " + why);
  };
  if (r.op != SpaceOp::kAlloc && r.op != SpaceOp::kFree) return bad("unknown op");
  if (r.length_units == 0) return bad("zero length");
  if (r.offset_units >= kMaxOffsetUnits || r.length_units > kMaxOffsetUnits - r.offset_units) {
    return bad("extent out of bounds");
  }
  if (r.device >= kMaxDevices) return bad("device out of bounds");
  if (r.txg == 0 || r.txg > b.birth_txg)
    return bad("txg " + std::to_string(r.txg) + " out of bounds");
  if (i > 0 && r.txg < b.records[i - 1].txg) return bad("txg goes backwards");
  return Status::Ok();
}

Status CheckBlock(const SpaceLogBlock& b) {
  if (b.records.size() > kMaxSpaceRecords) {
    return Status::InvalidArgument(std::to_string(b.records.size()) + " records, at most " +
                                   std::to_string(kMaxSpaceRecords));
  }
  if (b.birth_txg == 0) return Status::InvalidArgument("birth txg is zero");
  if (b.sequence >= kMaxChainSequence) return Status::InvalidArgument("sequence out of bounds");
  bool has_prev = !b.prev.IsHole();
  if (has_prev != (b.sequence > 0) || (has_prev && b.prev.type != BlockType::kSpaceLog) ||
      b.prev.birth_txg > b.birth_txg) {
    return Status::InvalidArgument("prev pointer " + b.prev.ToString() + " does not fit sequence " +
                                   std::to_string(b.sequence));
  }
  for (size_t i = 0; i < b.records.size(); ++i) ARC_RETURN_IF_ERROR(CheckRecord(b, i));
  return Status::Ok();
}
}  // namespace

Result<std::vector<uint8_t>> EncodeSpaceLogBlock(const SpaceLogBlock& b) {
  ARC_RETURN_IF_ERROR(CheckBlock(b).WithContext(kWhat));
  std::vector<uint8_t> out(kSpaceLogHeaderBytes + b.records.size() * kSpaceRecordBytes, 0);
  uint8_t* p = out.data();
  StoreLe64(p, kSpaceLogMagic);
  StoreLe32(p + 8, kFormatVersion);
  StoreLe32(p + 12, static_cast<uint32_t>(b.records.size()));
  StoreLe64(p + 16, b.birth_txg);
  StoreLe64(p + 24, b.first_txg());
  StoreLe64(p + 32, b.last_txg());
  StoreLe64(p + 40, b.sequence);
  EncodeBlockPointer(b.prev, p + 64);
  for (size_t i = 0; i < b.records.size(); ++i) {
    uint8_t* r = p + kSpaceLogHeaderBytes + i * kSpaceRecordBytes;
    const SpaceRecord& rec = b.records[i];
    StoreLe64(r, rec.txg);
    StoreLe64(r + 8, rec.offset_units);
    StoreLe32(r + 16, rec.length_units);
    StoreLe16(r + 20, rec.device);
    r[22] = static_cast<uint8_t>(rec.op);
  }
  return out;
}

Result<SpaceLogBlock> DecodeSpaceLogBlock(std::span<const uint8_t> in) {
  if (in.size() < kSpaceLogHeaderBytes) {
    return BadLength(kWhat, in.size(), "at least ", kSpaceLogHeaderBytes);
  }
  const uint8_t* p = in.data();
  ARC_RETURN_IF_ERROR(CheckMagicAndVersion(kWhat, p, kSpaceLogMagic));
  uint32_t count = LoadLe32(p + 12);
  if (count > kMaxSpaceRecords) {
    return CorruptionAt(kWhat, "count " + std::to_string(count) + " at byte 12 out of bounds");
  }
  size_t want = kSpaceLogHeaderBytes + size_t{count} * kSpaceRecordBytes;
  if (in.size() != want) return BadLength(kWhat, in.size(), "", want);
  if (!AllZero(p + 48, 16)) return CorruptionAt(kWhat, "reserved bytes are not zero");
  SpaceLogBlock b{.birth_txg = LoadLe64(p + 16), .sequence = LoadLe64(p + 40)};
  auto prev = DecodeBlockPointer(std::span(p + 64, kBlockPointerBytes));
  if (!prev.ok()) return prev.status().WithContext(std::string(kWhat) + " prev pointer");
  b.prev = *prev;
  b.records.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t* r = p + kSpaceLogHeaderBytes + size_t{i} * kSpaceRecordBytes;
    if (r[23] != 0 || (r[22] != 1 && r[22] != 2)) {
      return CorruptionAt(kWhat, "record " + std::to_string(i) + ": bad op or reserved byte");
    }
    b.records.push_back({.txg = LoadLe64(r),
                         .offset_units = LoadLe64(r + 8),
                         .length_units = LoadLe32(r + 16),
                         .device = LoadLe16(r + 20),
                         .op = static_cast<SpaceOp>(r[22])});
  }
  Status s = CheckBlock(b);
  if (!s.ok()) return CorruptionAt(kWhat, s.message());
  if (LoadLe64(p + 24) != b.first_txg() || LoadLe64(p + 32) != b.last_txg()) {
    return CorruptionAt(kWhat, "first/last txg at bytes 24/32 disagree with the records");
  }
  return b;
}

}  // namespace arcstore::format
