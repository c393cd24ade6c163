// BufferAllocator: where the ARC's data buffers come from, and ArcBuffer,
// the move-only handle of one buffer.
//
// Why not new[]: glibc serves a 128 KiB block by mmap only until the first
// such block is freed; it then raises its mmap threshold and serves them
// from its per-thread arenas, where freed blocks stay resident. An ARC that
// evicts and refills records all day then leaves the process's resident set
// far above what the ARC holds, several times the ARC's own size.
// So buffers of at least map_min_bytes are mapped by this allocator itself
// (anonymous mmap, page-rounded) and unmapped when freed, except for a
// bounded cache of freed power-of-two buffers that the next allocation of
// that size reuses without a system call or page faults.
//
// Smaller power-of-two buffers (4 KiB records, indirect blocks: the
// "slab classes", at least 8 to a slab) are cut from slabs: mappings of
// slab_bytes, populated when mapped (MADV_POPULATE_WRITE). Why not new[]:
// an ARC that fills (a pool just opened, writes of new records) takes a
// new 4 KiB buffer per write, and glibc grows a thread's arena for each
// one with an mprotect call (taking the process's mmap lock) and a page
// fault, a large share of a writer's time when each write is small. A
// slab costs one mapping and one populate per slab_bytes instead, and with
// the filler thread (StartFiller) neither is on the allocating thread:
// when a class starts cutting a slab (the ready one, or one it had to map
// itself), the filler maps and populates the next one ("ready").
// Populating is not cheap on a virtual machine (it costs per page), so a
// writer that populated inline would pay it in one write of every slab.
//
// Freed pieces are cached like mapped buffers; a piece given back beyond
// the cache's limit has its page returned (MADV_DONTNEED) and keeps its
// address, on the class's "cold" stack, for the next allocation to fault
// in again. Cold pieces are taken before the populated spares, so that a
// class maps no new slab while it has pieces of its own to reuse; the
// cost is a page fault per cold piece, and a system call per piece given
// back (no merging of neighbours), paid only beyond the cache's limit.
// All of the allocator's mappings are in small pages (MADV_NOHUGEPAGE), so
// the kernel never turns cold pieces back into resident huge pages; slabs
// are unmapped only with the allocator. Other sizes below map_min_bytes
// (fewer than 8 to a slab, or slab_bytes 0) come from new[], cached the
// same way when they are a power of two, never otherwise.
//
//   Allocate(bytes) --cached class, hit--> pop the class's free stack
//                   --slab class--------> cold piece, else the current
//                                         slab's next piece, else the ready
//                                         slab (filler asked for another),
//                                         else a slab cut from the
//                                         reserve or mapped inline
//                   --bytes < map_min--> new[]
//                   --otherwise---------> cut from the reserve,
//                                         else mmap(round_up(bytes, page)),
//                                         populated (MADV_POPULATE_WRITE)
//   Free(buf)       --power of two, cache below the limit--> push
//                      (limit = max(cache_bytes, room))
//                   --slab piece-------> MADV_DONTNEED, push on cold
//                   --heap-------------> delete[]
//                   --otherwise---------> munmap
//
// Limits: the cache never holds more than the limit (as of the last
// Free or Trim); besides it, at most two slabs per slab class (the rest of
// the current one and the ready one; slab_bytes is at most 4 MiB) are
// resident and not yet handed out (spare_bytes), and so is what is left of
// the reserve (reserve_bytes, at most ReserveTargetBytes(), within the
// room); everything else resident is in use by the ARC (and counted in its
// size). A class's slabs span at most the peak of its pieces resident at
// once plus two slabs (the filler maps a ready slab without looking at
// cold pieces); address space and the cold stacks never shrink, and one
// class's cold pieces are not another's.
//
// The ARC's room. A txg sync replaces every record it wrote: a burst of
// thousands of frees, then as many allocations for the next txg's dirty
// copies. A 2 MiB cache absorbs none of that, and each 128 KiB buffer then
// costs an mmap, 32 page faults with their zeroing, and an munmap with a
// TLB shootdown, all on the writers' path. So the cache may also hold up
// to the room the ARC leaves below its target, c - size (AttachRoom):
// memory the ARC may use anyway, so the process's resident set still
// follows c, not what was ever freed. The room is not capped below c: a
// txg of a few GiB frees a few GiB at once, and a page mapped again costs
// far more than a copy into it (on a virtual machine, a trip to the
// hypervisor per page: "The reserve" below), while a page kept and reused
// costs nothing. When the room shrinks (c falls, or the ARC grows in other
// size classes) Trim() gives back what no longer fits; the ARC calls it on
// every Tick() and after c or c_max moves.
//
// The reserve. Memory new to the process is costly on a virtual machine
// that hands free memory back to its hypervisor (base/page_memory.h,
// "Memory new to the process": up to 2.6 s a GiB to populate). A pool
// whose ARC grows (a fresh server, the first txgs of a burst of writes)
// pays that for every new buffer, inside a connection's write or a block
// read. The reserve is memory the filler made ready ahead of that, in
// populated chunks (MapPopulatedPages); a buffer or slab that would be
// mapped is cut from it instead. Two things fill it, each bounded by the
// room (less what the cache holds):
//
// - pretouch_bytes: filled when the filler starts (a server pretouches
//   while it is still idle), chunk after chunk of up to
//   kReserveChunkBytes until it holds its target, so what the ARC takes
//   while it fills is made up too; not refilled after.
// - Growing ahead (grow_ahead_bytes): each allocation of new memory (cut
//   from the reserve or mapped) that finds the reserve below half of
//   grow_ahead_bytes, with room to fill, asks the filler to fill it to
//   grow_ahead_bytes, in chunks of kGrowChunkBytes. An ARC at its target
//   has no room, so nothing is filled once it stops growing; what it
//   takes then comes back through the cache of freed buffers. A writer
//   that outruns the filler maps its buffers itself, as without it.
//
// Pieces cut from a chunk are unmapped on their own like any mapped
// buffer; a chunk's tail too small for a request the reserve can serve
// from a later chunk is unmapped, and a request larger than the whole
// reserve maps memory of its own. Trim gives the reserve back (whole
// chunks, newest first) above the larger of the two targets within the
// room.
//
//   filler:    at start, until the reserve holds pretouch_bytes --> a chunk
//              asked to grow, until it holds grow_ahead_bytes --> a chunk
//   Allocate:  would map --> cut from the oldest chunk (reserve_hits);
//              reserve below grow_ahead_bytes / 2 --> ask the filler
//
// Thread-safety: Allocate and Free may be called from any thread (a mutex
// per size class, held only to push or pop, or to map a slab inline when
// no ready one is there). The filler takes a class's mutex only to look
// at and hand over its ready slab, which it maps and populates without
// it. Lock order: a class's mutex, then the filler's (to ask for a
// slab). The allocator must outlive every ArcBuffer it made. Stats are
// relaxed atomics, read by the ARC's stat gauges.
#pragma once

