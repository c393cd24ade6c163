// The doctor: names the pathology of an ARC from its statistics.
//
// Diagnose() runs every check over a StatsView (an OpenZFS/illumos dump read
// by arcstats_reader.h, or arcstore's own registry through FromSnapshot) and
// returns a Report: findings, each with a severity, the numbers that show it
// and what to do; the checks that could not be decided and the fields they
// lacked; and the reader's notes. Values are never invented: a check whose
// inputs are missing says so instead of guessing.
//
// arcstore-only findings read the stat names in arcstore_stat_names.h.
//
// Thread-safety: Diagnose is reentrant; the Report is a value owned by the
// caller.
#pragma once

#include <string>
#include <vector>

#include "arcstore/status.h"
#include "tools/doctor/stats_view.h"

namespace arcstore::doctor {

enum class Severity { kInfo = 0, kWarning = 1, kCritical = 2 };
std::string_view SeverityName(Severity s);

struct Evidence {
  std::string name;   // "c", "size / c"
  std::string value;  // "1.0 GiB (1073741824)", "50.7x"; "~" marks an approximate value
};

struct Finding {
  std::string id;  // stable: "target_collapsed", "nothing_evictable", ...
  Severity severity = Severity::kInfo;
  std::string title;
  std::vector<Evidence> evidence;
  std::string advice;
};

// A check that could not run, and the fields it needed.
struct Undecided {
  std::string check;
  std::vector<std::string> missing;
  std::string why;  // what could not be decided
};

struct Report {
  StatsFormat format = StatsFormat::kUnknown;
  FieldSet field_set = FieldSet::kUndecided;
  std::string field_set_reason;
  std::vector<Finding> findings;  // most severe first
  std::vector<Undecided> undecided;
  std::vector<std::string> notes;  // from the reader

  Severity Worst() const;
  // 0 healthy or info only, 1 warnings, 2 critical.
  int ExitCode() const { return static_cast<int>(Worst()); }
  // Every field some check needed and did not have, sorted, once each.
  std::vector<std::string> MissingFields() const;
  const Finding* Find(std::string_view id) const;
};

// Thresholds of the checks. Percentages are of the named base.
struct DoctorOptions {
  double floor_margin_pct = 10;        // c within this % of c_min is "at the floor"
  // c at or below this % of c_max, with size at least over_target_crit_ratio
  // times c, is a collapse wherever c_min sits.
  double collapsed_of_max_pct = 10;
  double over_target_warn_ratio = 1.5; // size / c at which size is "far above target"
  double over_target_crit_ratio = 2.0;
  double evictable_low_pct = 1;        // evictable below this % of size is "nothing"
  double overhead_pct = 25;            // overhead_size above this % of size
  double free_memory_pct = 10;         // free memory above this % of all is "free"
  double low_memory_pct = 3;           // free memory below this % of all is "short"
  double near_max_pct = 90;            // c or size above this % of c_max is "at c_max"
  double ghost_hit_pct = 5;            // ghost hits above this % of accesses
  double low_hit_ratio_pct = 50;
  double prefetch_used_low_pct = 10;   // predictive prefetches later demanded
  double l2_hdr_warn_pct = 10;         // l2_hdr_size as % of ARC size
  double l2_hdr_crit_pct = 25;
  double prune_rate_per_sec = 10;      // arc_prune calls per second of uptime
  uint64_t min_overshoot_bytes = 64 << 20;  // size - c below this: not "far above" c
  uint64_t min_accesses = 100000;           // fewer hits + misses: a cold cache
  uint64_t min_prefetches = 10000;     // fewer prefetch I/Os: no verdict on prefetch
  // arcstore engine checks: below these counts there is no verdict.
  uint64_t min_txg_syncs = 10;         // txgs synced, for the sync-reason shares
  uint64_t min_throttled_writes = 100; // writes delayed or blocked by the write throttle
  uint64_t min_rmw_writes = 1000;      // partial-record writes that needed the committed record
  uint64_t min_disk_writes = 1000;     // device writes, for their average size
  uint64_t min_writer_waits = 100;     // writes that waited (volumes.writer_waits_*)
  uint64_t min_writer_wait_ns = 1'000'000'000;  // ... and the time at the dominant place
  double machine_stall_pct = 2;        // time the host stopped the server (machine.stall_ns)
  uint64_t min_machine_stalls = 10;    // ... in at least this many stalls
  // dirty_max below default / this ratio is "small"; the default is
  // min(memory_all_bytes / 4, 4 GiB), as the engine derives it.
  double dirty_max_small_ratio = 8;

  // Names the first option out of range.
  Status Validate() const;
};

Report Diagnose(const StatsView& view, const DoctorOptions& options = {});

}  // namespace arcstore::doctor
