// Worker: one clone of one job, on its own thread, driving one volume with
// up to iodepth asynchronous I/Os in flight and measuring them as fio does.
//
// Thread-safety: Run() is called once, on the worker's thread. Completion
// callbacks may run on any thread: they only stamp the time, store the
// status and publish the slot (release) and a sequence number the worker
// waits on. All accounting happens on the worker's thread. Progress is
// published through relaxed atomics for the status line.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>

#include "arcstore/volume.h"
#include "base/clock.h"
#include "bench/job.h"
#include "bench/job_log.h"
#include "bench/results.h"

namespace arcstore::bench {

// Live counters of one worker, read by the status line.
struct Progress {
  std::atomic<uint64_t> bytes[kNumDirs] = {};
  std::atomic<uint64_t> ios[kNumDirs] = {};
  std::atomic<bool> running{false};
  std::atomic<bool> finished{false};
  uint64_t planned_ns = 0;     // runtime + ramp + delay, 0: size-bound
  uint64_t planned_bytes = 0;  // size-bound jobs: bytes to do
};

struct WorkerConfig {
  const Job* job = nullptr;
  std::shared_ptr<Volume> volume;
  uint64_t region_start = 0;
  uint64_t region_bytes = 0;
  uint64_t runtime_ns = 0;  // 0: no limit (size-bound)
  uint64_t seed = 0;
  uint64_t sample_window_ns = 500'000'000;
  Clock* clock = nullptr;
  Progress* progress = nullptr;
  // Set: keep fio's log entries (JobResult::log) from the job's start.
  std::optional<JobLogOptions> log_options;
  const std::atomic<bool>* abort = nullptr;  // set when the run is stopped
};

// Runs the job to its end and fills `result` (dirs, latencies, samples,
// verify, cpu). Errors end the job and land in result->error/error_text.
void RunWorker(const WorkerConfig& config, JobResult* result);

}  // namespace arcstore::bench
