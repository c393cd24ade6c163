// SpaceAllocator: which bytes of a device are free, and who gets them next.
//
// The allocator hands out contiguous extents of whole allocation units from
// a map of free extents, and takes frees back only after they are safe to
// reuse. It knows nothing of devices or of the on-disk encoding of its log:
// the pool persists the records TakeTxgRecords() returns (a space log) and
// feeds them back to Load() at open, so that open never walks the pool.
// See allocator.cc for the theory of operation.
//
// Thread-safety: not thread-safe; the txg sync thread owns it (allocation
// happens at sync time, frees are recorded at sync time).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/result.h"

namespace arcstore::space {

struct Extent {
  uint64_t offset_bytes = 0;
  uint64_t length_bytes = 0;
  uint64_t end_bytes() const { return offset_bytes + length_bytes; }
  friend bool operator==(const Extent&, const Extent&) = default;
};

// Data allocations stop at the reserve; metadata (indirect blocks, the
// space log, the volume table) may use it, so that a sync that only frees
// can always commit on a full pool.
enum class AllocClass { kData, kMetadata };

struct SpaceOptions {
  uint64_t start_bytes = 0;   // first allocatable byte (after the front labels)
  uint64_t end_bytes = 0;     // one past the last (before the back labels)
  uint64_t unit_bytes = 4096; // allocation unit: a power of two >= 4096
  // Free extents at least this long are "large": allocations go to them,
  // side by side from a cursor, so that a txg's writes aggregate into I/Os
  // of this size; smaller holes are used only when no large extent has room
  // (space is short). Default: the write aggregation limit, 1 MiB. A
  // multiple of unit_bytes, at most 1 GiB.
  uint64_t large_extent_bytes = 1024 * 1024;
  // Bytes only metadata may use. Default: max(1/64 of the space, 4 MiB),
  // capped at half the space (see DefaultReserve).
  uint64_t reserve_bytes = 0;
  // Frees of txg T become allocatable once txg T + defer_txgs has synced.
  // 2 keeps the two txgs before the newest valid rollback targets. Tests set
  // 1 (with unsafe_allow_short_defer) to prove the crash harness notices.
  uint32_t defer_txgs = 2;
  bool unsafe_allow_short_defer = false;
  // Test-only: frees are reusable at once, even in the txg that freed them,
  // while the last committed tree still references them, and allocation is
  // best fit (so the small extents just freed are soon reused). The crash
  // harness must notice.
  bool unsafe_immediate_reuse = false;

  Status Validate() const;
  static uint64_t DefaultReserve(uint64_t space_bytes);
};

// One change of the space map, as the space log stores it.
struct SpaceRecord {
  enum class Kind : uint8_t { kAlloc = 1, kFree = 2 };
  Kind kind = Kind::kAlloc;
  uint64_t txg = 0;
  Extent extent;
  friend bool operator==(const SpaceRecord&, const SpaceRecord&) = default;
};

struct SpaceUsage {
  uint64_t total_bytes = 0;
  uint64_t allocated_bytes = 0;
  uint64_t free_bytes = 0;          // allocatable now
  uint64_t deferred_bytes = 0;      // freed, waiting for their txgs
  uint64_t largest_free_bytes = 0;
  uint64_t free_extents = 0;
  uint64_t large_free_bytes = 0;  // in free extents >= large_extent_bytes
  uint64_t hole_allocations = 0;  // allocations that had to take a small hole
};

class SpaceAllocator {
 public:
  explicit SpaceAllocator(const SpaceOptions& options);

  // Rebuilds the state of a pool whose newest synced txg is `synced_txg`
  // from its space log (records in log order). Frees of the last
  // defer_txgs txgs stay deferred. Corruption when a record does not fit
  // (double alloc, double free, out of range, misaligned).
  static Result<SpaceAllocator> Load(const SpaceOptions& options,
                                     const std::vector<SpaceRecord>& records, uint64_t synced_txg);

