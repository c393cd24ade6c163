// Label header encoding (docs/format.md, "Label header"):
//
//   0 magic | 8 version | 12 position | 16 pool guid | 24 device guid
//   32 device size E | 40 allocation unit | 44 uberblock slots | 48 device index
//   52 device count | 56 create txg | 64 config length | 68..111 reserved
//   112 xxh3-128 of bytes 0..111 followed by the config bytes
//   128 config: entries of { u16 key length, u16 zero, u32 value length, key, value }
#include "format/label.h"

#include <algorithm>
#include <set>

#include "base/units.h"
#include "format/encoding.h"
#include "format/uberblock.h"

namespace arcstore::format {

namespace {
constexpr std::string_view kWhat = "label header";
constexpr size_t kChecksumAt = 112;
constexpr size_t kEntryHeaderBytes = 8;

bool ValidKey(std::string_view key) {
  if (key.empty() || key.size() > kMaxConfigKeyBytes) return false;
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
  });
}
}  // namespace

std::optional<std::string> PoolConfig::Get(std::string_view key) const {
  for (const auto& [k, v] : entries) {
    if (k == key) return v;
  }
  return std::nullopt;
}

void PoolConfig::Set(std::string key, std::string value) {
  for (auto& [k, v] : entries) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  entries.emplace_back(std::move(key), std::move(value));
}

Status PoolConfig::Validate() const {
  if (entries.size() > kMaxConfigEntries) {
    return Status::InvalidArgument("pool config: " + std::to_string(entries.size()) +
                                   " entries, at most " + std::to_string(kMaxConfigEntries));
  }
  std::set<std::string_view> seen;
  size_t bytes = 0;
  for (const auto& [k, v] : entries) {
    if (!ValidKey(k)) return Status::InvalidArgument("pool config key '" + k + "': invalid");
    if (v.size() > kMaxConfigValueBytes) {
      return Status::InvalidArgument("pool config value of '" + k + "': longer than 1 KiB");
    }
    if (!seen.insert(k).second)
      return Status::InvalidArgument("pool config key '" + k + "': repeated");
    bytes += kEntryHeaderBytes + k.size() + v.size();
  }
  if (bytes > kMaxConfigBytes) {
    return Status::InvalidArgument("pool config: " + std::to_string(bytes) + " bytes, at most " +
                                   std::to_string(kMaxConfigBytes));
  }
  return Status::Ok();
}

static void EncodeConfig(const PoolConfig& config, std::vector<uint8_t>& out) {
  for (const auto& [k, v] : config.entries) {
    size_t at = out.size();
    out.resize(at + kEntryHeaderBytes + k.size() + v.size());
    StoreLe16(&out[at], static_cast<uint16_t>(k.size()));
    StoreLe32(&out[at + 4], static_cast<uint32_t>(v.size()));
    std::copy(k.begin(), k.end(), out.begin() + at + kEntryHeaderBytes);
    std::copy(v.begin(), v.end(), out.begin() + at + kEntryHeaderBytes + k.size());
  }
}

static Result<PoolConfig> DecodeConfig(std::span<const uint8_t> in) {
  PoolConfig config;
  size_t at = 0;
  while (at < in.size()) {
    std::string where = "config entry at byte " + std::to_string(kLabelHeaderFixedBytes + at);
    if (in.size() - at < kEntryHeaderBytes) return CorruptionAt(kWhat, where + ": truncated");
    size_t klen = LoadLe16(&in[at]), vlen = LoadLe32(&in[at + 4]);
    if (LoadLe16(&in[at + 2]) != 0) return CorruptionAt(kWhat, where + ": reserved not zero");
    if (klen == 0 || klen > kMaxConfigKeyBytes || vlen > kMaxConfigValueBytes ||
        in.size() - at - kEntryHeaderBytes < klen + vlen) {
      return CorruptionAt(kWhat, where + ": key or value length out of bounds");
    }
    const char* base = reinterpret_cast<const char*>(&in[at + kEntryHeaderBytes]);
    config.entries.emplace_back(std::string(base, klen), std::string(base + klen, vlen));
    if (config.entries.size() > kMaxConfigEntries) {
      return CorruptionAt(kWhat,
                          "more than " + std::to_string(kMaxConfigEntries) + " config entries");
    }
    at += kEntryHeaderBytes + klen + vlen;
  }
  Status s = config.Validate();
  if (!s.ok()) return CorruptionAt(kWhat, s.message());
  return config;
}

