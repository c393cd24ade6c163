// Space allocation: theory of operation.
//
// The allocatable region [start, end) of a device is a set of free extents
// and a set of allocated extents, in whole allocation units:
//
//   start                                                          end
//   |###A###|...free...|##A##|#A#|......free......|###A###|..free..|
//                      ^ cursor: the next allocation starts here
//
// Allocation is next-fit from a cursor, over LARGE free extents (at least
// large_extent_bytes, the write aggregation limit): the sync thread
// allocates every record of a txg in turn, so consecutive records land side
// by side and the I/O layer merges their writes into large I/Os.
//
//   Allocate(len):
//     1. the free extent holding the cursor has room -> take it at the
//        cursor (continues the run of the previous allocation, whatever
//        that extent's size; in a new txg, only when a large extent's
//        worth is left from the cursor, as the new txg's writes cannot
//        merge with the previous txg's);
//     2. else the first large extent at or after the cursor (wrapping to
//        the first one) -> take it at its start;
//     3. else (no large extent left: space is short) the best fit, the
//        smallest free extent with room, counted in hole_allocations.
//   The cursor then moves to the end of what was taken.
//   A request longer than large_extent_bytes goes straight to 3.
//
// Why not plain next-fit: once a pool has been rewritten, frees of single
// records leave holes of one record everywhere. Next-fit (or best fit)
// fills them one record at a time, and a txg's writes scatter into I/Os of
// one record, so an aged pool writes small I/Os where a fresh one wrote
// large ones. Skipping the holes keeps runs long;
// the holes merge into large extents again as their neighbours are freed.
//
// Frees are deferred: an extent freed in txg T is still referenced by the
// trees of txgs T-1 and earlier, which stay valid rollback targets until
// T + defer_txgs has synced; only then does it join the free map.
//
//   Free(e, T) --> deferred_[T] --SyncDone(T + defer_txgs)--> free_
//
// An extent allocated and freed in the same unsynced txg was never part of
// a durable tree and is released at once.
//
// Persistence: every allocation and free is also appended to a list of
// SpaceRecords that the pool writes to the space log in the same txg; Load
// replays the log (or its condensed form) at open. Because the log is part
// of the txg it describes, the allocator after a crash matches the txg the
// pool opened at: allocations of a lost txg were never logged, so they are
// free again.
//
// The test-only unsafe_immediate_reuse makes frees allocatable at once and
// allocation best fit only, so that the small extents just freed are
// taken again soon and the crash harness meets the reuse it must catch.
//
// The reserve: data allocations fail while free space would drop below
// reserve_bytes; metadata allocations may use it, so that a txg that only
// frees (trim, destroy) can always commit on a full pool. Metadata blocks
// (indirect blocks, space log blocks of up to 1 MiB) must be contiguous,
// so the reserve is kept in large extents too: once large extents hold
// less than reserve_bytes (plus the request), data that would take a
// large extent takes the best-fitting hole instead, when one has room
// (a run's rest at the cursor, no longer large, is still used). Without
// that, 4 KiB records rewritten at random took every large extent and left
// only 4 KiB holes, and a sync failed to place a 40 KiB indirect block with
// 6.6 MiB free.
//
// Invariants (checked by tests after every operation):
//   free_bytes + allocated_bytes + deferred_bytes == end - start
//   free extents are disjoint, coalesced, unit-aligned, inside [start, end)
//   free_ and free_by_size_ hold the same extents; large_ holds exactly
//   those of them that are large, large_free_bytes their total
//
// Limits: each allocation costs O(log n) in the number of free extents.
// Stats (Usage): free, allocated, deferred and large free bytes, the
// largest free extent, the number of free extents, hole_allocations.
#include "space/allocator.h"

#include <algorithm>

#include "base/check.h"
#include "base/units.h"

