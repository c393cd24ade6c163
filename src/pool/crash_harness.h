// CrashHarness: proves that a power cut at any moment leaves a pool that
// opens, checks clean, keeps everything durable, and is exactly ONE txg's
// state (the same txg for every volume).
//
// 1. A seeded random workload (writes, trims, zeroes and flushes over
//    several volumes) runs on a pool whose device records every write and
//    flush (io/recording_device.h), while a model keeps the expected
//    contents of every volume at every committed txg.
// 2. For every device flush (the moment before it counts) and for the end,
//    and for several random subsets of the writes still pending then
//    (including torn ones), the harness builds the image a power cut could
//    leave, opens a pool on it, runs the full check, and compares every
//    volume with the model at the txg the pool opened at. That txg must be
//    no older than the txg the last completed API flush waited for.
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
  std::vector<std::string> failures;  // each names the seed, point, subset and what was wrong
};

Result<CrashHarnessResult> RunCrashHarness(const CrashHarnessOptions& options);

}  // namespace arcstore::pool
