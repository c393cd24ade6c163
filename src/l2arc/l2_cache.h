// L2Cache: the second-level cache (L2ARC). The ARC offers each buffer as
// it leaves memory; the cache keeps a copy on a fast cache device (a file
// or a block device) and serves later misses from it. Nothing in it is
// needed for correctness: a copy that cannot be read or fails its checksum
// is dropped and the caller reads the pool. Theory of operation in
// l2_cache.cc; the on-disk format in l2_format.h.
//
// Thread-safety: every method but the destructor may be called from any
// thread at once. Open starts two threads owned by the cache (the writer,
// and the rebuild for a device of this pool); the destructor stops them.
// Offer never waits for I/O; Read does its device read without the cache's
// lock.
//
// Ownership: Open's caller owns the cache. env.device, env.clock and
// env.registry are borrowed and must outlive it. The cache declares its
// stats (module env.stats_module, "l2arc" unless told) in env.registry, or
// in a registry of its own when none is given, and removes the module when
// destroyed; caches sharing a registry need modules of their own. Every
// request to the device, the label's and the rebuild's included, is
// counted and timed there too (io/measured_device.h: device_reads,
// device_read_latency_ns, ...), which is what `arcstore iostat` shows in
// the cache device's row.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "base/result.h"
#include "base/thread_annotations.h"
#include "io/aligned_buffer.h"
#include "io/device.h"
#include "io/measured_device.h"
#include "l2arc/l2_format.h"
#include "l2arc/l2_index.h"
#include "stats/registry.h"

namespace arcstore::l2arc {

struct L2CacheOptions {
  // Data bytes of one slot, the unit of a ring write (written with its
  // header area in one device write): [256 KiB, 16 MiB], a multiple of the
  // device's logical block (checked at Open).
  uint64_t slot_bytes = 1 << 20;
  // Bytes accepted per feed interval: [64 KiB, 1 GiB].
  uint64_t write_max_bytes = 8 << 20;
  // Extra bytes per interval while the cache is cold (the ring never
  // wrapped): [0, 1 GiB].
  uint64_t write_boost_bytes = 8 << 20;
  // [10, 60000]; a partly filled slot is sealed and written at the end of
  // the interval it was filled in.
  uint64_t feed_interval_ms = 1000;
  // Largest buffer accepted, [512, 16 MiB] and at most slot_bytes; the
  // smallest is kMinBlockBytes. Sizes are multiples of kMinBlockBytes.
  uint32_t max_block_bytes = 1 << 20;
  // Whether buffers that were only prefetched (never read) are accepted.
  bool cache_prefetched = false;
  // Rebuild the index from the device at Open; when false, a device of this
  // pool is formatted afresh.
  bool rebuild = true;

