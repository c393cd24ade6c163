// Label and ring I/O over a Device. The offsets come from DeviceLayout
// (label.h); the encodings from label.cc and uberblock.cc. Reads of a
// damaged copy are never fatal while the other copy is good, and every
// damaged copy is reported with its place.
#include "format/label_io.h"

#include <algorithm>
#include <map>
#include <optional>

#include "format/encoding.h"
#include "io/aligned_buffer.h"

namespace arcstore::format {

namespace {

Status WriteAt(io::Device& device, uint64_t offset, const std::vector<uint8_t>& bytes) {
  io::AlignedBuffer buf(bytes.size(), io::BufferAlignmentFor(device));
  std::copy(bytes.begin(), bytes.end(), buf.data());
  return io::WriteSync(device, offset, buf.span());
}

Result<io::AlignedBuffer> ReadAt(io::Device& device, uint64_t offset, uint64_t length) {
  io::AlignedBuffer buf(length, io::BufferAlignmentFor(device));
  ARC_RETURN_IF_ERROR(io::ReadSync(device, offset, buf.span()));
  return buf;
}

bool SameExceptPosition(LabelHeader a, LabelHeader b) {
  a.position = b.position;
  return a == b;
}

bool SameExceptConfig(LabelHeader a, LabelHeader b) {
  a.position = b.position;
  a.config = b.config;
  return a == b;
}

Status WriteHeader(io::Device& device, const DeviceLayout& layout, LabelHeader h,
                   LabelPosition pos) {
  h.position = pos;
  ARC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, EncodeLabelHeader(h));
  return WriteAt(device, pos == LabelPosition::kFront ? layout.front_header : layout.back_header,
                 bytes);
}

std::string PositionName(LabelPosition p) { return p == LabelPosition::kFront ? "front" : "back"; }

}  // namespace

Status WriteLabels(io::Device& device, const LabelHeader& header) {
  ARC_ASSIGN_OR_RETURN(DeviceLayout layout,
                       ComputeLayout(device.size_bytes(), header.allocation_unit));
  if (layout.end_bytes != header.device_size_bytes) {
    return Status::InvalidArgument(
        "label: device size " + std::to_string(header.device_size_bytes) +
        " does not match the device (" + std::to_string(layout.end_bytes) + ")");
  }
  std::vector<uint8_t> zeros(layout.ring_bytes, 0);
  for (LabelPosition pos : {LabelPosition::kFront, LabelPosition::kBack}) {
    ARC_RETURN_IF_ERROR(WriteHeader(device, layout, header, pos));
    bool front = pos == LabelPosition::kFront;
    ARC_RETURN_IF_ERROR(WriteAt(device, front ? layout.front_ring : layout.back_ring, zeros));
  }
  return Status::Ok();
}

uint64_t ConfigGeneration(const PoolConfig& config) {
  std::optional<std::string> g = config.Get(kConfigGenerationKey);
  if (!g) return 0;
  uint64_t v = 0;
  for (char c : *g) {
    if (c < '0' || c > '9' || v > (UINT64_MAX - 9) / 10) return 0;
    v = v * 10 + static_cast<uint64_t>(c - '0');
  }
  return v;
}

Status RewriteLabelHeaders(io::Device& device, const LabelHeader& header) {
  ARC_ASSIGN_OR_RETURN(DeviceLayout layout,
                       ComputeLayout(device.size_bytes(), header.allocation_unit));
  if (layout.end_bytes != header.device_size_bytes) {
    return Status::InvalidArgument("label: device size does not match the device");
  }
  for (LabelPosition pos : {LabelPosition::kFront, LabelPosition::kBack}) {
    ARC_RETURN_IF_ERROR(WriteHeader(device, layout, header, pos));
    ARC_RETURN_IF_ERROR(io::FlushSync(device));
  }
  return Status::Ok();
}

static Result<LabelHeader> ReadOneLabel(io::Device& device, LabelPosition pos) {
  uint64_t offset = pos == LabelPosition::kFront ? 0 : BackHeaderOffset(device.size_bytes());
  if (pos == LabelPosition::kBack && offset == 0) {
    return Status::Corruption("back label: device too small to hold one");
  }
  ARC_ASSIGN_OR_RETURN(io::AlignedBuffer buf, ReadAt(device, offset, kLabelHeaderRegionBytes));
  auto h = DecodeLabelHeader(buf.span());
  if (!h.ok())
    return h.status().WithContext(PositionName(pos) + " label at offset " + std::to_string(offset));
  if (h->position != pos) {
    return Status::Corruption(PositionName(pos) + " label at offset " + std::to_string(offset) +
                              ": says it is the " + PositionName(h->position) + " label");
  }
  if (h->device_size_bytes != BackHeaderOffset(device.size_bytes()) + kLabelHeaderRegionBytes) {
    return Status::Corruption(PositionName(pos) + " label: device size " +
                              std::to_string(h->device_size_bytes) + " but the device has " +
                              std::to_string(device.size_bytes()) + " bytes");
  }
  return h;
}