  // A contiguous extent of round_up(size_bytes, unit) for txg `txg`: at the
  // cursor when the free extent there has room (so that one sync's
  // allocations sit side by side and its writes aggregate; in a new txg,
  // when a large extent's worth is left there), else at the
  // start of the next large free extent after the cursor (wrapping round),
  // else the best fit among the small holes. Data takes a hole instead of
  // a large extent when large extents hold less than the reserve. NoSpace
  // names the request, what is free, and the largest free extent.
  Result<Extent> Allocate(uint64_t size_bytes, AllocClass cls, uint64_t txg);

  // Frees an extent allocated earlier, in txg `txg`. It is reusable only
  // after txg + defer_txgs has synced (see SyncDone). Freeing an extent in
  // the txg that allocated it (never written to disk as live) releases it
  // at once. Corruption when the extent is not wholly allocated.
  Status Free(const Extent& extent, uint64_t txg);

  // Txg `txg` is durable: frees of txg - defer_txgs become allocatable.
  void SyncDone(uint64_t txg);

  // The allocations and frees recorded since the last call, for the log.
  std::vector<SpaceRecord> TakeRecords();

  // A compact description of the current state (one kAlloc per allocated
  // extent, plus an alloc/free pair per deferred free), in txg order, that
  // Load() turns back into this state: written when the log is condensed.
  std::vector<SpaceRecord> CondensedRecords(uint64_t txg) const;

  SpaceUsage Usage() const;
  const SpaceOptions& options() const { return options_; }
  // Whether [offset, offset+length) is wholly allocated (fsck uses this).
  bool IsAllocated(const Extent& extent) const;

 private:
  using FreeMap = std::map<uint64_t, uint64_t>;
  Status CheckExtent(const Extent& e, const char* what) const;
  void InsertFree(Extent e);
  void RemoveFree(FreeMap::iterator it, const Extent& taken);
  Status TakeFromFree(const Extent& e);
  // The three indexes of one free extent, added or erased together.
  void AddFreeEntry(uint64_t offset_bytes, uint64_t length_bytes);
  void EraseFreeEntry(FreeMap::iterator it);
  // Where Allocate puts `len` bytes: the offset, and the free extent that
  // holds it; free_.end() when nothing has room.
  std::pair<uint64_t, FreeMap::iterator> Place(uint64_t len, AllocClass cls, uint64_t txg);
  // Steps 1 and 2 of Place: the cursor's extent, else the next large one.
  std::pair<uint64_t, FreeMap::iterator> PlaceInRun(uint64_t len, uint64_t txg);
  std::pair<uint64_t, FreeMap::iterator> PlaceInLarge(uint64_t len);
  std::pair<uint64_t, FreeMap::iterator> BestFit(uint64_t len);

  SpaceOptions options_;
  // Free extents: offset -> length, coalesced (no two touch).
  FreeMap free_;
  // The same extents by size, for best fit: (length, offset), so that one
  // extent is found and erased in O(log n) even when thousands share a
  // length (a pool of 4 KiB records freed at random).
  std::set<std::pair<uint64_t, uint64_t>> free_by_size_;
  // The offsets of the large ones (length >= large_extent_bytes).
  std::set<uint64_t> large_;
  // Allocated extents, exactly as allocated.
  struct Allocation {
    uint64_t length_bytes;
    uint64_t txg;
  };
  std::map<uint64_t, Allocation> allocated_;
  // Frees waiting for their txg to age: txg -> extents.
  std::map<uint64_t, std::vector<Extent>> deferred_;
  std::vector<SpaceRecord> pending_records_;
  uint64_t cursor_bytes_ = 0;
  uint64_t cursor_txg_ = 0;  // the txg of the allocation that ended at the cursor
  uint64_t free_bytes_ = 0;
  uint64_t allocated_bytes_ = 0;
  uint64_t deferred_bytes_ = 0;
  uint64_t large_free_bytes_ = 0;
  uint64_t hole_allocations_ = 0;
};

}  // namespace arcstore::space
