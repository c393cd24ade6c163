// Job files and command-line jobs, read as fio reads them.
//
// A job file is INI-like:
//
//   ; comment            # comment
//   [global]             options for every job that follows
//   bs=4k
//   include more.fio     the named file's lines, here (path relative to
//                        the including file's folder)
//   [randwrite-4K]       one job; its name is the section's name
//   rw=randwrite
//   size=${SIZE}         environment variable (an undefined one is an error)
//   numjobs=$ncpus       reserved keywords: $ncpus, $mb_memory, $pagesize
//   time_based           an option without a value (booleans: true)
//
// Command-line jobs: "--name=x --rw=randwrite --bs=4k --name=y ...": each
// --name starts a new job; options before the first --name are global.
//
// Errors name the file and line ("jobs.fio:7: option 'bogus' is not
// supported"); nothing is ignored.
//
// Thread-safety: pure functions; the environment is read through JobEnv.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "bench/job.h"

namespace arcstore::bench {

// What a job file may refer to outside itself.
struct JobEnv {
  std::function<std::optional<std::string>(const std::string&)> getenv;
  uint64_t ncpus = 1;
  uint64_t mb_memory = 1024;
  uint64_t pagesize = 4096;
  // Reads an included file; defaults to the file system.
  std::function<Result<std::string>(const std::string& path)> read_file;

  // The process's environment, CPU count, memory and page size.
  static JobEnv FromSystem();
};

struct JobSet {
  // The options of the last [global] section(s), as written (JSON "global
  // options").
  std::vector<std::pair<std::string, std::string>> global_written;
  std::vector<Job> jobs;
};

inline constexpr int kMaxIncludeDepth = 16;
inline constexpr size_t kMaxJobs = 4096;

Result<JobSet> ParseJobFile(const std::string& path, const JobEnv& env);
// `source_name` names the text in errors; includes resolve against `base_dir`.
Result<JobSet> ParseJobText(std::string_view text, const std::string& source_name,
                            const std::string& base_dir, const JobEnv& env);
// Appends the jobs of several files (fio's "fio a.fio b.fio").
Result<JobSet> ParseJobFiles(const std::vector<std::string>& paths, const JobEnv& env);
Result<JobSet> ParseCommandLineJobs(const std::vector<std::string>& args, const JobEnv& env);

// ${VAR} and $keyword expansion of one value; `where` prefixes errors.
Result<std::string> ExpandValue(std::string_view value, const JobEnv& env, const std::string& where);

}  // namespace arcstore::bench
