// fio's live status line, built from the workers' progress:
//
//   Jobs: 1 (f=1): [w(1)][35.0%][w=650MiB/s][w=166k IOPS][eta 00m:13s]
//
// One letter per worker in fio's letters (R/r sequential/random read, W/w
// write, M/m mixed, D/d trim; '_' done, 'P' not started), run-length coded;
// the percentage done (time for time_based jobs, bytes otherwise); the rates
// since the previous line; and the time left.
//
// Thread-safety: StatusLineState is used by the status thread only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/job.h"
#include "bench/worker.h"

namespace arcstore::bench {

struct WorkerProgressView {
  char letter = 'P';
  bool running = false;
  bool finished = false;
  uint64_t bytes[kNumDirs] = {};
  uint64_t ios[kNumDirs] = {};
  uint64_t planned_ns = 0;
  uint64_t planned_bytes = 0;
};

WorkerProgressView ViewOf(const Progress& p, const Job& job);
char JobLetter(const Job& job);

class StatusLineState {
 public:
  // The line for `workers` at `elapsed_ns` since the start of the batch.
  std::string Update(const std::vector<WorkerProgressView>& workers, uint64_t elapsed_ns);

 private:
  uint64_t last_ns_ = 0;
  uint64_t last_bytes_[kNumDirs] = {};
  uint64_t last_ios_[kNumDirs] = {};
};

// "00m:13s", or "1h:02m:03s" from an hour on.
std::string FormatEta(uint64_t seconds);

}  // namespace arcstore::bench
