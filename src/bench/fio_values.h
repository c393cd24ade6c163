// fio_values: the value syntaxes of fio's job options, parsed as fio 3.33
// parses them.
//
// Sizes: an integer (decimal, or hex with 0x) and an optional unit. With
// kb_base=1024 (fio's default, "compatibility mode") k/kb/K/KB mean 1024 and
// the IEC forms kib/KiB mean 1000; with kb_base=1000 it is the other way
// round. The same holds for m/g/t/p. "b" means bytes. Units are
// case-insensitive. fio silently reads "1.5k" as 1; we reject it instead.
// A trailing '%' makes the value a percentage (for size and offset).
//
// Times: an integer and an optional unit: ns/nsec, us/usec, ms/msec,
// s/sec, m/min, h/hr, d; a bare number is in the option's default unit.
//
// Block sizes: "bs=4k" or per direction "bs=4k,8k,16k" (read, write, trim;
// an empty field keeps the default, a missing one repeats the last given);
// "bsrange=1k-4k,2k-8k"; "bssplit=4k/10:64k/50:32k/,8k/100" (a missing
// percentage shares what is left equally).
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace arcstore::bench {

inline constexpr int kNumDirs = 3;  // read, write, trim (fio's DDIR order)
enum Dir : int { kRead = 0, kWrite = 1, kTrim = 2 };
const char* DirName(Dir dir);  // "read", "write", "trim"

// A size, or a percentage of the volume when `percent` is set.
struct SizeValue {
  uint64_t bytes = 0;
  bool percent = false;
  double percent_value = 0;  // 0..100 when `percent`
  uint64_t Resolve(uint64_t whole_bytes) const;
};

Result<SizeValue> ParseFioSizeOrPercent(std::string_view text, uint32_t kb_base);
Result<uint64_t> ParseFioSize(std::string_view text, uint32_t kb_base);

enum class TimeUnit { kNs, kUs, kMs, kSec };
// Returns nanoseconds.
Result<uint64_t> ParseFioTimeNs(std::string_view text, TimeUnit bare_unit);

// "1", "0", "true", "false", "yes", "no", "on", "off"; an empty value is true.
Result<bool> ParseFioBool(std::string_view text);
Result<int64_t> ParseFioInt(std::string_view text);
Result<double> ParseFioDouble(std::string_view text);

// One entry of a bssplit: a block size and its share in percent.
struct BsSplitEntry {
  uint64_t bs_bytes = 0;
  uint32_t percent = 0;
};
using BsSplit = std::vector<BsSplitEntry>;

struct BsRange {
  uint64_t min_bytes = 0;
  uint64_t max_bytes = 0;
};

// Splits "a,b,c" into per-direction fields as fio does: missing fields repeat
// the last given one; empty fields are returned as empty (keep default).
std::array<std::string, kNumDirs> SplitPerDirection(std::string_view text);

Result<BsSplit> ParseBsSplitList(std::string_view text, uint32_t kb_base);
Result<BsRange> ParseBsRangeOne(std::string_view text, uint32_t kb_base);

// "99:99.9:99.99" -> {99, 99.9, 99.99}; each in (0, 100], at most 20.
Result<std::vector<double>> ParsePercentileList(std::string_view text);

std::string_view TrimSpace(std::string_view s);
std::string Lowercase(std::string_view s);

}  // namespace arcstore::bench
