// ArcstoreView: what a job's figures measured, read from the engine's
// stats delta over the job (the runner's stats hook).
//
// It looks for the engine's stats by name and reports what it finds:
//   arcstats.hits / misses (demand_data_* when present) -> reads served by
//     the ARC; arcstats.c and size (gauges: the value at the job's end) ->
//     whether the job's region fit in the cache target;
//   txg.syncs_<reason> -> txg count and why; txg.delay_ns / blocked_ns and
//     memory_throttle_count -> time writers spent delayed or blocked;
//   volumes.rmw_reads / rmw_dirty -> read-modify-writes (bs < recordsize);
//   io.writes / write_bytes / write_size_bytes -> the device's writes and
//     their sizes (the share of write I/Os of 512 KiB or more).
//   the sampled series (runner.h stats_sample_ns) -> ARC size and c over the
//     run (min..max) and the peak dirty level in percent of dirty_max.
//   zil.commit_requests / commits / flushes / fua_writes / fallback_syncs
//     and the batch_records histogram -> the intent log's work for a
//     flushing job: commit requests per device flush (each commit is one
//     FUA write or one flush, so this is the batching) and batch sizes.
// Stats absent from the delta are left out (an engine part not built yet,
// or a provider without an engine: then the view is empty).
//
// Warnings say when the figures are cache figures rather than device
// figures: most reads served from the ARC, or a writing job that outlasted
// nothing (no txg synced during it: every byte may still be in memory).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/results.h"

namespace arcstore::bench {

struct ArcstoreView {
  std::optional<double> arc_hit_ratio;  // 0..1: ARC hits / (hits + misses) in the job
  std::optional<uint64_t> arc_c_bytes, arc_size_bytes;
  std::optional<bool> region_fits_in_c;
  uint64_t region_bytes = 0;
  uint64_t txgs = 0;
  std::map<std::string, uint64_t> syncs_by_reason;
  std::optional<uint64_t> delay_ns, blocked_ns, memory_throttle_count;
  std::optional<uint64_t> rmw_reads;  // volumes.rmw_reads + rmw_dirty
  // Device writes (io.writes, io.write_bytes, io.write_size_bytes).
  std::optional<uint64_t> disk_writes, disk_write_bytes;
  std::optional<double> disk_writes_512k_share;  // of bytes written, in I/Os >= 512 KiB (lower bound)
  bool outlasted_txg_timeout = false;  // ran longer than the default 5 s
  // From the sampled series, when there is one.
  std::optional<double> peak_dirty_pct;  // of dirty_max
  std::optional<int64_t> arc_size_min, arc_size_max, arc_c_min, arc_c_max;
  // The intent log, when the job asked for commits (flushes, FUA writes).
  struct IntentLog {
    uint64_t commit_requests = 0, commits = 0, device_flushes = 0, fallback_syncs = 0;
    // Commits by records per batch: 1, 2-3, 4-7, 8-15, 16 or more.
    std::array<uint64_t, 5> batches{};
  };
  std::optional<IntentLog> intent_log;
  std::vector<std::string> warnings;
  bool empty = true;  // no engine stats at all

  nlohmann::ordered_json ToJson() const;
  // fio-layout-friendly lines ("  arcstore     : ...").
  std::string ToText() const;
};

ArcstoreView BuildView(const JobResult& job, uint64_t region_bytes);

}  // namespace arcstore::bench