namespace arcstore::space {

namespace {

uint64_t RoundUp(uint64_t v, uint64_t unit) { return (v + unit - 1) / unit * unit; }

std::string Describe(const Extent& e) {
  return "[" + std::to_string(e.offset_bytes) + ", +" + std::to_string(e.length_bytes) + ")";
}

}  // namespace

uint64_t SpaceOptions::DefaultReserve(uint64_t space_bytes) {
  uint64_t r = std::max<uint64_t>(space_bytes / 64, 4 * kMiB);
  return std::min(r, space_bytes / 2);
}

Status SpaceOptions::Validate() const {
  if (!IsPowerOfTwo(unit_bytes) || unit_bytes < 4096) {
    return Status::InvalidArgument("space: unit_bytes " + std::to_string(unit_bytes) +
                                   " must be a power of two >= 4096");
  }
  if (start_bytes % unit_bytes != 0 || end_bytes % unit_bytes != 0) {
    return Status::InvalidArgument("space: start_bytes and end_bytes must be multiples of " +
                                   std::to_string(unit_bytes));
  }
  if (end_bytes <= start_bytes) {
    return Status::InvalidArgument("space: end_bytes " + std::to_string(end_bytes) +
                                   " must be past start_bytes " + std::to_string(start_bytes));
  }
  if (reserve_bytes > (end_bytes - start_bytes) / 2) {
    return Status::InvalidArgument("space: reserve_bytes " + std::to_string(reserve_bytes) +
                                   " exceeds half the space");
  }
  if (defer_txgs < 2 && !unsafe_allow_short_defer) {
    return Status::InvalidArgument("space: defer_txgs " + std::to_string(defer_txgs) +
                                   " is below 2, which breaks rollback (test-only)");
  }
  if (large_extent_bytes < unit_bytes || large_extent_bytes % unit_bytes != 0 ||
      large_extent_bytes > kGiB) {
    return Status::InvalidArgument("space: large_extent_bytes " +
                                   std::to_string(large_extent_bytes) + " must be a multiple of " +
                                   std::to_string(unit_bytes) + " from " +
                                   std::to_string(unit_bytes) + " to 1 GiB");
  }
  if (defer_txgs > 16) {
    return Status::InvalidArgument("space: defer_txgs " + std::to_string(defer_txgs) +
                                   " exceeds the limit of 16");
  }
  return Status::Ok();
}

SpaceAllocator::SpaceAllocator(const SpaceOptions& options) : options_(options) {
  ARC_CHECK(options_.Validate().ok()) << options_.Validate().ToString();
  cursor_bytes_ = options_.start_bytes;
  InsertFree(Extent{options_.start_bytes, options_.end_bytes - options_.start_bytes});
}

Status SpaceAllocator::CheckExtent(const Extent& e, const char* what) const {
  const uint64_t unit = options_.unit_bytes;
  if (e.length_bytes == 0 || e.offset_bytes % unit != 0 || e.length_bytes % unit != 0 ||
      e.offset_bytes < options_.start_bytes || e.offset_bytes > options_.end_bytes ||
      e.length_bytes > options_.end_bytes - e.offset_bytes) {
    return Status::Corruption(std::string("space: ") + what + " of extent " + Describe(e) +
                              " outside [" + std::to_string(options_.start_bytes) + ", " +
                              std::to_string(options_.end_bytes) + ") or not aligned to " +
                              std::to_string(unit));
  }
  return Status::Ok();
}

void SpaceAllocator::AddFreeEntry(uint64_t offset_bytes, uint64_t length_bytes) {
  free_.emplace(offset_bytes, length_bytes);
  free_by_size_.emplace(length_bytes, offset_bytes);
  free_bytes_ += length_bytes;
  if (length_bytes >= options_.large_extent_bytes) {
    large_.insert(offset_bytes);
    large_free_bytes_ += length_bytes;
  }
}

void SpaceAllocator::EraseFreeEntry(FreeMap::iterator it) {
  const auto [offset, length] = *it;
  free_by_size_.erase({length, offset});
  if (length >= options_.large_extent_bytes) {
    large_.erase(offset);
    large_free_bytes_ -= length;
  }
  free_bytes_ -= length;
  free_.erase(it);
}

void SpaceAllocator::InsertFree(Extent e) {
  // Coalesce with the neighbour before and after.
  auto next = free_.lower_bound(e.offset_bytes);
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == e.offset_bytes) {
      e.offset_bytes = prev->first;
      e.length_bytes += prev->second;
      EraseFreeEntry(prev);
    }
  }
  if (next != free_.end() && next->first == e.end_bytes()) {
    e.length_bytes += next->second;
    EraseFreeEntry(next);
  }
  AddFreeEntry(e.offset_bytes, e.length_bytes);
}

// Removes `taken` (a sub-range of the free extent at `it`) from the free
// maps, putting back what is left on either side.
void SpaceAllocator::RemoveFree(FreeMap::iterator it, const Extent& taken) {
  const Extent whole{it->first, it->second};
  EraseFreeEntry(it);
  if (taken.offset_bytes > whole.offset_bytes) {
    AddFreeEntry(whole.offset_bytes, taken.offset_bytes - whole.offset_bytes);
  }
  if (taken.end_bytes() < whole.end_bytes()) {
    AddFreeEntry(taken.end_bytes(), whole.end_bytes() - taken.end_bytes());
  }
}

Status SpaceAllocator::TakeFromFree(const Extent& e) {
  auto it = free_.upper_bound(e.offset_bytes);
  if (it == free_.begin()) {
    return Status::Corruption("space: extent " + Describe(e) + " is not free");
  }
  --it;
  if (it->first + it->second < e.end_bytes()) {
    return Status::Corruption("space: extent " + Describe(e) + " is not free");
  }
  RemoveFree(it, e);
  return Status::Ok();
}