  // Every field within its bounds; the error names the field.
  Status Validate() const;
};

inline constexpr uint32_t kMinBlockBytes = 512;

struct L2CacheEnv {
  io::Device* device = nullptr;         // required
  Clock* clock = nullptr;               // required: feed intervals
  stats::Registry* registry = nullptr;  // optional
  uint64_t pool_guid = 0;               // required, nonzero
  uint64_t committed_txg = 0;           // the pool's last committed txg at open
  std::string name;                     // for messages: "cache /dev/nvme0n1"
  std::string stats_module = "l2arc";
  // Optional: told every change of sizes().header_bytes (so that the ARC
  // can count the index in its size), with the cache's lock held; must not
  // call back into the cache. The destructor returns what it was told.
  std::function<void(int64_t delta_bytes)> on_header_bytes;
  // Optional: each completed read and write of the device (the pool's
  // per-I/O trace), on the thread that did it; must not block.
  io::MeasuredDevice::Observer on_io;
};

// The cache's stats, in one registry module ("l2arc").
struct L2Stats {
  L2Stats(stats::Registry* registry, std::string_view module);
  stats::Counter* hits;
  stats::Counter* misses;
  stats::Counter* read_bytes;
  stats::Counter* checksum_errors;
  stats::Counter* io_errors;
  stats::Counter* feeds;  // buffers accepted
  stats::Counter* feed_bytes;
  stats::Counter* feed_refused_budget;  // over the interval's budget
  stats::Counter* feed_refused_busy;    // the writer is behind
  stats::Counter* feed_refused_other;   // size, prefetch-only, rebuild running, index full
  stats::Counter* slots_written;
  stats::Counter* write_bytes;
  stats::Counter* evicted_entries;  // removed because their slot was overwritten
  stats::Counter* rebuild_entries;
  stats::Counter* rebuild_dropped;    // birth after the committed txg
  stats::Counter* rebuild_bad_slots;  // damaged slot headers skipped
  stats::Gauge* size;                 // data bytes cached
  stats::Gauge* asize;                // device bytes of slots holding entries
  stats::Gauge* hdr_size;             // index memory
  stats::Gauge* entries;
};

class L2Cache {
 public:
  // Opens the cache on env.device. A blank device, one of another pool, of
  // another slot size, or opened with rebuild off gets a fresh label (a new
  // cache guid); one of this pool is rebuilt by a background thread, which
  // drops entries born after env.committed_txg. An error only for a device
  // unusable at all: fewer than kMinSlots slots, or the label write failed.
  static Result<std::unique_ptr<L2Cache>> Open(const L2CacheOptions& options,
                                               const L2CacheEnv& env);
  // Stops the threads; slots not yet written are dropped.
  ~L2Cache();
  L2Cache(const L2Cache&) = delete;
  L2Cache& operator=(const L2Cache&) = delete;

  // Offers a buffer leaving the ARC. Copies `data` into the slot being
  // filled when the rebuild is done, the size is right (a multiple of
  // kMinBlockBytes up to max_block_bytes), prefetch-only buffers are
  // wanted or this is not one, the interval's budget has room, the key is
  // not cached yet and the writer is not behind (at most kMaxSealedSlots
  // slots waiting for it). True when copied. Never waits for I/O.
  bool Offer(const L2Key& key, std::span<const uint8_t> data, bool metadata, bool prefetched);

  // Reads the copy of `key` into `out`, which must be exactly its size
  // (else InvalidArgument). NotFound: not cached, or its slot was
  // overwritten while it was read. Corruption (checksum mismatch) or an I/O
  // error: the entry is dropped and the error returned. Unless OK, `out`
  // may hold anything.
  Status Read(const L2Key& key, std::span<uint8_t> out);
  // Whether `key` is cached (on the device, or copied and waiting for its
  // slot's write).
  bool Contains(const L2Key& key) const;

  // Seals the slot being filled, waits until every sealed slot is written,
  // and returns the first write error since the last Flush (OK if none).
  Status Flush();
  // Waits until the rebuild thread is done (at once when there is none).
  void WaitRebuilt();

  struct Sizes {
    uint64_t entries = 0;       // blocks cached, written or waiting
    uint64_t header_bytes = 0;  // all of the index's memory
    uint64_t data_bytes = 0;    // their bytes
    uint64_t device_bytes = 0;  // bytes of written slots holding entries
  };
  Sizes sizes() const;

  uint64_t cache_guid() const { return cache_guid_; }
  const L2Layout& layout() const { return layout_; }

  static constexpr size_t kMaxSealedSlots = 2;

 private:
  // Slot buffers: the one being filled, up to kMaxSealedSlots sealed, the
  // one being written.
  static constexpr uint32_t kBuffers = kMaxSealedSlots + 2;
  // Index slot values for entries in buffer b: kPendingSlot0 + b.
  static constexpr uint32_t kPendingSlot0 = kNoNode - kBuffers;
  static constexpr int kNone = -1;

  struct Buffer {
    io::AlignedBuffer bytes;  // header area, then data
    std::vector<L2SlotEntry> entries;
    std::vector<uint32_t> nodes;  // index nodes, in entry order
    uint64_t data_used = 0;       // a multiple of the device block
    bool in_use = false;
  };
  struct SlotState {
    uint64_t generation = 0;    // bumped when the slot is about to be overwritten
    uint64_t device_bytes = 0;  // header area + data, as written
    uint64_t sequence = 0;      // of the header written there
  };

