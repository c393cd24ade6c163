// Job: one fio job, as parsed from a job file or a command line.
//
// A Job holds every supported option in its typed form (defaults are fio's)
// plus the options exactly as written, in order, for the JSON report's
// "job options". ApplyJobOption() is the one table of supported options; an
// option not in it is an error, never ignored.
//
// Thread-safety: a value type.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/result.h"
#include "bench/fio_values.h"

namespace arcstore::bench {

enum class RwPattern { kRead, kWrite, kRandRead, kRandWrite, kReadWrite, kRandRw, kTrim, kRandTrim };
enum class Distribution { kRandom, kZipf, kPareto, kNormal };
enum class VerifyKind { kNone, kCrc32c, kMd5 };

// log_avg_msec's upper bound: one hour.
inline constexpr int64_t kMaxLogAvgMs = 3'600'000;

struct Job {
  std::string name;
  std::string description;
  // The options as written ("bs" -> "4K"), in order, global ones excluded.
  std::vector<std::pair<std::string, std::string>> written;

  RwPattern rw = RwPattern::kRead;
  std::string rw_text = "read";
  // rw=randread:8 -> 8 sequential I/Os per random offset; rw=write:4k ->
  // skip 4k after each I/O.
  uint64_t rw_random_run = 1;
  uint64_t rw_seq_skip_bytes = 0;

  uint32_t kb_base = 1024;
  std::array<uint64_t, kNumDirs> bs_bytes{4096, 4096, 4096};
  std::array<BsRange, kNumDirs> bsrange{};  // min_bytes 0: unset
  std::array<BsSplit, kNumDirs> bssplit{};  // empty: unset

  SizeValue size;      // bytes == 0 and !percent: unset
  SizeValue filesize;  // unset likewise
  SizeValue offset;
  std::string filename;
  std::string directory;
  std::string filename_format = "$jobname.$jobnum.$filenum";
  std::string ioengine = "psync";
  uint32_t iodepth = 1;
  uint32_t numjobs = 1;
  bool thread = false;
  bool direct = false;
  bool time_based = false;
  uint64_t runtime_ns = 0;
  uint64_t ramp_time_ns = 0;
  uint64_t startdelay_ns = 0;
  bool stonewall = false;
  bool new_group = false;
  bool group_reporting = false;
  uint32_t rwmixread = 50;
  bool randrepeat = true;
  uint64_t randseed = 0x89;  // fio's default seed base
  bool randseed_set = false;
  bool norandommap = false;
  Distribution distribution = Distribution::kRandom;
  double distribution_param = 0;  // zipf theta, pareto h, normal stddev %
  double distribution_center = 0.5;
  uint64_t fsync_every = 0;
  uint64_t fdatasync_every = 0;
  bool end_fsync = false;
  bool sync = false;
  VerifyKind verify = VerifyKind::kNone;
  bool do_verify = true;
  bool verify_fatal = false;
  std::string fallocate = "native";
  bool overwrite = false;
  bool invalidate = true;
  bool refill_buffers = false;
  bool zero_buffers = false;
  uint32_t buffer_compress_percentage = 0;
  uint64_t thinktime_ns = 0;
  std::array<uint64_t, kNumDirs> rate_bytes_per_sec{};
  std::array<uint64_t, kNumDirs> rate_iops{};
  uint64_t loops = 1;
  std::vector<double> percentile_list = {1,  5,  10, 20, 30, 40,   50,   60,   70,
                                         80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};
  // fio's log files (log_files.h): the prefix of PREFIX_bw.N.log etc.;
  // unset: no such log; "" (the option without a value): the job's name.
  std::optional<std::string> bw_log_prefix, iops_log_prefix, lat_log_prefix;
  uint64_t log_avg_ms = 0;  // 0: one entry per I/O; else the window
  bool log_max_value = false;
  bool log_offset = false;
  bool per_job_logs = true;

  bool WritesLogs() const { return bw_log_prefix || iops_log_prefix || lat_log_prefix; }

  bool IsRandom() const;
  bool Reads() const;
  bool Writes() const;
  bool Trims() const;
  // The largest block any direction may use.
  uint64_t MaxBlockBytes() const;
  uint64_t MinBlockBytes(Dir dir) const;
  // Checks that the options fit together; names the option and the reason.
  Status Validate() const;
};

// Applies one `name=value` (has_value false for a bare `name`) to `job`.
// Unknown options are NotSupported; bad values InvalidArgument.
Status ApplyJobOption(Job* job, std::string_view name, std::string_view value, bool has_value);

}  // namespace arcstore::bench
