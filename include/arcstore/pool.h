// Pool: one or more devices holding volumes, and the engine that serves them.
//
// A pool is created once on a backing file or block device (Pool::Create),
// then opened (Pool::Open) by one process at a time. It holds named volumes
// (include/arcstore/volume.h), each a tree of checksummed records written
// copy-on-write in transaction groups; the ARC caches them. Closing syncs
// everything and leaves a pool that opens without recovery.
//
// Thread-safety: all methods are thread-safe. Volumes handed out stay valid
// until the pool is closed or the volume is destroyed; operations on a
// destroyed or closed volume complete with Aborted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "arcstore/result.h"
#include "arcstore/status.h"
#include "arcstore/volume.h"

namespace arcstore {

namespace stats {
class Registry;
}

// Pool::Create never destroys what it does not own: it takes the exclusive
// lock an open takes (a served pool's device is refused, force or not),
// refuses a block device the kernel holds (mounted, or claimed by another
// exclusive opener), and refuses an existing file, or a device that carries
// an arcstore label or another known signature (a filesystem, a partition
// table: format/signature.h), unless `force`.
struct PoolCreateOptions {
  // Size of a new file-backed pool. For a block device or an existing file
  // (with force): 0, or exactly its size (a pool takes all of it).
  uint64_t size_bytes = 0;
  // Leave a new file sparse instead of writing it once (see docs/format.md
  // for why pools are written once by default).
  bool sparse = false;
  std::string name = "arcstore";
  // Format an existing file, or a device with a signature, anyway.
  bool force = false;
  // Called while a new file is written once (bytes written so far, total),
  // about every 64 MiB and at the end; may be empty.
  std::function<void(uint64_t written_bytes, uint64_t total_bytes)> progress;