  L2Cache(const L2CacheOptions& options, const L2CacheEnv& env, const L2Layout& layout);
  // Reads the device's label and writes the one this open runs under (a
  // new epoch of the same cache, or a fresh cache); whether to rebuild.
  // Before Start: label_ and cache_guid_ do not change after it.
  Result<bool> WriteLabel();
  void Start(bool rebuild);

  bool Refuse(stats::Counter* counter) const;
  // Whether an offer of `key` may go on: rebuilt, within the budget, not
  // cached yet. Counts the refusals.
  bool AdmitLocked(const L2Key& key, uint64_t bytes, uint64_t now_ns) ARC_REQUIRES(mu_);
  void RollIntervalLocked(uint64_t now_ns) ARC_REQUIRES(mu_);
  bool SealLocked() ARC_REQUIRES(mu_);
  int TakeBufferLocked() ARC_REQUIRES(mu_);
  void DropNodeLocked(uint32_t node) ARC_REQUIRES(mu_);
  void UpdateGaugesLocked() ARC_REQUIRES(mu_);
  bool WriterIdleLocked() const ARC_REQUIRES(mu_);

  void WriterLoop();
  void WriteSlotLocked(int buffer) ARC_REQUIRES(mu_);

  void RebuildLoop();
  // Reads and checks the header of `slot`; NotFound for a blank or stale
  // one, Corruption (counted) for a damaged one.
  Result<L2SlotHeader> ReadSlotHeader(uint64_t slot, io::AlignedBuffer* area);
  void InsertRebuiltSlot(uint64_t slot, const L2SlotHeader& header);
  // The newest birth the entries of slots written in `epoch` may have;
  // none when the label no longer knows the epoch (its slots are dropped).
  std::optional<uint64_t> BirthBound(uint64_t epoch) const;

  std::unique_ptr<stats::Registry> own_registry_;
  stats::Registry* const registry_;
  io::MeasuredDevice measured_;  // over the caller's device; env_.device
  const L2CacheOptions options_;
  const L2CacheEnv env_;
  const std::string name_;  // env.name, or "cache <device name>"
  const L2Layout layout_;
  const uint64_t interval_ns_;
  L2Stats stats_;
  L2Label label_;  // as written at Open (WriteLabel): guids, epoch, bounds
  uint64_t cache_guid_ = 0;

  mutable Mutex mu_;
  CondVar writer_cv_;  // work for the writer, or stop
  CondVar idle_cv_;    // a slot written, or the rebuild done
  L2Index index_ ARC_GUARDED_BY(mu_);
  std::vector<SlotState> slots_ ARC_GUARDED_BY(mu_);
  std::array<Buffer, kBuffers> buffers_ ARC_GUARDED_BY(mu_);
  int fill_ ARC_GUARDED_BY(mu_) = kNone;
  std::array<int, kMaxSealedSlots> sealed_ ARC_GUARDED_BY(mu_){};  // FIFO
  size_t sealed_count_ ARC_GUARDED_BY(mu_) = 0;
  int writing_ ARC_GUARDED_BY(mu_) = kNone;
  uint64_t head_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t next_sequence_ ARC_GUARDED_BY(mu_) = 1;
  bool wrapped_ ARC_GUARDED_BY(mu_) = false;
  uint64_t interval_start_ns_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t interval_bytes_ ARC_GUARDED_BY(mu_) = 0;
  bool rebuilt_ ARC_GUARDED_BY(mu_) = false;
  bool stop_ ARC_GUARDED_BY(mu_) = false;
  Status write_error_ ARC_GUARDED_BY(mu_);
  uint64_t data_bytes_ ARC_GUARDED_BY(mu_) = 0;
  uint64_t device_bytes_ ARC_GUARDED_BY(mu_) = 0;
  int64_t reported_header_bytes_ ARC_GUARDED_BY(mu_) = 0;  // to env_.on_header_bytes

  std::thread writer_;
  std::thread rebuilder_;
};

}  // namespace arcstore::l2arc
