// The log files of one bench (or fio) run, read for `arcstore plot
// timeline`: fio's PREFIX_bw.N.log, PREFIX_iops.N.log, PREFIX_lat.N.log
// (or PREFIX_clat.N.log), and arcstore bench's PREFIX_txg.N.log and
// PREFIX_stalls.N.log.
//
// fio's lines: "time_ms, value, direction, block_bytes[, offset][, prio]"
// (4 to 6 fields; fio 3.33 writes 5, or 6 with log_offset). Txg lines:
// "quiesce_ms, sync_start_ms, sync_end_ms, txg, reason, dirty_bytes,
// written_bytes"; stall lines: "start_us, duration_us"; '#' lines are
// comments (format: bench/log_files.h).
//
// A run is named by one of its files or by its prefix; with a prefix, the
// files found for it must share one job number N (else `job` picks one).
// Errors name the file and line.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace arcstore::tools {

struct FioLogRow {
  uint64_t time_ms = 0;
  uint64_t value = 0;
  int dir = 0;               // 0 read, 1 write, 2 trim
  uint64_t block_bytes = 0;  // 0 in windowed logs
};

struct TxgMark {
  int64_t quiesce_ms = 0, sync_start_ms = 0, sync_end_ms = 0;
  uint64_t txg = 0;
  std::string reason;
};

struct StallMark {
  uint64_t start_us = 0;
  uint64_t duration_us = 0;
};

struct BenchRun {
  std::string name;  // PREFIX plus the job number, for titles
  std::vector<FioLogRow> bw, iops, lat;
  bool has_bw = false, has_iops = false, has_lat = false, has_txg = false, has_stalls = false;
  std::string lat_kind;  // "lat" or "clat"
  std::vector<TxgMark> txgs;
  std::vector<StallMark> stalls;
  std::vector<std::string> files;  // the files read
};

inline constexpr uint64_t kMaxBenchLogBytes = uint64_t{1} << 30;

Result<std::vector<FioLogRow>> ParseFioLog(std::string_view text, const std::string& name);
Result<std::vector<TxgMark>> ParseTxgLog(std::string_view text, const std::string& name);
Result<std::vector<StallMark>> ParseStallLog(std::string_view text, const std::string& name);
// Reads the run named by `input` (a file of the run or its prefix).
Result<BenchRun> LoadBenchRun(const std::string& input, std::optional<uint32_t> job);

}  // namespace arcstore::tools
