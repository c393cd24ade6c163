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
//
// Test-only switches (pool_impl.h UnsafeTestSwitches) break the commit
// protocol so that tests can show the harness notices.
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
  std::vector<std::string> failures;  // each names the seed, point, subset and what was wrong
};

Result<CrashHarnessResult> RunCrashHarness(const CrashHarnessOptions& options);

}  // namespace arcstore::pool
