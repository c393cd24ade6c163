// Uberblock encoding (docs/format.md, "Uberblock"):
//
//   0 magic | 8 version | 12 reserved | 16 txg | 24 timestamp | 32 pool guid
//   40 guid sum | 48 allocated bytes | 56 reserved | 64 root bp
//   128 space log bp | 192 intent log bp (reserved) | 256 log arena offset
//   264 log arena bytes | 272 log guid | 280 replay offset | 288 replay seq
//   296..495 reserved (zero)
//   496 xxh3-128 of bytes 0..495
#include "format/uberblock.h"

#include "format/encoding.h"

namespace arcstore::format {

namespace {
constexpr size_t kChecksumAt = kUberblockBytes - 16;
constexpr std::string_view kWhat = "uberblock";
}  // namespace

std::vector<uint8_t> EncodeUberblock(const Uberblock& ub) {
  std::vector<uint8_t> out(kUberblockBytes, 0);
  uint8_t* p = out.data();
  StoreLe64(p, kUberblockMagic);
  StoreLe32(p + 8, kFormatVersion);
  StoreLe64(p + 16, ub.txg);
  StoreLe64(p + 24, ub.timestamp_ns);
  StoreLe64(p + 32, ub.pool_guid);
  StoreLe64(p + 40, ub.guid_sum);
  StoreLe64(p + 48, ub.allocated_bytes);
  EncodeBlockPointer(ub.root, p + 64);
  EncodeBlockPointer(ub.space_log, p + 128);
  EncodeBlockPointer(ub.intent_log, p + 192);
  StoreLe64(p + 256, ub.log.arena_offset_bytes);
  StoreLe64(p + 264, ub.log.arena_bytes);
  StoreLe64(p + 272, ub.log.log_guid);
  StoreLe64(p + 280, ub.log.replay_offset_bytes);
  StoreLe64(p + 288, ub.log.replay_sequence);
  StoreChecksum(p + kChecksumAt, Xxh3_128(p, kChecksumAt));
  return out;
}

static Result<BlockPointer> DecodePointerOfType(const uint8_t* p, size_t at, BlockType type,
                                                const char* field) {
  auto bp = DecodeBlockPointer(std::span<const uint8_t>(p + at, kBlockPointerBytes));
  if (!bp.ok()) return bp.status().WithContext("uberblock " + std::string(field));
  if (bp->type != type && bp->type != BlockType::kHole) {
    return CorruptionAt(kWhat, std::string(field) + " at byte " + std::to_string(at) + " is a " +
                                   std::string(BlockTypeName(bp->type)) + " pointer");
  }
  return bp;
}

Result<Uberblock> DecodeUberblock(std::span<const uint8_t> in) {
  if (in.size() != kUberblockBytes) return BadLength(kWhat, in.size(), "", kUberblockBytes);
  const uint8_t* p = in.data();
  ARC_RETURN_IF_ERROR(CheckMagicAndVersion(kWhat, p, kUberblockMagic));
  Checksum128 stored = LoadChecksum(p + kChecksumAt), computed = Xxh3_128(p, kChecksumAt);
  if (stored != computed) {
    return CorruptionAt(kWhat, "checksum mismatch at byte " + std::to_string(kChecksumAt) +
                                   ": stored " + stored.ToHex() + ", computed " + computed.ToHex());
  }
  if (LoadLe32(p + 12) != 0 || LoadLe64(p + 56) != 0 || !AllZero(p + 296, kChecksumAt - 296)) {
    return CorruptionAt(kWhat, "reserved bytes are not zero");
  }
  Uberblock ub{.txg = LoadLe64(p + 16),
               .timestamp_ns = LoadLe64(p + 24),
               .pool_guid = LoadLe64(p + 32),
               .guid_sum = LoadLe64(p + 40),
               .allocated_bytes = LoadLe64(p + 48)};
  if (ub.txg == 0) return CorruptionAt(kWhat, "txg 0 at byte 16");
  if (ub.pool_guid == 0) return CorruptionAt(kWhat, "pool guid 0 at byte 32");
  ARC_ASSIGN_OR_RETURN(ub.root, DecodePointerOfType(p, 64, BlockType::kVolumeTable, "root"));
  ARC_ASSIGN_OR_RETURN(ub.space_log,
                       DecodePointerOfType(p, 128, BlockType::kSpaceLog, "space log"));
  ARC_ASSIGN_OR_RETURN(ub.intent_log,
                       DecodePointerOfType(p, 192, BlockType::kIntentLog, "intent log"));
  ub.log = IntentLogHeader{.arena_offset_bytes = LoadLe64(p + 256),
                           .arena_bytes = LoadLe64(p + 264),
                           .log_guid = LoadLe64(p + 272),
                           .replay_offset_bytes = LoadLe64(p + 280),
                           .replay_sequence = LoadLe64(p + 288)};
  if (!ub.log.present()) {
    if (!(ub.log == IntentLogHeader{})) {
      return CorruptionAt(kWhat, "intent log fields set at bytes 256..295 without an arena");
    }
  } else if (ub.log.log_guid == 0 || ub.log.replay_offset_bytes >= ub.log.arena_bytes ||
             ub.log.arena_offset_bytes > UINT64_MAX - ub.log.arena_bytes) {
    return CorruptionAt(kWhat, "intent log header at bytes 256..295 is inconsistent (arena " +
                                   std::to_string(ub.log.arena_offset_bytes) + "+" +
                                   std::to_string(ub.log.arena_bytes) + ", replay at " +
                                   std::to_string(ub.log.replay_offset_bytes) + ")");
  }
  for (const BlockPointer* bp : {&ub.root, &ub.space_log, &ub.intent_log}) {
    if (bp->birth_txg > ub.txg) {
      return CorruptionAt(kWhat, "a pointer born at txg " + std::to_string(bp->birth_txg) +
                                     " after the uberblock's txg " + std::to_string(ub.txg));
    }
  }
  return ub;
}

}  // namespace arcstore::format