#include <atomic>
#include <deque>
#include <cstdint>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "arcstore/status.h"
#include "base/thread_annotations.h"
#include "stats/stats.h"

namespace arcstore::arc {

struct BufferAllocatorOptions {
  // Buffers this large or larger are mapped; 0 = never (every buffer from
  // new[] and nothing cached, the allocator before issue 11, kept for
  // comparison).
  uint64_t map_min_bytes = 64 * 1024;
  // Freed buffers kept for reuse, in bytes, whatever the owner's room
  // (AttachRoom) is; 0 with no room = give each back at once.
  uint64_t cache_bytes = 2ull << 20;
  // Bytes per slab of the small power-of-two classes (a power of two,
  // 64 KiB..4 MiB; classes with at least 8 buffers to a slab use them);
  // 0 = those buffers come from new[] (cached the same way).
  uint64_t slab_bytes = 256 * 1024;
  // Memory the filler thread keeps mapped and populated ahead of need (the
  // pretouched reserve, up to 64 GiB and never beyond the owner's room);
  // 0 = none. See "The reserve" above.
  uint64_t pretouch_bytes = 0;
  // While the ARC grows into memory new to the process, the filler keeps up
  // to this much populated memory (base/page_memory.h) in the reserve
  // ahead of it, never beyond the room (up to 1 GiB; 0 = none: each new
  // buffer is mapped and populated by the allocating thread). See "The
  // reserve" above.
  uint64_t grow_ahead_bytes = 64ull << 20;

  // Names the first bad field.
  Status Validate() const;
};

class BufferAllocator;

// One buffer: `bytes` writable bytes, freed to its allocator when the
// handle goes away. Move-only.
class ArcBuffer {
 public:
  ArcBuffer() = default;
  ~ArcBuffer() { Reset(); }
  ArcBuffer(ArcBuffer&& o) noexcept : data_(o.data_), bytes_(o.bytes_), owner_(o.owner_) {
    o.data_ = nullptr;
  }
  ArcBuffer& operator=(ArcBuffer&& o) noexcept {
    if (this != &o) {
      Reset();
      data_ = o.data_;
      bytes_ = o.bytes_;
      owner_ = o.owner_;
      o.data_ = nullptr;
    }
    return *this;
  }
  ArcBuffer(const ArcBuffer&) = delete;
  ArcBuffer& operator=(const ArcBuffer&) = delete;