  Status Validate() const;
};

// How many I/Os of one class may be at the device at once (the device
// queue of ARCHITECTURE.md section 6): first every class gets min_active,
// then classes get up to max_active in priority order (sync read, sync
// write, log write, async read, async write).
struct IoClassActive {
  uint32_t min_active = 1;
  uint32_t max_active = 1;
};

// The device I/O queue. Bounds: 0 <= min_active <= max_active <= 1000,
// max_active >= 1; max_active_total 1..10000; read gap <= 1 MiB; read
// aggregation 4 KiB..64 MiB.
struct PoolIoOptions {
  IoClassActive sync_read{10, 10};
  IoClassActive sync_write{10, 10};   // labels, uberblocks, flushes
  IoClassActive async_read{1, 3};     // prefetch
  IoClassActive async_write{2, 10};   // txg sync; max follows dirty data (30%..60%)
  IoClassActive log_write{10, 10};    // intent log
  uint32_t max_active_total = 1000;
  // Waiting prefetch reads this close are merged into one device read.
  uint64_t read_gap_limit_bytes = 32 * 1024;
  uint64_t read_aggregation_limit_bytes = 1024 * 1024;
  // The device backend of a pool file: "auto" (io_uring when the kernel
  // allows, else psync), "io_uring" or "psync" (preadv/pwritev on the
  // caller's thread).
  std::string backend = "auto";
  // For benchmarks: every read of the pool's device takes at least this
  // long (0: as long as it takes), as if the pool were on a slower device,
  // a hard disk under a cache device for instance (io/slow_device.h).
  // At most 10 s.
  uint64_t read_latency_ns = 0;
};

// The second cache level (L2ARC) on the pool's cache devices (Pool::AddCache):
// buffers leaving the ARC are copied to a cache device, and later misses
// read them there. Bounds: write_max_bytes and write_boost_bytes 0..1 GiB
// (write_max_bytes at least 1 MiB), feed_interval_ms 10..60000.
struct PoolCacheOptions {
  // Bytes a cache device takes per feed interval, and extra while it is
  // cold (its ring has never wrapped).
  uint64_t write_max_bytes = 8ull << 20;
  uint64_t write_boost_bytes = 8ull << 20;
  uint64_t feed_interval_ms = 1000;
  // Whether buffers read by prefetch and never asked for are cached.
  bool cache_prefetched = false;
  // Whether an opened cache device's contents are used again (rebuilt from
  // its own log in the background) or dropped.
  bool rebuild = true;
};

struct PoolOptions {
  // The memory limit the cache plans for; 0 = what the memory monitor sees
  // (cgroup limit or MemTotal).
  uint64_t memory_limit_bytes = 0;
  // ARC bounds; 0 = defaults (c_max = 50% of the memory limit,
  // c_min = max(c_max / 32, 64 MiB)).
  uint64_t arc_max_bytes = 0;
  uint64_t arc_min_bytes = 0;
  // The cache's replacement policy: "arc", or "duet" (ARC and LIRS over one
  // cache, led by whichever wins on a sample of the keys: it keeps a
  // working set through scans and loops larger than the cache, where ARC
  // keeps nothing). docs/cache-policies.md compares them.
  std::string arc_policy = "arc";
  // ARC memory kept mapped and written once ahead of need, in the
  // background, so that a growing ARC's writers do not pay a page's first
  // touch (costly on virtual machines); within the room the ARC leaves
  // below its target. 0 = none; at most 64 GiB. Any size also has the
  // intent log make its kept memory (copy chunks and block buffers, about
  // 16 MiB plus a MiB per MiB of its pending limit) written once at open.
  uint64_t arc_pretouch_bytes = 0;
  // Open returns only once that memory is written (a benchmark's start);
  // false = in the background (a server's start).
  bool arc_pretouch_wait = false;
  // While the ARC grows (a fresh server, a burst of writes), memory kept
  // ready ahead of it by a background thread, in huge pages where the
  // kernel has them, so that new buffers cost their writers nothing at
  // first touch; within the room below the ARC's target. 0 = none (each
  // new buffer mapped by its writer); at most 1 GiB.
  uint64_t arc_grow_ahead_bytes = 64ull << 20;
  // Dirty data limit; 0 = min(25% of the memory limit, 4 GiB).
  uint64_t dirty_max_bytes = 0;
  uint64_t txg_timeout_ns = 5ull * 1000 * 1000 * 1000;
  // The open txg's sync starts once its new dirty data passes this
  // percentage of the dirty limit (1..100). Rewrites of records already
  // dirty in the open txg add none, so a working set of rewrites below it
  // reaches the disk once per txg timeout.
  uint32_t txg_sync_kick_percent = 30;
  // Pool space that new data never takes, on top of the allocator's
  // metadata reserve (max(1/64 of the pool, 4 MiB)): room for the metadata
  // of the txgs in flight. 1/2^space_slop_shift of the pool, at most 1 GiB;
  // 5..12 (1/32 .. 1/4096).
  uint32_t space_slop_shift = 6;
  // A txg sync is requested (reason space) once the open txg's new data
  // passes this percentage of the room left (free space above the reserve
  // and slop), so that writers seldom wait for space; 1..100, or 0 for
  // never (txgs then end only for other reasons, and a write that does not
  // fit waits for a forced sync).
  uint32_t space_sync_kick_percent = 25;
  bool prefetch = true;
  // A write covering part of a record that is not cached takes no disk
  // read: it keeps only its own bytes and the record is read when its txg
  // syncs (or when a reader needs the rest). false: the writer reads the
  // record first (a read-modify-write miss waits for the disk).
  bool defer_partial_reads = true;
  bool read_only = false;
  // Flushes and FUA writes commit through the intent log when true, or by
  // syncing a whole txg when false (for comparison).
  bool intent_log = true;
  // The intent log's arena, allocated from pool space the first time the
  // pool syncs with the log on; 0 = min(max(1/16 of the pool, 4 MiB),
  // 1/8 of the pool, 2 GiB). Fixed once allocated. It keeps the log of
  // the newest three committed txgs and the ones after them, so small
  // writes spilled at the device's random-write rate need a few seconds'
  // worth of it (intent_log_spill_percent).
  uint64_t intent_log_bytes = 0;
  // Every time the log has written this share of its arena (percent), it
  // asks for a txg sync (reason log_space), so that flush-heavy work never
  // fills the arena; 1..50, or 0 for never (txgs then end only by timeout,
  // dirty data or an explicit wait).
  uint32_t intent_log_sync_kick_percent = 15;
  // When the log's copies of small writes not yet logged reach this share
  // of the copies it may keep (percent) and nobody is flushing, its writer
  // thread writes them to the arena, so that a later flush commits only
  // what came after instead of finding them dropped and syncing a txg.
  // Spills use at most half the arena and ask for no txg sync. 0..100,
  // 0 for never.
  uint32_t intent_log_spill_percent = 25;
  // While flushes come at least this often (ns since the last one), a
  // write arriving with nobody flushing has the log's writer thread write
  // it to the arena at once, durable when done, so that a FLUSH following
  // it a client's round trip later finds it durable. 0..1 s, 0 for never.
  uint64_t intent_log_early_write_window_ns = 5 * 1000 * 1000;
  // The txg sync thread's nice value, 0..19 (0: the priority of the
  // threads that serve requests). The sync compresses, checksums and
  // submits every dirty record; below the request threads' priority it
  // takes their idle time instead of delaying their wake-ups, and the write
  // throttle still bounds how far it may fall behind. `arcstore serve`
  // runs it at 19 (bench/nbd measured it faster than 0 and 10 there). The
  // default suits a process whose own threads must not be starved of syncs
  // (tests running side by side, an application that waits on them).
  int txg_sync_nice = 0;
  // Threads that run operations submitted through Volume::Submit, and how
  // many may wait for one. 0 threads: Submit runs them on the caller's
  // thread.
  uint32_t work_threads = 8;
  uint32_t work_queue_limit = 4096;
  PoolIoOptions io;
  PoolCacheOptions cache;