Result<LabelHeader> ReadLabel(io::Device& device, std::vector<std::string>* warnings) {
  auto front = ReadOneLabel(device, LabelPosition::kFront);
  auto back = ReadOneLabel(device, LabelPosition::kBack);
  if (front.ok() && back.ok() && !SameExceptPosition(*front, *back)) {
    const uint64_t gf = ConfigGeneration(front->config), gb = ConfigGeneration(back->config);
    if (!SameExceptConfig(*front, *back) || gf == gb) {
      return Status::Corruption("device " + device.name() + ": front and back labels disagree");
    }
    if (warnings != nullptr) {
      warnings->push_back("front and back labels differ in their config (generations " +
                          std::to_string(gf) + " and " + std::to_string(gb) +
                          ", a config change cut short): using generation " +
                          std::to_string(std::max(gf, gb)));
    }
    return gf > gb ? front : back;
  }
  if (!front.ok() && !back.ok()) {
    return Status::Corruption("device " + device.name() + ": no usable label (" +
                              front.status().message() + "; " + back.status().message() + ")");
  }
  for (const auto* r : {&front, &back}) {
    if (!r->ok() && warnings != nullptr) warnings->push_back(r->status().message());
  }
  return front.ok() ? front : back;
}

Status WriteUberblock(io::Device& device, const DeviceLayout& layout, const Uberblock& ub) {
  std::vector<uint8_t> slot = EncodeUberblock(ub);
  slot.resize(layout.allocation_unit, 0);
  for (LabelPosition pos : {LabelPosition::kFront, LabelPosition::kBack}) {
    ARC_RETURN_IF_ERROR(WriteAt(device, layout.SlotOffset(pos, ub.slot()), slot));
  }
  return Status::Ok();
}

// Decodes one slot; nullopt with no problem for an empty slot.
static std::optional<Uberblock> DecodeSlot(const uint8_t* p, const DeviceLayout& layout,
                                           uint64_t pool_guid, uint32_t slot,
                                           std::string* problem) {
  if (AllZero(p, layout.allocation_unit)) return std::nullopt;
  auto ub = DecodeUberblock(std::span(p, kUberblockBytes));
  if (!ub.ok()) {
    *problem = ub.status().message();
  } else if (!AllZero(p + kUberblockBytes, layout.allocation_unit - kUberblockBytes)) {
    *problem = "bytes after the uberblock are not zero";
  } else if (ub->pool_guid != pool_guid) {
    *problem = "belongs to pool " + Hex64(ub->pool_guid);
  } else if (ub->slot() != slot) {
    *problem = "txg " + std::to_string(ub->txg) + " in the wrong slot";
  } else {
    return *ub;
  }
  return std::nullopt;
}

Result<UberblockScan> ScanUberblocks(io::Device& device, const DeviceLayout& layout,
                                     uint64_t pool_guid) {
  UberblockScan scan;
  std::map<uint64_t, Uberblock, std::greater<>> by_txg;
  for (LabelPosition pos : {LabelPosition::kFront, LabelPosition::kBack}) {
    uint64_t ring = layout.SlotOffset(pos, 0);
    ARC_ASSIGN_OR_RETURN(io::AlignedBuffer buf, ReadAt(device, ring, layout.ring_bytes));
    for (uint32_t slot = 0; slot < kUberblockSlots; ++slot) {
      std::string problem;
      uint64_t at = uint64_t{slot} * layout.allocation_unit;
      auto ub = DecodeSlot(buf.data() + at, layout, pool_guid, slot, &problem);
      std::string where = PositionName(pos) + " ring slot " + std::to_string(slot) + " (offset " +
                          std::to_string(ring + at) + "): ";
      if (!problem.empty()) scan.problems.push_back(where + problem);
      if (!ub) continue;
      auto [it, inserted] = by_txg.emplace(ub->txg, *ub);
      if (!inserted && !(it->second == *ub)) {
        scan.problems.push_back(where + "differs from the front copy of txg " +
                                std::to_string(ub->txg));
      }
    }
  }
  for (auto& [txg, ub] : by_txg) scan.valid.push_back(ub);
  return scan;
}

}  // namespace arcstore::format