  explicit operator bool() const { return data_ != nullptr; }
  uint8_t* get() const { return data_; }
  uint64_t bytes() const { return bytes_; }
  void Reset();

 private:
  friend class BufferAllocator;
  ArcBuffer(uint8_t* data, uint64_t bytes, BufferAllocator* owner)
      : data_(data), bytes_(bytes), owner_(owner) {}
  uint8_t* data_ = nullptr;
  uint64_t bytes_ = 0;
  BufferAllocator* owner_ = nullptr;
};

struct BufferAllocatorStats {
  uint64_t mapped_bytes = 0;   // mapped and resident now: in use, cached, spare
  uint64_t cached_bytes = 0;   // freed, kept for reuse
  uint64_t spare_bytes = 0;    // slab pieces never handed out yet
  uint64_t inline_slabs = 0;   // slabs an allocation mapped itself (no ready one)
  uint64_t maps = 0;           // mmap calls (buffers and slabs)
  uint64_t unmaps = 0;         // buffers given back (munmap; MADV_DONTNEED of a slab piece)
  uint64_t cache_hits = 0;     // allocations served from the cache
  uint64_t reserve_bytes = 0;  // the reserve (pretouched, grown ahead), not handed out yet
  uint64_t reserve_hits = 0;   // buffers and slabs cut from the reserve
  uint64_t pretouched_bytes = 0;  // written once by the filler, in all
};

class BufferAllocator {
 public:
  explicit BufferAllocator(const BufferAllocatorOptions& options);
  ~BufferAllocator();  // frees the cache; every ArcBuffer must be gone
  BufferAllocator(const BufferAllocator&) = delete;
  BufferAllocator& operator=(const BufferAllocator&) = delete;

  // Aborts, naming the size and errno, when the system has no memory left
  // (as new[] would throw).
  ArcBuffer Allocate(uint64_t bytes);
  BufferAllocatorStats Stats() const;
  // Registered counters that also count maps, unmaps and cache hits (the
  // ARC's arcstats buf_*). Call before the first Allocate; they must
  // outlive the allocator's use.
  struct Counters {
    stats::Counter* maps = nullptr;
    stats::Counter* unmaps = nullptr;
    stats::Counter* cache_hits = nullptr;
    stats::Counter* inline_slabs = nullptr;
    stats::Counter* reserve_hits = nullptr;
  };
  void AttachCounters(const Counters& counters) { counters_ = counters; }
  // Where the cache's room comes from (above cache_bytes): `room()` returns
  // the bytes the owner lets the cache hold now. Empty = none. Call before
  // the first Allocate, and with {} before the owner goes away.
  void AttachRoom(std::function<uint64_t()> room) { room_ = std::move(room); }
  // Gives cached buffers back (a slab piece's page with MADV_DONTNEED,
  // delete[] or munmap) until the cache fits the limit.
  void Trim();
  // Starts the thread that maps and populates slabs ahead of their use and
  // fills the reserve (named arc_slabs); nothing when no size comes from
  // slabs and both pretouch_bytes and grow_ahead_bytes are 0. Without it,
  // slabs are mapped inline and there is no reserve. StopFiller (or
  // destruction) ends it, dropping what was asked for; call it before
  // detaching the counters.
  void StartFiller();
  void StopFiller();
  // Returns once the filler has filled the reserve to pretouch_bytes (or
  // stopped, or was never started).
  void WaitReserveFilled();
  const BufferAllocatorOptions& options() const { return options_; }