  Status Validate() const;
};

struct VolumeOptions {
  std::string name;
  uint64_t size_bytes = 0;
  uint32_t record_size_bytes = 128 * 1024;  // power of two, 4 KiB .. 1 MiB
  std::string compression = "lz4";          // off, lz4, zstd

  Status Validate() const;
};

struct PoolInfo {
  std::string name;
  std::string path;
  uint64_t guid = 0;
  uint64_t size_bytes = 0;
  uint64_t allocated_bytes = 0;
  uint64_t free_bytes = 0;
  // Freed by committed txgs and not yet free: frees wait two txgs (the
  // rollback targets of docs/format.md) before their space is reused.
  uint64_t pending_free_bytes = 0;
  uint64_t txg = 0;  // last committed
  uint32_t format_version = 0;
  std::vector<VolumeInfo> volumes;
  // The cache devices of the pool's config, in the order they were added.
  struct CacheDevice {
    std::string path;
    // "online", or why the device is not used: "missing: ...",
    // "unusable: ..." (the pool serves without it).
    std::string state;
    uint64_t size_bytes = 0;
    uint64_t used_bytes = 0;    // device bytes holding cached blocks
    uint64_t cached_bytes = 0;  // the blocks' bytes
    uint64_t blocks = 0;
    uint64_t header_bytes = 0;  // memory of its index
    // The module of its stats ("l2arc.0"; empty while it is not open):
    // device reads and writes, hits, feeds (docs/observability.md).
    std::string stats_module;
  };
  std::vector<CacheDevice> cache_devices;
};

class Pool {
 public:
  virtual ~Pool() = default;

  static Status Create(const std::string& path, const PoolCreateOptions& options);
  static Result<std::unique_ptr<Pool>> Open(const std::string& path, const PoolOptions& options);

  virtual PoolInfo Info() = 0;
  virtual Status CreateVolume(const VolumeOptions& options) = 0;
  virtual Status DestroyVolume(const std::string& name) = 0;
  virtual Result<std::shared_ptr<Volume>> OpenVolume(const std::string& name) = 0;
  // Drops every clean cached buffer (bench --cold).
  virtual Status DropCaches() = 0;
  // Commits every change made so far in a txg (like `zpool sync`): when it
  // returns OK the changes are in the pool's trees, not only in the intent
  // log. A flush is enough for durability; this is for tools and tests.
  virtual Status Sync() = 0;
  // Syncs everything and stops the engine; further calls fail with Aborted.
  virtual Status Close() = 0;
  // Every stat of the pool (ARC, txg, I/O, volumes, ...).
  virtual stats::Registry& stats() = 0;
  // The per-I/O trace of the pool's device, off by default: every device
  // I/O (class, op, offset, size, parts merged, submit/issue/done times) and
  // the txg syncs' start and end go through a ring of `ring_entries`
  // records (4 .. 16M; when full, records are dropped and counted in
  // io.trace_dropped) to `path`, in the text format of docs/format.md
  // ("I/O trace"). `path` must be absolute with its directory resolved;
  // the file is created new, or, with `replace_existing`, an existing
  // regular file is replaced, but never a device, a pool or a file another
  // program holds locked (the output-file rule of docs/observability.md).
  // Busy when a trace already runs; the refusal, naming the path, when the
  // file may not be written.
  // (A pool without a device, such as a test's fake, returns NotSupported.)
  virtual Status StartTrace(const std::string& path, uint64_t ring_entries,
                            bool replace_existing) {
    return Status::NotSupported("this pool has no I/O trace");
  }
  // Stops the trace and closes its file; NotFound when none runs.
  virtual Status StopTrace() { return Status::NotSupported("this pool has no I/O trace"); }
  // Adds a cache device (a file or a block device, whose contents are
  // overwritten) for the second cache level: used at once and recorded in
  // the pool's config, so that later opens use it too. At most
  // kMaxCacheDevices; never the pool's own device or one already added.
  virtual Status AddCache(const std::string& path) {
    return Status::NotSupported("this pool has no cache devices");
  }
  // Stops using a cache device and takes it out of the config.
  virtual Status RemoveCache(const std::string& path) {
    return Status::NotSupported("this pool has no cache devices");
  }
  static constexpr size_t kMaxCacheDevices = 8;
};

}  // namespace arcstore
