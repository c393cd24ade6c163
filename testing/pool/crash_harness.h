// CrashHarness: proves that a power cut at any moment leaves a pool that
// opens, checks clean, keeps everything durable, and is exactly ONE txg's
// state (the same txg for every volume) plus the intent log's replayed
// records.
//
// 1. A seeded random workload (writes, FUA writes, trims, zeroes, flushes
//    and txg syncs over several volumes) runs on a pool whose device
//    records every write and flush (io/recording_device.h). A model keeps
//    every change in order with the intent log's sequence number and the
//    txg it joined, and the contents of every volume at each committed txg.
// 2. For every device flush (the moment before it counts) and for the end,
//    and for several random subsets of the writes still pending then
//    (including torn ones and torn log blocks), the harness builds the image
//    a power cut could leave, opens a pool on it (which replays the log),
//    runs the full check, and compares every volume with the model: the
//    state at the txg T the pool opened at, plus every later change up to
//    the last log record replay read (seq k). T must be no older than the
//    last txg a completed Sync waited for, and every change a completed
//    flush or FUA write covered must be in it (txg <= T or seq <= k).
// 3. Replay interrupted: for some images, the open itself is recorded and
//    cut at each of its flushes; reopening must give the same contents.
// 4. With a cache device (cache_device_bytes): the pool has one more
//    device, recorded on the same clock as the pool's, so that a crash time
//    cuts both at the same moment. The volumes start full of data (the
//    model knows it), so that reads find blocks on the device from the
//    start. The workload reads back (each read
//    compared with the model) and now and then squeezes the ARC to a small
//    size and lets it grow back, so buffers leave the ARC and feed the
//    cache device (an ARC that stays small would end txgs by its dirty
//    limit, which the model does not allow); the cache device seals and writes its slots when they
//    fill and when the workload flushes the cache, and some runs remove the
//    device partway and add it back later (fresh). Every crash image comes
//    with the cache device image the same cut leaves (its writes since its
//    last flush landing in a random subset, torn too), and so does every
//    cut of an interrupted open (a rebuild in progress, its new epoch's
//    label written or not). The pool opens with it; once the rebuild is
//    done the ARC is shrunk and emptied, so that verification reads ask
//    the cache device first: a stale block it served is a difference from
//    the model. Which slot writes are pending at a cut depends on thread
//    timing (the ARC's evictor, the cache's writer), so a seed replays the
//    pool's part exactly and the cache's only nearly.
//
// Test-only switches (pool_impl.h UnsafeTestSwitches) break the commit
// protocol, or make the cache device serve stale blocks, so that tests can
// show the harness notices.
//
// Thread-safety: none; a harness run is single-threaded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "pool/pool_impl.h"

namespace arcstore::pool {

struct CrashHarnessOptions {
  uint64_t seed = 1;
  uint32_t operations = 600;       // workload operations
  uint32_t flush_one_in = 6;       // an operation is a flush with probability 1/N
  uint32_t sync_one_in = 40;       // ... a txg sync (Pool::Sync) with probability 1/N
  uint32_t replay_crash_one_in = 4;  // images whose replay is itself cut (0: none)
  bool intent_log = true;
  uint32_t images_per_point = 4;   // random pending subsets per crash point
  uint32_t tear_one_in = 3;        // of the pending writes that land, torn ones
  uint64_t device_bytes = 16 << 20;
  // An operation is a read of a random range, compared with the model,
  // with probability 1/N (0: none).
  uint32_t read_one_in = 0;
  // A cache device of this many bytes (0: none): [6 MiB, 64 MiB].
  uint64_t cache_device_bytes = 0;
  // With a cache device: the ARC's size, [256 KiB, 16 MiB], when the
  // workload squeezes it and while images are verified. The ARC is 16 MiB
  // otherwise; the workload syncs before its dirty data could make the
  // txg manager end a txg by itself.
  uint64_t cache_arc_bytes = 1 << 20;
  // With a cache device: an operation squeezes the ARC with probability
  // 1/N (0: never).
  uint32_t cache_squeeze_one_in = 10;
  // With a cache device: an operation writes the cache's partly filled
  // slot (CacheDevices::Flush) with probability 1/N (0: never).
  uint32_t cache_flush_one_in = 12;
  // With a cache device: an operation removes it with probability 1/N (0:
  // never); once removed, an operation adds it back with probability
  // 1/cache_readd_one_in.
  uint32_t cache_remove_one_in = 0;
  uint32_t cache_readd_one_in = 16;
  UnsafeTestSwitches unsafe;
  // Stop after the first failure (tests of the switches want one).
  bool stop_at_first_failure = false;

  Status Validate() const;
};

struct CrashHarnessResult {
  uint64_t crash_points = 0;    // flush points (and the end) tried
  uint64_t images = 0;          // crash images opened and checked
  uint64_t txgs = 0;            // txgs the workload committed
  uint64_t fallbacks = 0;       // images that opened at an older txg than the newest durable
  uint64_t durable_flushes = 0;  // flushes and FUA writes the workload completed
  uint64_t replayed_images = 0;  // images whose open replayed log records
  uint64_t replayed_records = 0;
  uint64_t replay_crash_images = 0;  // images of an open cut during replay
  uint64_t workload_reads = 0;        // reads the workload compared with the model
  // With a cache device:
  uint64_t l2_slots_written = 0;   // slots the workload's cache device wrote
  uint64_t l2_workload_hits = 0;   // blocks it served to the workload's reads
  uint64_t l2_images = 0;          // images verified with a cache device online
  uint64_t l2_verify_hits = 0;     // verification reads those served from it
  uint64_t cache_removes = 0;      // RemoveCache calls of the workload
  std::vector<std::string> failures;  // each names the seed, point, subset and what was wrong
};

Result<CrashHarnessResult> RunCrashHarness(const CrashHarnessOptions& options);

}  // namespace arcstore::pool