 private:
  friend class ArcBuffer;
  // Power-of-two classes from 4 KiB to 1 GiB, each with its cache of freed
  // buffers (from a slab, the heap or a mapping of their own, by size:
  // Source).
  static constexpr int kClasses = 19;
  struct Class {
    Mutex mu;
    std::vector<uint8_t*> free ARC_GUARDED_BY(mu);
    // Slab classes: pieces whose pages went back to the system, the
    // current slab's pieces not yet handed out [next, end), and every slab.
    std::vector<uint8_t*> cold ARC_GUARDED_BY(mu);
    uint8_t* next ARC_GUARDED_BY(mu) = nullptr;
    uint8_t* end ARC_GUARDED_BY(mu) = nullptr;
    uint8_t* ready ARC_GUARDED_BY(mu) = nullptr;  // the filler's next slab
    std::vector<uint8_t*> slabs ARC_GUARDED_BY(mu);
  };
  enum class Source { kSlab, kHeap, kMapping };
  static int ClassOf(uint64_t bytes);  // -1: not a cached size
  Source SourceOf(uint64_t bytes) const;
  void Free(uint8_t* data, uint64_t bytes);
  uint64_t CacheLimitBytes() const;
  uint8_t* Map(uint64_t bytes);
  void Unmap(uint8_t* data, uint64_t bytes);
  // A slab class's next piece: cold, else the current slab's, else the
  // ready slab's, else a slab's mapped and populated under the class's lock.
  uint8_t* TakePiece(Class& cl, int c, uint64_t bytes) ARC_REQUIRES(cl.mu);
  // Counts a new slab (from MapFresh) as mapped and spare, under its
  // class's lock: a count seen means the slab is placed. (A slab cut from
  // the reserve is counted as mapped already.)
  void AddSlab(Class& cl, uint8_t* slab, bool from_reserve) ARC_REQUIRES(cl.mu);
  void TrimCache();
  void FillerMain();
  // The room less what the cache holds: the most the reserve may hold.
  uint64_t RoomForReserve() const;
  // The most the reserve keeps (Trim's bound): the larger of pretouch_bytes
  // and grow_ahead_bytes, at most RoomForReserve().
  uint64_t ReserveTargetBytes() const;
  // Maps one populated chunk toward goal_bytes (at most RoomForReserve()) and
  // adds it to the reserve; false when the reserve holds that already.
  bool FillReserve(uint64_t goal_bytes);
  // Called on every allocation of new memory: asks the filler to fill the
  // reserve to grow_ahead_bytes once it is below half of that.
  void AskToGrow();
  // `bytes` (page-rounded) cut from the reserve, or nullptr.
  uint8_t* TakeReserved(uint64_t bytes);
  // Gives back whole chunks, newest first, while the reserve is above its
  // target.
  void TrimReserve();
  // `bytes` for a new buffer or slab, populated: cut from the reserve
  // (counted as a reserve hit), else mapped (the caller counts the
  // mapping).
  uint8_t* MapFresh(uint64_t bytes, bool* from_reserve);
  // Gives a buffer back to where it came from: its slab's cold stack
  // (pages returned), delete[] or munmap.
  void Release(uint8_t* data, uint64_t bytes);

  const BufferAllocatorOptions options_;
  std::unique_ptr<Class[]> classes_;
  Counters counters_;
  std::function<uint64_t()> room_;
  std::atomic<uint64_t> mapped_bytes_{0};
  std::atomic<uint64_t> cached_bytes_{0};
  std::atomic<uint64_t> spare_bytes_{0};
  std::atomic<uint64_t> inline_slabs_{0};

  Mutex filler_mu_;
  CondVar filler_cv_;
  bool filler_stop_ ARC_GUARDED_BY(filler_mu_) = false;
  uint32_t filler_wanted_ ARC_GUARDED_BY(filler_mu_) = 0;  // a bit per class
  // The reserve size the filler fills toward: pretouch_bytes at start,
  // grow_ahead_bytes while the ARC grows; 0 = nothing asked.
  uint64_t reserve_goal_bytes_ ARC_GUARDED_BY(filler_mu_) = 0;
  bool reserve_filled_ ARC_GUARDED_BY(filler_mu_) = false;
  CondVar reserve_filled_cv_;  // WaitReserveFilled's
  std::thread filler_;

  struct Chunk {
    uint8_t* next;
    uint8_t* end;
  };
  Mutex reserve_mu_;
  std::deque<Chunk> reserve_ ARC_GUARDED_BY(reserve_mu_);  // oldest first
  std::atomic<uint64_t> reserve_bytes_{0};
  std::atomic<uint64_t> reserve_hits_{0};
  std::atomic<uint64_t> pretouched_bytes_{0};
  std::atomic<uint64_t> maps_{0};
  std::atomic<uint64_t> unmaps_{0};
  std::atomic<uint64_t> cache_hits_{0};
};

inline void ArcBuffer::Reset() {
  if (data_ != nullptr) {
    owner_->Free(data_, bytes_);
    data_ = nullptr;
  }
}

}  // namespace arcstore::arc
