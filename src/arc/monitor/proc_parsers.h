// Parsers for the kernel's memory files, and a reader of files under a root.
//
// Every function here is pure: it takes the text of one file and the path it
// came from (for messages), and returns the parsed values or a Corruption
// status naming "<path>:<line>: <what is wrong>". Nothing here aborts on bad
// input. The formats are the kernel's documented ones:
//   /proc/meminfo                "MemTotal:       16318504 kB"
//   PSI (/proc/pressure/memory,  "some avg10=0.00 avg60=0.00 avg300=0.00 total=0"
//        cgroup memory.pressure) "full avg10=0.00 avg60=0.00 avg300=0.00 total=0"
//   cgroup limits                "max" or a decimal byte count
//   memory.stat                  "inactive_file 1234" (one key and value a line)
//   /proc/self/cgroup            "hierarchy-id:controller,list:/path"
//   /proc/self/mountinfo         "id parent maj:min root mountpoint opts [tags] - fstype src superopts"
//
// Thread-safety: all functions are reentrant. Results are values owned by
// the caller.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace arcstore::memmon {

// Longest file any reader accepts (the kernel's are a few KiB).
inline constexpr size_t kMaxProcFileBytes = 1 << 20;

// Reads `path` (absolute, as on the live system) under `root`. Missing file:
// NotFound naming the full path; larger than kMaxProcFileBytes: Corruption.
Result<std::string> ReadRootedFile(const std::string& root, std::string_view path);
// `root` joined with an absolute `path`.
std::string JoinRoot(const std::string& root, std::string_view path);

struct Meminfo {
  uint64_t total_bytes = 0;
  std::optional<uint64_t> available_bytes;  // absent before Linux 3.14
  std::optional<uint64_t> free_bytes;
  std::optional<uint64_t> cached_bytes;
};
// MemTotal is required; MemAvailable, MemFree, Cached are optional.
Result<Meminfo> ParseMeminfo(std::string_view text, std::string_view path);

struct PsiLine {
  double avg10_pct = 0;
  double avg60_pct = 0;
  double avg300_pct = 0;
  uint64_t total_us = 0;
};
struct Psi {
  PsiLine some;
  std::optional<PsiLine> full;  // absent on old kernels' CPU files; required nowhere
};
Result<Psi> ParsePsi(std::string_view text, std::string_view path);

// A cgroup limit file: "max" (nullopt, meaning unlimited) or bytes.
Result<std::optional<uint64_t>> ParseLimit(std::string_view text, std::string_view path);
// A single decimal number (memory.current, memory.usage_in_bytes).
Result<uint64_t> ParseCounter(std::string_view text, std::string_view path);
// memory.stat: key -> value. Duplicate keys and bad numbers are errors.
Result<std::map<std::string, uint64_t>> ParseKeyValues(std::string_view text,
                                                       std::string_view path);

struct ProcCgroupEntry {
  std::string hierarchy_id;
  std::vector<std::string> controllers;  // empty for the v2 line "0::/path"
  std::string path;
};
Result<std::vector<ProcCgroupEntry>> ParseProcCgroup(std::string_view text, std::string_view path);

struct MountEntry {
  std::string root;         // the mount's root within its file system
  std::string mount_point;  // with octal escapes (\040) decoded
  std::string fs_type;
  std::vector<std::string> super_options;
};
Result<std::vector<MountEntry>> ParseMountinfo(std::string_view text, std::string_view path);

}  // namespace arcstore::memmon
