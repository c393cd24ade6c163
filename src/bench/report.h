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

// "t: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) ..., ioengine=arcstore, iodepth=1"
std::string FormatJobHeader(const Job& job, int groupid);
// The header lines fio prints before running ("...", BenchVersionString(),
// "Starting N threads").
std::string FormatRunHeader(const JobSet& jobs);

std::string FormatText(const RunResult& run);
nlohmann::ordered_json ToFioJson(const RunResult& run, bool plus);
std::string FormatJson(const RunResult& run, bool plus);

// What ran, where fio names itself ("fio version", the run header): arcstore
// and its version, since fio never ran (the layout stays fio 3.33's).
std::string BenchVersionString();
// The ioengine a job's header names: the jobs run in-process on arcstore
// volumes, whatever the job file asked (its ioengine is kept in the JSON's
// "ioengine_requested").
inline constexpr const char* kBenchEngine = "arcstore";

}  // namespace arcstore::bench
