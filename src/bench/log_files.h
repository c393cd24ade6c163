// fio's log files, written by arcstore bench: names, format and the files.
//
// Names, as fio 3.33 makes them (N: the clone's thread number, 1.. over
// every clone of every job in order; without it when per_job_logs=0, and
// then clones sharing a name share the file, one after the other):
//
//   write_bw_log=P    P_bw.N.log
//   write_iops_log=P  P_iops.N.log
//   write_lat_log=P   P_lat.N.log  P_clat.N.log  P_slat.N.log
//   (no value)        P is the job's name
//   with a txg source P_txg.N.log for each distinct P of the clone: the
//                     pool's txg syncs on the clone's time axis
//   with stalls       P_stalls.N.log likewise: the machine's stalls
//                     (stall_watch.h) on the clone's time axis
//
// Entry lines, fio 3.33's (its plotting tools read them):
//
//   time_ms, value, direction, block_bytes, priority            log_offset=0
//   time_ms, value, direction, block_bytes, offset_bytes, priority
//
// priority is always 0 (the bench sets no I/O priority). Units: lat, clat,
// slat in ns; bw in KiB/s (per I/O: bytes * 10^6 / clat_ns, as fio); iops
// per second (per I/O: 1). See job_log.h for windows.
//
// Txg lines (arcstore's, documented in docs/observability.md): a header
// comment, then per sync whose span meets the clone's run
//
//   quiesce_ms, sync_start_ms, sync_end_ms, txg, reason, dirty_bytes, written_bytes
//
// with times in ms since the clone's start (negative: before it).
//
// Stall lines (arcstore's): a header comment, then per stall of the
// clone's batch that began during the clone's run
//
//   start_us, duration_us
//
// with start_us in microseconds since the clone's start.
//
// Files are created new when the writer is made, before any job runs (the
// output-file rule, format/output_file.h: a refused path costs no run;
// replace_existing replaces a regular file that is not a pool), and filled
// by Write() after the run.
//
// Thread-safety: one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/result.h"
#include "bench/job_file.h"
#include "bench/job_log.h"
#include "bench/results.h"

namespace arcstore::bench {

struct PlannedLog {
  std::string path;    // as named by the job (not yet resolved)
  std::string option;  // "write_bw_log" ...: errors name it
  std::string job;     // the first job writing it
  bool txg = false;     // a txg file
  bool stalls = false;  // a stalls file; neither: entries of `kind`
  LogKind kind = LogKind::kBw;
  bool log_offset = false;
  std::vector<uint32_t> threads;  // thread numbers whose entries it holds, in order
};

// The files `set` asks for; txg files only when `with_txg`, stalls files
// only when `with_stalls`.
std::vector<PlannedLog> PlanLogFiles(const JobSet& set, bool with_txg, bool with_stalls = false);

// fio's lines for `entries`.
std::string FormatLogEntries(const std::vector<LogEntry>& entries, bool log_offset);
// The txg file's text: syncs meeting [start_ns, end_ns], times relative to
// start_ns; `missed` syncs not seen are named in the header.
std::string FormatTxgLog(const std::vector<TxgSpan>& spans, uint64_t start_ns, uint64_t end_ns,
                         uint64_t missed);
// The stalls file's text: stalls of `s` beginning in [start_ns, end_ns]
// (the clock of `s.start_ns`), times relative to start_ns; the header
// comment first when `header`.
std::string FormatStallLog(const MachineStalls& s, uint64_t start_ns, uint64_t end_ns,
                           bool header = true);

class LogFileWriter {
 public:
  // Creates every planned file new (replace_existing: --force). Errors
  // name the option, the job and the path.
  static Result<LogFileWriter> Create(std::vector<PlannedLog> plan, bool replace_existing);
  LogFileWriter(LogFileWriter&& o) noexcept;
  LogFileWriter& operator=(LogFileWriter&&) = delete;
  ~LogFileWriter();

  // Writes each file from `run`'s logs and txg syncs; warns through
  // `warnings` (one line each) when a log dropped entries at its limit.
  Status Write(const RunResult& run, std::vector<std::string>* warnings);
  // The resolved paths, in plan order.
  std::vector<std::string> paths() const;

 private:
  LogFileWriter() = default;
  std::vector<PlannedLog> plan_;
  std::vector<int> fds_;
};

}  // namespace arcstore::bench
