// The cache's rebuild at open: the index from the slot headers (theory of
// operation in l2_cache.cc).
#include <algorithm>
#include <optional>
#include <string>

#include "base/thread_name.h"
#include "l2arc/l2_cache.h"

namespace arcstore::l2arc {

void L2Cache::RebuildLoop() {
  NameThisThread("l2arc_rebuild");
  io::AlignedBuffer area(layout_.header_area_bytes, io::BufferAlignmentFor(*env_.device));
  uint64_t valid = 0, newest_sequence = 0, newest_slot = 0;
  for (uint64_t s = 0; s < layout_.slot_count; s++) {
    {
      MutexLock l(&mu_);
      if (stop_) break;
    }
    Result<L2SlotHeader> h = ReadSlotHeader(s, &area);
    if (!h.ok()) continue;
    InsertRebuiltSlot(s, *h);
    valid++;
    if (h->sequence >= newest_sequence) {
      newest_sequence = h->sequence;
      newest_slot = s;
    }
  }
  MutexLock l(&mu_);
  if (valid > 0) {
    head_ = (newest_slot + 1) % layout_.slot_count;
    next_sequence_ = newest_sequence + 1;
    wrapped_ = valid == layout_.slot_count;
  }
  interval_start_ns_ = env_.clock->NowNs();
  rebuilt_ = true;
  idle_cv_.SignalAll();
}

Result<L2SlotHeader> L2Cache::ReadSlotHeader(uint64_t slot, io::AlignedBuffer* area) {
  Status read = io::ReadSync(*env_.device, layout_.SlotOffset(slot), area->span());
  if (!read.ok()) {
    stats_.io_errors->Add();
    return read;
  }
  HeaderFault fault = HeaderFault::kNone;
  Result<L2SlotHeader> h = DecodeSlotHeader(area->span(), layout_, &fault);
  if (!h.ok()) {
    if (fault == HeaderFault::kDamaged) stats_.rebuild_bad_slots->Add();
    return h.status();
  }
  if (h->pool_guid != label_.pool_guid || h->cache_guid != cache_guid_) {
    return Status::NotFound("l2arc slot " + std::to_string(slot) + " of another cache");
  }
  return h;
}

std::optional<uint64_t> L2Cache::BirthBound(uint64_t epoch) const {
  for (const L2EpochBound& b : label_.bounds) {
    if (b.epoch == epoch) return std::min(b.txg, env_.committed_txg);
  }
  return std::nullopt;
}

void L2Cache::InsertRebuiltSlot(uint64_t slot, const L2SlotHeader& header) {
  const std::optional<uint64_t> bound = BirthBound(header.epoch);
  const auto s = static_cast<uint32_t>(slot);
  uint64_t kept = 0, dropped = 0;
  MutexLock l(&mu_);
  slots_[s].sequence = header.sequence;
  for (const L2SlotEntry& e : header.entries) {
    if (!bound.has_value() || e.key.birth > *bound) {
      dropped++;
      continue;
    }
    // A key in two slots: the newer slot's copy stays (it lives longer in
    // the ring); both hold the same bytes.
    const uint32_t other = index_.Find(e.key);
    if (other != kNoNode) {
      if (slots_[index_.location(other).slot].sequence > header.sequence) continue;
      DropNodeLocked(other);
    }
    if (index_.Insert(e.key, L2Location{s, e.offset, e.bytes, e.checksum}) == kNoNode) break;
    data_bytes_ += e.bytes;
    kept++;
  }
  if (index_.slot_entries(s) > 0) {
    slots_[s].device_bytes = layout_.header_area_bytes + header.data_bytes;
    device_bytes_ += slots_[s].device_bytes;
  }
  stats_.rebuild_entries->Add(kept);
  stats_.rebuild_dropped->Add(dropped);
  UpdateGaugesLocked();
}

}  // namespace arcstore::l2arc