std::pair<uint64_t, SpaceAllocator::FreeMap::iterator> SpaceAllocator::PlaceInLarge(uint64_t len) {
  if (len > options_.large_extent_bytes || large_.empty()) return {0, free_.end()};
  auto large = large_.lower_bound(cursor_bytes_);
  if (large == large_.end()) large = large_.begin();  // wrap round
  return {*large, free_.find(*large)};
}

std::pair<uint64_t, SpaceAllocator::FreeMap::iterator> SpaceAllocator::Place(uint64_t len,
                                                                             AllocClass cls,
                                                                             uint64_t txg) {
  if (options_.unsafe_immediate_reuse) return BestFit(len);
  auto placed = PlaceInRun(len, txg);
  if (placed.second == free_.end()) return BestFit(len);
  // Data leaves the last reserve_bytes of large extents to metadata
  // (blocks of up to 1 MiB that must be contiguous): a hole, when one has
  // room, instead.
  if (cls == AllocClass::kData && placed.second->second >= options_.large_extent_bytes &&
      large_free_bytes_ < options_.reserve_bytes + len) {
    auto fit = free_by_size_.lower_bound({len, 0});
    if (fit != free_by_size_.end() && fit->first < options_.large_extent_bytes) {
      hole_allocations_++;
      return {fit->second, free_.find(fit->second)};
    }
  }
  return placed;
}

std::pair<uint64_t, SpaceAllocator::FreeMap::iterator> SpaceAllocator::PlaceInRun(uint64_t len,
                                                                                  uint64_t txg) {
  // 1. The free extent holding the cursor, when it has room from there (in
  //    a new txg, a large extent's worth: a short rest would be an I/O of
  //    its own).
  auto it = free_.upper_bound(cursor_bytes_);
  if (it != free_.begin()) {
    auto prev = std::prev(it);
    const uint64_t need = txg == cursor_txg_ ? len : std::max(len, options_.large_extent_bytes);
    if (prev->first + prev->second >= cursor_bytes_ + need) return {cursor_bytes_, prev};
  }
  // 2. The next large extent.
  return PlaceInLarge(len);
}

// 3. The smallest free extent with room.
std::pair<uint64_t, SpaceAllocator::FreeMap::iterator> SpaceAllocator::BestFit(uint64_t len) {
  auto fit = free_by_size_.lower_bound({len, 0});
  if (fit == free_by_size_.end()) return {0, free_.end()};
  if (fit->first < options_.large_extent_bytes) hole_allocations_++;
  return {fit->second, free_.find(fit->second)};
}

Result<Extent> SpaceAllocator::Allocate(uint64_t size_bytes, AllocClass cls, uint64_t txg) {
  const uint64_t len = RoundUp(std::max<uint64_t>(size_bytes, 1), options_.unit_bytes);
  const uint64_t floor = cls == AllocClass::kData ? options_.reserve_bytes : 0;
  if (free_bytes_ < len || free_bytes_ - len < floor) {
    return Status::NoSpace("space: no room for " + FormatBytes(len) + ": " +
                           FormatBytes(free_bytes_) + " free, " +
                           FormatBytes(options_.reserve_bytes) + " reserved for metadata, " +
                           FormatBytes(deferred_bytes_) + " waiting for frees to commit");
  }
  const auto [offset, it] = Place(len, cls, txg);
  if (it == free_.end()) {
    uint64_t largest = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
    return Status::NoSpace("space: no contiguous " + FormatBytes(len) + " free (largest " +
                           FormatBytes(largest) + " of " + FormatBytes(free_bytes_) + " free)");
  }
  const Extent got{offset, len};
  RemoveFree(it, got);
  allocated_.emplace(got.offset_bytes, Allocation{got.length_bytes, txg});
  allocated_bytes_ += got.length_bytes;
  cursor_bytes_ = got.end_bytes();
  cursor_txg_ = txg;
  pending_records_.push_back(SpaceRecord{SpaceRecord::Kind::kAlloc, txg, got});
  return got;
}

Status SpaceAllocator::Free(const Extent& extent, uint64_t txg) {
  ARC_RETURN_IF_ERROR(CheckExtent(extent, "free"));
  auto it = allocated_.find(extent.offset_bytes);
  if (it == allocated_.end() || it->second.length_bytes != extent.length_bytes) {
    return Status::Corruption("space: free of " + Describe(extent) +
                              " which is not an allocated extent (double free?)");
  }
  const uint64_t alloc_txg = it->second.txg;
  allocated_.erase(it);
  allocated_bytes_ -= extent.length_bytes;
  pending_records_.push_back(SpaceRecord{SpaceRecord::Kind::kFree, txg, extent});
  if (alloc_txg == txg || options_.unsafe_immediate_reuse) {
    InsertFree(extent);  // never part of a durable tree (or a test says so)
  } else {
    deferred_[txg].push_back(extent);
    deferred_bytes_ += extent.length_bytes;
  }
  return Status::Ok();
}

