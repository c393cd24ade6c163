// Results of a run: per job (or per reporting group), per direction, the
// figures fio reports. Filled by the runner, read by the reports.
//
// Thread-safety: value types; a worker fills its own, the runner merges.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bench/fio_values.h"
#include "bench/job.h"
#include "bench/job_log.h"
#include "bench/stall_watch.h"
#include "bench/latency.h"
#include "stats/registry.h"

namespace arcstore::bench {

struct DirStats {
  uint64_t io_bytes = 0;
  uint64_t total_ios = 0;
  RunningStat slat_ns, clat_ns, lat_ns;
  PlatHistogram clat_hist;
  RunningStat bw_kib_samples;  // KiB/s per 500 ms window
  RunningStat iops_samples;
  uint64_t runtime_ms = 0;

  void Merge(const DirStats& o);
};

// Depth distributions fio prints as "IO depths", "submit", "complete":
// buckets 1, 2, 4, 8, 16, 32, >=64 (submit/complete: 0, 4, 8, 16, 32, 64, >=64).
struct DepthStats {
  std::array<uint64_t, 7> depth{};
  std::array<uint64_t, 7> submit{};
  std::array<uint64_t, 7> complete{};
  void Merge(const DepthStats& o);
};

// Engine gauges sampled while a batch ran (RunnerOptions.stats_sample_ns):
// ARC size against its target c, and the pool's unsynced dirty bytes
// against dirty_max. -1: the stat does not exist.
struct StatsSeries {
  std::vector<uint64_t> t_ms;  // since the batch started
  std::vector<int64_t> arc_size, arc_c, dirty_bytes, dirty_max_bytes;
};

struct JobResult {
  std::string name;
  int groupid = 0;
  int error = 0;            // 0, or an errno-like code when the job failed
  std::string error_text;   // the failing Status, when error != 0
  int jobs = 1;             // clones folded in (group_reporting)
  const Job* job = nullptr; // the job's options (owned by the JobSet)
  std::array<DirStats, kNumDirs> dirs;
  LatencyBands lat_bands;   // completion latency, all directions
  DepthStats depths;
  uint64_t sync_ios = 0;    // fsync/fdatasync/end_fsync flushes
  RunningStat sync_lat_ns;
  uint64_t job_runtime_ms = 0;
  uint64_t start_unix_ms = 0;
  uint64_t end_unix_ms = 0;
  double usr_cpu_pct = 0, sys_cpu_pct = 0;
  uint64_t ctx = 0, majf = 0, minf = 0;
  uint64_t verify_errors = 0;
  uint64_t verified_blocks = 0;
  std::string first_verify_error;
  // arcstore's own view: the stats delta over the job, when a hook gave one.
  std::shared_ptr<const stats::Snapshot> arcstore_delta;
  std::shared_ptr<const StatsSeries> arcstore_series;
  // Machine stalls seen while the job's batch ran (the same for every job
  // of the batch), when the runner watched for them.
  std::shared_ptr<const MachineStalls> machine_stalls;
  // The job's I/Os of kSlowIoNs or more (the first kMaxSlowIos), to hold
  // against the machine's stalls.
  std::vector<SlowIo> slow_ios;
  std::vector<std::string> volume_names;
  uint64_t region_bytes = 0;  // bytes of volume the job covered (working set)
  // fio's thread number: 1.. over every clone of every job, in order (the N
  // of the log files' names).
  uint32_t thread_number = 0;
  // The clone's log entries when the job writes logs (moved to
  // RunResult::logs before clones are folded).
  std::shared_ptr<const JobLog> log;

  void Merge(const JobResult& o);
};

struct GroupResult {
  int groupid = 0;
  // Per direction: min/max of per-job bandwidth (bytes/s), total io and
  // min/max runtime, over the jobs of the group.
  std::array<uint64_t, kNumDirs> io_bytes{};
  std::array<uint64_t, kNumDirs> min_bw{}, max_bw{}, agg_bw{};
  std::array<uint64_t, kNumDirs> min_run_ms{}, max_run_ms{};
};

// A txg sync of the pool under the jobs, on the runner's clock.
struct TxgSpan {
  uint64_t txg = 0;
  uint64_t quiesce_start_ns = 0;  // the txg stopped taking writers
  uint64_t sync_start_ns = 0;     // quiesced: its sync began
  uint64_t sync_end_ns = 0;       // committed (or failed)
  std::string reason;             // as `arcstore txgs` names it
  uint64_t dirty_bytes = 0;
  uint64_t written_bytes = 0;
};

// One clone's logs, kept apart from the folded results.
struct CloneLog {
  const Job* job = nullptr;
  uint32_t thread_number = 0;
  std::shared_ptr<const JobLog> log;
  std::shared_ptr<const MachineStalls> stalls;  // its batch's, when watched
};

struct RunResult {
  std::vector<JobResult> jobs;
  // Per clone that wrote logs, in thread order.
  std::vector<CloneLog> logs;
  // Every txg sync seen while the jobs ran (RunnerOptions::txg_hook), in txg
  // order; txg_missed counts syncs that left the pool's history unseen.
  std::vector<TxgSpan> txg_spans;
  uint64_t txg_missed = 0;
  std::vector<GroupResult> groups;
  std::vector<std::pair<std::string, std::string>> global_written;
  uint64_t timestamp_unix_s = 0;
  uint64_t timestamp_unix_ms = 0;
};

// Bandwidth in bytes/s of a direction, fio's way (bytes * 1000 / ms).
uint64_t BwBytesPerSec(const DirStats& d);
double Iops(const DirStats& d);

// Folds per-job results into groups (fio's "Run status group N").
std::vector<GroupResult> ComputeGroups(const std::vector<JobResult>& jobs);

}  // namespace arcstore::bench
