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
  // Bytes only metadata may use. Default: max(1/64 of the space, 4 MiB),
  // capped at half the space (see DefaultReserve).
  uint64_t reserve_bytes = 0;
  // Frees of txg T become allocatable once txg T + defer_txgs has synced.
  // 2 keeps the two txgs before the newest valid rollback targets. Tests set
  // 1 (with unsafe_allow_short_defer) to prove the crash harness notices.
  uint32_t defer_txgs = 2;
  bool unsafe_allow_short_defer = false;
  // Test-only: frees are reusable at once, even in the txg that freed them,
  // while the last committed tree still references them. The crash harness
  // must notice.
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

  // A contiguous extent of round_up(size_bytes, unit) for txg `txg`, taken
  // from the cursor onwards (so that one sync's allocations sit side by side
  // and its writes aggregate), else the best fit anywhere. NoSpace names the
  // request, what is free, and the largest free extent.
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
  Status CheckExtent(const Extent& e, const char* what) const;
  void InsertFree(Extent e);
  void RemoveFree(std::map<uint64_t, uint64_t>::iterator it, const Extent& taken);
  Status TakeFromFree(const Extent& e);

  SpaceOptions options_;
  // Free extents: offset -> length, coalesced (no two touch).
  std::map<uint64_t, uint64_t> free_;
  // The same extents by size, for best fit: length -> offsets.
  std::multimap<uint64_t, uint64_t> free_by_size_;
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
  uint64_t free_bytes_ = 0;
  uint64_t allocated_bytes_ = 0;
  uint64_t deferred_bytes_ = 0;
};

}  // namespace arcstore::space