void SpaceAllocator::SyncDone(uint64_t txg) {
  if (txg < options_.defer_txgs) return;
  const uint64_t ripe = txg - options_.defer_txgs;
  while (!deferred_.empty() && deferred_.begin()->first <= ripe) {
    for (const Extent& e : deferred_.begin()->second) {
      deferred_bytes_ -= e.length_bytes;
      InsertFree(e);
    }
    deferred_.erase(deferred_.begin());
  }
}

std::vector<SpaceRecord> SpaceAllocator::TakeRecords() {
  std::vector<SpaceRecord> out;
  out.swap(pending_records_);
  return out;
}

std::vector<SpaceRecord> SpaceAllocator::CondensedRecords(uint64_t txg) const {
  std::vector<SpaceRecord> out;
  out.reserve(allocated_.size());
  for (const auto& [offset, a] : allocated_) {
    out.push_back(SpaceRecord{SpaceRecord::Kind::kAlloc, a.txg, Extent{offset, a.length_bytes}});
  }
  // A deferred free is replayed as an allocation in the txg before it and
  // then the free, so that Load() keeps it deferred for the right txgs.
  for (const auto& [free_txg, extents] : deferred_) {
    for (const Extent& e : extents) {
      out.push_back(SpaceRecord{SpaceRecord::Kind::kAlloc, std::max<uint64_t>(1, free_txg - 1), e});
      out.push_back(SpaceRecord{SpaceRecord::Kind::kFree, free_txg, e});
    }
  }
  // In txg order (stable), as the space log stores records.
  std::stable_sort(out.begin(), out.end(),
                   [](const SpaceRecord& a, const SpaceRecord& b) { return a.txg < b.txg; });
  (void)txg;
  return out;
}

Result<SpaceAllocator> SpaceAllocator::Load(const SpaceOptions& options,
                                            const std::vector<SpaceRecord>& records,
                                            uint64_t synced_txg) {
  ARC_RETURN_IF_ERROR(options.Validate());
  SpaceAllocator a(options);
  uint64_t newest_txg = 0;
  for (size_t i = 0; i < records.size(); i++) {
    const SpaceRecord& r = records[i];
    // A record of txg X was made after txg X-1 had synced: age the frees
    // exactly as the running pool did.
    if (r.txg > newest_txg) {
      newest_txg = r.txg;
      a.SyncDone(newest_txg - 1);
    }
    Status s = a.CheckExtent(r.extent, r.kind == SpaceRecord::Kind::kAlloc ? "alloc" : "free");
    if (s.ok() && r.txg > synced_txg) {
      s = Status::Corruption("space: record of txg " + std::to_string(r.txg) +
                             " is newer than the pool's txg " + std::to_string(synced_txg));
    }
    if (s.ok() && r.kind == SpaceRecord::Kind::kAlloc) {
      s = a.TakeFromFree(r.extent);
      if (s.ok()) {
        a.allocated_.emplace(r.extent.offset_bytes, Allocation{r.extent.length_bytes, r.txg});
        a.allocated_bytes_ += r.extent.length_bytes;
      }
    } else if (s.ok()) {
      s = a.Free(r.extent, r.txg);
    }
    if (!s.ok()) return s.WithContext("space log record " + std::to_string(i));
  }
  a.pending_records_.clear();
  a.SyncDone(synced_txg);
  a.cursor_bytes_ = options.start_bytes;
  return a;
}

SpaceUsage SpaceAllocator::Usage() const {
  SpaceUsage u;
  u.total_bytes = options_.end_bytes - options_.start_bytes;
  u.allocated_bytes = allocated_bytes_;
  u.free_bytes = free_bytes_;
  u.deferred_bytes = deferred_bytes_;
  u.largest_free_bytes = free_by_size_.empty() ? 0 : free_by_size_.rbegin()->first;
  u.free_extents = free_.size();
  u.large_free_bytes = large_free_bytes_;
  u.hole_allocations = hole_allocations_;
  return u;
}

bool SpaceAllocator::IsAllocated(const Extent& extent) const {
  auto it = allocated_.upper_bound(extent.offset_bytes);
  if (it == allocated_.begin()) return false;
  --it;
  return it->first + it->second.length_bytes >= extent.end_bytes();
}

}  // namespace arcstore::space
