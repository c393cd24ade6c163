// Reports of a run, in fio's formats.
//
// Text: fio 3.33's "normal" output, line for line in shape (job header,
// read/write/trim lines, slat/clat/lat, clat percentiles, bw/iops sample
// stats, latency distribution, cpu, IO depths, "Run status group N").
// JSON: fio's keys with fio's types; arcstore's own view goes under the key
// "arcstore" of each job (and of the top level) so fio's keys stay as fio
// has them. json+ adds fio's clat_ns "bins".
//
// Thread-safety: pure functions of their arguments.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "bench/job_file.h"
#include "bench/results.h"

namespace arcstore::bench {

enum class OutputFormat { kNormal, kJson, kJsonPlus };
Result<OutputFormat> ParseOutputFormat(std::string_view text);

// "t: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) ..., ioengine=psync, iodepth=1"
std::string FormatJobHeader(const Job& job, int groupid);
// The header lines fio prints before running ("...", "fio-3.33",
// "Starting N threads").
std::string FormatRunHeader(const JobSet& jobs);

std::string FormatText(const RunResult& run);
nlohmann::ordered_json ToFioJson(const RunResult& run, bool plus);
std::string FormatJson(const RunResult& run, bool plus);

// What the bench calls itself in "fio version".
inline constexpr const char* kFioVersionString = "fio-3.33";

}  // namespace arcstore::bench