static Status CheckGeometry(const LabelHeader& h) {
  if (!IsPowerOfTwo(h.allocation_unit) || h.allocation_unit < kMinAllocationUnit ||
      h.allocation_unit > kMaxAllocationUnit) {
    return Status::InvalidArgument("allocation unit " + std::to_string(h.allocation_unit) +
                                   " at byte 40: not a power of two in [4 KiB, 64 KiB]");
  }
  if (h.uberblock_slots != kUberblockSlots) {
    return Status::InvalidArgument("uberblock slots " + std::to_string(h.uberblock_slots) +
                                   " at byte 44: must be " + std::to_string(kUberblockSlots));
  }
  if (h.device_size_bytes % kLabelHeaderRegionBytes != 0 ||
      !ComputeLayout(h.device_size_bytes, h.allocation_unit).ok()) {
    return Status::InvalidArgument("device size " + std::to_string(h.device_size_bytes) +
                                   " at byte 32: not a usable multiple of 64 KiB");
  }
  if (h.device_count == 0 || h.device_count > 256 || h.device_index >= h.device_count) {
    return Status::InvalidArgument("device index/count at byte 48: out of bounds");
  }
  if (h.pool_guid == 0 || h.device_guid == 0) {
    return Status::InvalidArgument("pool or device guid at byte 16 is zero");
  }
  if (h.create_txg == 0) return Status::InvalidArgument("create txg at byte 56 is zero");
  if (h.position != LabelPosition::kFront && h.position != LabelPosition::kBack) {
    return Status::InvalidArgument("position at byte 12: neither front nor back");
  }
  return Status::Ok();
}

Result<std::vector<uint8_t>> EncodeLabelHeader(const LabelHeader& h) {
  ARC_RETURN_IF_ERROR(h.config.Validate());
  ARC_RETURN_IF_ERROR(CheckGeometry(h).WithContext(kWhat));
  std::vector<uint8_t> out(kLabelHeaderFixedBytes, 0);
  EncodeConfig(h.config, out);
  size_t config_bytes = out.size() - kLabelHeaderFixedBytes;
  uint8_t* p = out.data();
  StoreLe64(p, kLabelMagic);
  StoreLe32(p + 8, kFormatVersion);
  StoreLe32(p + 12, static_cast<uint32_t>(h.position));
  StoreLe64(p + 16, h.pool_guid);
  StoreLe64(p + 24, h.device_guid);
  StoreLe64(p + 32, h.device_size_bytes);
  StoreLe32(p + 40, h.allocation_unit);
  StoreLe32(p + 44, h.uberblock_slots);
  StoreLe32(p + 48, h.device_index);
  StoreLe32(p + 52, h.device_count);
  StoreLe64(p + 56, h.create_txg);
  StoreLe32(p + 64, static_cast<uint32_t>(config_bytes));
  Xxh3_128Stream sum;
  sum.Update(p, kChecksumAt);
  sum.Update(p + kLabelHeaderFixedBytes, config_bytes);
  StoreChecksum(p + kChecksumAt, sum.Digest());
  out.resize(kLabelHeaderRegionBytes, 0);
  return out;
}

