// Runner: runs a JobSet against volumes from a VolumeProvider, fio-style.
//
// Jobs run in batches: a job with stonewall waits for every job before it;
// the others start together. Reporting groups: stonewall or new_group opens
// a new group id. Each clone (numjobs) is one worker thread with up to
// iodepth asynchronous I/Os in flight (worker.h). With group_reporting, a
// group's workers are folded into one result.
//
// Thread-safety: RunJobs blocks the calling thread until every job ended;
// the provider, hook and clock must outlive it. Progress (for the status
// line) is read from another thread through relaxed atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <vector>

#include "base/clock.h"
#include "bench/job_file.h"
#include "bench/results.h"
#include "bench/stall_watch.h"
#include "bench/volume_provider.h"

namespace arcstore::bench {

// The pool's recent txg syncs (committed or failed ones), on the runner's
// clock; the runner polls it while jobs run (RunResult::txg_spans).
using TxgHook = std::function<Result<std::vector<TxgSpan>>()>;

struct RunnerOptions {
  VolumeProvider* provider = nullptr;  // required
  Clock* clock = nullptr;              // DefaultClock() when null
  StatsHook stats_hook;                // optional: arcstore's own view
  // Shorten jobs (tests, CI): caps each job's runtime (time_based jobs run
  // this long) and its size and filesize.
  std::optional<uint64_t> max_runtime_ns;
  std::optional<uint64_t> max_size_bytes;
  // When set (by another thread or a signal handler), running jobs stop at
  // their next I/O and report what they did, and no further batch starts
  // (fio's Ctrl-C). Null: jobs run to their end.
  const std::atomic<bool>* stop = nullptr;
  // Empty the provider's caches before each batch (--cold).
  bool cold = false;
  // Where fio's live status line goes ("Jobs: 1 (f=1): [w(1)]..."); null:
  // none. The CLI passes stderr when it is a tty.
  FILE* status_out = nullptr;
  uint64_t status_interval_ns = 1'000'000'000;
  // With a stats hook: sample the engine's gauges this often while a batch
  // runs (ARC size vs c, dirty bytes); 0: only before and after.
  uint64_t stats_sample_ns = 0;
  // Bandwidth/IOPS sampling window (fio's bw_avg_time / iops_avg_time).
  uint64_t sample_window_ns = 500'000'000;
  // fio's log files: keep the entries of jobs with write_bw_log,
  // write_iops_log or write_lat_log (false: those options are ignored, as
  // in a second run over the same jobs). At most max_log_entries per log
  // and clone; a batch whose per-I/O logs (log_avg_msec=0) could need more
  // than kMaxLogMemoryBytes is refused.
  bool logs = true;
  uint64_t max_log_entries = uint64_t{1} << 20;
  // Optional: the pool's txg syncs, polled every txg_poll_ns while a batch
  // runs and once after it.
  TxgHook txg_hook;
  uint64_t txg_poll_ns = 200'000'000;
  // Watch for machine stalls while a batch runs (stall_watch.h): a thread
  // that wakes every stall_options.period_ns and counts late wake-ups.
  bool watch_stalls = true;
  StallOptions stall_options;

  Status Validate() const;
};

inline constexpr uint64_t kMaxLogMemoryBytes = uint64_t{2} << 30;

Result<RunResult> RunJobs(const JobSet& jobs, const RunnerOptions& options);

}  // namespace arcstore::bench
