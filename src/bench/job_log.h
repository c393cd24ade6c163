// JobLog: the entries of fio's log files (write_bw_log, write_iops_log,
// write_lat_log) for one job clone, collected as its I/Os complete.
//
// Two modes, as fio's log_avg_msec chooses:
//
//   per I/O (avg_ms 0)  one entry per completed I/O in each log, at its
//                       completion time: lat/clat/slat in ns, bw as fio
//                       computes it per I/O (bytes * 10^6 / clat_ns), iops 1,
//                       the block size and the offset.
//   windowed (avg_ms W) windows [kW, (k+1)W) ms from the start: at each
//                       window's end one entry per direction, the window's
//                       average (or, with max_value, its maximum) latency,
//                       its bandwidth in KiB/s and its IOPS; block size and
//                       offset 0, as fio writes them.
//
// Windows lie on a fixed grid from the start, and an I/O counts in the
// window of its completion time. A window in which no I/O completed gives
// bandwidth and IOPS entries of 0 for each active direction (a stall shows
// as zeros, not as a gap), and no latency entry. At Finish, windows up to
// the end are closed; the last, partial window gives latency entries (at
// the end time) but no bandwidth or IOPS entry, as fio gives none for an
// incomplete window.
//
// Limits: at most max_entries entries per log; later ones are dropped and
// counted (dropped()), so a long per-I/O log costs bounded memory
// (sizeof(LogEntry) bytes each).
//
// Thread-safety: one thread (the worker's); read after the worker ended.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "bench/fio_values.h"
#include "bench/job.h"

namespace arcstore::bench {

enum class LogKind : uint8_t { kBw, kIops, kLat, kClat, kSlat };
inline constexpr int kNumLogKinds = 5;
// The type part of fio's file name: PREFIX_<name>.N.log.
const char* LogKindName(LogKind kind);

struct LogEntry {
  uint64_t value = 0;
  uint64_t offset_bytes = 0;
  uint64_t time_ms = 0;  // since the job's start (the end of ramp_time)
  uint32_t block_bytes = 0;
  uint8_t dir = 0;  // fio's data direction: 0 read, 1 write, 2 trim
};

struct JobLogOptions {
  std::array<bool, kNumLogKinds> kinds{};    // which logs to keep
  std::array<bool, kNumDirs> active_dirs{};  // directions the job does
  uint64_t avg_ms = 0;                       // 0: per I/O
  bool max_value = false;                    // windows: maximum, not average
  uint64_t max_entries = uint64_t{1} << 20;  // per log

  Status Validate() const;
};

class JobLog {
 public:
  JobLog(const JobLogOptions& options, uint64_t start_ns);

  // One completed I/O. `slat_ns` is absent for an I/O that completed
  // within its submission (fio's synchronous engines have no slat).
  void OnIo(uint64_t done_ns, Dir dir, uint64_t bytes, uint64_t offset, uint64_t lat_ns,
            uint64_t clat_ns, std::optional<uint64_t> slat_ns);
  // Closes the windows up to `end_ns` (see the header comment).
  void Finish(uint64_t end_ns);

  const std::vector<LogEntry>& entries(LogKind kind) const { return logs_[Index(kind)]; }
  uint64_t dropped(LogKind kind) const { return dropped_[Index(kind)]; }
  uint64_t start_ns() const { return start_ns_; }
  uint64_t end_ns() const { return end_ns_; }
  const JobLogOptions& options() const { return o_; }

 private:
  struct LatWindow {
    uint64_t sum = 0, count = 0, max = 0;
  };
  static size_t Index(LogKind k) { return static_cast<size_t>(k); }
  void Add(LogKind kind, const LogEntry& e);
  void CloseWindow(uint64_t time_ms, bool with_rates);
  void AddLat(LatWindow* w, uint64_t ns);

  const JobLogOptions o_;
  const uint64_t start_ns_;
  uint64_t end_ns_ = 0;
  std::array<std::vector<LogEntry>, kNumLogKinds> logs_;
  std::array<uint64_t, kNumLogKinds> dropped_{};
  // Windowed mode: the open window's index and sums.
  uint64_t window_ = 0;
  uint64_t bytes_[kNumDirs] = {}, ios_[kNumDirs] = {};
  LatWindow lat_[3][kNumDirs] = {};  // lat, clat, slat
};

}  // namespace arcstore::bench