Result<LabelHeader> DecodeLabelHeader(std::span<const uint8_t> in) {
  if (in.size() < kLabelHeaderFixedBytes || in.size() > kLabelHeaderRegionBytes) {
    return BadLength(kWhat, in.size(), "128 to ", kLabelHeaderRegionBytes);
  }
  const uint8_t* p = in.data();
  ARC_RETURN_IF_ERROR(CheckMagicAndVersion(kWhat, p, kLabelMagic));
  size_t config_bytes = LoadLe32(p + 64);
  if (config_bytes > kMaxConfigBytes || config_bytes > in.size() - kLabelHeaderFixedBytes) {
    return CorruptionAt(
        kWhat, "config length " + std::to_string(config_bytes) + " at byte 64 out of bounds");
  }
  Xxh3_128Stream sum;
  sum.Update(p, kChecksumAt);
  sum.Update(p + kLabelHeaderFixedBytes, config_bytes);
  Checksum128 stored = LoadChecksum(p + kChecksumAt), computed = sum.Digest();
  if (stored != computed) {
    return CorruptionAt(kWhat, "checksum mismatch at byte 112: stored " + stored.ToHex() +
                                   ", computed " + computed.ToHex());
  }
  size_t end = kLabelHeaderFixedBytes + config_bytes;
  if (!AllZero(p + 68, kChecksumAt - 68) || !AllZero(p + end, in.size() - end)) {
    return CorruptionAt(kWhat, "reserved or padding bytes are not zero");
  }
  LabelHeader h{.position = static_cast<LabelPosition>(LoadLe32(p + 12)),
                .pool_guid = LoadLe64(p + 16),
                .device_guid = LoadLe64(p + 24),
                .device_size_bytes = LoadLe64(p + 32),
                .allocation_unit = LoadLe32(p + 40),
                .uberblock_slots = LoadLe32(p + 44),
                .device_index = LoadLe32(p + 48),
                .device_count = LoadLe32(p + 52),
                .create_txg = LoadLe64(p + 56)};
  Status geometry = CheckGeometry(h);
  if (!geometry.ok()) return CorruptionAt(kWhat, geometry.message());
  ARC_ASSIGN_OR_RETURN(h.config, DecodeConfig(std::span(p + kLabelHeaderFixedBytes, config_bytes)));
  return h;
}

uint64_t DeviceLayout::SlotOffset(LabelPosition pos, uint32_t slot) const {
  uint64_t ring = pos == LabelPosition::kFront ? front_ring : back_ring;
  return ring + uint64_t{slot % kUberblockSlots} * allocation_unit;
}

Result<uint32_t> AllocationUnitFor(uint32_t logical_block_size) {
  uint32_t unit = std::max(logical_block_size, kMinAllocationUnit);
  if (!IsPowerOfTwo(unit) || unit > kMaxAllocationUnit) {
    return Status::InvalidArgument("logical block size " + std::to_string(logical_block_size) +
                                   ": the allocation unit must be a power of two up to 64 KiB");
  }
  return unit;
}

uint64_t BackHeaderOffset(uint64_t raw_size_bytes) {
  uint64_t end = raw_size_bytes / kLabelHeaderRegionBytes * kLabelHeaderRegionBytes;
  return end < kLabelHeaderRegionBytes ? 0 : end - kLabelHeaderRegionBytes;
}

Result<DeviceLayout> ComputeLayout(uint64_t raw_size_bytes, uint32_t allocation_unit) {
  if (!IsPowerOfTwo(allocation_unit) || allocation_unit < kMinAllocationUnit ||
      allocation_unit > kMaxAllocationUnit) {
    return Status::InvalidArgument("allocation unit " + std::to_string(allocation_unit) +
                                   ": must be a power of two in [4 KiB, 64 KiB]");
  }
  DeviceLayout l;
  l.end_bytes = raw_size_bytes / kLabelHeaderRegionBytes * kLabelHeaderRegionBytes;
  l.allocation_unit = allocation_unit;
  l.ring_bytes = uint64_t{kUberblockSlots} * allocation_unit;
  uint64_t label = kLabelHeaderRegionBytes + l.ring_bytes;
  if (l.end_bytes < 2 * label + kMiB) {
    return Status::InvalidArgument("device of " + std::to_string(raw_size_bytes) +
                                   " bytes: too small for two labels of " + FormatBytes(label) +
                                   " and 1 MiB of data");
  }
  l.front_header = 0;
  l.front_ring = kLabelHeaderRegionBytes;
  l.data_begin = l.front_ring + l.ring_bytes;
  l.back_header = l.end_bytes - kLabelHeaderRegionBytes;
  l.back_ring = l.back_header - l.ring_bytes;
  l.data_end = l.back_ring;
  return l;
}

}  // namespace arcstore::format
