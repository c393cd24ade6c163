// Intent log block encoding (docs/format.md, "Intent log"):
//
//   header: 0 magic | 8 version | 12 record count | 16 log guid | 24 sequence
//           32 block bytes | 36 payload bytes | 40 reserved (zero)
//           48 xxh3-128 of bytes 0..47 and 64..block end
//   record: 0 type | 1..7 reserved | 8 volume guid | 16 txg | 24 seq
//           32 offset | 40 length | 48 data (writes; padded to 8 bytes)
//
// Invariants: payload (the records) fits the block; block bytes within
// [header + 16, kMaxLogBlockBytes]; the padding after the payload is zero;
// record types known; lengths in (0, 1 MiB]; offset + length does not
// overflow; txg and seq non-zero; seqs strictly increasing in a block.
#include "format/intent_log.h"

#include <cstring>

#include "format/encoding.h"

namespace arcstore::format {

namespace {
constexpr std::string_view kWhat = "intent log block";
constexpr uint64_t kLogMagic = Magic("ARCZLOGB");
constexpr size_t kChecksumAt = 48;

uint64_t Pad8(uint64_t n) { return (n + 7) & ~uint64_t{7}; }

Checksum128 BlockChecksum(std::span<const uint8_t> block) {
  Xxh3_128Stream s;
  s.Update(block.data(), kChecksumAt);
  s.Update(block.data() + kLogBlockHeaderBytes, block.size() - kLogBlockHeaderBytes);
  return s.Digest();
}

bool KnownType(uint8_t t) { return t >= 1 && t <= 4; }
}  // namespace

uint64_t LogRecord::EncodedBytes() const {
  return kLogRecordHeaderBytes + (type == LogRecordType::kWrite ? Pad8(length) : 0);
}

uint64_t LogBlockPayloadBytes(std::span<const LogRecord> records) {
  uint64_t n = kLogBlockHeaderBytes;
  for (const LogRecord& r : records) n += r.EncodedBytes();
  return n;
}

Result<std::vector<uint8_t>> EncodeLogBlock(uint64_t log_guid, uint64_t sequence,
                                            std::span<const LogRecord> records,
                                            uint32_t block_bytes) {
  std::vector<LogRecordRef> refs;
  refs.reserve(records.size());
  for (const LogRecord& r : records) refs.push_back(LogRecordRef{&r, r.data});
  if (block_bytes > kMaxLogBlockBytes) {
    return Status::InvalidArgument(std::string(kWhat) + ": block of " +
                                   std::to_string(block_bytes) + " bytes (at most " +
                                   std::to_string(kMaxLogBlockBytes) + ")");
  }
  std::vector<uint8_t> out(block_bytes);
  ARC_RETURN_IF_ERROR(EncodeLogBlockInto(log_guid, sequence, refs, out));
  return out;
}

Status EncodeLogBlockInto(uint64_t log_guid, uint64_t sequence,
                          std::span<const LogRecordRef> records, std::span<uint8_t> out) {
  uint64_t need = kLogBlockHeaderBytes;
  for (const LogRecordRef& r : records) need += r.fields->EncodedBytes();
  if (out.size() > kMaxLogBlockBytes || need > out.size()) {
    return Status::InvalidArgument(std::string(kWhat) + ": " + std::to_string(records.size()) +
                                   " records need " + std::to_string(need) + " bytes; block is " +
                                   std::to_string(out.size()) + " (at most " +
                                   std::to_string(kMaxLogBlockBytes) + ")");
  }
  uint8_t* p = out.data();
  std::memset(p, 0, kLogBlockHeaderBytes);
  StoreLe64(p, kLogMagic);
  StoreLe32(p + 8, kFormatVersion);
  StoreLe32(p + 12, static_cast<uint32_t>(records.size()));
  StoreLe64(p + 16, log_guid);
  StoreLe64(p + 24, sequence);
  StoreLe32(p + 32, static_cast<uint32_t>(out.size()));
  StoreLe32(p + 36, static_cast<uint32_t>(need - kLogBlockHeaderBytes));
  uint8_t* r = p + kLogBlockHeaderBytes;
  for (const LogRecordRef& ref : records) {
    const LogRecord& rec = *ref.fields;
    const bool write = rec.type == LogRecordType::kWrite;
    if (!KnownType(static_cast<uint8_t>(rec.type)) || rec.length == 0 ||
        rec.length > kMaxLogRecordDataBytes || (write && ref.data.size() != rec.length) ||
        (!write && !ref.data.empty())) {
      return Status::InvalidArgument(std::string(kWhat) + ": record seq " +
                                     std::to_string(rec.seq) + " is malformed");
    }
    const uint64_t bytes = rec.EncodedBytes();
    std::memset(r, 0, kLogRecordHeaderBytes);
    r[0] = static_cast<uint8_t>(rec.type);
    StoreLe64(r + 8, rec.volume_guid);
    StoreLe64(r + 16, rec.txg);
    StoreLe64(r + 24, rec.seq);
    StoreLe64(r + 32, rec.offset);
    StoreLe64(r + 40, rec.length);
    if (write) {
      std::memcpy(r + kLogRecordHeaderBytes, ref.data.data(), ref.data.size());
      std::memset(r + kLogRecordHeaderBytes + ref.data.size(), 0,
                  bytes - kLogRecordHeaderBytes - ref.data.size());
    }
    r += bytes;
  }
  std::memset(r, 0, static_cast<size_t>(out.data() + out.size() - r));
  StoreChecksum(p + kChecksumAt, BlockChecksum(out));
  return Status::Ok();
}

Result<LogBlockHeader> DecodeLogBlockHeader(std::span<const uint8_t> in) {
  if (in.size() < kLogBlockHeaderBytes) {
    return BadLength(kWhat, in.size(), "at least", kLogBlockHeaderBytes);
  }
  const uint8_t* p = in.data();
  ARC_RETURN_IF_ERROR(CheckMagicAndVersion(kWhat, p, kLogMagic));
  LogBlockHeader h;
  h.records = LoadLe32(p + 12);
  h.log_guid = LoadLe64(p + 16);
  h.sequence = LoadLe64(p + 24);
  h.block_bytes = LoadLe32(p + 32);
  const uint32_t payload = LoadLe32(p + 36);
  if (LoadLe64(p + 40) != 0) return CorruptionAt(kWhat, "reserved bytes 40..47 are not zero");
  if (h.block_bytes < kLogBlockHeaderBytes + 16 || h.block_bytes > kMaxLogBlockBytes) {
    return CorruptionAt(kWhat, "block size " + std::to_string(h.block_bytes) +
                                   " at byte 32 is out of bounds");
  }
  if (uint64_t{payload} > h.block_bytes - kLogBlockHeaderBytes) {
    return CorruptionAt(kWhat, "payload of " + std::to_string(payload) +
                                   " bytes does not fit a block of " +
                                   std::to_string(h.block_bytes));
  }
  if (uint64_t{h.records} * kLogRecordHeaderBytes > payload) {
    return CorruptionAt(kWhat, std::to_string(h.records) + " records cannot fit " +
                                   std::to_string(payload) + " payload bytes");
  }
  if (h.log_guid == 0) return CorruptionAt(kWhat, "log guid 0 at byte 16");
  return h;
}

Result<std::vector<LogRecord>> DecodeLogBlock(std::span<const uint8_t> in, LogBlockHeader* out) {
  ARC_ASSIGN_OR_RETURN(LogBlockHeader h, DecodeLogBlockHeader(in));
  if (in.size() != h.block_bytes) return BadLength(kWhat, in.size(), "", h.block_bytes);
  const Checksum128 stored = LoadChecksum(in.data() + kChecksumAt);
  const Checksum128 computed = BlockChecksum(in);
  if (stored != computed) {
    return CorruptionAt(kWhat, "checksum mismatch: stored " + stored.ToHex() + ", computed " +
                                   computed.ToHex());
  }
  const uint64_t payload_end = kLogBlockHeaderBytes + LoadLe32(in.data() + 36);
  if (!AllZero(in.data() + payload_end, in.size() - payload_end)) {
    return CorruptionAt(kWhat, "padding after byte " + std::to_string(payload_end) +
                                   " is not zero");
  }
  std::vector<LogRecord> records;
  records.reserve(h.records);
  uint64_t at = kLogBlockHeaderBytes;
  for (uint32_t i = 0; i < h.records; i++) {
    auto bad = [&](const std::string& why) {
      return CorruptionAt(kWhat, "record " + std::to_string(i) + " at byte " +
                                     std::to_string(at) + ": " + why);
    };
    if (payload_end - at < kLogRecordHeaderBytes) return bad("truncated header");
    const uint8_t* r = in.data() + at;
    if (!KnownType(r[0])) return bad("unknown type " + std::to_string(r[0]));
    if (!AllZero(r + 1, 7)) return bad("reserved bytes are not zero");
    LogRecord rec;
    rec.type = static_cast<LogRecordType>(r[0]);
    rec.volume_guid = LoadLe64(r + 8);
    rec.txg = LoadLe64(r + 16);
    rec.seq = LoadLe64(r + 24);
    rec.offset = LoadLe64(r + 32);
    rec.length = LoadLe64(r + 40);
    if (rec.txg == 0 || rec.seq == 0) return bad("txg or seq is 0");
    if (!records.empty() && rec.seq <= records.back().seq) return bad("seq does not increase");
    if (rec.length == 0 || rec.length > kMaxLogRecordDataBytes) {
      return bad("length " + std::to_string(rec.length) + " out of bounds");
    }
    if (rec.offset > UINT64_MAX - rec.length) return bad("offset + length overflows");
    if (rec.type == LogRecordType::kWrite) {
      if (payload_end - at - kLogRecordHeaderBytes < Pad8(rec.length)) {
        return bad("data runs past the payload");
      }
      rec.data.assign(r + kLogRecordHeaderBytes, r + kLogRecordHeaderBytes + rec.length);
    }
    at += rec.EncodedBytes();
    records.push_back(std::move(rec));
  }
  if (at != payload_end) {
    return CorruptionAt(kWhat, "records end at byte " + std::to_string(at) +
                                   ", payload at " + std::to_string(payload_end));
  }
  if (out != nullptr) *out = h;
  return records;
}

}  // namespace arcstore::format
