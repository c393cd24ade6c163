// CheckCacheDevice: a read-only look at a cache device (see l2_check.h).
#include "l2arc/l2_check.h"

#include "base/checksum.h"
#include "base/units.h"
#include "io/aligned_buffer.h"
#include "l2arc/l2_format.h"

namespace arcstore::l2arc {

Result<CacheDeviceCheck> CheckCacheDevice(io::Device& device, uint64_t pool_guid) {
  CacheDeviceCheck c;
  const uint32_t block = device.logical_block_size();
  const uint64_t label_bytes = (kLabelBytes + block - 1) / block * block;
  io::AlignedBuffer label_block(label_bytes, io::BufferAlignmentFor(device));
  ARC_RETURN_IF_ERROR(io::ReadSync(device, 0, label_block.span()));
  Result<L2Label> label = DecodeLabel(label_block.span());
  if (!label.ok()) {
    c.label_note = "no cache label (" + label.status().message() + ")";
    return c;
  }
  if (label->pool_guid != pool_guid) {
    c.label_note = "the cache of another pool";
    return c;
  }
  Result<L2Layout> layout = ComputeLayout(label->slot_data_bytes, block, device.size_bytes());
  if (!layout.ok() || layout->slot_count != label->slot_count ||
      layout->slot_stride_bytes != label->slot_stride_bytes) {
    c.label_note = "a label whose geometry does not fit the device";
    return c;
  }
  c.ours = true;
  c.epoch = label->epoch;
  c.slots = layout->slot_count;
  io::AlignedBuffer area(layout->header_area_bytes, io::BufferAlignmentFor(device));
  io::AlignedBuffer data(layout->slot_data_bytes, io::BufferAlignmentFor(device));
  for (uint64_t s = 0; s < layout->slot_count; s++) {
    if (!io::ReadSync(device, layout->SlotOffset(s), area.span()).ok()) {
      c.slots_unreadable++;
      continue;
    }
    HeaderFault fault = HeaderFault::kNone;
    Result<L2SlotHeader> h = DecodeSlotHeader(area.span(), *layout, &fault);
    if (!h.ok()) {
      (fault == HeaderFault::kDamaged ? c.slots_damaged : c.slots_blank)++;
      continue;
    }
    if (h->pool_guid != pool_guid || h->cache_guid != label->cache_guid) {
      c.slots_foreign++;
      continue;
    }
    c.slots_written++;
    c.blocks += h->entries.size();
    if (!io::ReadSync(device, layout->DataOffset(s), data.span()).ok()) {
      c.slots_unreadable++;
      c.bad_copies += h->entries.size();
      continue;
    }
    for (const L2SlotEntry& e : h->entries) {
      c.block_bytes += e.bytes;
      if (Xxh3_64(data.data() + e.offset, e.bytes) != e.checksum) c.bad_copies++;
    }
  }
  return c;
}

std::string DescribeCheck(const CacheDeviceCheck& c) {
  if (!c.ours) {
    return c.label_note + ": formatted afresh when the pool next opens it";
  }
  return "label ok (epoch " + std::to_string(c.epoch) + "); " + std::to_string(c.slots_written) +
         " of " + std::to_string(c.slots) + " slots written (" +
         std::to_string(c.slots_damaged) + " damaged, " + std::to_string(c.slots_foreign) +
         " of another cache, " + std::to_string(c.slots_unreadable) + " unreadable, " +
         std::to_string(c.slots_blank) + " blank), " + std::to_string(c.blocks) + " blocks (" +
         FormatBytes(c.block_bytes) + "), " + std::to_string(c.bad_copies) + " bad copies";
}

}  // namespace arcstore::l2arc
